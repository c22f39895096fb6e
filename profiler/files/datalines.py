"""Reading a profile's or a map's lines, checked: a damaged file never answers silently.

Every command that reads profiles and maps opens them here (only regular files, told from
indexes and compressed files: profiler.files.infiles), reads the header lines (at most one
``!keys`` or ``!fields``: the key fields are found by their names there), then reads the data
lines and checks each one:

- it ends with a newline (a last line without one is a file cut short: a copy interrupted, a
  full disk) and holds at most MAX_LINE bytes;
- it sorts after the line before, its key strictly after the one before (no key twice); an
  empty line, or a header line after the data, is refused too;
- a profile line is ``KEY {json}``: one key field per name of its ``!keys``, each matching its
  criterion, no control byte; the JSON is an object with the spec's nine features, whole
  numbers >= 0 (never a fraction, a float, a boolean or a string: integers of any size are
  exact, profiler.jsonnum) and 14-digit timestamps, and ``bounds`` of the same shape;
- a map line is one key field per name of its ``!fields`` (a datetime field a datetime or a
  range), a frequency and an optional JSON object whose breakdowns hold frequencies.

A bad line stops the read with one line naming the file and the line (DamagedFile, exit 2);
given a Skipped (the commands' ``--skip-bad-lines``) the line is skipped and counted by reason
instead, and the count is reported. A line out of order (UnsortedFile), an empty line or a
header line after the data is never skipped: a binary search of the file would be misled by it. ``DataFile.check()`` reads a whole file this way
before a command answers or writes anything; a clean result is remembered for that version of
the file (profiler.files.checkcache).
"""

import collections
import json
import os
import re
import time

from profiler import jsonnum
from profiler.errors import UserError
from profiler.files import checkcache, infiles, layout as layouts
from profiler.files.profilefile import FEATURES, flatten, inconsistencies
from profiler.files.sortedfile import UnsortedFile, profile_key
from profiler.files.ukvs import MapFormatError, datetime_span, parse_frequency, relaxed_json_loads
from profiler.model import criteria, normalise

#: the longest data line read (a longer one is damaged), and the most bytes of header lines, one
#: or all together (they are held)
MAX_LINE = 1 << 22
MAX_HEADER = 1 << 26
#: the most header lines read (each is held; a profile or map has a handful)
MAX_HEADER_LINES = 100000
#: the most key fields of a map (its lines are checked with a pattern of them all)
MAX_KEY_FIELDS = 64
#: the most JSON values of a header line, counted by its commas and brackets before it is
#: parsed (each becomes an object held, many times its bytes)
MAX_HEADER_VALUES = 1000000


def header_values(line):
    """An upper bound of the JSON values a header line holds (its commas and opening brackets)."""
    return line.count(b",") + line.count(b"[") + line.count(b"{")
#: bytes of a line too long to read that are kept, for its key's place in the order
LONG_HEAD = 1 << 12
#: bytes of the first data line read with the header lines (its fields, when !fields is missing)
HEAD_OF_DATA = 1 << 16
CHUNK = 1 << 20

#: why a line is skipped, for people
REASONS = {
    "cut": "cut short",
    "too_long": "longer than %d MiB" % (MAX_LINE >> 20),
    "not_a_line": "not a data line",
    "key": "bad key fields",
    "json": "bad JSON",
    "value": "values not of the spec's shape",
    "frequency": "bad frequency",
    "block": "bad JSON block",
}

#: one data line read: its number, key, JSON bytes (a map: its block or None), value (a
#: profile's parsed JSON; a map's Frequency) and the line itself (without its newline or CR)
Record = collections.namedtuple("Record", "lineno key json value line")


class _Damaged:
    """The value of a damaged line's Record (DataFile.records with ``damaged``)."""

    def __repr__(self):
        return "DAMAGED"


DAMAGED = _Damaged()


class DamagedFile(UserError):
    """A damaged profile or map: a line cut, malformed or of another layout (exit status 2)."""


class Bad(Exception):
    """One line's problem: a reason (REASONS) and what exactly."""

    def __init__(self, reason, text):
        super().__init__(text)
        self.reason = reason


class Skipped:
    """The damaged lines a tolerant read of one file skipped: counted by reason, the first named,
    and the spans of keys their lines may have held (``gaps``: see lost_between)."""

    #: gaps kept; past them, the last one is widened to hold each new one
    MAX_GAPS = 1000
    #: the reasons of a damaged line whose key was read whole (only its value is bad)
    KEY_READ = ("value", "frequency")

    def __init__(self, path):
        self.path = path
        self.count = 0
        self.reasons = {}
        self.first = None
        self.gaps = []

    def lost_between(self, low, high, cut=False):
        """Lines whose keys cannot be read were skipped between the whole lines of keys low and
        high (bytes; None: the file's start or end): a key between them may have had one of
        them. ``cut``: the file was cut short there."""
        gap = (None if low is None else low + b" ", None if high is None else high + b" ", cut)
        if len(self.gaps) >= self.MAX_GAPS:
            gap = (self.gaps.pop()[0],) + gap[1:]
        self.gaps.append(gap)

    def may_hold(self, prefix, cut=True):
        """Whether a line starting with prefix (bytes: a key's start, or a key and ' ' or ' {')
        may have been among the lines skipped whose keys could not be read (with ``cut``, also
        those lost past a cut)."""
        return any((low is None or prefix + b"\xff" > low) and (high is None or prefix < high)
                   for low, high, at_cut in self.gaps if cut or not at_cut)

    def add(self, lineno, bad):
        self.count += 1
        self.reasons[bad.reason] = self.reasons.get(bad.reason, 0) + 1
        if self.first is None:
            self.first = (lineno, str(bad))

    def message(self):
        """One line for stderr."""
        reasons = ", ".join("%d %s" % (n, REASONS.get(r, r)) for r, n in sorted(self.reasons.items()))
        return ("%s: %d damaged line(s) skipped (%s); the first: line %d: %s"
                % (self.path, self.count, reasons, self.first[0], self.first[1]))

    def meta(self):
        """What an output's !meta records of it."""
        return {"lines": self.count, "reasons": dict(sorted(self.reasons.items())), "first_line": self.first[0]}


