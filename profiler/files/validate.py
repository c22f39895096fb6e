"""Checking a CDXJ archive profile or a UKVS map against its grammar (spec sections 3-5).

One streaming pass; every problem is reported with its line number:

- lines end with LF only (no CR), none is empty, the last one ends with a newline;
- `!`/`@` header lines come before every data line, each `!name JSON` with valid JSON
  (a UKVS map may use the seed's relaxed JSON); in a profile the header lines are byte-wise sorted;
- a data line is its key fields, single-space separated, then the JSON block (profile) or the
  frequency and an optional JSON block (UKVS); as many key fields as `!keys`/`!fields` declare;
  no tab or control byte in a key; a profile's fields match their criteria (its `!keys`:
  profiler.files.layout);
- keys are strictly increasing byte-wise (so no duplicate key);
- a profile's JSON is a single-line object with the nine features in the spec's order, whole
  numbers and 14-digit timestamps, consistent with each other, and `bounds` (written by merge)
  that contain their feature's value;
- a map line's breakdown blocks (`{"datetime": {...}}`, `{"lang": {"ara": "12/3"}}`) hold
  frequencies under fields of their criterion, and a complete breakdown adds up to its line.
"""

import collections
import os
import re

from profiler import jsonnum
from profiler.files import infiles, layout as layouts
from profiler.errors import UserError
from profiler.files.datalines import (DataFile, HEADER_NAME, MAX_HEADER, MAX_HEADER_LINES, MAX_HEADER_VALUES,
                                      MAX_KEY_FIELDS, MAX_LINE, foreign_value, header_values, physical_lines,
                                      repeated_name, unknown_keys)
from profiler.files.profilefile import FEATURES, flatten, inconsistencies
from profiler.files.ukvs import MapFormatError, datetime_span, parse_frequency, relaxed_json_loads
from profiler.model import criteria, normalise

Problem = collections.namedtuple("Problem", "lineno message")

_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")
_TIMESTAMP = re.compile(r"\A[0-9]{14}\Z")
SPEC_ORDER = ["urim", "urir", "bytes", "digests", "dedup_bytes", "first", "last"]
URIM_ORDER = ["total", "min", "max"]


class Report:
    """The outcome of validate(): kind, line counts and the problems found (up to a limit)."""

    def __init__(self, path, kind, max_problems):
        self.path = path
        self.kind = kind
        self.lines = 0
        self.data_lines = 0
        self.problems = []
        self.count = 0
        self.max_problems = max_problems
        self.notes = []             # (line, message): what the format allows but a reader may like to know
        self._noted = set()

    def add(self, lineno, message):
        self.count += 1
        if self.max_problems is None or len(self.problems) < self.max_problems:
            self.problems.append(Problem(lineno, message))

    def note(self, lineno, message, once=None):
        """A note (not a problem); with ``once``, only the first of its kind (with a count)."""
        if once is not None:
            if once in self._noted:
                return
            self._noted.add(once)
        if len(self.notes) < 50:
            self.notes.append(Problem(lineno, message))

    @property
    def ok(self):
        return self.count == 0


