"""Answering FacetRedux-style questions from a profile's precomputed lines, without a rescan.

A query fixes some key fields (`surt datetime mime status`, and `lang` in a profile whose
`!keys` have it: profiler.files.layout; '-' is "any") and lets the others vary (``group``). The file is sorted, so the lines that share the query's fixed leading fields
(or lie under a SURT prefix) are one contiguous range: a binary search over byte offsets
(seek, skip to the next line start, compare) finds its start and only that range is read.
Rankings keep the N best lines in a heap.
"""

import heapq
import itertools
import math
import re

from profiler import jsonnum
from profiler.errors import UserError
from profiler.files import coverage, layout as layouts, pages
from profiler.files.datalines import Bad, DamagedFile, DataFile, WithoutDamaged
from profiler.files.profilefile import FEATURES, extras, flatten, ratio
from profiler.files.sortedfile import SortedLines, profile_key
from profiler.model import criteria
from profiler.model.emitted import not_emitted
from profiler.model.keys import key_level
from profiler.model.policy import LEVEL_TYPES
from profiler.model.policy import recorded as policy_recorded, with_field as policy_with_field
from profiler.toolkit.merge import ZERO, partition_envelope, widen


LEVELS = LEVEL_TYPES
DERIVED = {
    "avg_bytes": lambda f: ratio(f["bytes"], f["urim.total"], 2) if f["urim.total"] else 0,
    "avg_dedup_bytes": lambda f: ratio(f["dedup_bytes"], f["urim.total"], 2) if f["urim.total"] else 0,
    "dedup_saving": lambda f: round(1 - f["dedup_bytes"] / f["bytes"], 4) if f["bytes"] else 0,
    "urim_per_urir": lambda f: ratio(f["urim.total"], f["urir"], 2) if f["urir"] else 0,
    # FacetRedux's sixth feature, the average document size (spec section 3); None when no URI-R
    "avg_size": lambda f: ratio(f["dedup_bytes"], f["urir"], 2) if f["urir"] else None,
}
ALIASES = {"urim": "urim.total", "captures": "urim.total", "urls": "urir", "min": "urim.min", "max": "urim.max"}
FEATURE_NAMES = FEATURES + tuple(DERIVED)


class QueryError(UserError):
    """A query that cannot be answered from this file (one-line message)."""


def feature_name(name):
    """'urim' -> 'urim.total'; unknown names are a QueryError."""
    name = ALIASES.get(name, name)
    if name not in FEATURE_NAMES:
        raise QueryError("unknown feature %r (choose from %s)" % (name, ", ".join(FEATURE_NAMES)))
    return name


def feature_value(flat, name):
    """A feature's value, or None when the line lacks it or a part of it (another producer's
    profile: profiler.files.datalines.foreign_value)."""
    try:
        return DERIVED[name](flat) if name in DERIVED else flat.get(name)
    except KeyError:
        return None


def rank_value(flat, name):
    """A feature's value as a ranking key: a value that is not there (a derived one divided by
    zero) ranks last."""
    value = feature_value(flat, name)
    return (value is not None, value if value is not None else 0)


#: a derived feature as a ratio: (numerator, denominator, decimals, whether it is 1 - the ratio)
RATIOS = {"avg_bytes": ("bytes", "urim.total", 2, False), "avg_dedup_bytes": ("dedup_bytes", "urim.total", 2, False),
          "dedup_saving": ("dedup_bytes", "bytes", 4, True), "urim_per_urir": ("urim.total", "urir", 2, False),
          "avg_size": ("dedup_bytes", "urir", 2, False)}


def derived_bounds(flat, name):
    """[low, high] of a derived feature whose parts have bounds (a merged profile's, a range's),
    rounded outwards so that it still holds the true value (high None: no ceiling); None when
    the derived value is exact."""
    bounds = flat.get("bounds") or {}
    num, den, digits, complement = RATIOS.get(name, (None, None, 0, False))
    if num is None or not (num in bounds or den in bounds):
        return None
    if not all(part in bounds or part in flat for part in (num, den)):
        return None                                 # a line that lacks a part: not there
    n0, n1 = bounds.get(num, (flat[num], flat[num]))
    d0, d1 = bounds.get(den, (flat[den], flat[den]))
    if not d1:
        return None                                 # no capture: the value is not there
    scale = 10 ** digits
    low = _quotient(n0, d1, False)
    high = _quotient(n1, d0, True) if d0 else None
    if complement:
        low, high = (1 - high if high is not None else None), 1 - low
        low = 0 if low is None else low
    return [_outwards(low, scale, False), None if high is None else _outwards(high, scale, True)]