def skipped_meta(skipped):
    """{file as given: Skipped.meta()} of the files with skipped lines, or None."""
    from profiler.io.names import display_name
    out = {display_name(s.path): s.meta() for s in skipped if s is not None and s.count}
    return out or None


# ---------------------------------------------------------------- lines of a file

def physical_lines(f, offset, limit=MAX_LINE, stop_long=False):
    """(offset, bytes, whole, too long, offset after it) of each line of f from offset: bytes
    without the newline (only the first LONG_HEAD of a line longer than limit, which is never
    held whole); ``whole`` is False for a last line without a newline. With ``stop_long``, the
    first line longer than limit ends the lines as soon as it is (its end and the offset after it
    unknown: None): a reader that refuses such a line does not read gigabytes to its end."""
    pieces, size, start = [], 0, offset
    while True:
        if stop_long and size > limit:
            yield start, b"".join(pieces)[:LONG_HEAD], True, True, None
            return
        data = f.read(CHUNK)
        if not data:
            break
        parts = data.split(b"\n")
        tail = parts.pop()
        for part in parts:
            if pieces:
                size = _held(pieces, size, part, limit)
                line = b"".join(pieces)
            else:
                line, size = part, len(part)
            end = start + size + 1
            if size > limit:
                yield start, line[:LONG_HEAD], True, True, end
            else:
                yield start, line, True, False, end
            start, pieces, size = end, [], 0
        if tail:
            size = _held(pieces, size, tail, limit)
    if size:
        line = b"".join(pieces)
        yield start, line[:LONG_HEAD] if size > limit else line, False, size > limit, start + size


def _held(pieces, size, part, limit):
    """Add part to the pieces held of a line of size bytes so far (all of it while the line fits
    limit, else no more than its first LONG_HEAD bytes): the line's size with part."""
    if size + len(part) <= limit:
        pieces.append(part)
    elif size < LONG_HEAD:
        pieces.append(part[:LONG_HEAD - size])
    return size + len(part)


# ---------------------------------------------------------------- line checks

_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")
_MAP_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
COUNTS = ("urir", "bytes", "digests", "dedup_bytes")


def _is_count(x):
    return type(x) is int and x >= 0


def _is_timestamp(x):
    return type(x) is str and len(x) == 14 and x.isascii() and x.isdigit()


def _show(x):
    text = jsonnum.dumps(x).decode("utf-8", "replace") if isinstance(x, (int, str, list, dict, bool)) \
        or x is None else repr(x)
    return text if len(text) <= 40 else text[:40] + "..."


_NAME = re.compile(rb'"([^"\\]*)"\s*:')


def repeated_name(raw):
    """A member name one object of the JSON text ``raw`` (bytes) gives twice, or None. Readers
    differ on which of the two they take (orjson and json the last, others the first): such a
    line is two values spliced, not a count to answer with. Parsed again only when a name is
    repeated in the text or escaped (a name may repeat in nested objects)."""
    names = _NAME.findall(raw)
    if len(names) == len(set(names)) and b"\\" not in raw:
        return None
    found = []

    def pairs(items):
        if not found:
            seen = set()
            for name, _ in items:
                if name in seen:
                    found.append(name)
                    break
                seen.add(name)
        return 0

    try:
        json.loads(raw, object_pairs_hook=pairs, parse_int=_zero, parse_float=_zero, parse_constant=_zero)
    except (ValueError, RecursionError):
        return None
    return found[0] if found else None


def _zero(_):
    return 0


def _no_repeated_name(raw):
    name = repeated_name(raw)
    if name is not None:
        raise Bad("json", "the JSON block gives %s twice: which one counts is unknown" % _show(name))


def value_problem(v):
    """Why a profile line's parsed JSON is not the spec's (a str), or None."""
    if type(v) is not dict:
        return "the JSON block is not an object"
    urim = v.get("urim")
    if type(urim) is not dict:
        return "urim is %s, not {\"total\":..,\"min\":..,\"max\":..}" % _show(urim)
    for name in ("total", "min", "max"):
        x = urim.get(name)
        if not _is_count(x):
            return "urim.%s is %s, not a whole number >= 0" % (name, _show(x))
    for name in COUNTS:
        x = v.get(name)
        if not _is_count(x):
            return "%s is %s, not a whole number >= 0" % (name, _show(x))
    for name in ("first", "last"):
        x = v.get(name)
        if not _is_timestamp(x):
            return "%s is %s, not a 14-digit timestamp" % (name, _show(x))
    bounds = v.get("bounds")
    if bounds is not None:
        return _bounds_problem(bounds)
    return None


