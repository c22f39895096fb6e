"""The captures file: captures as archive-profiler stores them for itself, every field by name.

One JSON object a line, the fields of profiler.model.capture.Capture by name, in its order::

    {"urlkey":"com,example)/","timestamp":"20130101000000","mime":"text/html","status":"200",...}

Written by ``write`` (nightly keeps a night's captures in one, to profile subsets of them later:
profiler.nightly.sets), read back by ``captures_of_lines`` as the same captures: a field added to
Capture is written and read with no change here. It is an internal line format of the registry
(profiler.formats.registry), so a file of it can be profiled like any index. A line of a field
this build does not know, or of a value a reader would never give, is a skip reason.
"""

import orjson

from profiler.model import capture, criteria, normalise

#: how a line of the format starts (its first field is always the urlkey)
START = b'{"urlkey":'


def sniff(sample):
    """{} when the sample's first data line is a captures line, else None: a JSON object with
    the URL a CDX server writes beside its urlkey (Common Crawl's index server, pywb's
    ``output=json``) is that format's (profiler.formats.cdxserver). A captures line of a field
    this build does not know is still one (its skip is counted)."""
    first = sample.first
    if first is None or not first.startswith(START):
        return None
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:
        record = None
    if isinstance(record, dict) and "timestamp" in record and ("url" in record or "original" in record):
        return None
    return {}


def line(c):
    """A capture as one line of the format (bytes, with its newline)."""
    return orjson.dumps(c._asdict(), option=orjson.OPT_APPEND_NEWLINE)


def write(f, captures):
    """Write captures to a binary file; returns how many."""
    n = 0
    for c in captures:
        f.write(line(c))
        n += 1
    return n


def parse(raw):
    """A line of the format -> Capture, or a skip reason: 'bad_json' (not a JSON object),
    'unknown_field' (a field this build's Capture has not), 'bad_field' (a field missing, or a
    value no reader gives)."""
    try:
        record = orjson.loads(raw)
    except orjson.JSONDecodeError:
        record = None
    if not isinstance(record, dict):
        return "bad_json"
    fields, defaults = capture.Capture._fields, capture.Capture._field_defaults
    if any(name not in fields for name in record):
        return "unknown_field"
    if any(name not in record for name in capture.REQUIRED):
        return "bad_field"
    for name, value in record.items():
        if not _valid(name, value, defaults.get(name, "")):
            return "bad_field"
    return capture.new(**record)


#: the fields a reader normalises, and how: a value is valid when it is its own normal form (a
#: urlkey never starts a special line: readers escape '!' and '@')
_NORMAL = {
    "urlkey": lambda v: None if v.startswith(("!", "@")) else _key_field(v),
    "timestamp": lambda v: normalise.timestamp(v.encode("ascii", "replace")),
    "mime": lambda v: normalise.mime(v.encode("utf-8", "surrogateescape")),
    "status": lambda v: normalise.status(v.encode("ascii", "replace")),
    "digest": lambda v: normalise.digest(v.encode("utf-8", "surrogateescape")),
    "collection": lambda v: v if v == normalise.UNKNOWN else normalise.collection(normalise.collection_name(v)),
    "depth": lambda v: v if v in normalise.DEPTH_CLASSES else None,
}


def _key_field(value):
    return normalise.key_field(value.encode("utf-8", "surrogateescape"))


def _valid(name, value, default):
    """Whether a field's value is one a reader gives: of its default's type (a str, a whole
    number from 0 to 2^64 - 1, a bool), in its normal form, and a field of every criterion of the
    package that reads it at each of its levels. A plugin's criterion is not asked: the map side
    checks its values when a policy uses it (a counted skip, profiler.job.cells), and a capture
    whose value no key of an unused criterion could hold is still a capture of every other key
    (nightly's subsets of the captures file must find all of them)."""
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and 0 <= value < normalise.MAX_LENGTH
    if not isinstance(value, str) or not value:
        return False
    normal = _NORMAL.get(name)
    if normal is not None:
        if normal(value) != value:
            return False
    elif _key_field(value) != value:
        return False
    patterns = criteria.FIELD_PATTERNS
    return all(patterns[c.name].match(level.field(c.derive(value) if c.derive else value).encode("utf-8", "surrogateescape"))
               for c in criteria.BUILT_IN if c.source == name and c is not criteria.DATETIME
               for level in c.levels)


def captures_of_lines(lines, split=None):
    """Captures or skip reasons of a split's lines."""
    for raw in lines:
        if raw and not raw.startswith((b"!", b"@")):
            yield parse(raw)
