"""`archive-profiler query`: answers and rankings from a profile's lines, without a rescan."""

import sys

from profiler.cli.arguments import add_skip_bad_lines, positive_int, report_skipped
from profiler.errors import printable

NAME = "query"
HELP = "answer questions from a profile: one key, a group of keys, top-N rankings"
DESCRIPTION = ("Read the lines of a CDXJ profile that answer a question, with a binary search on "
               "the sorted file. Key fields not given are '-' (any); --group FIELD lets a field vary "
               "over its values. Examples: --surt 'com,cnn)/*'; --surt 'com,*' --datetime 2013 "
               "--mime text/html --status 2xx; biggest sites: --level host --top 10 --by bytes; "
               "bytes by type under com: --surt 'com,*' --group mime --by bytes; average bytes of "
               "a JPEG capture: --mime image/jpeg --feature avg_bytes; in a profile whose keys have lang: "
               "Arabic captures under com: --surt 'com,*' --lang ara; languages by captures: "
               "--group lang --by urim.")


def add_arguments(p):
    from profiler.cli.arguments import add_criteria_options, needs_keys
    from profiler.toolkit.query import FEATURE_NAMES, LEVELS, key_fields
    p.add_argument("profile", metavar="PROFILE.cdxj")
    p.add_argument("--surt", default=None, help="SURT key, e.g. '*', 'com,*', 'com,cnn)/*' (default '*')")
    add_criteria_options(p, lambda c: "%s%s (default '-': any)" % (c.example or c.describe, needs_keys(c)))
    p.add_argument("--group", action="append", default=[], choices=key_fields(),
                   help="let this key field vary over its values (repeatable)")
    p.add_argument("--under", default=None, metavar="PREFIX",
                   help="SURT prefix the varying surt must start with ('com,', 'com,cnn)/')")
    p.add_argument("--level", default=None, choices=LEVELS, help="keep keys of one SURT level")
    p.add_argument("--feature", action="append", default=[], metavar="NAME",
                   help="print only these features (%s; repeatable)" % ", ".join(FEATURE_NAMES))
    p.add_argument("--top", type=positive_int, default=None, metavar="N", help="the N lines with the largest --by")
    p.add_argument("--by", default=None, metavar="FEATURE", help="rank by this feature, largest first")
    p.add_argument("--from", dest="range_from", default=None, metavar="PERIOD",
                   help="a datetime range from this period (YYYY, YYYYMM or YYYYMMDD; with --to, inclusive): "
                        "exact features, and bounds for the others")
    p.add_argument("--to", dest="range_to", default=None, metavar="PERIOD", help="a datetime range to this period")
    from profiler.toolkit.ranges import prefix_levels
    p.add_argument("--series", default=None, choices=[lv.name for lv in prefix_levels()],
                   help="one line per period of this level (over the range, or over all time)")
    add_skip_bad_lines(p)


def run(args):
    from profiler import jsonnum
    from profiler.files.profilefile import unflatten
    from profiler.cli.arguments import criteria_values
    from profiler.toolkit.query import Caveat, QueryError, feature_name, query, selected
    from profiler.files.datalines import Skipped

    features = [feature_name(f) for f in args.feature]
    group = list(args.group)
    varying = [o for o, given in (("--group surt", "surt" in group), ("--under", args.under is not None),
                                  ("--level", args.level is not None)) if given]
    if args.surt is not None and varying:
        prefix = args.surt[:-1] if args.surt.endswith("*") else args.surt
        raise QueryError("--surt %r fixes one key; with %s the SURT varies: to vary it under that prefix, "
                         "give --under %r instead of --surt" % (args.surt, " and ".join(varying), prefix))
    if (args.under is not None or args.level is not None) and "surt" not in group:
        group.append("surt")
    fixed = {"surt": args.surt}
    fixed.update(criteria_values(args))
    skipped = Skipped(args.profile) if args.skip_bad_lines else None
    if args.range_from is not None or args.range_to is not None or args.series:
        found, note = _over_time(args, fixed, group, skipped)
    else:
        found, note, seeks = query(args.profile, fixed, group, args.under, args.level, args.top, args.by, skipped)
    report_skipped([skipped])
    out = sys.stdout.buffer
    for key, flat in found:
        if features:
            value = selected(flat, features)
        else:
            value = unflatten(flat, flat.get("bounds") or {}, flat.get("extras"))
        out.write(key.encode("utf-8") + b" " + jsonnum.dumps(value) + b"\n")
    out.flush()
    if note:
        if not args.quiet:
            print(printable("%s: %s" % (args.profile, note)), file=sys.stderr)
        return 0 if isinstance(note, Caveat) else 1
    return 0


def _over_time(args, fixed, group, skipped=None):
    """(key, flat) answers of a range (--from, --to) or a series (--series), and a note when
    nothing is held."""
    from profiler.toolkit import ranges
    from profiler.toolkit.query import SortedProfile, key_values, with_left_out
    rng = None
    if args.range_from is not None or args.range_to is not None:
        rng = ranges.parse_range(args.range_from, args.range_to)
    if args.series:
        if group or args.top or args.by:
            raise ranges.RangeError("--series answers one key: it takes no --group, --under, --level, --top or --by")
        with SortedProfile(args.profile, skipped) as profile:
            values = key_values(profile, fixed)
            lines = ranges.Lines(profile, budget=float("inf"))
            found = ranges.series(lines, values, args.series, rng)
            none = None if found else _nothing_held(profile, values, "that time")
        return [(a.key, a.flat) for a in found], with_left_out(none, lines.left_out, found)
    if group:
        found, note = ranges.grouped(args.profile, fixed, group, args.under, args.level, rng, args.top, args.by,
                                     skipped)
        return [(a.key, a.flat) for a in found], note or (None if found else "no captures in %s" % rng.text)
    with SortedProfile(args.profile, skipped) as profile:
        values = key_values(profile, fixed)
        lines = ranges.Lines(profile, budget=float("inf"))
        found = ranges.answer(lines, values, rng)
        if not ranges.may_hold(found.flat):
            return [], with_left_out(_nothing_held(profile, values, rng.text), lines.left_out, False)
    return [(found.key, found.flat)], with_left_out(None, lines.left_out, True)


def _nothing_held(profile, values, when):
    from profiler.toolkit.query import nothing_held
    return nothing_held(profile, values, when)[1]