#: the value styles other producers write (the CDXJ blog's), besides ours
FOREIGN_STYLES = ('{"urim":{"total":..,"min":..,"max":..},"urir":..} (urim.total at least)',
                  '{"frequency":..,"spread":..} (frequency at least)')


def foreign_value(v):
    """A foreign profile's line value (profiler.files.layout.is_foreign) as ours: ``{"frequency":
    N, ...}`` becomes ``{"urim": {"total": N}, ...}`` (spread and other attributes kept as
    extras); ours and the blog's ``{"urim": {...}, "urir": N}`` stay. Features it lacks stay
    missing: no number is made up. A ValueError (why) when it is neither style."""
    if type(v) is not dict:
        raise ValueError("the JSON block is not an object")
    if "urim" not in v and "frequency" in v:
        freq = v["frequency"]
        if not _is_count(freq):
            raise ValueError("frequency is %s, not a whole number >= 0" % _show(freq))
        out = {"urim": {"total": freq}}
        out.update((k, x) for k, x in v.items() if k != "frequency")
        v = out
    urim = v.get("urim")
    if type(urim) is not dict or "total" not in urim:
        raise ValueError("urim is %s, not one of the value styles profiles are written in (%s)"
                         % (_show(urim), "; ".join(FOREIGN_STYLES)))
    for name in ("total", "min", "max"):
        if name in urim and not _is_count(urim[name]):
            raise ValueError("urim.%s is %s, not a whole number >= 0" % (name, _show(urim[name])))
    for name in COUNTS + ("spread",):
        if name in v and not _is_count(v[name]):
            raise ValueError("%s is %s, not a whole number >= 0" % (name, _show(v[name])))
    for name in ("first", "last"):
        if name in v and not _is_timestamp(v[name]):
            raise ValueError("%s is %s, not a 14-digit timestamp" % (name, _show(v[name])))
    if v.get("bounds") is not None:
        problem = _bounds_problem(v["bounds"])
        if problem:
            raise ValueError(problem)
    return v


def _bounds_problem(bounds):
    if type(bounds) is not dict:
        return "bounds is not an object {feature: [low, high]}"
    for name, pair in bounds.items():
        if name not in FEATURES:
            return "bounds of an unknown feature %s" % _show(name)
        test = _is_timestamp if name in ("first", "last") else _is_count
        if type(pair) is not list or len(pair) != 2 or not (test(pair[0]) and test(pair[1])):
            return "bounds of %s are %s, not [low, high]" % (name, _show(pair))
    return None


_COUNT = rb"(?:0|[1-9][0-9]{0,17})"      # longer numbers are parsed (jsonnum reads them exactly)
_STAMP = rb'"[0-9]{14}"'
_BOUND = (rb'"(?:urim\.total|urim\.min|urim\.max|urir|bytes|digests|dedup_bytes)":\[%s,%s\]|"(?:first|last)":\[%s,%s\]'
          % (_COUNT, _COUNT, _STAMP, _STAMP))
#: a value as this tool writes it, with or without merge's bounds (no other attribute): valid
#: without a look inside
_CANONICAL = re.compile(
    rb'\A\{"urim":\{"total":(%s),"min":(%s),"max":(%s)\},"urir":(%s),"bytes":(%s),"digests":(%s),"dedup_bytes":(%s),'
    rb'"first":(%s),"last":(%s)(,"bounds":\{(?:%s)(?:,(?:%s))*\})?\}\Z' % ((_COUNT,) * 7 + (_STAMP,) * 2 + (_BOUND,) * 2))


def _canonical_consistent(m):
    """Whether a _CANONICAL match without bounds has features some archive can give (the tests of
    profiler.files.profilefile.CONSISTENCY, on its numbers as written)."""
    total, low, high, urir, size, digests, dedup = map(int, m.group(1, 2, 3, 4, 5, 6, 7))
    if total == 0:
        return low <= high == 0 and urir == 0 and digests == 0 and dedup <= size and m.group(8) <= m.group(9)
    return (1 <= low <= high <= total and 1 <= urir <= total and urir * low <= total <= urir * high
            and digests <= total and dedup <= size and m.group(8) <= m.group(9))


def inconsistency(value):
    """Why a parsed line's features (of checked types) are ones no archive gives (urir above its
    captures, first after last: profiler.files.profilefile.CONSISTENCY), or lie outside their own
    bounds; None when they are not."""
    flat = flatten(value)
    bounds = value.get("bounds") or {}
    for name, (low, high) in bounds.items():
        if not low <= high or (name in flat and not low <= flat[name] <= high):
            return "bounds of %s are %s, not [low, high] around its value" % (name, _show([low, high]))
    for message in inconsistencies(flat, bounds):
        return "inconsistent features: " + message
    return None