def validate(path, kind=None, max_problems=100):
    """Check a profile ('cdxj') or map ('ukvs') file; kind is sniffed when None. Returns a Report.
    A file that is not a regular file, or is something else than a profile or map (an empty file,
    a compressed one, a CDX or CDXJ index, a WARC or ARC file) is an InputError (one line):
    listing its lines' problems would not say what it is."""
    found = infiles.recognise(path)
    kind = kind or found
    report = Report(path, kind, max_problems)
    nkeys = None
    layout = None               # a profile's KeyLayout, when its !keys names known criteria
    declared = False
    previous_header = None
    lacking = False             # lines may lack features (a merge's !meta unknown_keys)
    map_names = None            # a map's key field names (its !fields)
    previous_key = None
    previous_key_line = 0
    spans = (None, {})           # a map's SURT and the datetime spans of its lines: one period, one key
    first_data_line = 0
    metas = []                  # (line number, value) of the !meta lines
    once = {}                   # the line of each header a file gives once (!context, !id)
    header_bytes = header_lines = 0
    whole = True
    with infiles.open_regular(path) as f:
        read = infiles.identity(os.fstat(f.fileno()))
        for lineno, (_, body, whole, long, _) in enumerate(physical_lines(f, 0, MAX_HEADER), 1):
            report.lines = lineno
            header = body[:1] in (b"!", b"@")
            if long or (not header and len(body) > MAX_LINE):
                report.add(lineno, "a line longer than %d MiB (not read further)"
                           % ((MAX_HEADER if header else MAX_LINE) >> 20))
                continue
            if body.endswith(b"\r"):
                report.add(lineno, "CR before the line end (CRLF line ends are not allowed)")
                body = body[:-1]
            elif b"\r" in body:
                report.add(lineno, "CR inside the line")
            if body[-1:] in (b" ", b"\t") and body[:1] not in (b"!", b"@") and body.strip():
                report.add(lineno, "white space at the end of the line")
            if not body.strip():
                report.add(lineno, "empty line" if not body else "blank line")
                continue
            if body[:1] in (b"!", b"@"):
                if first_data_line:
                    report.add(lineno, "header line after the first data line (line %d)" % first_data_line)
                header_bytes += len(body) + 1
                header_lines += 1
                if header_bytes > MAX_HEADER >= header_bytes - len(body) - 1:
                    report.add(lineno, "header lines of more than %d MiB together" % (MAX_HEADER >> 20))
                if header_lines == MAX_HEADER_LINES + 1:
                    report.add(lineno, "more than %d header lines" % MAX_HEADER_LINES)
                name, value = _check_header(report, lineno, body, kind)
                if name == b"meta":
                    _note_meta(report, lineno, value)
                    metas.append((lineno, value))
                    lacking = lacking or unknown_keys([("!meta", value)])
                elif name in (b"context", b"id"):
                    if name in once:
                        report.add(lineno, "a second !%s line (line %d has one): a file cut and another joined "
                                   "to it, or two files' headers" % (name.decode(), once[name]))
                    once.setdefault(name, lineno)
                if kind == "cdxj" and previous_header is not None and body < previous_header:
                    report.add(lineno, "header lines not in byte order (sorts before line %d)" % (lineno - 1))
                previous_header = body
                if name in (b"keys", b"fields"):
                    found = _declared_keys(report, lineno, name, value, kind)
                    if found is not None and found[1] is not None and (
                            layouts.is_foreign(found[1]) or list(found[1].fields) != value):
                        report.note(lineno, "another producer's key fields %s, read as %s (%s)" % (
                            jsonnum.dumps(value).decode("utf-8", "replace")[:80], layouts.describe(found[1]),
                            "only some of the criteria" if layouts.is_foreign(found[1]) else "other names"))
                    if found is not None and found[1] is not None and not layouts.in_writers_order(found[1]):
                        report.note(lineno, "key fields in another order than the spec's (%s): readers find "
                                    "them by name; archive-profiler writes %s" % (
                                        layouts.describe(found[1]), layouts.describe(layouts.writers_order(found[1]))))
                    if declared and found is not None:
                        report.add(lineno, "a second !%s line" % name.decode())
                    if found is not None:
                        (nkeys, layout), declared = found, True
                    if name == b"fields" and isinstance(value, dict) and isinstance(value.get("keys"), list):
                        map_names = value["keys"]
                continue
            report.data_lines += 1
            if not first_data_line:
                first_data_line = lineno
                if kind == "cdxj":
                    _levels_known(report, metas, layout or criteria.CORE_LAYOUT)
                if not declared:
                    report.add(lineno, "no !keys header line before the data" if kind == "cdxj" else
                               "no !fields header line before the data (the spec's map declares its key fields, "
                               "e.g. !fields {\"keys\":[\"surt\"],\"values\":[\"frequency\"]}; readers take "
                               "the first line's: one field is the SURT, two the SURT and a date)")
                    if kind == "cdxj":
                        layout = criteria.CORE_LAYOUT       # a file without !keys: the core criteria
                        nkeys = len(layout.fields)
            key = _check_data(report, lineno, body, kind, nkeys, layout, lacking, map_names)
            if key is None:
                continue
            if previous_key is not None:
                if key == previous_key:
                    report.add(lineno, "duplicate key (also on line %d): %s" % (previous_key_line, _show(key)))
                elif key < previous_key:
                    report.add(lineno, "not in byte order: key sorts before line %d's key: %s"
                               % (previous_key_line, _show(key)))
            previous_key, previous_key_line = key, lineno
            if kind == "ukvs" and nkeys == 2 and (map_names is None or list(map_names) == ["surt", "datetime"]):
                spans = _one_key_a_period(report, lineno, key, spans)
        if infiles.identity(os.fstat(f.fileno())) != read:
            report.add(report.lines, CHANGED)
            return report
    if not whole:
        report.add(report.lines, "no newline at the end of the last line")
    if kind == "cdxj" and report.ok:
        _check_policy(report, path, read)
    return report


