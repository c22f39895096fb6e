"""`archive-profiler overlap`: how two archives' holdings overlap, per SURT level."""

import sys

NAME = "overlap"
HELP = "how two profiles' (or maps') holdings overlap, per SURT level"
DESCRIPTION = ("Walk two sorted profiles (or UKVS maps) together and count, per SURT level (root, "
               "tld, domain, host, path, url), the keys held by only A, only B and both, the Jaccard "
               "index of the key sets and the share of each archive's captures under shared keys. "
               "Compares the keys whose other fields are all '-' unless --datetime/--mime/--status "
               "(and --lang, in profiles whose keys have it) say otherwise. One JSON line per level; "
               "--lines prints the per-key results first.")


def add_arguments(p):
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--datetime", default=None, help="compare keys of this datetime (default: '-', "
                   "or ':' in a map, all time)")
    p.add_argument("--mime", default=None, help="compare keys of this mime (default '-')")
    p.add_argument("--status", default=None, help="compare keys of this status (default '-')")
    p.add_argument("--lang", default=None, help="compare keys of this language (default '-'; profiles "
                   "whose keys have lang)")
    p.add_argument("--lines", action="store_true",
                   help="also print KEY {\"in\":\"a\"|\"b\"|\"both\",\"a\":..,\"b\":..} per compared key")


def run(args):
    from profiler import jsonnum
    from profiler.model.criteria import CRITERIA, LANG
    from profiler.toolkit.diff import overlap, overlap_summary
    from profiler.toolkit.lookup import language_query

    where = {c.name: getattr(args, c.name) for c in CRITERIA}
    if where[LANG.name] not in (None, "-"):
        where[LANG.name] = language_query(where[LANG.name])
    pairs, levels = overlap(args.a, args.b, where)
    out = sys.stdout.buffer
    for key, where, a, b in pairs:
        if args.lines:
            small = lambda v: None if v is None else {k: v[k] for k in ("urim.total", "urir") if k in v}
            out.write(key + b" " + jsonnum.dumps({"in": where, "a": small(a), "b": small(b)}) + b"\n")
    for row in overlap_summary(levels):
        out.write(jsonnum.dumps(row) + b"\n")
    out.flush()
    return 0