def _check_consistency(value):
    problem = inconsistency(value)
    if problem is not None:
        raise Bad("value", problem)


class ProfileCheck:
    """The checks of a profile's data lines (its key layout)."""

    def __init__(self, layout, lacking=False):
        """``lacking``: lines may lack features (another producer's layout, or a merge whose
        keys an input has no line for are bounded by coarser lines: !meta unknown_keys)."""
        self.layout = layout
        self.width = len(layout.fields)
        self.foreign = lacking or layouts.is_foreign(layout)
        # every field without blanks or control bytes, and matching its criterion's pattern
        field = rb"(?=[^\x00-\x20\x7f]+(?: |\Z))(?:%s)"
        key = rb"[^\x00-\x20\x7f!@][^\x00-\x20\x7f]*" + b"".join(
            b" " + field % c.pattern.encode("ascii") for c in layout.criteria)
        self.key = re.compile(rb"\A" + key + rb"\Z")
        names = [c.name for c in layout.criteria]
        self.datetime = names.index(criteria.DATETIME.name) + 1 if criteria.DATETIME.name in names else None

    def key_of(self, body):
        return profile_key(body)

    def __call__(self, body, parse=True):
        """body (a line without its end) -> (key, JSON bytes, parsed value: None when not
        ``parse`` and the value is as this tool writes it); Bad when damaged."""
        i = body.find(b" {")
        if i <= 0:
            raise Bad("not_a_line", "not KEY {json} (%r)" % body[:60])
        key = body[:i]
        if not self.key.match(key):
            raise Bad("key", self._key_problem(key))
        if self.datetime is not None:
            field = key.split(b" ", self.datetime + 1)[self.datetime]
            if field != b"-" and normalise.timestamp(field) is None:
                raise Bad("key", "datetime field %r is no date of the calendar (a month, day or hour out of range)"
                          % field[:40].decode("ascii", "replace"))
        raw = body[i + 1:]
        m = _CANONICAL.match(raw)
        canonical = m is not None
        if canonical and not parse and m.group(10) is None and _canonical_consistent(m):
            return key, raw, None
        try:
            value = jsonnum.loads(raw)
        except jsonnum.JSONDecodeError as e:
            raise Bad("json", "bad JSON (%s)" % str(e)[:80])
        if not canonical:
            _no_repeated_name(raw)
        elif m.group(10) is not None:
            names = _NAME.findall(m.group(10))
            if len(names) != len(set(names)):
                raise Bad("json", "the JSON block gives a feature's bounds twice: which one counts is unknown")
        if self.foreign and not canonical:
            try:
                normal = foreign_value(value)
            except ValueError as e:
                raise Bad("value", str(e))
            _check_consistency(normal)
            return key, (raw if normal is value else jsonnum.dumps(normal)), normal
        if not canonical:
            problem = value_problem(value)
            if problem is not None:
                raise Bad("value", problem)
        _check_consistency(value)
        return key, raw, value

    def _key_problem(self, key):
        fields = key.split(b" ")
        if len(fields) != self.width:
            return "%d key fields, its !keys has %d (%s): %r" % (
                len(fields), self.width, layouts.describe(self.layout), key[:80].decode("utf-8", "replace"))
        m = _CONTROL.search(key)
        if m:
            return "a tab or control byte in the key (column %d)" % (m.start() + 1)
        if not fields[0] or fields[0][:1] in (b"!", b"@"):
            return "the SURT field %r" % fields[0][:40].decode("utf-8", "replace")
        for c, field in zip(self.layout.criteria, fields[1:]):
            if not self.layout.patterns[c.name].match(field):
                return "%s field %r is not %s" % (c.name, field[:40].decode("utf-8", "replace"), c.describe)
        return "bad key %r" % key[:80]



def _criterion_field(pattern):
    return lambda field: field != criteria.ANY_FIELD and bool(pattern.match(field.encode("utf-8", "replace")))


#: {breakdown name: the test of its keys} of the criteria registered now
breakdown_keys = criteria.derived(lambda chosen: dict(
    [("datetime", lambda field: datetime_span(field) is not None)]
    + [(c.name, _criterion_field(re.compile((r"\A(?:%s)\Z" % c.pattern).encode("ascii"))))
       for c in chosen if c.name != "datetime"]))


def _frequency_of(value):
    text = str(value) if type(value) is int else value
    if not isinstance(text, str) or not text.isascii():
        raise MapFormatError("not a frequency: %s" % _show(value))
    return parse_frequency(text)


