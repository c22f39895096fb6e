"""UKVS / MementoMap files (spec section 5): frequencies, relaxed JSON headers, reading and writing.

A MementoMap is a UKVS file: `!`/`@` header lines (`!context`, `!id`, `!fields`, `!meta`), then
one record a line, `KEY... FREQUENCY [{optional JSON}]`, byte-wise sorted::

    !context ["http://oduwsdl.github.io/contexts/ukvs"]
    !fields {"keys":["surt"],"values":["frequency"]}
    * 54321/12000
    com,cnn)/* 400/100

API (shared by the toolkit commands):

- ``Frequency(urim, urim_mark, urir, urir_mark)``: counts are ints, or ``None`` when unknown;
  marks are ``''`` (exact), ``'+'`` (lower bound), ``'-'`` (upper bound), ``'~'`` (approximate).
  An unknown count has mark ``''``.
- ``parse_frequency(text)`` / ``format_frequency(freq)``: ``'400/100'``, ``'400+/100~'``; as in the
  UKVS seed, a bare ``'400'`` (or ``'400/'``) means the URI-R count is unknown
  (``Frequency(400, '', None, '')``), ``'/50'`` an unknown URI-M count, ``'/'`` both unknown.
  ``format_frequency`` writes the shortest form (``'400'``, never ``'400/'``), so
  ``format_frequency(parse_frequency(t))`` is canonical and parsing it again gives the same tuple.
- ``read_map(path, skipped=None) -> (headers, records)``: headers is a list of (name, value) with
  the name as written (``'!meta'``; ``'@'`` read as ``'!'``) and the value parsed as relaxed JSON
  (the seed's unquoted object keys are accepted; a value that is not JSON stays a str); records
  is an iterator of (key, Frequency) where key is the key fields joined by single spaces
  (``b'com,cnn)/*'`` or ``b'com,cnn)/* 2013'``). Runs of blanks between fields and an optional
  trailing JSON block are accepted (the block is dropped). Every line is checked
  (profiler.files.datalines): a damaged one is a one-line error naming its line, or with
  ``skipped`` counted and left out.
- ``write_map(path, headers, records)``: strict JSON headers (in byte order, like the profile),
  records sorted byte-wise by key (a list is sorted; other iterables are written as they come, in
  order), a duplicate key is a MapFormatError; written atomically. A record may carry a third
  item, its JSON block (a dict, written after the frequency).
- ``relaxed_json_loads(text)``: JSON, or the seed's JSON with unquoted object keys.
- ``datetime_span(field)``: the 14-digit (low, high) span of a datetime key field
  (``':'``/``'-'`` all time, ``'2013'``, ``'201603'``, ranges ``'2010:2012'``, ``':2009'``, ``'201603:'``).
"""

import collections
import os
import re

from profiler import jsonnum
from profiler.io.names import display_name
from profiler.errors import UserError
from profiler.files.output import write_atomic
from profiler.model import normalise

CONTEXT = ["http://oduwsdl.github.io/contexts/ukvs"]
MARKS = ("", "+", "-", "~")
ALL_TIME = ":"

Frequency = collections.namedtuple("Frequency", "urim urim_mark urir urir_mark")


class MapFormatError(UserError, ValueError):
    """A UKVS line, frequency or header that cannot be read (one-line message, exit 2)."""


# ---------------------------------------------------------------- frequencies

_COUNT = re.compile(r"\A(?:(0|[1-9][0-9]*)([+\-~]?))?\Z")


def _count(text, whole):
    m = _COUNT.match(text)
    if not m:
        raise MapFormatError("not a frequency: %r" % whole)
    if m.group(1) is None:
        return None, ""
    try:
        return int(m.group(1)), m.group(2)
    except ValueError:          # past Python's digits of an int (4,300), as a profile's count is
        raise MapFormatError("a count of %d digits, more than a count is read with: %r"
                             % (len(m.group(1)), whole[:40] + "..."))


