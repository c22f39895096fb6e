"""`archive-profiler compact`: shrink a MementoMap or profile to a quota without false negatives."""

import sys

from profiler.cli.arguments import add_skip_bad_lines, positive_int, report_skipped
from profiler.errors import printable

NAME = "compact"
HELP = "shrink a UKVS map or CDXJ profile to a line or byte quota by rolling lines up into wildcards"
DESCRIPTION = ("Shrink a UKVS/MementoMap or a CDXJ profile to at most --max-lines lines or --max-bytes "
               "bytes (header lines included) by replacing groups of lines with their wildcard parent "
               "(path directory, host, host-label wildcard; in a profile only existing parent lines) "
               "or a SURT's lines with its all-time line, choosing the steps that add the fewest "
               "estimated false positives. Every URI the input answers as held is still answered as "
               "held. Reports the estimated false-positive rate before and after.")


def add_arguments(p):
    p.add_argument("file", metavar="FILE")
    p.add_argument("-o", "--output", required=True, metavar="OUT")
    quota = p.add_mutually_exclusive_group(required=True)
    quota.add_argument("--max-lines", type=positive_int, metavar="N", help="at most N lines, headers included")
    quota.add_argument("--max-bytes", type=positive_int, metavar="B", help="at most B bytes")
    add_skip_bad_lines(p)


def run(args):
    from profiler.files import outfiles
    outfiles.refuse_inputs(args.output, [args.file])
    from profiler.files.datalines import Skipped
    from profiler.toolkit.compact import compact_file
    skipped = Skipped(args.file) if args.skip_bad_lines else None
    report = compact_file(args.file, args.output, max_lines=args.max_lines, max_bytes=args.max_bytes,
                          skipped=skipped)
    report_skipped([skipped])
    if not args.quiet:
        print(printable(report.summary(args.output)), file=sys.stderr)
    return 0
