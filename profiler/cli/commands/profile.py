"""`archive-profiler profile`: indexes and crawl files in, a sorted CDXJ archive profile out."""

import argparse
import os
import re

from profiler.formats.inputs import DEFAULT_SPLIT_SIZE, MIN_SPLIT_SIZE
from profiler.run.progress import wanted
from profiler.cli.arguments import cores
from profiler.errors import printable
from profiler.runtime.preflight import MAX_CORES

NAME = "profile"


def HELP():
    from profiler.formats import registry
    return "profile indexes and crawl files (%s) into a CDXJ archive profile" % ", ".join(
        name for name, f in registry.FORMATS.items() if not f.internal)


def DESCRIPTION():
    from profiler.formats import registry
    return ("Profile input files (%s; plain, .gz or .bz2; files, folders, glob patterns or manifests "
            "of paths) into a sorted CDXJ archive profile. The mrjob runner (-r) is inline (in this "
            "process) unless given: local runs task processes on --cores, the cluster runners are in "
            "docs/cluster.md. Arguments after '--' go to mrjob unchanged."
            % registry.listing(conjunction="and"))
TAKES_EXTRA = True


def size(text):
    """Parse a size such as 64M, 512k or 1G into bytes."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower().rstrip("b")
    mult = units.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in units else text
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", number):          # ASCII digits: float() takes others too
        raise argparse.ArgumentTypeError("not a size: %r (e.g. 64M)" % text[:40])
    value = int(float(number) * mult)
    if value <= 0:
        raise argparse.ArgumentTypeError("size must be positive")
    return value


def split_size(text):
    """A --split-size: a size of at least MIN_SPLIT_SIZE."""
    value = size(text)
    if value < MIN_SPLIT_SIZE:
        raise argparse.ArgumentTypeError("must be at least %dM (smaller splits only add map tasks)"
                                         % (MIN_SPLIT_SIZE >> 20))
    return value


def add_arguments(p):
    p.add_argument("inputs", nargs="*", metavar="INPUT",
                   help="index or crawl files, folders, glob patterns, - for an index on standard input "
                        "(or only --manifest)")
    p.add_argument("-o", "--output", metavar="OUT.cdxj", help="the profile (- for standard output); "
                   "required but with --dry-run")
    from profiler.model.policy import available
    p.add_argument("--policy", default="default",
                   help="policy YAML file or bundled name: %s (default: default)" % ", ".join(available()))
    p.add_argument("-r", "--runner", default="inline",
                   choices=["inline", "local", "spark", "hadoop", "emr", "dataproc"])
    p.add_argument("-c", "--conf-path", action="append", default=[], metavar="MRJOB_CONF",
                   help="mrjob.conf file (repeatable)")
    p.add_argument("--archive-uri", default=None, help="URI of the archive, for the !id line")
    p.add_argument("--no-resolve-revisits", dest="resolve_revisits", action="store_false",
                   help="do not give revisits the mime and status of their original")
    p.add_argument("--split-size", type=split_size, default=DEFAULT_SPLIT_SIZE,
                   help="bytes of uncompressed input per map task (default 64M, at least 1M; the local runner "
                        "rounds the number of map tasks to a multiple of --cores)")
    p.add_argument("--cores", type=cores, default=None, help="processes for the local runner (1 to %d)"
                   % MAX_CORES)
    p.add_argument("--manifest", action="append", default=[], help="file listing input paths, one per line")
    p.add_argument("--format", default="cdxj", choices=["cdxj", "ukvs", "ukvs:surt,datetime"],
                   help="cdxj: an archive profile (default); ukvs: a MementoMap keyed by surt "
                        "(ukvs:surt,datetime: by surt and datetime), as `archive-profiler ukvs` makes it")
    p.add_argument("--dry-run", action="store_true",
                   help="list the inputs, their formats and the splits, and estimate the profile's size and the "
                        "run's time from a sample; write nothing")
    p.add_argument("--warc-reader", default="warcio", choices=["warcio", "fastwarc"],
                   help="reader of WARC files: fastwarc is faster, same profile (needs the fastwarc extra)")
    p.add_argument("--detect-language", action="store_true",
                   help="WARC/ARC HTML responses that declare no language get the language of their text, "
                        "by CLD2 (a policy with lang levels; needs the detect extra; indexes ignore it)")
    p.add_argument("--collection-pattern", metavar="REGEX",
                   help="the collection field (a policy with collection levels) is the first group of REGEX "
                        "searched in each capture's WARC file name (CDX g, CDXJ filename, a WARC/ARC/ACHE "
                        "file's own name; its first 1,000 bytes); no back-references or look-around")
    p.add_argument("--collection", metavar="LABEL",
                   help="the collection of captures no pattern or --input-collection names (default: unk)")
    p.add_argument("--input-collection", action="append", default=[], metavar="LABEL=PATH",
                   help="the collection of the inputs at or under PATH that the pattern does not name "
                        "(repeatable; the first that holds an input counts)")


def run(args):
    if not args.inputs and not args.manifest:
        from profiler.errors import UserError
        raise UserError("profile: give INPUT files or --manifest FILE")
    if args.dry_run:
        from profiler.run import dryrun
        if "-" in args.inputs:
            from profiler.errors import UserError
            raise UserError("--dry-run reads files, not standard input")
        return dryrun.report(args.inputs, args.manifest, args.runner, args.split_size, args.cores, args.policy,
                             args.resolve_revisits, args.warc_reader, detect_language=args.detect_language)
    if not args.output:
        from profiler.errors import UserError
        raise UserError("profile: -o/--output is required (or --dry-run)")
    if args.cores is not None and args.runner == "inline":
        import logging
        logging.getLogger("archive-profiler").warning(
            "--cores is for the local runner: the inline runner runs in this one process (-r local to use %d)",
            args.cores)
    if "-" in args.inputs:
        return _run_on_stdin(args)
    if args.format != "cdxj":
        return _run_to_map(args)
    import time
    from profiler.run.profile import run_profile
    wall, cpu = time.monotonic(), _cpu()
    done = run_profile(args.inputs, args.output, args.policy, args.runner, args.conf_path,
                       args.archive_uri, args.resolve_revisits, args.split_size, args.cores,
                       args.manifest, args.extra, warc_reader=args.warc_reader, progress=wanted(args.quiet),
                       detect_language=args.detect_language, input_names=getattr(args, "input_names", None),
                       collections=collection_options(args))
    if not args.quiet:
        import sys
        for line in summary_lines(done["summary"], args.output, time.monotonic() - wall, _cpu() - cpu):
            print(printable("archive-profiler: " + line), file=sys.stderr)
    return 0


def collection_options(args):
    """run_profile's collections: the pattern, the run's label, the inputs' labels."""
    from profiler.model import collection
    return {"pattern": args.collection_pattern, "label": args.collection,
            "input_labels": [collection.parse_input_label(text) for text in args.input_collection]}