def parse_frequency(text):
    """'400+/100~' -> Frequency(400, '+', 100, '~'); '400' -> Frequency(400, '', None, '').

    >>> parse_frequency('400/100')
    Frequency(urim=400, urim_mark='', urir=100, urir_mark='')
    >>> parse_frequency('/50+')
    Frequency(urim=None, urim_mark='', urir=50, urir_mark='+')
    """
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    if not text:
        raise MapFormatError("empty frequency")
    urim_text, slash, urir_text = text.partition("/")
    urim, urim_mark = _count(urim_text, text)
    urir, urir_mark = _count(urir_text, text) if slash else (None, "")
    if not slash and urim is None:
        raise MapFormatError("not a frequency: %r" % text)
    if (urim and urir is not None and urir > urim and urir_mark in ("", "+")
            and urim_mark in ("", "-")):       # (a zero URI-M count, as in `0/20`, says "not held")
        raise MapFormatError("more URI-Rs than URI-Ms (mementos), which no archive has: %r" % text)
    if urim and urim_mark in ("", "+") and urir == 0 and urir_mark in ("", "-"):
        raise MapFormatError("URI-Ms (mementos) of no URI-R, which no archive has: %r" % text)
    return Frequency(urim, urim_mark, urir, urir_mark)


def format_frequency(freq):
    """Frequency -> its shortest text: '400/100', '400+/100~', '400' (URI-R unknown), '/50', '/'.

    >>> format_frequency(Frequency(400, '+', 100, ''))
    '400+/100'
    """
    urim, urim_mark, urir, urir_mark = freq
    for value, mark in ((urim, urim_mark), (urir, urir_mark)):
        if mark not in MARKS or (value is None and mark) or (value is not None and (
                not isinstance(value, int) or value < 0)):
            raise ValueError("not a frequency: %r" % (freq,))
    left = "" if urim is None else "%d%s" % (urim, urim_mark)
    if urir is None:
        return left or "/"
    return "%s/%d%s" % (left, urir, urir_mark)


# ---------------------------------------------------------------- relaxed JSON

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BARE_KEY = re.compile(r"([{,]\s*)([A-Za-z_$][A-Za-z0-9_$\-]*)(\s*:)")


def relaxed_json_loads(text):
    """Strict JSON, or the UKVS seed's relaxed JSON with unquoted object keys.

    >>> relaxed_json_loads('{keys: ["surt"], values: ["frequency"]}')
    {'keys': ['surt'], 'values': ['frequency']}
    """
    try:
        return jsonnum.loads(text)
    except jsonnum.JSONDecodeError:
        pass
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    parts, last = [], 0
    for m in _STRING.finditer(text):
        parts.append(_BARE_KEY.sub(r'\1"\2"\3', text[last:m.start()]))
        parts.append(m.group())
        last = m.end()
    parts.append(_BARE_KEY.sub(r'\1"\2"\3', text[last:]))
    try:
        return jsonnum.loads("".join(parts))
    except jsonnum.JSONDecodeError as e:
        raise MapFormatError("not JSON: %r (%s)" % (text[:80], e))


# ---------------------------------------------------------------- datetime key field

_DT = re.compile(r"\A([0-9]{4,14})?(:)?([0-9]{4,14})?\Z")
LOW, HIGH = "00000000000000", "99999999999999"


def datetime_span(field):
    """A datetime key field -> (low, high) 14-digit strings, both inclusive; None if not one.

    >>> datetime_span('2013')
    ('20130000000000', '20139999999999')
    >>> datetime_span('2010:2012')
    ('20100000000000', '20129999999999')
    """
    if isinstance(field, bytes):
        field = field.decode("ascii", "replace")
    if field in ("-", ":"):
        return LOW, HIGH
    m = _DT.match(field)
    if not m or not (m.group(1) or m.group(3)):
        return None
    start, colon, end = m.groups()
    if not colon:
        if end:
            return None
        end = start
    if any(part and normalise.timestamp(part.encode("ascii")) is None for part in (start, end)):
        return None                     # digits of no date of the calendar ('201399')
    low = (start or "").ljust(14, "0") if start else LOW
    high = end.ljust(14, "9") if end else HIGH
    return (low, high) if low <= high else None