#: the problem of a file written while it was validated: its lines read are of no one version
CHANGED = "the file changed while it was read: validate it again when it is written"


def _check_policy(report, path, read):
    """A problem when the lines are not what the policy the header names writes (a header that
    lies: profiler.files.headerpolicy), which merge would read as zeros; the file must be the
    version (``read``: its identity) whose lines were checked."""
    from profiler.files.headerpolicy import HeaderLies
    try:
        found = DataFile(path, "cdxj")
        if found.identity != read:
            report.add(report.lines, CHANGED)
            return
        found.check(header_policy=True)
    except HeaderLies as e:
        report.add(e.lineno, e.problem + ": " + str(e).rsplit("; ", 1)[1])
    except UserError:
        try:
            now = infiles.identity(os.stat(path))
        except OSError:
            now = None
        if now != read:                         # written while the check read it
            report.add(report.lines, CHANGED)
        # else what the reader refuses that this check passed is the reader's to say


def _levels_known(report, metas, layout):
    """A problem for a !meta whose policy writes a key field at a level its criterion here lacks
    (profiler.files.layout.unknown_levels: every reader refuses the file)."""
    for lineno, value in metas:
        found = layouts.unknown_levels([("!meta", value)], layout)
        if found:
            report.add(lineno, found)


def _show(key):
    return key[:80].decode("utf-8", "replace")


def _check_header(report, lineno, body, kind):
    name, space, rest = body.partition(b" ")
    if not HEADER_NAME.match(name):
        report.add(lineno, "bad header name %r" % _show(name))
    if not space or not rest:
        report.add(lineno, "header line without a JSON value")
        return name[1:], None
    if header_values(rest) > MAX_HEADER_VALUES:
        report.add(lineno, "more than %d JSON values (not read further)" % MAX_HEADER_VALUES)
        return name[1:], None
    if rest[:1] == b" " or rest.endswith(b" "):
        if kind == "ukvs":
            report.note(lineno, "runs of blanks in header lines (allowed; they cost bytes)", once="header-blanks")
            rest = rest.strip(b" ")
        else:
            report.add(lineno, "more than one space in a header line")
    try:
        return name[1:], jsonnum.loads(rest)
    except jsonnum.JSONDecodeError as e:
        if kind == "ukvs":
            try:
                value = relaxed_json_loads(rest)
                report.note(lineno, "relaxed JSON (unquoted names) in header lines, as the UKVS seed writes them",
                            once="header-relaxed")
                return name[1:], value
            except MapFormatError:
                pass
            if name[1:] == b"meta":     # free-form: readers skip what they cannot read
                report.note(lineno, "malformed !meta content, not JSON (%s): readers skip it" % e)
                return name[1:], None
        report.add(lineno, "bad JSON in header: %s" % e)
        return name[1:], None


