"""`archive-profiler overlap`: how two archives' holdings overlap, per SURT level."""

import sys

from profiler.cli.arguments import add_skip_bad_lines, report_skipped

NAME = "overlap"
HELP = "how two profiles' (or maps') holdings overlap, per SURT level"
DESCRIPTION = ("Walk two sorted profiles (or UKVS maps) together and count, per SURT level (root, "
               "tld, domain, host, path, url), the keys held by only A, only B and both, the Jaccard "
               "index of the key sets and the share of each archive's captures under shared keys. "
               "Compares the keys whose other fields are all '-' unless an option of a criterion "
               "(--datetime, --mime, --status; --lang and the other optional ones in profiles whose "
               "keys have them) says otherwise. One JSON line per level; "
               "--lines prints the per-key results first.")


def add_arguments(p):
    from profiler.cli.arguments import add_criteria_options
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    add_criteria_options(p, _help)
    p.add_argument("--lines", action="store_true",
                   help="also print KEY {\"in\":\"a\"|\"b\"|\"both\",\"a\":..,\"b\":..} per compared key")
    add_skip_bad_lines(p)


def _help(c):
    if c.name == "datetime":
        return "compare keys of this datetime (default: '-', or ':' in a map, all time)"
    return "compare keys of this %s (default '-'%s)" % (c.name, "; profiles whose keys have %s" % c.name
                                                        if c.optional else "")


def run(args):
    from profiler import jsonnum
    from profiler.cli.arguments import criteria_values
    from profiler.toolkit.diff import overlap, overlap_summary

    from profiler.files.datalines import Skipped
    where = criteria_values(args)
    skipped = [Skipped(args.a), Skipped(args.b)] if args.skip_bad_lines else None
    pairs, levels = overlap(args.a, args.b, where, skipped)
    report_skipped(skipped or [])
    out = sys.stdout.buffer
    for key, where, a, b in pairs:
        if args.lines:
            small = lambda v: None if v is None else {k: v[k] for k in ("urim.total", "urir") if k in v}
            out.write(key + b" " + jsonnum.dumps({"in": where, "a": small(a), "b": small(b)}) + b"\n")
    for row in overlap_summary(levels):
        out.write(jsonnum.dumps(row) + b"\n")
    out.flush()
    return 0
