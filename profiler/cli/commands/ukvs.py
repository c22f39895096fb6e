"""`archive-profiler ukvs`: a CDXJ profile in, a UKVS/MementoMap out (spec section 5)."""

import sys

from profiler.cli.arguments import add_skip_bad_lines, report_skipped
from profiler.errors import printable

NAME = "ukvs"
HELP = "write the MementoMap (UKVS) of a CDXJ profile"
DESCRIPTION = ("Write the UKVS/MementoMap of a CDXJ archive profile: one 'SURT urim/urir' line per "
               "all-time profile line (--keys surt), or 'SURT DATETIME urim/urir' lines with ':' "
               "for all time (--keys surt,datetime). Counts are exact; the map is byte-wise sorted. "
               "The profile is checked whole first: a damaged or unsorted one is refused.")


def add_arguments(p):
    p.add_argument("profile", metavar="PROFILE.cdxj")
    p.add_argument("-o", "--output", required=True, metavar="MAP.ukvs")
    p.add_argument("--keys", default="surt", choices=["surt", "surt,datetime"],
                   help="key fields of the map (default: surt)")
    p.add_argument("--archive-uri", default=None, help="URI of the archive for the !id line "
                   "(default: the profile's)")
    add_skip_bad_lines(p)


def run(args):
    from profiler.files import outfiles
    from profiler.files.datalines import Skipped
    from profiler.files.ukvs import KEY_CHOICES, profile_to_map
    outfiles.refuse_inputs(args.output, [args.profile])
    skipped = Skipped(args.profile) if args.skip_bad_lines else None
    n = profile_to_map(args.profile, args.output, KEY_CHOICES[args.keys], args.archive_uri, skipped=skipped)
    report_skipped([skipped])
    if not args.quiet:
        print(printable("%s: %d records" % (args.output, n)), file=sys.stderr)
    return 0