def _declared_keys(report, lineno, name, value, kind):
    """(number of key fields, KeyLayout or None) a !keys or !fields line declares, or None."""
    if name == b"keys":
        if kind != "cdxj":
            report.add(lineno, "!keys in a UKVS map (it declares its fields with !fields)")
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            try:
                return len(value), layouts.parse(value, "!keys")
            except layouts.LayoutError:
                report.add(lineno, "!keys %s: not a profile's key fields (%s)%s"
                           % (jsonnum.dumps(value).decode("utf-8", "replace")[:80], layouts.expected(),
                              layouts.unregistered(value)))
                return len(value), None
        report.add(lineno, "!keys must be a JSON list of field names")
        return None
    if kind != "ukvs":
        report.add(lineno, "!fields in a CDXJ profile (it declares its key fields with !keys)")
    if (isinstance(value, dict) and isinstance(value.get("keys"), list) and value["keys"]
            and isinstance(value.get("values", []), list)):
        if value.get("values", ["frequency"]) != ["frequency"]:
            report.add(lineno, "!fields values must be [\"frequency\"]")
        if len(value["keys"]) > MAX_KEY_FIELDS:
            report.add(lineno, "%d key fields: a map has at most %d" % (len(value["keys"]), MAX_KEY_FIELDS))
        return len(value["keys"]), None
    report.add(lineno, "!fields must be a JSON object with a \"keys\" list")
    return None


def _one_key_a_period(report, lineno, key, spans):
    """A surt,datetime map's line whose datetime writes a period another line of its SURT wrote
    otherwise ('2013' and '2013:2013', '-' and ':') is a problem: a lookup answers from one of
    them. Returns the (SURT, {span: (field, line)}) state after the line."""
    surt, _, field = key.rpartition(b" ")
    if surt != spans[0]:
        spans = (surt, {})
    span = datetime_span(field.decode("ascii", "replace"))
    if span is not None:
        other = spans[1].setdefault(span, (field, lineno))
        if other[0] != field:
            report.add(lineno, "the period of %s is also line %d's (%s): one period, two keys"
                       % (_show(field), other[1], _show(other[0])))
    return spans


def _check_fields(report, lineno, text, what, aligned=False):
    """Single spaces between fields (``aligned``, a UKVS map: runs of blanks allowed, noted), no
    control bytes; returns the fields."""
    column = (text.find(b"  ") + 1 if b"  " in text else 1 if text[:1] == b" "
              else len(text) if text.endswith(b" ") else 0)
    if column and aligned and text[:1] != b" ":
        report.note(lineno, "aligned columns: runs of blanks between fields (allowed in UKVS; they cost bytes)",
                    once="aligned")
    elif column:
        report.add(lineno, "more than one space between fields (column %d)" % column)
    m = _CONTROL.search(text)
    if m:
        report.add(lineno, "tab or control byte in the %s (column %d)" % (what, m.start() + 1))
    return [f for f in text.split(b" ") if f]


