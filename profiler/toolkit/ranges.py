"""Questions over a datetime range ("from April 2012 to April 2013"), and series of periods.

A profile has lines for single periods (``* 2012 - -``, ``* 201204 - -`` where its policy
writes months). A range is answered from the fewest lines that hold exactly its captures: the
periods of the coarsest level the key has that lie whole inside the range, and, where a period
is cut by an end of the range, its periods of the next finer level; a period whose line's
first and last captures lie inside the range (or outside it) counts whole (or not at all)
without going finer. When an end needs a level the key does not have, the range cannot be
answered (RangeError) rather than guessed. A range holding every capture of the key (its
all-time line's first and last) is that line.

The periods hold different captures, so their lines combine as merge combines inputs that may
share URI-Rs and payloads (profiler.toolkit.merge.combine): urim.total and bytes add up, first
and last are the smallest and largest, all exact where the lines' are; urir, digests, dedup_bytes, urim.min and
urim.max get ``bounds`` (urir, digests, dedup_bytes: at least the largest period's, at most
their sum), the high ends of urir, digests, dedup_bytes and urim.max also at most the value of
the coarser period that holds the finer ones and of the all-time line. One period is exact.

A merge's line whose first or last are bounds (revisits resolved in another input) is placed by
them, and in a profile whose keys without a line may hold captures (a merge's absent_keys or
unknown_keys, a compacted profile) a period without a line is bounded by its coarser line
(Lines.unwritten), its first and last within the period: never taken for none.

Another producer's profile (profiler.files.layout.is_foreign) is read in its value style, and its
lines combine by the features they all have; a line without first and last captures cannot say
which of its captures a range holds: a RangeError.
"""

import calendar
import collections
import re

from profiler import jsonnum
from profiler.files import layout as layouts
from profiler.files.datalines import foreign_value
from profiler.files.profilefile import FEATURES, flatten, unflatten
from profiler.model import criteria
from profiler.model.criteria import ANY_FIELD, PREFIX
from profiler.model.emitted import not_emitted
from profiler.toolkit.merge import combine
from profiler.toolkit.query import QueryError, damaged_keys

DATETIME = criteria.DATETIME
#: where each component of a 14-digit timestamp ends, and its smallest value
_COMPONENTS = ((4, 1), (6, 1), (8, 1), (10, 0), (12, 0), (14, 0))
_ENDS = {end for end, _ in _COMPONENTS}
_DIGITS = re.compile(r"[0-9]+\Z", re.ASCII)
#: the most lines one range answer reads (periods probed, at every level)
MAX_PROBES = 2000
#: keys whose levels a shared cache keeps at most
MAX_KEPT = 100000
#: a timestamp before and after every other
FIRST, LAST = "0" * 14, "9" * 14


class RangeError(QueryError):
    """A range this profile cannot answer exactly or with bounds: one line, exit status 2."""


def prefix_levels():
    """The datetime criterion's levels that are prefixes of the timestamp, coarse to fine."""
    return [lv for lv in DATETIME.coarse_to_fine if lv.kind == PREFIX and lv.n in _ENDS]


def valid_period(text):
    """Whether text is a datetime period a profile may have: ASCII digits, the length of one of
    the datetime criterion's prefix levels, every component in the calendar."""
    if not isinstance(text, str) or not _DIGITS.match(text) or len(text) not in {lv.n for lv in prefix_levels()}:
        return False
    year = int(text[:4])
    if year < 1:
        return False
    if len(text) >= 6 and not 1 <= int(text[4:6]) <= 12:
        return False
    if len(text) >= 8 and not 1 <= int(text[6:8]) <= calendar.monthrange(year, int(text[4:6]))[1]:
        return False
    limits = {10: 23, 12: 59, 14: 59}
    return all(int(text[end - 2:end]) <= top for end, top in limits.items() if len(text) >= end)


def start(period):
    """The first 14-digit timestamp of a period: '201204' -> '20120401000000'."""
    return period + "00000101000000"[len(period):]


def end(period):
    """The last 14-digit timestamp of a period: '201202' -> '20120229235959'."""
    out = period
    if len(out) < 6:
        out += "12"
    if len(out) < 8:
        out += "%02d" % calendar.monthrange(int(out[:4]), int(out[4:6]))[1]
    return out + "235959"[len(out) - 8:]


