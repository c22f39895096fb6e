"""Comparing two sorted profiles (or two maps) key by key: diff (what changed) and overlap.

Both walk the two files together in one streaming pass (a sorted merge join): memory does not
grow with the files. A profile's records are its flattened features; a map's are
``{"urim.total": n, "urir": m}`` (its marks are kept under "marks").
"""

from profiler import jsonnum
from profiler.errors import UserError
from profiler.files import layout as layouts, ukvs
from profiler.files.profilefile import FEATURES, flatten, iter_raw, read_header, sniff_kind
from profiler.toolkit.query import LEVELS, surt_level

CHANGES = ("appeared", "vanished", "grew", "shrank", "changed")


class DiffError(UserError):
    """Files that cannot be compared (different formats or key fields, unsorted)."""


def records(path):
    """(kind, iterator of (key bytes, flat dict)) of a profile or map, checking the key order."""
    try:
        kind = sniff_kind(path)
    except IsADirectoryError:
        raise DiffError("%s is a folder, not a profile or map" % path)
    except OSError as e:
        raise DiffError("cannot read %s: %s" % (path, e.strerror or e))
    if kind == "cdxj":
        raw = ((lineno, key, value) for lineno, key, value in iter_raw(path))

        def parse(value):
            return flatten(jsonnum.loads(value))
    else:
        headers, recs = ukvs.read_map(path)
        raw = ((i, k, f) for i, (k, f) in enumerate(recs, len(headers) + 1))

        def parse(f):
            flat = {"urim.total": f.urim, "urir": f.urir}
            if f.urim_mark or f.urir_mark:
                flat["marks"] = ukvs.format_frequency(f)
            return flat

    def it():
        previous = None
        for lineno, key, value in raw:
            if previous is not None and key <= previous:
                raise DiffError("%s is not sorted (line %d); run 'archive-profiler validate %s'"
                                % (path, lineno, path))
            previous = key
            try:
                yield key, parse(value)
            except (jsonnum.JSONDecodeError, AttributeError) as e:
                raise DiffError("%s line %d: bad JSON (%s); run 'archive-profiler validate %s'"
                                % (path, lineno, e, path))
    return kind, it()


def key_fields(path):
    """A file's key fields: a profile's from its !keys (profiler.files.layout), a map's !fields."""
    if sniff_kind(path) == "cdxj":
        return list(layouts.of_file(path).fields)
    for name, value in read_header(path):
        if name in ("!keys", "@keys") and isinstance(value, list):
            return value
        if name in ("!fields", "@fields") and isinstance(value, dict):
            return value.get("keys")
    return None


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


def _open_pair(path_a, path_b, verb="compare"):
    kind_a, recs_a = records(path_a)
    kind_b, recs_b = records(path_b)
    if kind_a != kind_b:
        raise DiffError("cannot compare a %s with a %s" % (
            "profile" if kind_a == "cdxj" else "map", "profile" if kind_b == "cdxj" else "map"))
    if kind_a == "cdxj":
        layouts.require_same(verb, [path_a, path_b], [layouts.of_file(path_a), layouts.of_file(path_b)])
    fields_a, fields_b = key_fields(path_a), key_fields(path_b)
    if fields_a and fields_b and fields_a != fields_b:
        raise DiffError("cannot %s: %s has keys %s, %s has %s"
                        % (verb, path_a, " ".join(fields_a), path_b, " ".join(fields_b)))
    return kind_a, recs_a, recs_b


def classify(old, new, features):
    """'appeared', 'vanished', 'grew', 'shrank', 'changed' (same captures, other features) or None."""
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


def diff(old_path, new_path, features=None, only=None):
    """(iterator of (key, change, old flat or None, new flat or None) for the keys that differ,
    counts by change, filled in as the iterator is consumed)."""
    kind, old, new = _open_pair(old_path, new_path, "diff")
    features = list(features or FEATURES)
    summary = dict.fromkeys(CHANGES + ("same",), 0)

    def it():
        for key, o, n in join(old, new):
            change = classify(o, n, features)
            summary[change or "same"] += 1
            if change and (not only or change in only):
                yield key, change, o, n
    return it(), summary


def diff_value(change, old, new, features):
    """The JSON block of a diff line: the change, the deltas of numeric features, old and new values."""
    out = {"change": change}
    if old is not None and new is not None:
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


def overlap(path_a, path_b, where=None):
    """Per SURT level: keys only in A, only in B, in both; captures of each under the shared keys.

    Only keys whose fields after the surt have the values ``where`` gives ({"datetime": "2013"};
    by default '-', or ':' for a map's datetime, "all time") are compared. Returns
    (iterator of (key, 'a'|'b'|'both', value in A, value in B), counts by level, filled in as the
    iterator is consumed).
    """
    kind, recs_a, recs_b = _open_pair(path_a, path_b, "compare")
    fields = key_fields(path_a) or ["surt"]
    where = {k: v for k, v in (where or {}).items() if v is not None}
    unknown = set(where) - set(fields[1:])
    if unknown:
        raise DiffError("these files have no %s key field (they have %s)" % (sorted(unknown)[0], ", ".join(fields)))
    default = {"cdxj": "-", "ukvs": ukvs.ALL_TIME}[kind]
    rest = [where.get(f, default if f == "datetime" else "-") for f in fields[1:]]
    suffix = (" " + " ".join(rest)).encode("utf-8") if rest else b""

    def keep(recs):
        for key, value in recs:
            # a zero count (a map's "not held" line) is no holding
            if key.endswith(suffix) and key.count(b" ") == len(rest) and value.get("urim.total") != 0:
                yield key, value

    levels = {}

    def generator():
        for key, a, b in join(keep(recs_a), keep(recs_b)):
            surt = key.split(b" ", 1)[0].decode("utf-8", "replace")
            s = levels.setdefault(surt_level(surt), {"only_a": 0, "only_b": 0, "both": 0, "captures_a": 0,
                                                     "captures_b": 0, "shared_captures_a": 0,
                                                     "shared_captures_b": 0})
            ca, cb = (a or {}).get("urim.total") or 0, (b or {}).get("urim.total") or 0
            s["captures_a"] += ca
            s["captures_b"] += cb
            where = "both" if a is not None and b is not None else "a" if a is not None else "b"
            if where == "both":
                s["both"] += 1
                s["shared_captures_a"] += ca
                s["shared_captures_b"] += cb
            else:
                s["only_" + where] += 1
            yield key, where, a, b
    return generator(), levels


def overlap_summary(levels):
    """Summary rows in level order, with the Jaccard index of the key sets and captured shares."""
    out = []
    for level in LEVELS:
        s = levels.get(level)
        if not s:
            continue
        keys = s["only_a"] + s["only_b"] + s["both"]
        row = {"level": level}
        row.update(s)
        row["jaccard"] = round(s["both"] / keys, 4) if keys else 0
        row["shared_share_a"] = round(s["shared_captures_a"] / s["captures_a"], 4) if s["captures_a"] else 0
        row["shared_share_b"] = round(s["shared_captures_b"] / s["captures_b"], 4) if s["captures_b"] else 0
        out.append(row)
    return out