def _check_data(report, lineno, body, kind, nkeys, layout=None, lacking=False, map_names=None):
    """Check one data line; returns its key (fields joined by single spaces) or None.
    ``lacking``: a profile line may lack features (another producer's layout, or a merge's
    keys bounded by coarser lines); ``map_names``: a map's key field names (!fields; without
    them two key fields are surt and datetime, as readers take them)."""
    i = body.find(b" {")
    if kind == "cdxj":
        if i < 0:
            report.add(lineno, "no JSON block (expected %s key fields, a space and {...})" % (nkeys or "the"))
            return None
        fields = _check_fields(report, lineno, body[:i], "key")
        if nkeys is not None and len(fields) != nkeys:
            report.add(lineno, "%d key fields, the header declares %d%s" % (
                len(fields), nkeys, " (%s)" % layouts.describe(layout) if layout is not None else ""))
        elif layout is not None:
            _check_key_fields(report, lineno, fields, layout)
        if layout is not None and (lacking or layouts.is_foreign(layout)):
            _check_foreign_value(report, lineno, body[i + 1:])
        else:
            _check_value(report, lineno, body[i + 1:])
        return b" ".join(fields)
    text = body[:i] if i >= 0 else body
    fields = _check_fields(report, lineno, text, "line", aligned=True)
    expected = None if nkeys is None else nkeys + 1
    if len(fields) < 2 or (expected is not None and len(fields) != expected):
        report.add(lineno, "%d fields, expected %s key field(s) and a frequency"
                   % (len(fields), nkeys if nkeys is not None else "one or more"))
        if i >= 0:
            _check_block(report, lineno, body[i + 1:])
        return b" ".join(fields[:-1]) if len(fields) > 1 else None
    names = map_names if map_names is not None else ("surt", "datetime") if len(fields) == 3 else ()
    if "datetime" in names and names.index("datetime") < len(fields) - 1:
        field = fields[names.index("datetime")]
        if datetime_span(field) is None:
            report.add(lineno, "datetime field %r is not a datetime or range (no date of the calendar, or a "
                       "range's start after its end?)" % field[:40].decode("utf-8", "replace"))
    freq = None
    try:
        freq = parse_frequency(fields[-1])
    except MapFormatError as e:
        report.add(lineno, str(e))
    if i >= 0:
        _check_block(report, lineno, body[i + 1:], freq)
    return b" ".join(fields[:-1])


#: breakdowns of a map line by a criterion but datetime (profiler.files.ukvs: {"lang": {"ara": "12/3"}},
#: {"status": {"2xx": "40/9", "5xx": "12/3"}})
optional_breakdowns = criteria.derived(lambda chosen: {c.name: c for c in chosen if c.name != "datetime"})
#: per-line attributes of a map this tool reads (the rest is kept and noted)
known_block_names = criteria.derived(lambda chosen: {"datetime", "rollup"} | {c.name for c in chosen
                                                                              if c.name != "datetime"})


def _check_block(report, lineno, raw, freq=None):
    """A map line's single-line JSON block: an object, strict or relaxed JSON (noted); a
    datetime breakdown {"2014": "20~/10", ...} and breakdowns by an optional criterion
    ({"lang": {"ara": "12/3"}}) checked; unknown attributes noted. ``freq``: the line's
    Frequency, which the exact entries of a breakdown by criterion may not exceed."""
    try:
        block = jsonnum.loads(raw)
    except jsonnum.JSONDecodeError as e:
        try:
            block = relaxed_json_loads(raw)
        except MapFormatError:
            report.add(lineno, "bad JSON: %s" % e)
            return
        report.note(lineno, "relaxed JSON (unquoted names) in per-line blocks, as the UKVS seed writes them",
                    once="block-relaxed")
    if not isinstance(block, dict):
        report.add(lineno, "the JSON block is not an object")
        return
    if _repeated(report, lineno, raw):
        return
    for name in block:
        if name not in known_block_names():
            report.note(lineno, "per-line attribute %r is not one this tool reads (kept as it is)" % name[:40],
                        once=("attr", name[:40]))
    for name, criterion in optional_breakdowns().items():
        if name in block:
            _check_breakdown(report, lineno, name, criterion, block[name], freq)
    breakdown = block.get("datetime")
    if breakdown is not None:
        if not isinstance(breakdown, dict):
            report.add(lineno, "the datetime breakdown must be an object {datetime: frequency}")
            return
        for dt, value in breakdown.items():
            if datetime_span(dt) is None:
                report.add(lineno, "datetime breakdown key %r is not a datetime or range" % dt[:40])
            text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
            try:
                entry = parse_frequency(text.encode() if isinstance(text, str) else b"?")
            except MapFormatError:
                report.add(lineno, "datetime breakdown value %r is not a frequency" % str(value)[:40])
                continue
            if (entry.urim is not None and not entry.urim_mark and freq is not None and freq.urim is not None
                    and not freq.urim_mark and entry.urim > freq.urim):
                report.add(lineno, "the datetime breakdown's %s holds %d captures, more than the line's %d"
                           % (dt[:40], entry.urim, freq.urim))
    if "rollup" in block and not isinstance(block["rollup"], bool):
        report.add(lineno, "rollup is %s, not true or false" % str(block["rollup"])[:40])