def _quotient(n, d, up):
    """n / d; past a float's range its floor (up: its ceiling), an exact integer."""
    try:
        return n / d
    except OverflowError:
        return -(-n // d) if up else n // d


def _outwards(x, scale, up):
    """x rounded down (up: up) to 1 / scale; an integer (a quotient past a float's range) as it is."""
    if isinstance(x, int):
        return x
    try:
        return (math.ceil if up else math.floor)(x * scale) / scale
    except OverflowError:
        return (math.ceil if up else math.floor)(x)


def selected(flat, features):
    """The named features of a line's flat features, as query prints them: each value, and a
    "bounds" object for those that are not exact (derived ones included)."""
    value = {f: feature_value(flat, f) for f in features}
    have = flat.get("bounds") or {}
    bounds = {}
    for f in features:
        found = have.get(f) or derived_bounds(flat, f)
        if found is not None:
            bounds[f] = list(found)
    if bounds:
        value["bounds"] = bounds
    return value


def surt_level(surt, policy=None):
    """The SURT level of a key's surt field (profiler.model.keys.key_level), by the Public Suffix
    List when the profile's policy counts registered domains."""
    return key_level(surt, bool(policy is not None and policy.registered_domains))


def field_levels(field, value):
    """The policy levels a key field of a criterion can belong to."""
    return list(criteria.BY_NAME[field].field_levels(value))


#: every key field a profile may have (a file's own are its !keys)
key_fields = criteria.derived(lambda chosen: ("surt",) + tuple(c.name for c in chosen))
#: representative values of each level of a field, to ask the policy about a grouped field
group_samples = criteria.derived(lambda chosen: {c.name: list(c.samples) for c in chosen})


def host_not_surt(surt):
    """What to ask instead when a SURT field is a host name, a host pattern or a URL ('cnn.com',
    '*.gov.uk', 'http://www.cnn.com/world/') or a SURT host without its ',*' or ')/*' ('uk,gov'),
    else None: such a key has no line, and the policy's reason (no URL keys) would not say why."""
    if surt == "*" or "." not in surt or "," in surt or ")" in surt:
        return _unfinished_surt(surt)
    given = surt
    pattern = surt.startswith(("*.", "."))
    if pattern:
        surt = surt.lstrip("*").lstrip(".")
    from profiler.formats.cdx import surt_of
    key = surt_of(("" if "://" in surt else "http://").encode() + surt.encode("utf-8", "surrogateescape"))
    if key is None or ")" not in key:
        return None
    host = key.split(")")[0]
    return "%r is a host name%s, not a SURT key: %s" % (given[:80], " pattern" if pattern else " or URL",
                                                         _host_keys(host))


def _host_keys(host):
    """The SURT keys that answer for a host (its SURT, 'com,cnn'): its host line and the wildcard
    of its subdomains, which does not hold the host itself (docs/policies.md)."""
    return ("'%s)/*' is the host, '%s,*' its subdomains (all of %s is the two lines)"
            % (host, host, ".".join(reversed(host.split(",")))))


def _unfinished_surt(surt):
    """What to ask instead of a SURT host that is not a key ('uk,gov', 'uk,gov,': no line ever
    has it), else None."""
    host = surt.rstrip(",")
    if ")" in surt or surt.endswith("*") or not re.fullmatch(r"[a-z0-9-]+(,[a-z0-9-]+)*", host):
        return None
    if "," not in host:
        return "%r is not a SURT key: '%s,*' is every host under it" % (surt[:80], host)
    return "%r is not a SURT key: %s" % (surt[:80], _host_keys(host))


def asked_unlike_written(policy, values, layout):
    """Why a key without a line was asked in a form the profile's lines are not written in (a
    SURT host in capitals, a mime class where the policy has no class level), so that its missing
    line says nothing of what is held; else None."""
    surt = values["surt"]
    host = surt.split(")", 1)[0]
    if host != host.lower():
        return ("no line for %r: a SURT's host is lower case in profiles; ask %r"
                % (surt[:80], host.lower() + surt[len(host):]))
    mime = values.get(criteria.MIME.name)
    if policy is not None and mime in criteria.MIME_CLASSES and "class" not in policy.used_levels.get(
            criteria.MIME.name, ()) and criteria.MIME.name in layout.fields:
        return ("no line for mime %r: a content class, and this profile's policy (%s) has no mime class level; "
                "ask a media type or category (text/html, text/*)" % (mime, policy.name))
    return None



class SortedProfile:
    """A sorted profile opened for range reads: binary search over byte offsets, no full load.
    The file is checked whole when opened (profiler.files.datalines: cut, malformed or unsorted,
    it is refused; remembered per version of the file), so that a line the search does not read
    cannot make an answer wrong; ``skipped`` (a Skipped): damaged lines are left out, counted."""

    def __init__(self, path, skipped=None, what="query"):
        found = DataFile(path)
        if found.kind != "cdxj":
            raise QueryError("%s is a UKVS map, not a CDXJ profile (use 'lookup' for maps)" % path)
        pages.require_whole(path, found.headers, what)
        found.check(skipped, searched=True)
        self.path = path
        self.headers = found.headers
        self.layout = found.layout
        self.check = found.checker
        self.sorted = SortedLines(path, found.data_offset, key=profile_key, end=found.end, identity=found.identity)
        self.cut_at = found.cut_at      # a file cut short: the keys past this one are unknown, not none
        self.skipped = skipped
        if skipped is not None and skipped.count:
            self.sorted = WithoutDamaged(self.sorted, self.check)

    @property
    def seeks(self):
        return self.sorted.seeks

    def close(self):
        self.sorted.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def absent_keys(self):
        """Whether keys without a line may hold captures (a merge of inputs whose revisits were
        resolved each on its own: its !meta "merge" note absent_keys)."""
        return any(name == "!meta" and isinstance(value, dict) and isinstance(value.get("merge"), dict)
                   and value["merge"].get("absent_keys") for name, value in self.headers)

    def compacted(self):
        """Whether a key without a line may hold captures that compaction rolled up into a
        coarser line (its !meta "compacted"), so no line does not mean none are held."""
        return coverage.compacted(self.headers)

    def unknown_keys(self):
        """Whether a key without a line may hold an input's captures because that input's share
        of it is unknown (a merge of an archive_profiler document, a compacted profile...: its
        !meta "merge" note unknown_keys)."""
        return any(name == "!meta" and isinstance(value, dict) and isinstance(value.get("merge"), dict)
                   and value["merge"].get("unknown_keys") for name, value in self.headers)

    def envelope(self, fields):
        """The value bounding a key's captures when the key has no line: the line with every
        other criterion '-' of its SURT and datetime, else of its SURT and a coarser datetime or
        all time, else the same of its wildcard parents (nearest first: the line a compaction
        rolled it into), else the root's; or None. Each holds every capture of the key."""
        from profiler.toolkit.compact import parents
        layout = self.layout
        dt_at = layouts.index(layout, criteria.DATETIME.name)
        dt = fields[dt_at]
        datetimes = list(dict.fromkeys([dt] + [dt[:n] for n in (8, 6, 4) if len(dt) > n and dt != "-"] + ["-"]))
        surts = list(dict.fromkeys([fields[0]] + parents(fields[0]) + ["*"]))
        for surt, dt in itertools.product(surts, datetimes):
            key = [surt] + ["-"] * (len(layout.fields) - 1)
            key[dt_at] = dt
            wanted = " ".join(key).encode("utf-8") + b" {"
            for found, value in self.lines(wanted):
                return value
        return None

    def partition(self, fields):
        """The value holding every capture of a key without a line in a merge whose revisits were
        resolved within each input, when no line holds them all: the sum of the lines of its
        SURT and datetime that part its captures (profiler.toolkit.merge.partition_envelope)."""
        wanted = [f.encode("utf-8") for f in fields]
        lines = [([f.encode("utf-8") for f in found], jsonnum.dumps(value))
                 for found, value in self.lines(b" ".join(wanted[:2]) + b" ")]
        value = partition_envelope(wanted, lines, self.layout)
        return value if value["urim"]["total"] else None

    def policy(self):
        return policy_recorded(self.headers, self.path)

    def lines(self, prefix=b""):
        """(key fields, parsed value) of the data lines starting with prefix, in file order, each
        checked: a damaged one was counted when the file was opened and is left out (with
        ``skipped``), or (the file changed since) is a DamagedFile."""
        for line in self.sorted.iter_from(prefix):
            body = line[:-1] if line[-1:] == b"\r" else line
            try:
                key, _, value = self.check(body)
            except Bad as e:
                raise DamagedFile("%s: a damaged line (%s): %r; run 'archive-profiler validate %s'"
                                  % (self.path, e, body[:80].decode("utf-8", "replace"), self.path))
            yield key.decode("utf-8", "replace").split(" "), value


def query(path, fixed, group=(), under=None, level=None, top=None, by=None, skipped=None):
    """(matching lines as (key str, flat features), a note when nothing matches or, a Caveat, when
    a grouping's lines may leave keys out, seeks made).

    The flat features carry the line's "bounds" (a merged profile's) when it has some.

    ``fixed`` maps key fields to values ('-' by default); fields in ``group`` vary over every
    value but '-'; ``under`` is a SURT prefix for a varying surt; ``level`` keeps one SURT level.
    With ``top``, the ``top`` lines with the largest ``by`` feature, largest first. The key
    fields are the file's (its !keys); asking about a field it lacks is a QueryError.
    """
    if level is not None and level not in LEVELS:
        raise QueryError("unknown level %r (choose from %s)" % (level, ", ".join(LEVELS)))
    by = feature_name(by) if by else None
    with SortedProfile(path, skipped) as profile:
        return _query(profile, fixed, group, under, level, top, by)


def _values(profile, fixed, group):
    """{key field: value, or None when it varies} of a query on one profile (its !keys)."""
    layout = profile.layout
    for f in list(group) + [f for f, v in fixed.items() if v is not None]:
        if f not in key_fields():
            raise QueryError("cannot %s %r (choose from %s)" % ("group by" if f in group else "fix", f,
                                                               ", ".join(layout.fields)))
        if f not in layout.fields:
            raise QueryError("%s has no %s key field (its keys: %s): %s"
                             % (profile.path, f, layouts.describe(layout), policy_with_field(f)))
    values = {f: fixed.get(f) or ("*" if f == "surt" else "-") for f in layout.fields}
    hint = host_not_surt(values["surt"])
    if hint:
        raise QueryError("--surt %s" % hint)
    for f, v in values.items():
        if f != "surt" and not layout.patterns[f].match(v.encode("utf-8", "replace")):
            raise QueryError("--%s %r is not %s" % (f, v, criteria.BY_NAME[f].describe))
    for f in group:
        values[f] = None
    return values


def key_values(profile, fixed):
    """{key field: value} of one key of an open SortedProfile: ``fixed``'s values, '-' (and '*'
    for the surt) for the others; a QueryError for a field the file does not have or a value
    that does not fit its criterion."""
    return _values(profile, fixed, ())


def _query(profile, fixed, group, under, level, top, by):
    fields_of = profile.layout.fields
    values = _values(profile, fixed, group)
    if (under is not None or level is not None) and values["surt"] is not None:
        values["surt"] = None
    prefix = []
    for f in fields_of:
        if values[f] is None:
            break
        prefix.append(values[f])
    if len(prefix) == len(fields_of):
        prefix_bytes = " ".join(prefix).encode("utf-8") + b" {"
    elif prefix:
        prefix_bytes = " ".join(prefix).encode("utf-8") + b" "
    else:
        prefix_bytes = (under or "").rstrip("*").encode("utf-8")

    policy = profile.policy() if level is not None else None

    def selected(fields):
        return (len(fields) == len(fields_of)
                and all(fields[i] == values[f] if values[f] is not None else f == "surt" or fields[i] != "-"
                        for i, f in enumerate(fields_of))
                and (level is None or surt_level(fields[0], policy) == level)
                and not (under and not fields[0].startswith(under.rstrip("*"))))

    def matches():
        for fields, value in profile.lines(prefix_bytes):
            if not selected(fields):
                continue
            parsed = value
            flat = flatten(parsed)
            if parsed.get("bounds"):
                flat["bounds"] = parsed["bounds"]
            more = extras(parsed)
            if more:
                flat["extras"] = more
            yield " ".join(fields), flat

    if top:
        if not by:
            raise QueryError("--top needs --by FEATURE")
        found = heapq.nlargest(top, matches(), key=lambda kv: rank_value(kv[1], by))
    else:
        found = list(matches()) if by is None else sorted(
            matches(), key=lambda kv: rank_value(kv[1], by), reverse=True)
    damaged = damaged_keys(profile, prefix_bytes, selected)
    note = None
    if not found and None in values.values() and values["surt"] is not None:
        policy = profile.policy()
        if policy is not None:
            reasons = [not_emitted(policy, [values["surt"]] + list(combo), profile.layout)
                       for combo in itertools.product(
                           *[group_samples()[f] if values[f] is None else [values[f]] for f in fields_of[1:]])]
            if all(reasons):
                raise QueryError("this profile cannot answer grouping %r by %s: its policy (%s) does not "
                                 "emit such keys (%s)" % (values["surt"], ", ".join(
                                     f for f in fields_of if values[f] is None), policy.name, reasons[0]))
    if not found and None in values.values() and profile.compacted():
        note = ("no line: a compacted profile, whose keys without a line may have been rolled up into "
                "coarser ones, so they may hold captures (ask for one key to see its bounds; !meta compacted)")
    elif not found and None in values.values() and profile.unknown_keys():
        note = ("no line: a merge in which an input's share of a key may be unknown, so keys without a "
                "line may hold captures (ask for one key to see its bounds; !meta unknown_keys)")
    # keys only revisits resolved in another input give have a resolved criterion other than '-'
    resolved_asked = any(values[f] != "-" for f, c in zip(fields_of[1:], profile.layout.criteria) if c.resolved)
    if not found and None in values.values() and note is None and profile.absent_keys() and resolved_asked:
        note = ("no line: a merge of inputs whose revisits were resolved each on its own, so keys without a "
                "line may hold revisits resolved in another input (ask for one key to see its bounds; "
                "!meta absent_keys)")
    if found and None in values.values() and note is None:
        if profile.compacted():
            note = Caveat(LISTED_COMPACTED)
        elif profile.unknown_keys():
            note = Caveat(LISTED_UNKNOWN)
        elif profile.absent_keys() and resolved_asked:
            note = Caveat(LISTED_ABSENT)
    mixed = mixed_levels(found, fields_of, [f for f in fields_of[1:] if values[f] is None])
    if mixed:
        note = Caveat(mixed + ("; " + note if note else "")) if found else note
    if not found and None not in values.values():
        policy = profile.policy()
        reason = not_emitted(policy, [values[f] for f in fields_of], profile.layout) if policy else None
        unlike = asked_unlike_written(policy, values, profile.layout)
        if reason and not unlike:
            surt = values["surt"]
            host = ("; the host is %r, and lookup answers for one URL" % (surt.split(")", 1)[0] + ")/*")
                    if ")" in surt and key_level(surt) == "url" else "")
            raise QueryError("this profile cannot answer %r: its policy (%s) does not emit that "
                             "combination (%s)%s; to ask it, profile again with a policy file whose emit "
                             "writes it (docs/policies.md, A policy of your own)"
                             % (" ".join(values[f] for f in fields_of), policy.name, reason, host))
        note = unlike or ("no captures: the policy emits this key, so no line means none are held" if policy
                          else "no line for this key")
        resolved = [i for i, c in enumerate(profile.layout.criteria, 1) if c.resolved]
        revisits_elsewhere = profile.absent_keys() and any(values[fields_of[i]] != "-" for i in resolved)
        unknown_share = profile.unknown_keys()
        rolled_up = profile.compacted()
        if rolled_up:
            note = ROLLED_UP % ""
        if revisits_elsewhere or unknown_share or rolled_up:
            envelope = profile.envelope([values[f] for f in fields_of])
            if envelope is None and revisits_elsewhere and not (unknown_share or rolled_up):
                envelope = profile.partition([values[f] for f in fields_of])
            if envelope is None and note.startswith("no captures"):
                note = ("no line: a merge in which an input's share of a key may be unknown, so this key may "
                        "hold captures (no line of this file bounds it; !meta unknown_keys)" if unknown_share else
                        "no line: a merge of inputs whose revisits were resolved each on its own, so this "
                        "key may hold revisits resolved in another input (no line of this file bounds it; "
                        "!meta absent_keys)")
            if envelope is not None:
                found = [(" ".join(values[f] for f in fields_of), absent_value(envelope))]
                note = (ROLLED_UP % "its bounds; " if rolled_up else
                        "no line: a merge in which an input's share of a key may be unknown, so this key may "
                        "hold captures (its bounds; !meta unknown_keys)" if unknown_share else
                        "no line: a merge of inputs whose revisits were resolved each on its own, so this "
                        "key may hold revisits resolved in another input (its bounds; !meta absent_keys)")
    return found, with_left_out(note, damaged, found), profile.seeks


def mixed_levels(found, fields_of, grouped):
    """The note of a grouping whose lines are of several levels of a grouped field (a mime's
    category text/* and type text/html, a year and its months): each level's lines count the
    same captures again, so they add up only within a level; or None."""
    for f in grouped:
        criterion, at = criteria.BY_NAME.get(f), fields_of.index(f)
        if criterion is None or len(criterion.levels) < 2:
            continue
        seen = {}
        for key, _ in found:
            levels = criterion.field_levels(key.split(" ")[at])
            if len(levels) == 1:
                seen.setdefault(levels[0], key.split(" ")[at])
        if len(seen) > 1:
            return ("the %s lines listed are of %d levels (%s): each level counts the same captures again, so "
                    "add them up only within one level" % (f, len(seen), ", ".join(
                        "%s %s" % (level, value) for level, value in seen.items())))
    return None


def damaged_keys(profile, prefix, selected=None):
    """The keys (text) of the damaged lines a search of prefix (bytes) met in an open
    SortedProfile and left out (--skip-bad-lines), those selected(key fields) takes; a
    QueryError when it met more than it keeps."""
    met = getattr(profile.sorted, "met_damaged", None)
    if met is None:
        return []
    lines = met(prefix)
    if lines is None:
        raise QueryError("%s: more damaged lines than this question can account for; run 'archive-profiler "
                         "validate %s'" % (profile.path, profile.path))
    keys = []
    for line in lines:
        fields = line.split(b" {", 1)[0].decode("utf-8", "replace").split(" ")
        if selected is None or selected(fields):
            keys.append(" ".join(fields))
    skipped = getattr(profile, "skipped", None)
    if skipped is not None:
        keys += [Unreadable(low, high) for low, high, cut in skipped.gaps
                 if not cut and skipped.may_hold(prefix) and (low is None or prefix + b"\xff" > low)
                 and (high is None or prefix < high)]
    if past_cut(profile, prefix):
        keys.append(PastCut(profile.cut_at.decode("utf-8", "replace")))
    return keys


class Unreadable(str):
    """Keys between two whole lines where a damaged line whose key could not be read was left
    out (profiler.files.datalines.Skipped.lost_between): any of them may have been its key."""

    def __new__(cls, low, high):
        def shown(key, none):
            return none if key is None else repr(key[:-1].decode("utf-8", "replace"))
        return str.__new__(cls, "a key between %s and %s (a damaged line there may have had it)"
                           % (shown(low, "the file's start"), shown(high, "its end")))

    def __repr__(self):
        return str(self)


class PastCut(str):
    """The keys past the last whole line of a file cut short (its key): their lines are lost."""

    def __repr__(self):
        return "every key after %s (the file was cut short)" % str.__repr__(self)


def past_cut(profile, prefix):
    """Whether a line the search of prefix (bytes: a whole key and " {", or the start of keys)
    would find may have been lost past the cut of a file cut short (SortedProfile.cut_at)."""
    cut_at = getattr(profile, "cut_at", None)
    if cut_at is None:
        return False
    if prefix.endswith(b" {"):
        return prefix[:-2] > cut_at
    return prefix + b"\xff" > cut_at


def with_left_out(note, keys, found):
    """An answer's note with what it says of the damaged lines of keys it was given without
    (left_out): a Caveat before the note when lines were found (they stand), else in place of
    the note (which would say why no line was found, as if the damaged ones were not there)."""
    if not keys:
        return note
    if not found:
        return left_out(keys)
    return Caveat(left_out(keys) + ("; " + note if note else ""))


def left_out(keys):
    """The note of an answer given without the damaged lines of keys (--skip-bad-lines answers as
    the file without them would): their captures are unknown, not none."""
    shown = ", ".join(repr(k) for k in keys[:3]) + (" and %d more" % (len(keys) - 3) if len(keys) > 3 else "")
    lines = sum(1 for k in keys if not isinstance(k, PastCut))
    what = "%d line(s) this question reads are damaged" % lines if lines else ""
    if any(isinstance(k, PastCut) for k in keys):
        what += (" and " if what else "") + "lines this question reads were lost in a cut"
    return ("%s and were left out (--skip-bad-lines): %s; the answer is the file's without them, their "
            "captures unknown, not none" % (what, shown))


def nothing_held(profile, values, when, without="--from, --to or --series"):
    """(sure, note) of a range or series of one key ({field: value}) that finds no capture ``when``
    (a range's text): sure where no line means none. A key without an all-time line in a compacted
    profile (rolled up into a coarser line), or in a merge whose keys without a line may hold
    captures, may hold some: not sure, and the note says why (and to ask ``without`` the range)."""
    any_field = criteria.ANY_FIELD
    all_time = [values[f] if f != criteria.DATETIME.name else any_field for f in profile.layout.fields]
    if not any(True for _ in profile.lines(" ".join(all_time).encode("utf-8") + b" {")):
        resolved = any(values[f] != any_field
                       for f, c in zip(profile.layout.fields[1:], profile.layout.criteria) if c.resolved)
        if profile.compacted():
            return False, ROLLED_UP % ("ask for the key without %s to see its bounds; " % without)
        if profile.unknown_keys() or profile.absent_keys() and resolved:
            return False, ("no line for this key: a merge whose keys without a line may hold captures (ask for the "
                           "key without %s to see its bounds; !meta %s)"
                           % (without, "unknown_keys" if profile.unknown_keys() else "absent_keys"))
    return True, "no captures in %s" % when


class Caveat(str):
    """A note on lines that are all true but may not be all there is: the answer stands (exit 0)."""


#: the caveats of a grouping's lines in a compacted profile, and in a merge with unknown shares
LISTED_COMPACTED = ("a compacted profile: keys compaction rolled up into coarser lines are not listed (their "
                    "captures are counted in those lines; ask for one key to see its bounds; !meta compacted)")
LISTED_ABSENT = ("a merge of inputs whose revisits were resolved each on its own: keys that only revisits resolved "
                 "in another input give have no line and are not listed (ask for one key to see its bounds; "
                 "!meta absent_keys)")
LISTED_UNKNOWN = ("a merge in which an input's share of a key may be unknown: keys without a line are not "
                  "listed, and may hold captures (ask for one key to see its bounds; !meta unknown_keys)")

#: the note of a key without a line in a compacted profile
ROLLED_UP = ("no line: a compacted profile, whose keys without a line may have been rolled up into a "
             "coarser one, so this key may hold captures (%s!meta compacted)")


def absent_value(envelope):
    """The flat value of a key without a line that may hold captures: each feature the envelope
    (a coarser line) has, within [0, its high]; the features it lacks left out, not zero."""
    bounded = widen(ZERO, envelope)
    held = flatten(envelope)
    flat = {n: v for n, v in flatten(bounded).items() if n in held}
    flat["bounds"] = {n: b for n, b in bounded["bounds"].items() if n in held}
    return flat
