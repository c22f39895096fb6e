"""`archive-profiler report`: a CDXJ profile in, a self-contained HTML page of charts out."""

import sys

from profiler.report.holdings import DEFAULT_TOP
from profiler.cli.arguments import add_skip_bad_lines, positive_int, report_skipped
from profiler.errors import printable

NAME = "report"
HELP = "write a self-contained HTML holdings report (charts and tables) of a profile"
DESCRIPTION = ("Write a self-contained HTML page (it opens with no network) showing a CDXJ archive "
               "profile's holdings: captures and unique URLs per year, the MIME and status mix, the "
               "top TLDs and hosts, the savings from deduplication and the profile's header. Needs "
               "the 'report' extra (matplotlib, Jinja2).")


def add_arguments(p):
    p.add_argument("profile", metavar="PROFILE.cdxj")
    p.add_argument("-o", "--output", required=True, metavar="REPORT.html")
    p.add_argument("--png", metavar="DIR", default=None, help="also write each chart as DIR/CHART.png")
    p.add_argument("--top", type=positive_int, default=DEFAULT_TOP,
                   help="how many MIME types, TLDs and hosts the rankings show (default %d)" % DEFAULT_TOP)
    p.add_argument("--title", default=None, help="page title (default: 'Holdings of' the archive's URI)")
    add_skip_bad_lines(p)


#: names whose suffix says another format than the HTML the report is: refused, not written as HTML
OTHER_FORMATS = {".pdf": "a PDF", ".png": "a PNG image", ".svg": "an SVG image", ".jpg": "a JPEG image",
                 ".jpeg": "a JPEG image", ".json": "JSON", ".csv": "CSV", ".txt": "text", ".md": "Markdown",
                 ".cdxj": "a CDXJ profile", ".ukvs": "a UKVS map"}


def refuse_other_format(output):
    """A UserError when the output's name says a format other than HTML (``-o r.pdf``: the page
    would be HTML under a PDF's name)."""
    import os
    from profiler.errors import UserError
    kind = OTHER_FORMATS.get(os.path.splitext(output)[1].lower())
    if kind:
        raise UserError("report writes an HTML page: -o %s names %s; give a name ending .html "
                        "(each chart as a PNG file: --png DIR)" % (output, kind))


def run(args):
    from profiler.files import outfiles
    outfiles.refuse_inputs(args.output, [args.profile])
    refuse_other_format(args.output)
    from profiler.files.datalines import Skipped
    from profiler.report.holdings import write_report
    skipped = Skipped(args.profile) if args.skip_bad_lines else None
    summary = write_report(args.profile, args.output, args.png, args.top, args.title, skipped)
    report_skipped([skipped])
    if not args.quiet:
        missing = " (not drawn, keys absent: %s)" % ", ".join(summary["missing"]) if summary["missing"] else ""
        print(printable("%s: %d charts%s" % (summary["output"], len(summary["charts"]), missing)), file=sys.stderr)
        if summary["pngs"]:
            print(printable("%d PNG files in %s" % (len(summary["pngs"]), args.png)), file=sys.stderr)
    return 0