def next_period(period):
    """The period after this one at the same level ('201212' -> '201301'), or None past 9999."""
    digits = [int(period[:4])] + [int(period[e - 2:e]) for e in (6, 8, 10, 12, 14) if e <= len(period)]
    tops = [9999, 12, None, 23, 59, 59]
    lows = [low for _, low in _COMPONENTS]
    i = len(digits) - 1
    while i >= 0:
        top = tops[i] if i != 2 else calendar.monthrange(digits[0], digits[1])[1]
        if digits[i] < top:
            digits[i] += 1
            return "%04d" % digits[0] + "".join("%02d" % d for d in digits[1:])
        digits[i] = lows[i]
        i -= 1
    return None


def periods(lo, hi, n):
    """The periods of length n that meet the timestamps [lo, hi], in order."""
    period = lo[:n]
    while period is not None and start(period) <= hi:
        yield period
        period = next_period(period)


Range = collections.namedtuple("Range", "lo hi text")


def parse_range(first=None, last=None):
    """A Range from --from and --to (periods, either may be missing: open); a RangeError when
    one is not a period or they are in the wrong order."""
    given = {"from": first, "to": last}
    first, last = (_digits(v) for v in (first, last))
    for name, value in (("from", first), ("to", last)):
        if value is not None and not valid_period(value):
            shown = given[name]
            raise RangeError("--%s %r is not a datetime period (%s or 2013-05, 2013-05-12; a real date)"
                             % (name, shown[:40] if isinstance(shown, str) else shown, _lengths()))
    if first is None and last is None:
        raise RangeError("a range needs --from, --to or both")
    lo = start(first) if first is not None else FIRST
    hi = end(last) if last is not None else LAST
    if lo > hi:
        raise RangeError("--from %s is after --to %s" % (first, last))
    return Range(lo, hi, "%s:%s" % (first or "", last or ""))


def _digits(text):
    """A period given in its ISO 8601 form as the key's digits; anything else as it is, for
    valid_period's check."""
    try:
        return criteria.period(text) if isinstance(text, str) else text
    except ValueError:
        return text


def _lengths():
    names = {4: "YYYY", 6: "YYYYMM", 8: "YYYYMMDD", 10: "YYYYMMDDHH", 12: "YYYYMMDDHHMM", 14: "YYYYMMDDHHMMSS"}
    return ", ".join(names[lv.n] for lv in prefix_levels())


# ---------------------------------------------------------------- answers

Answer = collections.namedtuple("Answer", "key flat pieces")
Answer.__doc__ = """One range answer: the key (its datetime field the range, 'FROM:TO'), the flat
features (profiler.files.profilefile.flatten) with "bounds" ({feature: [low, high]}) for the
inexact ones, and the periods whose lines it combines."""

ZERO = {"urim.total": 0, "urim.min": 0, "urim.max": 0, "urir": 0, "bytes": 0, "digests": 0, "dedup_bytes": 0,
        "first": None, "last": None}
#: the features whose high bound the all-time line caps
CAPPED = ("urim.max", "urir", "digests", "dedup_bytes")


