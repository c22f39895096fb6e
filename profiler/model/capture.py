"""A capture: one index line or archive record, as every input format's reader gives it.

Readers (profiler.formats) build captures by name with ``new(urlkey=..., timestamp=..., ...)``
and give only the fields they know; a field a reader does not give takes its default
(``DEFAULTS``). A reader yields a Capture, or a skip reason (a str) for a line that is not one. Everything that reads captures reads them by name
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


def maker(cls):
    """A function building a cls by keyword, with its fields' defaults: a plain function call,
    which takes keywords without building a dict of them (calling the type does: twice the cost,
    on the hot path of the Python readers)."""
    names, defaults = cls._fields, cls._field_defaults
    space = {"_new": tuple.__new__, "_cls": cls}
    params = []
    for i, name in enumerate(names):
        if name in defaults:
            space["_d%d" % i] = defaults[name]
            params.append("%s=_d%d" % (name, i))
        else:
            params.append(name)
    exec("def new(%s):\n    return _new(_cls, (%s,))" % (", ".join(params), ", ".join(names)), space)
    new = space["new"]
    new.__doc__ = "A Capture of these fields (by name), the others at their defaults."
    return new


Capture = capture_type(DEFAULTS)
new = maker(Capture)


def add_field(name, default):
    """Add an optional field at the end (a plugin's criterion reads it: profiler.plugins). Code
    reads ``capture.Capture`` and ``capture.new`` when it runs, so captures built after this have
    the field."""
    global Capture, new
    if name in Capture._fields or not name.isidentifier() or name.startswith("_"):
        raise ValueError("not a new capture field name: %r" % (name,))
    Capture = capture_type(dict(Capture._field_defaults, **{name: default}))
    new = maker(Capture)
    return Capture
