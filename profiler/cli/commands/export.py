"""`archive-profiler export`: a profile in another serialisation (JSON-LD), streamed."""

import sys

from profiler.cli.arguments import add_skip_bad_lines, report_skipped
from profiler.errors import printable

NAME = "export"
HELP = "write a profile as JSON-LD (nested per key field), streaming"
DESCRIPTION = ("Write a CDXJ profile as one JSON-LD document: its @context and @id, its !meta lines under "
               "\"meta\", and its lines nested per key field (SURT, then datetime, mime, status, ...) under "
               "\"profile\", each line's value as the profile has it. The file is checked whole first; "
               "memory does not grow with its size.")


def add_arguments(p):
    p.add_argument("profile", metavar="PROFILE")
    p.add_argument("--format", default="jsonld", choices=["jsonld"])
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the document ('-': standard output)")
    add_skip_bad_lines(p)


def run(args):
    from profiler.files import outfiles
    from profiler.files.datalines import Skipped
    from profiler.toolkit.export import export
    if args.output != outfiles.STDOUT:
        outfiles.refuse_inputs(args.output, [args.profile])
    skipped = Skipped(args.profile) if args.skip_bad_lines else None
    lines = export(args.profile, args.output, args.format, skipped)
    report_skipped([skipped])
    if not args.quiet:
        print(printable("%s: %d lines as %s" % (args.output, lines, args.format)), file=sys.stderr)
    return 0