class Lines:
    """Exact keys read from one SortedProfile (profiler.toolkit.query), each once, at most
    ``budget`` of them (a question's bounded work)."""

    def __init__(self, profile, budget=MAX_PROBES, levels=None, seen=None, find=None, policy=False):
        """``levels`` and ``seen``: dicts to keep the policy's levels of keys and the lines read
        in, shared by several Lines of one profile (each emptied past MAX_KEPT keys); ``find``:
        key bytes -> its line or None, in place of the profile's binary search; ``policy``: the
        profile's, when already read (None: it has none)."""
        self.profile = profile
        self._find = find
        self.layout = profile.layout
        #: another producer's profile: its lines may lack features or be written in its style
        self.foreign = layouts.is_foreign(profile.layout)
        self.budget = budget
        self.reads = 0
        self._seen = {} if seen is None else seen
        self._levels = {} if levels is None else levels
        self._policy = policy
        #: keys whose damaged lines (left out by --skip-bad-lines) answers were given without
        self.left_out = []

    def know(self, fields, value):
        """Keep a line read otherwise (a scan's) as the value of its key fields."""
        self._remember(" ".join(fields).encode("utf-8", "surrogateescape"), value)

    def _remember(self, key, value):
        if len(self._seen) > MAX_KEPT:
            self._seen.clear()
        self._seen[key] = value

    @property
    def policy(self):
        if self._policy is False:
            self._policy = self.profile.policy()
        return self._policy

    def value(self, fields):
        """The parsed JSON of the line of these key fields (a list, in !keys order), or None."""
        key = " ".join(fields).encode("utf-8", "surrogateescape")
        if key in self._seen:
            return self._seen[key]
        self.reads += 1
        if self.reads > self.budget:
            raise RangeError("this question reads more than %d lines of the profile: ask a shorter range, "
                             "a coarser series or a narrower key" % self.budget)
        found = None
        if self._find is not None:
            line = self._find(key)
            matched = [] if line is None else [line]
        else:
            matched = self.profile.sorted.group(key + b" {")
        for line in matched:
            try:
                found = jsonnum.loads(line[len(key) + 1:])
            except jsonnum.JSONDecodeError:
                self.bad(key)
            if self.foreign:
                try:
                    found = foreign_value(found)
                except ValueError:
                    self.bad(key)
            elif not isinstance(found, dict) or not complete(found):
                self.bad(key)
        if found is None and self._find is None:
            for damaged in damaged_keys(self.profile, key + b" {"):
                if damaged not in self.left_out:
                    self.left_out.append(damaged)
        self._remember(key, found)
        return found

    def unwritten(self, fields):
        """The value of a key without a line: None when that means it holds no capture; where it
        may hold some (a compacted profile, a merge with !meta unknown_keys, or with absent_keys
        and a resolved criterion asked), the coarser line bounding it widened to [0, its high]
        (profiler.toolkit.merge.widen), or False when no line bounds it."""
        if self.unwritten_why(fields) is None:
            return None
        from profiler.toolkit.merge import widen
        envelope = self.profile.envelope(fields)
        if envelope is None and not (self.profile.compacted() or self.profile.unknown_keys()):
            envelope = self.profile.partition(fields)
        if envelope is None or not complete(envelope):
            return False
        zero = {"urim": {"total": 0, "min": 0, "max": 0}, "urir": 0, "bytes": 0, "digests": 0, "dedup_bytes": 0}
        value = widen(zero, envelope)
        first, last = _span(envelope, fields)
        value.update(first=first, last=last)
        value["bounds"].update(first=[first, last], last=[first, last])
        return value

    def unwritten_why(self, fields):
        """The !meta note that lets a key without a line hold captures, or None."""
        profile = self.profile
        if not hasattr(profile, "absent_keys"):
            return None
        if profile.compacted():
            return "!meta compacted"
        if profile.unknown_keys():
            return "!meta unknown_keys"
        resolved = [i for i, c in enumerate(self.layout.criteria, 1) if c.resolved]
        if profile.absent_keys() and any(fields[i] != ANY_FIELD for i in resolved):
            return "!meta absent_keys"
        return None

    def bad(self, key):
        key = key.decode("utf-8", "replace") if isinstance(key, bytes) else " ".join(key)
        what = "one of the value styles profiles are written in" if self.foreign else "with every feature"
        raise QueryError("%s: the line of key %r is not a profile line %s; run 'archive-profiler validate %s'"
                         % (self.profile.path, key, what, self.profile.path))

    def levels(self, fields, at, first=None):
        """The prefix levels of the datetime criterion the key (fields, its datetime at index
        ``at`` to be filled) has lines at: by the profile's policy; without one, the levels at
        which the period of its first capture has a line."""
        policy = self.policy
        if policy is not None:
            key = (tuple(fields), first is None)
            cached = self._levels.get(key)
            if cached is None:
                if len(self._levels) > MAX_KEPT:
                    self._levels.clear()
                cached = self._levels[key] = self._levels_of(fields, at, first)
            return cached
        return self._levels_of(fields, at, first)

    def _levels_of(self, fields, at, first):
        """By the line of the period of the key's first capture when it has one (a level the key
        has holds that line: exact even where a field reads at two levels, a mime class 'code'
        and a media type 'code'), else by the policy."""
        policy = self.policy
        out = []
        for lv in prefix_levels():
            probe = list(fields)
            if policy is not None and first is None:
                probe[at] = "20130115120000"[:lv.n]
                if not_emitted(policy, probe, self.layout) is None:
                    out.append(lv)
            elif first is not None:
                probe[at] = first[:lv.n]
                if self.value(probe) is not None:
                    out.append(lv)
        return out


def may_hold(flat):
    """Whether an answer's flat features may count a capture: a total, or bounds of it above
    zero (periods without a line in a merge or compacted profile, bounded by a coarser line)."""
    return bool(flat["urim.total"] or ((flat.get("bounds") or {}).get("urim.total") or (0, 0))[1])


def complete(value):
    """Whether a line's parsed JSON has every feature (profiler.files.profilefile.FEATURES)."""
    urim = value.get("urim")
    return isinstance(urim, dict) and all(n in urim for n in ("total", "min", "max")) and all(
        n in value for n in FEATURES[3:])