def _check_breakdown(report, lineno, name, criterion, breakdown, freq):
    """A breakdown by an optional criterion: {field: frequency}, fields of the criterion (not '-');
    when every entry and the line's URI-M count are exact, the entries add up to at most it (a
    capture counts under one value of the criterion)."""
    if not isinstance(breakdown, dict) or not breakdown:
        report.add(lineno, "the %s breakdown must be a non-empty object {%s: frequency}" % (name, name))
        return
    pattern = criteria.FIELD_PATTERNS[name]
    total, exact = 0, True
    for field, value in breakdown.items():
        if field == criteria.ANY_FIELD or not pattern.match(field.encode("utf-8", "replace")):
            report.add(lineno, "%s breakdown key %r is not %s" % (name, field[:40], criterion.describe))
        text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
        try:
            entry = parse_frequency(text.encode() if isinstance(text, str) else b"?")
        except MapFormatError:
            report.add(lineno, "%s breakdown value %r is not a frequency" % (name, str(value)[:40]))
            exact = False
            continue
        exact = exact and entry.urim is not None and not entry.urim_mark
        total += entry.urim or 0
    if exact and freq is not None and freq.urim is not None and not freq.urim_mark and total > freq.urim:
        report.add(lineno, "the %s breakdown adds up to %d captures, more than the line's %d"
                   % (name, total, freq.urim))


#: !meta fields this tool writes, with the JSON types they take
_META_TYPES = {"type": str, "generator": str, "created": str, "captures": int, "inputs": list,
               "skipped": dict, "policy": (dict, str), "revisits": str, "name": str, "updated_at": str}


def _note_meta(report, lineno, value):
    """Notes on !meta content: not an object, or a known field of another type."""
    if value is None:
        return
    if not isinstance(value, dict):
        report.note(lineno, "!meta is not a JSON object")
        return
    for name, kind in _META_TYPES.items():
        if name in value and not isinstance(value[name], kind):
            report.note(lineno, "!meta %s is a %s, not a %s" % (
                name, type(value[name]).__name__,
                " or ".join(k.__name__ for k in kind) if isinstance(kind, tuple) else kind.__name__))


def _check_key_fields(report, lineno, fields, layout):
    surt = fields[0]
    for c, field in zip(layout.criteria, fields[1:]):
        if not layout.patterns[c.name].match(field):
            report.add(lineno, "%s field %r is not %s" % (c.name, _show(field), c.describe))
        elif c.name == criteria.DATETIME.name and field != b"-" and normalise.timestamp(field) is None:
            report.add(lineno, "datetime field %r is no date of the calendar (a month, day or hour out of range)"
                       % _show(field))
    if surt[:1] in (b"!", b"@"):
        report.add(lineno, "a key starting with '!' or '@' reads as a header line")


