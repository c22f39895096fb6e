"""Comparing two sorted profiles (or two maps) key by key: diff (what changed) and overlap.

Both walk the two files together in one streaming pass (a sorted merge join): memory does not
grow with the files. A profile's records are its flattened features; a map's are
``{"urim.total": n, "urir": m}`` (its marks are kept under "marks").
"""

import math

from profiler import jsonnum
from profiler.errors import UserError
from profiler.files import coverage, layout as layouts, pages, ukvs
from profiler.files.datalines import DAMAGED, DataFile, Skipped
from profiler.files.profilefile import FEATURES, flatten
from profiler.toolkit.query import LEVELS, surt_level

CHANGES = ("appeared", "vanished", "grew", "shrank", "changed", "damaged")


class DiffError(UserError):
    """Files that cannot be compared (different formats or key fields, unsorted)."""


def records(path, skipped=None):
    """(kind, iterator of (key bytes, flat dict)) of a profile or map, every line checked
    (profiler.files.datalines): a damaged one is a one-line error, or with ``skipped``
    counted there and left out; a line out of order is an error."""
    found = DataFile(path)
    return found.kind, _records(found, skipped)


def _records(found, skipped=None, damaged=False):
    """(key bytes, flat dict) of the checked data lines of a profile or map (a DataFile):
    a profile's flattened features, a map's urim and urir (and its marks); with ``damaged``,
    (key as read, DAMAGED) of each line skipped."""
    for record in found.records(skipped, damaged=damaged):
        if record.value is DAMAGED:
            yield record.key, DAMAGED
        elif found.kind == "cdxj":
            yield record.key, flatten(record.value)
        else:
            yield record.key, _map_flat(record.value)


def _map_flat(f):
    """A map line's Frequency as a flat dict."""
    flat = {"urim.total": f.urim, "urir": f.urir}
    if f.urim_mark or f.urir_mark:
        flat["marks"] = ukvs.format_frequency(f)
    return flat


def key_fields(found):
    """A file's key fields (a DataFile): a profile's !keys (profiler.files.layout), a map's
    !fields, else None."""
    return list(found.names) if found.names is not None else None


def join(a, b):
    """Sorted merge join of two (key, value) iterators: (key, value in a or None, value in b or None)."""
    a, b = iter(a), iter(b)
    x, y = next(a, None), next(b, None)
    while x is not None or y is not None:
        if y is None or (x is not None and x[0] < y[0]):
            yield x[0], x[1], None
            x = next(a, None)
        elif x is None or y[0] < x[0]:
            yield y[0], None, y[1]
            y = next(b, None)
        else:
            yield x[0], x[1], y[1]
            x, y = next(a, None), next(b, None)


def _open_pair(path_a, path_b, verb="compare", skipped=None):
    """(kind, the two DataFiles, their records): both files of one kind and key fields, each
    read whole and checked before a line is compared (profiler.files.datalines), so that a
    damaged or unsorted file is refused before anything is printed. ``skipped``: a Skipped
    per file, to skip damaged lines (counted there) instead; their keys are then given with
    the value DAMAGED, a key neither held nor not held."""
    files = [DataFile(path_a), DataFile(path_b)]
    for path, found in zip((path_a, path_b), files):
        pages.require_whole(path, found.headers, "diff" if verb == "diff" else "overlap")
    kind_a, kind_b = files[0].kind, files[1].kind
    if kind_a != kind_b:
        raise DiffError("cannot compare a %s with a %s" % (
            "profile" if kind_a == "cdxj" else "map", "profile" if kind_b == "cdxj" else "map"))
    if kind_a == "cdxj":
        layouts.require_same(verb, [path_a, path_b], [f.layout for f in files])
        _require_one_policy(verb, path_a, path_b, files)
    else:
        _require_one_map_policy(verb, path_a, path_b, files)
    for path, found in zip((path_a, path_b), files):
        if any(n == "!meta" and isinstance(v, dict) and "compacted" in v for n, v in found.headers):
            raise DiffError("cannot %s: %s is compacted: the keys it rolled up into coarser lines would read "
                            "as %s; compare the files it was compacted from" % (
                                verb, path, "vanished or appeared" if verb == "diff" else "held by one file only"))
    fields_a, fields_b = key_fields(files[0]), key_fields(files[1])
    if (fields_a and fields_b and fields_a != fields_b) or files[0].nkeys != files[1].nkeys:
        raise DiffError("cannot %s: %s has keys %s, %s has %s" % (
            verb, path_a, " ".join(fields_a or ["(%d fields)" % files[0].nkeys]),
            path_b, " ".join(fields_b or ["(%d fields)" % files[1].nkeys])))
    skipped = skipped or [None, None]
    for found, s in zip(files, skipped):
        found.check(s)
    again = [None if s is None else Skipped(s.path) for s in skipped]
    return kind_a, files, [_records(f, s, damaged=s is not None) for f, s in zip(files, again)]