def _span(value, fields):
    """(first, last) of a line's parsed value, widened to their bounds where they have them (a
    merge's line whose revisits may have resolved elsewhere): its captures lie between; a
    RangeError for another producer's line without them: which of its captures a range holds
    is not known."""
    flat = flatten(value)
    if "first" not in flat or "last" not in flat:
        raise RangeError("the line of %r has no first and last capture (another producer's profile): "
                         "a range cannot be answered from it" % " ".join(fields))
    bounds = value.get("bounds") or {}
    return bounds.get("first", (flat["first"],))[0], bounds.get("last", (None, flat["last"]))[1]


def _fields(values, layout):
    return [values.get(f) or ("*" if f == "surt" else ANY_FIELD) for f in layout.fields]


def _datetime_at(lines, fields):
    at = lines.layout.fields.index(DATETIME.name)
    if fields[at] != ANY_FIELD:
        raise RangeError("give a datetime or a range, not both")
    return at


def answer(lines, values, rng):
    """The Answer for the key of ``values`` ({key field: value}; its datetime '-') over a Range,
    read through a Lines. A RangeError when the key has no lines fine enough for the range."""
    fields = _fields(values, lines.layout)
    at = _datetime_at(lines, fields)
    key = list(fields)
    key[at] = rng.text
    key = " ".join(key)
    whole = lines.value(fields)
    lo, hi = rng.lo, rng.hi
    first = None
    if whole is not None:
        first, last = _span(whole, fields)
        if lo <= first and last <= hi:
            return Answer(key, _with_bounds(whole), [ANY_FIELD])
        if last < lo or first > hi:
            return Answer(key, dict(ZERO), [])
        lo, hi = max(lo, first), min(hi, last)
    elif lines.policy is not None and not_emitted(lines.policy, fields, lines.layout) is None:
        return Answer(key, dict(ZERO), [])          # the key is written when it holds a capture
    elif lines.policy is not None and not lines.levels(fields, at):
        raise RangeError("this profile cannot answer %r: its policy (%s) does not write that key (%s)" % (
            " ".join(fields), lines.policy.name, not_emitted(lines.policy, fields, lines.layout)))
    elif lo == FIRST or hi == LAST:
        raise RangeError("an open range needs the all-time line of %r, which this profile does not have: "
                         "give --from and --to" % " ".join(fields))
    # the levels by the line of the period of its first written capture (a widened first may have none)
    levels = lines.levels(fields, at, None if whole is None else flatten(whole)["first"])
    pieces = []
    values = _cover(lines, fields, at, lo, hi, levels, 0, pieces, rng)
    return Answer(key, _with_bounds(_combined(values, whole)), pieces)


def _cover(lines, fields, at, lo, hi, levels, i, pieces, rng, cut=None):
    """The values of the fewest lines holding exactly the captures of [lo, hi], from level i
    down (``cut``: the coarser period the range cuts); the lines of the periods inside one
    period the range cuts come combined, capped by that period's line. Their periods are
    added to ``pieces``."""
    if i == len(levels):
        shown = " ".join(fields)
        if cut is None:
            raise RangeError("this profile cannot answer %s for %r: it has no datetime lines for that key "
                             "(its policy writes none), and the range does not hold all its captures"
                             % (rng.text, shown))
        raise RangeError("this profile cannot answer %s for %r: the range cuts %s, and the key has %s "
                         "lines only" % (rng.text, shown, cut, ", ".join(lv.name for lv in levels)))
    n = levels[i].n
    values = []
    for period in periods(lo, hi, n):
        probe = list(fields)
        probe[at] = period
        value = lines.value(probe)
        if value is None:
            value = lines.unwritten(probe)
            if value is None:
                continue                            # a level the key has: no line, no capture
            if value is False:
                raise RangeError("this profile cannot answer %s for %r: the key has no line for %s, which may "
                                 "hold captures (%s), and no line bounds them" % (
                                     rng.text, " ".join(fields), period, lines.unwritten_why(probe)))
            first, last = _span(value, probe)
            first, last = max(first, lo, start(period)), min(last, hi, end(period))
            if first <= last:                   # bounds [0, high]: whichever part the range holds
                value.update(first=first, last=last)
                value["bounds"].update(first=[first, last], last=[first, last])
                pieces.append(period)
                values.append(value)
            continue
        first, last = _span(value, probe)
        if last < lo or first > hi:
            continue
        if lo <= first and last <= hi:
            pieces.append(period)
            values.append(value)
        else:
            inner = _cover(lines, fields, at, max(lo, start(period)), min(hi, end(period)), levels, i + 1,
                           pieces, rng, period)
            if inner:
                values.append(_combined(inner, value))
    return values