# ---------------------------------------------------------------- reading

def read_headers(path):
    """(headers, byte offset of the first data line) of a UKVS or CDXJ file (checked to be one:
    profiler.files.datalines.DataFile)."""
    from profiler.files.datalines import DataFile
    found = DataFile(path)
    return found.headers, found.data_offset


def read_map(path, skipped=None):
    """(headers, records): see the module docstring. Records are read lazily, in file order, each
    line checked (profiler.files.datalines: a damaged line is a one-line error, or with
    ``skipped`` counted there and left out; a line out of order is an error)."""
    from profiler.files.datalines import DataFile
    found = DataFile(path, "ukvs")

    def records():
        for record in found.records(skipped):
            yield record.key, record.value

    return found.headers, records()


# ---------------------------------------------------------------- writing

def header_line(name, value):
    """'!meta', {...} -> b'!meta {...}' (strict, compact JSON)."""
    return name.encode("utf-8") + b" " + jsonnum.dumps(value)


def map_headers(archive_uri=None, keys=("surt",), meta=()):
    """Default headers of a MementoMap: context, id, fields, then the given meta dicts."""
    out = [("!context", CONTEXT), ("!id", {"uri": archive_uri}),
           ("!fields", {"keys": list(keys), "values": ["frequency"]})]
    out += [("!meta", m) for m in meta]
    return out


def write_map(path, headers, records):
    """Write a UKVS file atomically: strict-JSON headers, then records sorted by key. Returns the
    number of records. Records are (key bytes, Frequency) pairs, or (key, Frequency, JSON block
    dict or None) triples: a list in any order (sorted here), or any other iterable in byte order
    of their keys, written as they come (a key out of order or twice: MapFormatError, nothing
    written)."""
    lines = sorted(header_line(n, v) for n, v in headers)
    data = ((r[0] if isinstance(r[0], bytes) else r[0].encode("utf-8"), r[1], r[2] if len(r) > 2 else None)
            for r in records)
    if isinstance(records, (list, tuple)):
        data = sorted(data, key=lambda r: r[0])
    count = [0]

    def out():
        yield from lines
        before = None
        for key, freq, block in data:
            if not key or b"\n" in key or key[:1] in (b"!", b"@"):
                raise MapFormatError("not a map key: %r" % key[:80])
            if before is not None and key <= before:
                raise MapFormatError("%s key in map: %r" % ("duplicate" if key == before else "out-of-order", key[:80]))
            before = key
            count[0] += 1
            line = key + b" " + format_frequency(freq).encode("ascii")
            yield line + b" " + jsonnum.dumps(block) if block else line

    write_atomic(path, out())
    return count[0]


def _in_map_order(records):
    """The records of a sorted profile in its map's byte order: in the profile a SURT's all-time
    line ('-') comes before its datetimes, in the map (':') after them; only the records of one
    SURT are held, to sort them."""
    group, held = None, []
    for record in records:
        surt = record[0].split(b" ", 1)[0]
        if surt != group:
            held.sort(key=lambda r: r[0])
            yield from held
            group, held = surt, []
        held.append(record)
    held.sort(key=lambda r: r[0])
    yield from held


# ---------------------------------------------------------------- from a profile

KEY_CHOICES = {"surt": ("surt",), "surt,datetime": ("surt", "datetime")}
#: the !meta name listing the optional criteria a map's lines are broken down by
BREAKDOWN_META = "breakdown"