def _policy(found):
    """The policy a profile's !meta names (its dict), or None."""
    return next((v["policy"] for n, v in found.headers
                 if n == "!meta" and isinstance(v, dict) and isinstance(v.get("policy"), dict)), None)


def _unnamed(policy):
    """A policy's values but its name: a copy of a policy renamed writes the same keys."""
    return {k: v for k, v in policy.items() if k != "name"}


def _require_one_policy(verb, path_a, path_b, files):
    """A DiffError for profiles whose !meta name different policies: a key one policy never
    writes would be reported as vanished or appeared, or as held by one file only, though both
    hold its captures."""
    a, b = (_policy(f) for f in files)
    if a is not None and b is not None and _unnamed(a) != _unnamed(b):
        raise DiffError("cannot %s: %s and %s were made by different policies (%s, %s): a key one of them "
                        "never writes would read as %s; compare profiles of one policy" % (
                            verb, path_a, path_b, str(a.get("name"))[:40], str(b.get("name"))[:40],
                            "vanished or appeared" if verb == "diff" else "held by one file only"))


def _require_one_map_policy(verb, path_a, path_b, files):
    """A DiffError for maps made from profiles of different policies (their !meta source
    policy, or the coverage their lines have): as for profiles, a key one policy never writes
    would read as vanished or appeared, or as held by one file only."""
    same, names = coverage.same_map_policy(files[0].headers, files[1].headers)
    if not same:
        raise DiffError("cannot %s: %s and %s are maps made from profiles of different policies (%s, %s): a key "
                        "one of them never writes would read as %s; compare maps of one policy" % (
                            verb, path_a, path_b, str(names[0])[:40], str(names[1])[:40],
                            "vanished or appeared" if verb == "diff" else "held by one file only"))


def _past_cut(found, key, value, skipped=None):
    """A key's value in a file (a DataFile being read), DAMAGED when the file has no line for
    it because it was cut short before it (found.cut_at), or because a damaged line whose key
    could not be read may have been its line (``skipped``: the Skipped of the file's check)."""
    if value is None and (found.cut_at is not None and key > found.cut_at or
                          skipped is not None and skipped.may_hold(key + b" {", cut=False)):
        return DAMAGED
    return value


def classify(old, new, features):
    """'appeared', 'vanished', 'grew', 'shrank', 'changed' (same captures, other features),
    'damaged' (the line of either file was damaged and skipped: what changed is not known) or None."""
    if old is DAMAGED or new is DAMAGED:
        return "damaged"
    if old is None:
        return "appeared"
    if new is None:
        return "vanished"
    o, n = old.get("urim.total") or 0, new.get("urim.total") or 0
    if n > o:
        return "grew"
    if n < o:
        return "shrank"
    if any(old.get(f) != new.get(f) for f in features) or old.get("marks") != new.get("marks"):
        return "changed"
    return None


def diff(old_path, new_path, features=None, only=None, skipped=None):
    """(iterator of (key, change, old flat or None, new flat or None) for the keys that differ,
    counts by change, filled in as the iterator is consumed). ``skipped``: [Skipped of OLD,
    Skipped of NEW] to skip damaged lines (counted there), else they are refused."""
    kind, files, (old, new) = _open_pair(old_path, new_path, "diff", skipped)
    skipped = skipped or [None, None]
    features = list(features or FEATURES)
    summary = dict.fromkeys(CHANGES + ("same",), 0)

    def it():
        for key, o, n in join(old, new):
            o, n = (_past_cut(found, key, v, s) for found, v, s in zip(files, (o, n), skipped))
            change = classify(o, n, features)
            summary[change or "same"] += 1
            if change and (not only or change in only):
                yield key, change, o, n
    return it(), summary


def diff_value(change, old, new, features):
    """The JSON block of a diff line: the change, the deltas of numeric features, old and new values."""
    out = {"change": change}
    if change == "damaged":
        out["damaged"] = [side for side, v in (("old", old), ("new", new)) if v is DAMAGED]
        old, new = (None if v is DAMAGED else v for v in (old, new))
    elif old is not None and new is not None:
        delta = {}
        for f in features:
            a, b = old.get(f), new.get(f)
            if isinstance(a, int) and isinstance(b, int) and a != b:
                delta[f] = b - a
        out["delta"] = delta
    pick = (lambda v: None if v is None else {f: v[f] for f in features + ["marks"] if f in v})
    out["old"] = pick(old)
    out["new"] = pick(new)
    return jsonnum.dumps(out)


