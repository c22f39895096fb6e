"""`archive-profiler split`: a sorted profile or map into linked pages of at most N lines."""

import sys

from profiler.cli.arguments import add_skip_bad_lines, positive_int, report_skipped
from profiler.errors import printable

NAME = "split"
HELP = "split a profile or map into sorted, self-describing pages that link to each other"
DESCRIPTION = ("Split a sorted CDXJ profile or UKVS map into pages PREFIX-00001.EXT ... of at most "
               "--max-lines data lines. Every page keeps the header lines and gets a !meta "
               "{\"page\":...} line with its key range and links to the first, previous, next and "
               "last pages; concatenating the pages' data lines gives back the original's.")


def add_arguments(p):
    p.add_argument("input", metavar="FILE")
    p.add_argument("--max-lines", type=positive_int, required=True, metavar="N")
    p.add_argument("-o", "--prefix", default=None, metavar="PREFIX",
                   help="pages are PREFIX-00001.EXT ...; a folder (DIR/ or an existing one): DIR/NAME-00001.EXT "
                        "(default: FILE without its extension)")
    p.add_argument("--base-uri", default=None,
                   help="links are BASE_URI + page file name (default: the bare file names)")
    add_skip_bad_lines(p)


def run(args):
    from profiler.files.datalines import Skipped
    from profiler.toolkit.split import split
    skipped = Skipped(args.input) if args.skip_bad_lines else None
    pages = split(args.input, args.max_lines, args.prefix, args.base_uri, skipped)
    report_skipped([skipped])
    if not args.quiet:
        _say("%d page(s): %s%s" % (len(pages), pages[0], " ... " + pages[-1] if len(pages) > 1 else ""))
    return 0


def _say(text):
    """A line on stderr, its control characters escaped (file names are quoted in it)."""
    print(printable(text), file=sys.stderr)