def profile_records(path, keys=("surt",), layout=None, skipped=None):
    """(key, Frequency, block) records of a CDXJ profile: with keys ('surt',) the lines whose
    criteria are all '-'; with ('surt', 'datetime') the lines whose criteria but datetime are '-',
    the datetime '-' written as the all-time placeholder ':'. Counts are exact. Every line is
    checked (profiler.files.datalines; ``skipped``: damaged lines are counted there and left
    out). The profile's criteria but datetime (mime, status, lang: its !keys) break each
    record's frequency down, from the lines where one of them is all that differs:
    ``{"lang": {"ara": "146/124"}, "status": {"2xx": "40/9", "5xx": "12/3"}}`` (None when
    there are none). A breakdown keeps one level of its criterion, its coarsest present in the
    lines (status classes, mime types: BREAKDOWN_LEVELS), so that its entries add up to at most
    the line's captures."""
    from profiler.files import layout as layouts
    from profiler.files.datalines import DataFile
    found = DataFile(path, "cdxj")
    layout = found.layout
    two = tuple(keys) == ("surt", "datetime")
    kept = ("datetime",) if two else ()
    optional = tuple(c for c in layout.criteria if c.name != "datetime")
    dt_at = layouts.index(layout, "datetime")
    # the records of one SURT, by datetime: a SURT's lines are adjacent, a datetime's need not be
    # (!keys may name a criterion before datetime: 'com,* - - 2013 -' < 'com,* 1k-10k - 1996 -')
    surt, held = None, {}

    def flush(held):
        for record, blocks in held.values():
            if record is not None:
                block = {n: dict(sorted(_one_level(n, b).items())) for n, b in blocks.items() if b} or None
                yield record + (block,)

    for line in found.records(skipped):
        fields = line.key.split(b" ")
        main = layouts.is_any(fields, layout, kept)
        by = None if main else next((c.name for c in optional
                                     if fields[layouts.index(layout, c.name)] != b"-"
                                     and layouts.is_any(fields, layout, kept + (c.name,))), None)
        if not main and by is None:
            continue
        if fields[0] != surt:
            yield from flush(held)
            surt, held = fields[0], {}
        entry = held.setdefault(fields[dt_at] if two else None, [None, {c.name: {} for c in optional}])
        v = line.value
        freq = line_frequency(v)
        if main:
            out_key = fields[0] if not two else fields[0] + b" " + (
                ALL_TIME.encode() if fields[dt_at] == b"-" else fields[dt_at])
            entry[0] = (out_key, freq)
        else:
            field = fields[layouts.index(layout, by)].decode("utf-8", "replace")
            entry[1][by][field] = format_frequency(freq)
    yield from flush(held)


def line_frequency(value):
    """The Frequency of a profile line's JSON block: its urim.total and urir, each marked by the
    line's "bounds" of it (a merged profile's): '+' when the written number is the low, '-' when
    it is the high, '~' when it lies inside them (a revisit resolved in another input may move a
    capture from one status or MIME line to another, [0, N])."""
    bounds = value.get("bounds") or {}

    def mark(name, written):
        if name not in bounds:
            return ""
        low, high = bounds[name]
        return "" if low == high else "+" if written == low else "-" if written == high else "~"
    return Frequency(value["urim"]["total"], mark("urim.total", value["urim"]["total"]),
                     value["urir"], mark("urir", value["urir"]))


#: the level of a criterion a map line's breakdown keeps, in the order tried (see profile_records);
#: another criterion of several levels (a plugin's) tries its levels coarsest first
#: (Criterion.coarse_to_fine)
BREAKDOWN_LEVELS = {"status": ("class", "code"), "mime": ("type", "category")}


def _one_level(name, entries):
    """A breakdown's entries of one level of its criterion: the first of its BREAKDOWN_LEVELS
    an entry is of that level alone (a key whose lines are status codes with an 'unk': the codes,
    not 'unk' alone), else the first any entry has ('unk' and the like, of every level, stay)."""
    from profiler.model import criteria
    criterion = criteria.BY_NAME[name]
    levels = BREAKDOWN_LEVELS.get(name) or tuple(level.name for level in criterion.coarse_to_fine)
    if len(levels) < 2:
        return entries
    of = {field: set(criterion.field_levels(field)) for field in entries}
    for level in levels:
        if any(found == {level} for found in of.values()):
            return {f: v for f, v in entries.items() if level in of[f]}
    for level in levels:
        if any(level in found for found in of.values()):
            return {f: v for f, v in entries.items() if level in of[f]}
    return entries


