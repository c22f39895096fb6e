"""A capture: one index line or archive record, as every input format's reader gives it.

Readers (profiler.formats) build captures by name and give only the fields they know; a field
a reader does not give takes its default (``DEFAULTS``). A reader yields a Capture, or a skip
reason (a str) for a line that is not one. Everything that reads captures reads them by name
(the map side, profiler.job.cells; the captures file, profiler.formats.captures), so a new
field is one line here and one keyword in each reader that can supply it.
"""

from collections import namedtuple

from profiler.model.normalise import UNKNOWN

#: the fields every reader gives: the SURT (str) and the 14-digit timestamp (str)
REQUIRED = ("urlkey", "timestamp")
#: the other fields, in order, with the value a reader that does not know one gives:
#: mime, status: normalised (str); digest: upper-case, without its 'algo:' prefix, '-' when
#: unknown (str); length: stored bytes (int, 0 to 2^64 - 1); revisit: whether the record is a
#: revisit (bool); lang: the primary language, ISO 639-3 or 'unk' (str, profiler.model.language)
DEFAULTS = {
    "mime": UNKNOWN,
    "status": UNKNOWN,
    "digest": "-",
    "length": 0,
    "revisit": False,
    "lang": UNKNOWN,
}


def capture_type(defaults):
    """The Capture type of the required fields and these optional ones ({name: default}, in order)."""
    return namedtuple("Capture", REQUIRED + tuple(defaults), defaults=tuple(defaults.values()))


Capture = capture_type(DEFAULTS)


def add_field(name, default):
    """Add an optional field at the end (a plugin's criterion reads it: profiler.plugins). Code
    reads ``capture.Capture`` when it runs, so captures built after this have the field."""
    global Capture
    if name in Capture._fields or not name.isidentifier() or name.startswith("_"):
        raise ValueError("not a new capture field name: %r" % (name,))
    Capture = capture_type(dict(Capture._field_defaults, **{name: default}))
    return Capture