def _with_bounds(value):
    flat = flatten(value)
    if value.get("bounds"):
        flat["bounds"] = {n: list(b) for n, b in value["bounds"].items()}
    return flat


def _combined(values, whole):
    """Lines' values (of periods holding different captures) combined by merge's rules, as a
    line's value with "bounds"; the high ends capped by the line ``whole`` of a period holding
    them all (its own high end when it has bounds)."""
    if not values:
        return {"urim": {"total": 0, "min": 0, "max": 0}, "urir": 0, "bytes": 0, "digests": 0,
                "dedup_bytes": 0, "first": None, "last": None}
    if len(values) == 1:
        return values[0]
    merged = combine(values)
    bounds = {n: list(b) for n, b in (merged.get("bounds") or {}).items()}
    flat = flatten(merged)
    if whole is not None:
        cap = _with_bounds(whole)
        cap_bounds = cap.get("bounds", {})
        for name in CAPPED:
            if name in bounds and (name in cap or name in cap_bounds):
                top = cap_bounds[name][1] if name in cap_bounds else cap[name]
                low, high = bounds[name]
                bounds[name] = [low, max(low, min(high, top))]
                flat[name] = min(flat[name], bounds[name][1])
    for name in list(bounds):
        if bounds[name][0] == bounds[name][1]:
            flat[name] = bounds[name][0]
            del bounds[name]
    return unflatten(flat, bounds)


def series(lines, values, level, rng=None):
    """One Answer per period of the datetime level named ``level`` over the range (or over the
    key's first and last capture), in order; a period the range cuts is the range's part of it
    ('201204:2012'). Periods without captures are left out."""
    by_name = {lv.name: lv for lv in prefix_levels()}
    if level not in by_name:
        raise RangeError("a series is by %s, not %r" % (", ".join(by_name), level))
    n = by_name[level].n
    fields = _fields(values, lines.layout)
    at = _datetime_at(lines, fields)
    whole = lines.value(fields)
    rlo, rhi = (rng.lo, rng.hi) if rng is not None else (FIRST, LAST)
    lo, hi = rlo, rhi
    if whole is not None:
        first, last = _span(whole, fields)
        lo, hi = max(lo, first), min(hi, last)
    elif lines.policy is not None and not_emitted(lines.policy, fields, lines.layout) is not None \
            and not lines.levels(fields, at):
        raise RangeError("this profile cannot answer %r: its policy (%s) does not write that key (%s)" % (
            " ".join(fields), lines.policy.name, not_emitted(lines.policy, fields, lines.layout)))
    elif lo == FIRST or hi == LAST:
        return []
    first, _, last = rng.text.partition(":") if rng is not None else ("", "", "")
    out = []
    for period in periods(lo, hi, n):
        cut_lo, cut_hi = rlo > start(period), rhi < end(period)
        text = period if not (cut_lo or cut_hi) else \
            "%s:%s" % (first if cut_lo else period, last if cut_hi else period)
        found = answer(lines, values, Range(max(rlo, start(period)), min(rhi, end(period)), text))
        if may_hold(found.flat):
            out.append(found)
    return out


def grouped(path, fixed, group=(), under=None, level=None, rng=None, top=None, by=None, skipped=None):
    """query() over a range: the keys the question groups (their all-time lines), each answered
    over the range; with ``top`` and ``by`` the largest by that feature's written value.
    ``skipped``: as query's (damaged lines left out, counted there)."""
    import heapq
    from profiler.toolkit.query import SortedProfile, feature_name, query, rank_value, with_left_out
    if DATETIME.name in group:
        raise RangeError("a range cannot be grouped by datetime: ask for a series (--series LEVEL)")
    fixed = dict(fixed)
    if fixed.get(DATETIME.name) not in (None, ANY_FIELD):
        raise RangeError("give a datetime or a range, not both")
    fixed[DATETIME.name] = ANY_FIELD
    by = feature_name(by) if by else None
    found, note, _ = query(path, fixed, group, under, level, skipped=skipped)
    with SortedProfile(path, None if skipped is None else type(skipped)(path)) as profile:
        lines = Lines(profile, budget=float("inf"))
        answers = [answer(lines, dict(zip(profile.layout.fields, key.split(" "))), rng) for key, _ in found]
    answers = [a for a in answers if may_hold(a.flat)]
    if top:
        answers = heapq.nlargest(top, answers, key=lambda a: rank_value(a.flat, by))
    elif by:
        answers.sort(key=lambda a: rank_value(a.flat, by), reverse=True)
    return answers, with_left_out(note, lines.left_out, answers)
