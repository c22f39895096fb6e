"""`archive-profiler diff`: per-key changes between two profiles (or two maps)."""

import sys

from profiler.cli.arguments import add_skip_bad_lines, report_skipped

NAME = "diff"
HELP = "per-key changes between two profiles or maps: what appeared, vanished, grew, shrank"
DESCRIPTION = ("Compare two sorted profiles (or two UKVS maps) key by key in one streaming pass. "
               "Prints one line per changed key, KEY {\"change\":..,\"delta\":{..},\"old\":{..},"
               "\"new\":{..}}, in key order; change is appeared, vanished, grew or shrank (captures) "
               "or changed (same captures, other features), or with --skip-bad-lines damaged (a "
               "line skipped: not known). The counts go to stderr. Both files are "
               "checked whole first: a damaged or unsorted one is refused before a line is printed.")


def add_arguments(p):
    from profiler.toolkit.diff import CHANGES
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    p.add_argument("--feature", action="append", default=[], metavar="NAME",
                   help="compare and print only these features (default: all; repeatable)")
    p.add_argument("--only", action="append", default=[], choices=CHANGES,
                   help="print only this kind of change (repeatable)")
    p.add_argument("--summary", action="store_true", help="print only the counts, as JSON, to stdout")
    add_skip_bad_lines(p)


def run(args):
    from profiler import jsonnum
    from profiler.toolkit.diff import diff, diff_value
    from profiler.files.profilefile import FEATURES
    from profiler.toolkit.query import feature_name

    from profiler.files.datalines import Skipped
    features = [feature_name(f) for f in args.feature] or list(FEATURES)
    skipped = [Skipped(args.old), Skipped(args.new)] if args.skip_bad_lines else None
    changes, summary = diff(args.old, args.new, features, set(args.only), skipped)
    report_skipped(skipped or [])
    out = sys.stdout.buffer
    for key, change, old, new in changes:
        if not args.summary:
            out.write(key + b" " + diff_value(change, old, new, features) + b"\n")
    if args.summary:
        out.write(jsonnum.dumps(summary) + b"\n")
    elif not args.quiet:
        print(" ".join("%s=%d" % kv for kv in summary.items()), file=sys.stderr)
    out.flush()
    return 0