def profile_to_map(profile_path, map_path, keys=("surt",), archive_uri=None, created=None, skipped=None):
    """Write the MementoMap of a CDXJ profile (see profile_records). Returns the record count.
    ``skipped`` (a profiler.files.datalines.Skipped): damaged lines are left out and counted,
    in the map's !meta too (the whole profile is read first, so the count is known)."""
    import datetime
    from profiler import GENERATOR
    from profiler.files import coverage, layout as layouts
    from profiler.files import pages
    from profiler.files.datalines import DataFile
    found = DataFile(profile_path, "cdxj")
    headers = found.headers
    pages.require_whole(profile_path, headers, "ukvs")
    if not any(n in layouts.KEYS_HEADERS for n, _ in headers):
        raise MapFormatError("%s: not a CDXJ profile (no !keys line)" % profile_path)
    layout = found.layout
    found.check(skipped, header_policy=True)    # every line read before the map is written, held to its policy
    _require_plain_lines(profile_path, headers)
    source, cover, compacted = {}, None, False
    for name, value in headers:
        if name == "!meta" and isinstance(value, dict) and "compacted" in value:
            compacted = True
        if name == "!id" and isinstance(value, dict) and archive_uri is None:
            archive_uri = value.get("uri")
        if name == "!meta" and isinstance(value, dict):
            for field in ("captures", "created", "generator"):
                if field in value:
                    source[field] = value[field]
            if isinstance(value.get("policy"), dict):
                source["policy"] = value["policy"].get("name")
                cover = coverage.from_policy(value["policy"])
    created = created or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    meta = {"type": "MementoMap", "generator": GENERATOR, "created": created,
            "source": dict(source, profile=display_name(os.path.basename(profile_path)))}
    if cover is not None and not compacted:
        meta["coverage"] = cover            # every held host (URL) has its line (profiler.files.coverage)
    if layouts.optional(layout):
        meta[BREAKDOWN_META] = [c.name for c in layouts.optional(layout)]
    if skipped is not None and skipped.count:
        from profiler.files.datalines import skipped_meta
        meta["skipped_lines"] = skipped_meta([skipped])
    again = None if skipped is None else type(skipped)(profile_path)
    n = write_map(map_path, map_headers(archive_uri, keys, [meta]),
                  _in_map_order(profile_records(profile_path, keys, layout, again)))
    if again is not None and again.count != skipped.count:
        raise MapFormatError("%s changed while it was read: make the map again" % profile_path)
    return n


def _require_plain_lines(profile_path, headers):
    """A MapFormatError when the profile's policy writes no line of all time with every other
    criterion any (a policy by month alone): a map of it would be empty (--keys surt), or
    without the all-time lines a lookup without a date, or of a coarser one, reads."""
    from profiler.model import criteria
    from profiler.model.policy import recorded
    policy = recorded(headers, profile_path)
    if policy is None or criteria.DATETIME.name not in policy.names or policy.writes_plain_lines():
        return
    raise MapFormatError("%s: its policy (%s) writes no line of all time with every other criterion any, "
                         "which a map is made of (its lines are by %s): profile with a policy whose levels "
                         "emit datetime any" % (profile_path, policy.name,
                                                " or ".join(policy.datetime_levels()) or "nothing"))


def breakdowns(headers):
    """The optional criteria a map's !meta says its lines are broken down by (['lang'], or [])."""
    for name, value in headers:
        if name[1:] == "meta" and isinstance(value, dict) and isinstance(value.get(BREAKDOWN_META), list):
            return [n for n in value[BREAKDOWN_META] if isinstance(n, str)]
    return []
