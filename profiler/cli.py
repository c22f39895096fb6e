"""The `archive-profiler` console script: argparse subcommands, each handing off to one module."""

import argparse
import logging
import sys

from profiler import __version__
from profiler.inputs import DEFAULT_SPLIT_SIZE, InputError
from profiler.policy import PolicyError

PROG = "archive-profiler"


def _size(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower().rstrip("b")
    mult = units.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in units else text
    try:
        value = int(float(number) * mult)
    except ValueError:
        raise argparse.ArgumentTypeError("not a size: %r (e.g. 64M)" % text)
    if value <= 0:
        raise argparse.ArgumentTypeError("size must be positive")
    return value


def build_parser():
    parser = argparse.ArgumentParser(prog=PROG, description="Exact archive profiles (CDXJ) of web archive indexes.")
    parser.add_argument("--version", action="version", version="%s %s" % (PROG, __version__))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("profile", help="profile CDX/CDXJ indexes into a CDXJ archive profile",
                       description="Profile CDX/CDXJ index files (plain, .gz or .bz2; files, folders, "
                                   "glob patterns or manifests of paths) into a sorted CDXJ archive profile. "
                                   "Arguments after '--' go to mrjob unchanged.")
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.add_argument("-o", "--output", required=True, metavar="OUT.cdxj")
    p.add_argument("--policy", default="default", help="policy YAML file or bundled name (default: default)")
    p.add_argument("-r", "--runner", default="inline",
                   choices=["inline", "local", "spark", "hadoop", "emr", "dataproc"])
    p.add_argument("-c", "--conf-path", action="append", default=[], metavar="MRJOB_CONF",
                   help="mrjob.conf file (repeatable)")
    p.add_argument("--archive-uri", default=None, help="URI of the archive, for the !id line")
    p.add_argument("--no-resolve-revisits", dest="resolve_revisits", action="store_false",
                   help="do not give revisits the mime and status of their original")
    p.add_argument("--split-size", type=_size, default=DEFAULT_SPLIT_SIZE,
                   help="bytes of uncompressed input per map task (default 64M)")
    p.add_argument("--cores", type=int, default=None, help="processes for the local runner")
    p.add_argument("--manifest", action="append", default=[], help="file listing input paths, one per line")
    p.add_argument("-q", "--quiet", action="store_true", help="only errors")
    p.add_argument("-v", "--verbose", action="store_true", help="also mrjob's debug output")
    return parser


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    _logging(args)
    try:
        if args.command == "profile":
            from profiler.pipeline import run_profile
            summary = run_profile(args.inputs, args.output, args.policy, args.runner, args.conf_path,
                                  args.archive_uri, args.resolve_revisits, args.split_size, args.cores,
                                  args.manifest, extra)
            if not args.quiet:
                print("%s: %d lines" % (summary["output"], summary["lines"]), file=sys.stderr)
        return 0
    except (InputError, PolicyError) as e:
        print("%s: error: %s" % (PROG, e), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("%s: interrupted (the previous output, if any, is unchanged)" % PROG, file=sys.stderr)
        return 130
    except OSError as e:
        print("%s: error: %s (the previous output, if any, is unchanged)" % (PROG, e), file=sys.stderr)
        return 1
    except Exception as e:
        from profiler.pipeline import JobFailed
        if isinstance(e, JobFailed):
            print("%s: error: %s (the previous output, if any, is unchanged)" % (PROG, e), file=sys.stderr)
            return 1
        raise


def _logging(args):
    level = logging.ERROR if args.quiet else logging.DEBUG if args.verbose else logging.INFO
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    for name in ("archive-profiler", "mrjob"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level if name == "archive-profiler" or args.verbose else max(level, logging.INFO))
        logger.propagate = False


if __name__ == "__main__":
    sys.exit(main())