def overlap(path_a, path_b, where=None, skipped=None):
    """Per SURT level: keys only in A, only in B, in both; captures of each under the shared keys.

    Only keys whose fields after the surt have the values ``where`` gives ({"datetime": "2013"};
    by default '-', or ':' for a map's datetime, "all time") are compared. Returns
    (iterator of (key, 'a'|'b'|'both'|'damaged', value in A, value in B), counts by level, filled
    in as the iterator is consumed). ``skipped``: as diff's; a key whose line either file
    skipped is counted as ``damaged``, in neither file nor both.
    """
    kind, files, (recs_a, recs_b) = _open_pair(path_a, path_b, "compare", skipped)
    skipped = skipped or [None, None]
    fields = key_fields(files[0]) or (["surt", "datetime"] if files[0].nkeys == 2 else ["surt"])
    where = {k: v for k, v in (where or {}).items() if v is not None}
    unknown = set(where) - set(fields[1:])
    if unknown:
        raise DiffError("these files have no %s key field (they have %s)" % (sorted(unknown)[0], ", ".join(fields)))
    for name, value in where.items():
        if not _fits(kind, files[0], name, value):
            raise DiffError("--%s %r is not a %s field of these files" % (name, value[:40], name))
    default = {"cdxj": "-", "ukvs": ukvs.ALL_TIME}[kind]
    rest = [where.get(f, default if f == "datetime" else "-") for f in fields[1:]]
    suffix = (" " + " ".join(rest)).encode("utf-8") if rest else b""

    def keep(recs):
        for key, value in recs:
            # a zero count (a map's "not held" line) is no holding
            if key.endswith(suffix) and key.count(b" ") == len(rest) and (
                    value is DAMAGED or value.get("urim.total") != 0):
                yield key, value

    levels = {}

    def generator():
        for key, a, b in join(keep(recs_a), keep(recs_b)):
            a, b = (_past_cut(found, key, v, s) for found, v, s in zip(files, (a, b), skipped))
            damaged = a is DAMAGED or b is DAMAGED
            surt = key.split(b" ", 1)[0].decode("utf-8", "replace")
            s = levels.setdefault(surt_level(surt), {"only_a": 0, "only_b": 0, "both": 0, "captures_a": 0,
                                                     "captures_b": 0, "shared_captures_a": 0,
                                                     "shared_captures_b": 0, "damaged": 0})
            a, b = (None if v is DAMAGED else v for v in (a, b))
            ca, cb = (a or {}).get("urim.total") or 0, (b or {}).get("urim.total") or 0
            s["captures_a"] += ca
            s["captures_b"] += cb
            if damaged:
                s["damaged"] += 1
                yield key, "damaged", a, b
                continue
            where = "both" if a is not None and b is not None else "a" if a is not None else "b"
            if where == "both":
                s["both"] += 1
                s["shared_captures_a"] += ca
                s["shared_captures_b"] += cb
            else:
                s["only_" + where] += 1
            yield key, where, a, b
        if any(found.cut_at is not None for found in files):
            for s in levels.values():
                s["cut_short"] = True       # keys past the cut are not even seen
    return generator(), levels


def _fits(kind, found, name, value):
    """Whether a value asked for (--datetime 2013) can be a key field of the file."""
    raw = value.encode("utf-8", "surrogateescape")
    if kind == "cdxj":
        return name not in found.layout.patterns or bool(found.layout.patterns[name].match(raw))
    if name == "datetime":
        return ukvs.datetime_span(value) is not None
    return bool(raw) and not any(c in raw for c in b" \t\n\r")


def overlap_summary(levels):
    """Summary rows in level order, with the Jaccard index of the key sets and captured shares.
    With keys whose line was damaged (``damaged``, only then in the row), the index is of the
    keys read, and ``jaccard_bounds`` holds it whatever those keys' lines held (and past the cut
    of a file cut short)."""
    out = []
    for level in LEVELS:
        s = levels.get(level)
        if not s:
            continue
        keys = s["only_a"] + s["only_b"] + s["both"]
        row = {"level": level}
        row.update(s)
        damaged, cut_short = row.pop("damaged"), row.pop("cut_short", False)
        row["jaccard"] = round(s["both"] / keys, 4) if keys else 0
        if damaged or cut_short:
            row["damaged"] = damaged
            # rounded outwards, so that they hold the index whatever its rounding; past a cut, a
            # file may hold any number of keys the other has not
            low = 0 if cut_short else s["both"] / (keys + damaged) if keys + damaged else 0
            high = (s["both"] + damaged) / (keys + damaged) if keys + damaged else 1
            row["jaccard_bounds"] = [math.floor(low * 1e4) / 1e4, math.ceil(high * 1e4) / 1e4]
        row["shared_share_a"] = round(s["shared_captures_a"] / s["captures_a"], 4) if s["captures_a"] else 0
        row["shared_share_b"] = round(s["shared_captures_b"] / s["captures_b"], 4) if s["captures_b"] else 0
        out.append(row)
    return out
