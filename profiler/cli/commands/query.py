"""`archive-profiler query`: answers and rankings from a profile's lines, without a rescan."""

import sys

NAME = "query"
HELP = "answer questions from a profile: one key, a group of keys, top-N rankings"
DESCRIPTION = ("Read the lines of a CDXJ profile that answer a question, with a binary search on "
               "the sorted file. Key fields not given are '-' (any); --group FIELD lets a field vary "
               "over its values. Examples: --surt 'com,cnn)/*'; --surt 'com,*' --datetime 2013 "
               "--mime text/html --status 2xx; biggest sites: --level host --top 10 --by bytes; "
               "bytes by type under com: --surt 'com,*' --group mime --by bytes; average size of "
               "JPEGs: --mime image/jpeg --feature avg_bytes; in a profile whose keys have lang: "
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
    p.add_argument("--top", type=int, default=None, metavar="N", help="the N lines with the largest --by")
    p.add_argument("--by", default=None, metavar="FEATURE", help="rank by this feature, largest first")


def run(args):
    from profiler import jsonnum
    from profiler.files.profilefile import unflatten
    from profiler.cli.arguments import criteria_values
    from profiler.toolkit.query import feature_name, feature_value, query
    from profiler.errors import UserError

    features = [feature_name(f) for f in args.feature]
    if args.top is not None and args.top < 1:
        raise UserError("--top must be at least 1")
    group = list(args.group)
    if (args.under is not None or args.level is not None) and "surt" not in group:
        group.append("surt")
    fixed = {"surt": args.surt}
    fixed.update(criteria_values(args))
    found, note, seeks = query(args.profile, fixed, group, args.under, args.level, args.top, args.by)
    out = sys.stdout.buffer
    for key, flat in found:
        bounds = flat.get("bounds") or {}
        if features:
            value = {f: feature_value(flat, f) for f in features}
            if any(f in bounds for f in features):
                value["bounds"] = {f: bounds[f] for f in features if f in bounds}
        else:
            value = unflatten(flat, bounds, flat.get("extras"))
        out.write(key.encode("utf-8") + b" " + jsonnum.dumps(value) + b"\n")
    out.flush()
    if note:
        if not args.quiet:
            print("%s: %s" % (args.profile, note), file=sys.stderr)
        return 1
    return 0