def _is_count(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _check_foreign_value(report, lineno, text):
    """A line of another producer's profile (its !keys a foreign layout: profiler.files.layout):
    its value in our style or another's (profiler.files.datalines.foreign_value), noted where
    it differs from what this tool writes."""
    try:
        value = foreign_value(jsonnum.loads(text))
    except jsonnum.JSONDecodeError as e:
        report.add(lineno, "bad JSON: %s" % e)
        return
    except ValueError as e:
        report.add(lineno, str(e))
        return
    if _repeated(report, lineno, text):
        return
    missing = [k for k in FEATURES if k not in flatten(value)]
    if missing:
        report.note(lineno, "another producer's value style: no %s (readers answer with what it has)"
                    % ", ".join(missing), once=("foreign-value", tuple(missing)))
    flat = flatten(value)
    _check_consistency(report, lineno, flat, _check_bounds(report, lineno, value.get("bounds"), flat))


def _repeated(report, lineno, text):
    """Whether the JSON block gives a name twice in one object (a problem: readers differ on
    which counts)."""
    name = repeated_name(text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape"))
    if name is not None:
        report.add(lineno, "the JSON block gives %r twice: which one counts is unknown" % name[:40])
    return name is not None


def _check_value(report, lineno, text):
    try:
        value = jsonnum.loads(text)
    except jsonnum.JSONDecodeError as e:
        report.add(lineno, "bad JSON: %s" % e)
        return
    if _repeated(report, lineno, text):
        return
    if not isinstance(value, dict):
        report.add(lineno, "the JSON block is not an object")
        return
    names = [k for k in value if k in SPEC_ORDER]
    for name in value:
        if name not in SPEC_ORDER and name != "bounds":
            report.note(lineno, "extra attribute %r beside the features (allowed; kept by merge and query)"
                        % name[:40], once=("extra", name[:40]))
    missing = [k for k in SPEC_ORDER if k not in value]
    if missing:
        report.add(lineno, "missing feature(s): %s" % ", ".join(missing))
    elif names != SPEC_ORDER:
        report.add(lineno, "features not in the spec's order (%s)" % ", ".join(SPEC_ORDER))
    urim = value.get("urim")
    if urim is not None and (not isinstance(urim, dict) or [k for k in urim if k in URIM_ORDER] != URIM_ORDER):
        report.add(lineno, "urim must be {\"total\":..,\"min\":..,\"max\":..}")
    flat = flatten(value)
    for name in FEATURES:
        if name not in flat:
            continue
        v = flat[name]
        if name in ("first", "last"):
            if not isinstance(v, str) or not _TIMESTAMP.match(v):
                report.add(lineno, "%s must be a 14-digit timestamp string, not %r" % (name, v))
                flat.pop(name)
        elif not _is_count(v):
            report.add(lineno, "%s must be a whole number >= 0, not %r" % (name, v))
            flat.pop(name)
    bounded = _check_bounds(report, lineno, value.get("bounds"), flat)
    _check_consistency(report, lineno, flat, bounded)


def _check_bounds(report, lineno, bounds, flat):
    if bounds is None:
        return set()
    if not isinstance(bounds, dict):
        report.add(lineno, "bounds must be an object {feature: [low, high]}")
        return set(FEATURES)
    for name, pair in bounds.items():
        if name in ("first", "last"):
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, str) and _TIMESTAMP.match(v)
                                                                       for v in pair) and pair[0] <= pair[1]):
                report.add(lineno, "bounds of %s must be [low, high] 14-digit timestamps, low <= high" % name)
            elif name in flat and not pair[0] <= flat[name] <= pair[1]:
                report.add(lineno, "%s = %s lies outside its bounds %r" % (name, flat[name], pair))
        elif name not in FEATURES[:7]:
            report.add(lineno, "bounds of an unknown feature %r" % name)
        elif not (isinstance(pair, list) and len(pair) == 2 and all(_is_count(v) for v in pair)
                  and pair[0] <= pair[1]):
            report.add(lineno, "bounds of %s must be [low, high] whole numbers, low <= high" % name)
        elif name in flat and not pair[0] <= flat[name] <= pair[1]:
            report.add(lineno, "%s = %d lies outside its bounds %r" % (name, flat[name], pair))
    return set(bounds)


def _check_consistency(report, lineno, flat, bounded):
    for message in inconsistencies(flat, bounded):
        report.add(lineno, "inconsistent features: " + message)