def block_problem(raw):
    """Why a map line's JSON block is not one (a str), or None."""
    try:
        block = jsonnum.loads(raw)
    except jsonnum.JSONDecodeError:
        try:
            block = relaxed_json_loads(raw)
        except (MapFormatError, RecursionError) as e:
            return "bad JSON (%s)" % str(e)[:80]
    if type(block) is not dict:
        return "the JSON block is not an object"
    name = repeated_name(raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogateescape"))
    if name is not None:
        return "the JSON block gives %s twice: which one counts is unknown" % _show(name)
    for name, valid in breakdown_keys().items():
        if name not in block:
            continue
        entries = block[name]
        if type(entries) is not dict:
            return "the %s breakdown is not an object {field: frequency}" % name
        for field, value in entries.items():
            if not valid(field):
                return "%s breakdown key %s" % (name, _show(field))
            try:
                _frequency_of(value)
            except MapFormatError:
                return "%s breakdown value %s is not a frequency" % (name, _show(value))
    if "rollup" in block and type(block["rollup"]) is not bool:
        return "rollup is %s, not true or false" % _show(block["rollup"])
    return None


_FREQUENCY = rb"(?=[0-9/])(?:(?:0|[1-9][0-9]*)[+\-~]?)?(?:/(?:(?:0|[1-9][0-9]*)[+\-~]?)?)?"
_DATETIME_FIELD = rb"(?:[:-]|[0-9]{4,14})"


def frequency_problem(text):
    """Why a frequency the plain pattern takes (``_FREQUENCY``: digits and marks) is one no
    archive has (more URI-Rs than URI-Ms, mementos of no URI-R) or no reader can hold (a count
    past 4,300 digits), or None. Only a frequency with
    both counts can be: it is parsed, the others are not."""
    if len(text) > 4300:        # a count may pass the digits Python reads an int of: the parser says
        try:
            parse_frequency(text)
        except MapFormatError as e:
            return str(e)
        return None
    urim, slash, urir = text.partition(b"/")
    if not (slash and urim and urir and urim[:1] != b"0"):
        return None
    if urim.isdigit() and urir.isdigit() and urir != b"0" and (len(urir), urir) <= (len(urim), urim):
        return None             # exact counts in order (no leading zeros: the longer is larger)
    try:
        parse_frequency(text)
    except MapFormatError as e:
        return str(e)
    return None


class MapCheck:
    """The checks of a map's data lines (its key fields: !fields, else the first line's)."""

    def __init__(self, nkeys, names=None):
        self.nkeys = nkeys
        self.names = names
        self.datetime_at = names.index("datetime") if names and "datetime" in names else None
        # the common line, valid at a glance: single spaces, a datetime '-', ':' or digits, no block
        fields = [_DATETIME_FIELD if i == self.datetime_at else rb"[^\x00-\x20\x7f]+" for i in range(nkeys)]
        self.plain = re.compile(rb"\A(?![!@])" + b" ".join(fields) + b" " + _FREQUENCY + rb"\Z")

    def key_of(self, body):
        return b" ".join(body.split(None, self.nkeys)[:self.nkeys])

    def __call__(self, body, parse=True):
        """body -> (key, JSON block bytes or None, Frequency: None when not ``parse`` and the line
        is plain); Bad when damaged."""
        if not parse and self.plain.match(body) is not None:
            at = body.rindex(b" ")
            problem = frequency_problem(body[at + 1:])
            if problem is not None:
                raise Bad("frequency", problem)
            return body[:at], None, None
        i = body.find(b" {")
        if i < 0:
            i = body.find(b"\t{")
        text = body[:i] if i >= 0 else body
        m = _MAP_CONTROL.search(text)
        if m:
            raise Bad("key", "a control byte in the line (column %d)" % (m.start() + 1))
        fields = text.split()
        if len(fields) != self.nkeys + 1:
            raise Bad("key", "%d fields, expected %d key field(s) and a frequency: %r"
                      % (len(fields), self.nkeys, text[:80].decode("utf-8", "replace")))
        try:
            freq = parse_frequency(fields[-1])
        except MapFormatError as e:
            raise Bad("frequency", str(e))
        if self.datetime_at is not None and datetime_span(fields[self.datetime_at]) is None:
            raise Bad("key", "datetime field %r is not a datetime or range"
                      % fields[self.datetime_at][:40].decode("utf-8", "replace"))
        block = None
        if i >= 0:
            block = body[i + 1:].strip()
            problem = block_problem(block)
            if problem is not None:
                raise Bad("block", problem)
        return b" ".join(fields[:-1]), block, freq


# ---------------------------------------------------------------- a file

#: a header line's name (validate's rule): a '!' or '@' further in is two lines joined
HEADER_NAME = re.compile(rb"\A[!@][A-Za-z_][A-Za-z0-9_\-]*\Z")


def _parsed_header(line, kind):
    """(name with '@' read as '!', value: JSON (a map's relaxed JSON), else the raw text, why
    it is not a header line of JSON or None)."""
    name, _, rest = line.partition(b" ")
    if not HEADER_NAME.match(name):
        shown = name[:40].decode("utf-8", "replace")
        return shown, rest, "bad header name %r: header lines joined or cut" % shown
    name = name.decode("utf-8", "replace")
    name = "!" + name[1:] if name.startswith("@") else name
    rest = rest.strip() if kind == "ukvs" else rest
    try:
        return name, (relaxed_json_loads(rest) if kind == "ukvs" else jsonnum.loads(rest)), None
    except (ValueError, RecursionError) as e:
        return name, rest.decode("utf-8", "replace") if kind == "ukvs" else rest, str(e)[:80] or type(e).__name__


def _damaged_header(parsed, kind, path):
    """A DamagedFile for the first header line that is not JSON, as validate finds it (a map's
    !meta is free-form: readers skip what they cannot read), or None. Such a line is a header
    block cut and joined to another file's, or written by hand: its counts (!meta captures,
    the policy merge compares) would be read as absent."""
    for i, (name, _, error) in enumerate(parsed):
        if error is not None and error.startswith("bad header name"):
            return DamagedFile("%s line %d: %s; make the file again" % (path, i + 1, error))
        if error is not None and not (kind == "ukvs" and name == "!meta"):
            return DamagedFile("%s line %d: the header line %s is not JSON (%s): the header block is damaged; "
                               "make the file again" % (path, i + 1, name[:40], error))
    return None


#: what to give instead of a file of the other kind
NEXT = {"cdxj": ": give the profile the map was made from (lookup, compact and serve read maps)",
        "ukvs": ": make one with 'archive-profiler ukvs PROFILE -o MAP.ukvs'"}


class DataFile:
    """A profile or map opened for checked reads: what it is, its header lines, its key fields.

    ``kind`` ('cdxj' or 'ukvs'): what the caller reads; by default what the file is. A file of
    another kind, a folder, a device, an index or a compressed file is refused (InputError)."""

    def __init__(self, path, kind=None):
        self.path = path
        found = infiles.recognise(path)
        if kind is not None and found != kind:
            names = {"cdxj": "CDXJ profile", "ukvs": "UKVS map"}
            raise DamagedFile("%s is a %s, not a %s%s" % (path, names[found], names[kind], NEXT[kind]))
        self.kind = found
        with infiles.open_regular(path) as f:
            self.identity = infiles.identity(os.fstat(f.fileno()))
            raw, first, offset = [], None, 0
            while True:
                if f.peek(1)[:1] not in (b"!", b"@"):       # the data: its first line's start is enough
                    first = f.readline(HEAD_OF_DATA).rstrip(b"\r\n")
                    break
                if len(raw) >= MAX_HEADER_LINES:
                    raise DamagedFile("%s line %d: more than %d header lines" % (path, len(raw) + 1, MAX_HEADER_LINES))
                line = f.readline(MAX_HEADER - offset + 1)
                if not line.endswith(b"\n"):
                    raise DamagedFile("%s line %d: %s" % (path, len(raw) + 1, (
                        "a header line longer than %d MiB" if not raw else "header lines of more than %d MiB together")
                        % (MAX_HEADER >> 20) if offset + len(line) > MAX_HEADER else
                        "the last line has no newline: the file was cut short"))
                raw.append(line[:-1].rstrip(b"\r"))
                offset += len(line)
            self.data_offset = offset
        self.raw_headers = raw
        for i, line in enumerate(raw):
            if header_values(line) > MAX_HEADER_VALUES:
                raise DamagedFile("%s line %d: a header line of more than %d JSON values" % (path, i + 1,
                                                                                         MAX_HEADER_VALUES))
        parsed = [_parsed_header(line, self.kind) for line in raw]
        damaged = _damaged_header(parsed, self.kind, path)
        if damaged is not None:
            raise damaged
        self.headers = [(name, value) for name, value, _ in parsed]
        for once in ("!context", "!id"):
            given = _lines_of(self.headers, (once,))
            if len(given) > 1:
                raise DamagedFile("%s gives %s twice (lines %d and %d): a file cut and another joined to it, "
                                  "or two files' headers: which one holds is unknown" % (path, once, given[0][0],
                                                                                          given[1][0]))
        declared = _lines_of(self.headers, ("!keys", "!fields"))
        if len(declared) > 1:
            raise DamagedFile("%s declares its key fields twice (%s on line %d, %s on line %d): one is wrong"
                              % (path, declared[0][1], declared[0][0], declared[1][1], declared[1][0]))
        if self.kind == "cdxj":
            if declared and declared[0][1] != "!keys":
                raise DamagedFile("%s line %d: a profile declares its key fields with !keys, not !fields"
                                  % (path, declared[0][0]))
            self.layout = layouts.of_headers(self.headers, path)
            self.names = self.layout.fields
            self.checker = ProfileCheck(self.layout, unknown_keys(self.headers))
        else:
            self.layout = None
            if declared and declared[0][1] != "!fields":
                raise DamagedFile("%s line %d: a map declares its key fields with !fields, not !keys"
                                  % (path, declared[0][0]))
            self.names = _map_names(self.headers, path)
            if self.names is not None:
                nkeys = len(self.names)
            elif first:
                i = first.find(b" {")
                nkeys = max(1, len((first[:i] if i >= 0 else first).split()) - 1)
            else:
                nkeys = 1
            if nkeys > MAX_KEY_FIELDS:
                raise DamagedFile("%s: %d key fields (its %s): a map has at most %d" % (
                    path, nkeys, "!fields" if self.names is not None else "first line's", MAX_KEY_FIELDS))
            self.checker = MapCheck(nkeys, self.names or (("surt", "datetime") if nkeys == 2 else None))
        self.nkeys = len(self.names) if self.names is not None else self.checker.nkeys
        self.end = None             # after a read: the offset after the last whole line
        self.cut_at = None          # after a read of a file cut short: keys past this one are unknown
        self.first_key = self.last_key = None
        self.data_lines = 0

    def _open_again(self):
        f = infiles.open_regular(self.path)
        if infiles.identity(os.fstat(f.fileno())) != self.identity:
            f.close()
            raise DamagedFile("%s changed while it was read: read it again when it is written" % self.path)
        return f

    def records(self, skipped=None, parse=True, searched=False, damaged=False):
        """The data lines as Records, checked (see the module docstring); a damaged line is a
        DamagedFile, or with ``skipped`` (a Skipped) counted and left out, or with ``damaged``
        also given as a Record whose value is DAMAGED (its key as read: a comparison of two
        files must not take its key for one the file lacks). Lines out of order are an
        UnsortedFile either way, and a line too long is a DamagedFile in a file ``searched`` by
        bisection (profiler.files.sortedfile), which would read it whole."""
        check, key_of, path = self.checker, self.checker.key_of, self.path
        with self._open_again() as f:
            f.seek(self.data_offset)
            lineno = len(self.raw_headers)
            before_key = before = None
            read_key, gap = None, False     # the last key read whole; lines of unread keys since it
            good = 0
            self.end, self.data_lines = self.data_offset, 0
            self.cut_at = None
            stop_long = searched and not damaged        # a line too long is refused: not read to its end
            for offset, line, whole, long, after in physical_lines(f, self.data_offset, stop_long=stop_long):
                lineno += 1
                body = line[:-1] if line[-1:] == b"\r" else line
                if not whole:
                    _bad(skipped, path, lineno, Bad("cut", "the file was cut short: its last line (%d bytes) "
                                                            "has no newline" % (after - offset)))
                    self.cut_at = before_key if before_key is not None else b""
                    if skipped is not None:
                        skipped.lost_between(read_key, None, cut=True)
                        gap = False
                    if damaged and b" {" in body:        # cut in its block: its key is whole
                        key = key_of(body[:body.index(b" {")])
                        if before_key is None or before_key < key:
                            self.cut_at = key
                            yield Record(lineno, key, None, DAMAGED, body)
                    break
                self.end = after
                if not body or body[:1] in (b"!", b"@"):
                    raise DamagedFile("%s line %d: %s: make it again, or remove the line if nothing else is damaged"
                                      % (path, lineno, "an empty line" if not body else "a header line after the data"))
                key = key_of(body)
                if before is not None and not (before_key < key and before < body):
                    raise _unsorted(path, lineno, before_key, key, not written_here(self.headers))
                if before is None:
                    self.first_key = key
                before_key, before = key, body
                self.last_key = key
                self.data_lines += 1
                if long:
                    text = ("a line longer than %d MiB" % (MAX_LINE >> 20) if after is None else
                            "a line of %d bytes, longer than %d MiB" % (after - offset - 1, MAX_LINE >> 20))
                    _bad(None if searched else skipped, path, lineno,
                         Bad("too_long", text + (": a search would read it whole" if searched else "")))
                    gap = gap or (read_key,)
                    if damaged:
                        yield Record(lineno, key, None, DAMAGED, body)
                    continue
                try:
                    key, raw, value = check(body, parse)
                except Bad as e:
                    _bad(skipped, path, lineno, e)
                    if e.reason not in Skipped.KEY_READ:
                        gap = gap or (read_key,)
                    elif gap:
                        skipped.lost_between(gap[0], key)
                        gap, read_key = False, key
                    else:
                        read_key = key
                    if damaged:
                        yield Record(lineno, key, None, DAMAGED, body)
                    continue
                if gap:
                    skipped.lost_between(gap[0], key)
                    gap = False
                read_key = key
                good += 1
                yield Record(lineno, key, raw, value, body)
            if gap:
                skipped.lost_between(gap[0], None)
            if skipped is not None and skipped.count and not good:
                skipped.lost_between(None, None)    # every line damaged: nothing the file says stands
            if infiles.identity(os.fstat(f.fileno())) != self.identity:
                raise DamagedFile("%s changed while it was read: read it again when it is written" % path)

    def check(self, skipped=None, searched=False, header_policy=False):
        """Read the whole file (records()), unless this version of it was found clean before
        (profiler.files.checkcache); a clean read is remembered. Sets end, first_key, last_key
        and data_lines; returns self. With ``header_policy``, the same reading also holds the
        lines to the policy the header names (profiler.files.headerpolicy: a HeaderLies) when no
        line was skipped: a skipped line may be one of a sum."""
        what = "%s %s%s" % (CHECK_VERSION, " ".join(self.names) if self.names else self.checker.nkeys,
                            " header-policy" if header_policy else "")
        facts = checkcache.recall(self.identity, what)
        if facts is not None:
            self.end, self.data_lines = facts["end"], facts["lines"]
            self.first_key = bytes.fromhex(facts["first"]) if facts["first"] is not None else None
            self.last_key = bytes.fromhex(facts["last"]) if facts["last"] is not None else None
            return self
        started = time.time_ns()
        records = self.records(skipped, parse=False, searched=searched)
        if self.kind == "ukvs" and self.checker.nkeys == 2 and self.checker.datetime_at == 1:
            records = _one_key_a_period(self.path, records)
        lies = None
        if header_policy:
            from profiler.files.headerpolicy import HeaderLies, check
            try:
                check(self.path, self.headers, self.layout, records)
            except HeaderLies as e:
                lies = e
        for _ in records:
            pass
        if lies is not None and (skipped is None or not skipped.count):
            raise lies
        if skipped is None or not skipped.count:
            checkcache.remember(self.identity, what, {
                "end": self.end, "lines": self.data_lines,
                "first": self.first_key.hex() if self.first_key is not None else None,
                "last": self.last_key.hex() if self.last_key is not None else None}, started)
        return self


class WithoutDamaged:
    """The lines of a searched file whose damaged lines a tolerant check counted (a SortedLines
    or PagedLines): what its searches find, without the damaged lines. It remembers the damaged
    lines its searches met (``met_damaged``), so that an answer that would need one of them is
    not given as if the line were not there."""

    #: damaged lines remembered (their first MAX_KEPT_BYTES bytes); past them, every prefix may have one
    MAX_KEPT = 1000
    MAX_KEPT_BYTES = 4096

    def __init__(self, lines, check):
        self._lines = lines
        self._check = check
        self._damaged = []
        self._overflow = False

    def _whole(self, line):
        try:
            self._check(line[:-1] if line[-1:] == b"\r" else line)
        except Bad:
            if len(self._damaged) < self.MAX_KEPT:
                self._damaged.append(line[:self.MAX_KEPT_BYTES])
            else:
                self._overflow = True
            return False
        return True

    def met_damaged(self, prefix):
        """The damaged lines starting with prefix (bytes) that searches met and left out (their
        first bytes), in the order met; None when they met more than it keeps (any prefix may
        have one)."""
        if self._overflow:
            return None
        return [line for line in self._damaged if line.startswith(prefix)]

    def group(self, prefix, forward=False):
        return [line for line in self._lines.group(prefix, forward) if self._whole(line)]

    def iter_from(self, prefix):
        return (line for line in self._lines.iter_from(prefix) if self._whole(line))

    def __getattr__(self, name):
        return getattr(self._lines, name)


#: the version of the checks: a file found clean by other checks is checked again
CHECK_VERSION = "checks-5"


def _one_key_a_period(path, records):
    """The records of a surt,datetime map, refused (a DamagedFile) at a line whose datetime writes
    a period another line of its SURT wrote otherwise ('2013' and '2013:2013', '-' and ':'): a
    lookup of the period would answer from one of the two lines, the other's count unseen."""
    surt, seen = None, {}
    for record in records:
        this, _, field = record.key.rpartition(b" ")
        if this != surt:
            surt, seen = this, {}
        span = datetime_span(field.decode("ascii", "replace"))
        if span is not None:
            other = seen.setdefault(span, (field, record.lineno))
            if other[0] != field:
                raise DamagedFile("%s line %d: the period of %s is also line %d's (%s): one period, two keys, and "
                                  "a lookup would answer from one of them; write it alike (run 'archive-profiler "
                                  "validate %s')" % (path, record.lineno, _show(field.decode("ascii", "replace")),
                                                     other[1], _show(other[0].decode("ascii", "replace")), path))
        yield record


def _lines_of(headers, names):
    """[(line number, name)] of the header lines of these names."""
    return [(i + 1, n) for i, (n, _) in enumerate(headers) if n in names]


def _map_names(headers, path):
    for name, value in headers:
        if name == "!fields":
            keys = value.get("keys") if isinstance(value, dict) else None
            if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k for k in keys):
                raise DamagedFile("%s: !fields must be {\"keys\": [field names], \"values\": [\"frequency\"]}, not %s"
                                  % (path, _show(value)))
            return tuple(keys)
    return None