def _cpu():
    """CPU seconds of this process and its waited-for children (the tasks of a local run)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def summary_lines(summary, output, wall, cpu):
    """The end-of-run summary, the same on every runner and whatever the output (a file, standard
    output, a cluster's filesystem): from the figures counted while the profile was written
    (profiler.run.profile.run_profile's "summary"), not from reading it back."""
    from profiler.io.names import display_name
    run, root = summary["run"], summary["root"]
    skipped = run.get("skipped") or {}
    out = ["%s captures, %s URI-Rs, %s bytes (%s after deduplication) from %d input(s)" % (
        "{:,}".format(run.get("captures", 0)), "{:,}".format(root.get("urir", 0)),
        "{:,}".format(root.get("bytes", 0)), "{:,}".format(root.get("dedup_bytes", 0)),
        len(run.get("inputs", ())))]
    if skipped:
        out.append("skipped: " + ", ".join("%s %s" % (k, "{:,}".format(v)) for k, v in sorted(skipped.items())))
    for item in run.get("skipped_files", ()):
        out.append("refused %s: %s" % (display_name(item["path"]), item["reason"]))
    for item in run.get("duplicate_inputs", ()):
        out.append("not read twice: %s (the same file as %s)" % (item["path"], item["same_as"]))
    out.append("%s: %s lines, %.1f MB, in %.1f s (%.1f CPU-s)" % (
        "standard output" if output == "-" else output, "{:,}".format(summary["lines"]), summary["bytes"] / 1e6,
        wall, cpu))
    return out


def _run_on_stdin(args):
    """`profile -`: an index piped in is saved to a temp folder first (splits and tasks read
    files), profiled, and the folder removed; !meta names it '-'."""
    import shutil
    import sys
    from profiler.cli.stdio import refuse_endless_stdin
    from profiler.files import outfiles
    refuse_endless_stdin()
    _refuse_stdin_given_twice(args)
    made = []                               # the work folder, once made
    try:
        folder = outfiles.work_folder("archive-profiler-stdin-", record=made.append)
        path = os.path.join(folder, "stdin")
        with open(path, "wb") as f:
            shutil.copyfileobj(sys.stdin.buffer, f, 1 << 20)
        args.inputs = [path if i == "-" else i for i in args.inputs]
        args.input_names = {path: "-"}
        return run(args)
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)


def _refuse_stdin_given_twice(args):
    """A UserError when standard input is a file (``< FILE``) that is also the output (it would be
    replaced by its own profile) or another input (its copy is another file: its captures would
    be counted twice, where a file named twice is read once)."""
    from profiler.errors import UserError
    from profiler.files import outfiles
    from profiler.formats import inputs as inputs_mod
    from profiler.io.names import display_name
    stdin = outfiles.standard_stream_file(0)
    if stdin is None:
        return
    outfiles.refuse_inputs(args.output, ["-"])
    others = [i for i in args.inputs if i != "-"]
    if not others and not args.manifest:
        return
    for path in inputs_mod.resolve(others, args.manifest or ()):
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            continue
        if (st.st_dev, st.st_ino) == (stdin.st_dev, stdin.st_ino):
            raise UserError("standard input is the input %s, given twice: give it once (its captures would be "
                            "counted twice)" % display_name(path))


def _run_to_map(args):
    """`profile --format ukvs`: the profile in a temp folder, then its MementoMap to -o."""
    import shutil
    from profiler.files import outfiles
    from profiler.run.profile import run_profile
    from profiler.files.ukvs import KEY_CHOICES, profile_to_map
    from profiler.formats import inputs as inputs_mod
    inputs = list(args.inputs)
    outfiles.refuse_inputs(args.output, inputs_mod.resolve(inputs, args.manifest))    # before the job
    keys = args.format.partition(":")[2] or "surt"
    made = []                               # the work folder, once made
    try:
        folder = outfiles.work_folder("archive-profiler-map-", record=made.append)
        profile = os.path.join(folder, "profile.cdxj")
        run_profile(inputs, profile, args.policy, args.runner, args.conf_path, args.archive_uri,
                    args.resolve_revisits, args.split_size, args.cores, args.manifest, args.extra,
                    warc_reader=args.warc_reader, progress=wanted(args.quiet), detect_language=args.detect_language,
                    input_names=getattr(args, "input_names", None), collections=collection_options(args))
        profile_to_map(profile, args.output, KEY_CHOICES[keys], args.archive_uri)
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)
    return 0