def _bad(skipped, path, lineno, bad):
    if skipped is None:
        raise DamagedFile("%s line %d: %s; --skip-bad-lines skips such lines, counted" % (path, lineno, bad))
    skipped.add(lineno, bad)


def unknown_keys(headers):
    """Whether a profile's header lines say a merge bounded keys an input has no line for by
    coarser lines (its !meta merge note unknown_keys): such lines keep only the features the
    bounds hold (profiler.toolkit.merge.with_unknown)."""
    return any(n == "!meta" and isinstance(v, dict) and isinstance(v.get("merge"), dict)
               and v["merge"].get("unknown_keys") for n, v in headers)


def written_here(headers):
    """Whether a file's header lines say this tool wrote it (a !meta generator of ours)."""
    return any(n == "!meta" and isinstance(v, dict) and str(v.get("generator", "")).startswith("archive-profiler")
               for n, v in headers)


def _unsorted(path, lineno, before, key, foreign=False):
    """The error of a line out of order; for another tool's file (``mementomap generate`` writes
    its lines unsorted) the hint is merge, which sorts such a file on the way in."""
    if before == key:
        what = "holds the key %r twice" % _text(key)
    else:
        what = "is not in byte order (%r comes after %r)" % (_text(key), _text(before))
    hint = ("another tool's file, unsorted: 'archive-profiler merge %s -o SORTED' sorts it" % path if foreign
            and before != key else "sort it (LC_ALL=C sort) or make it again")
    return UnsortedFile("%s is not sorted: line %d %s; %s" % (path, lineno, what, hint))


def _text(key, limit=60):
    text = key.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + "..."
