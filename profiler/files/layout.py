"""The key layout of a profile file: its ``!keys`` read as criteria (profiler.model.criteria).

A profile key is ``surt`` then one field per criterion its ``!keys`` names: the core ones, then
the optional ones (``lang``) its policy used. Tools read the layout from the file, build their
keys and ``- - -`` suffixes from it, and refuse to mix files whose layouts differ. A file
without ``!keys`` has the core layout; an unknown or malformed ``!keys`` is a LayoutError.
"""

import functools

from profiler import jsonnum
from profiler.errors import UserError
from profiler.model import criteria
from profiler.model.criteria import ANY_FIELD, CORE_LAYOUT, KeyLayout

KEYS_HEADERS = ("!keys", "@keys")


class LayoutError(UserError):
    """A ``!keys`` that is not a profile's key fields, or files whose key fields differ."""


@functools.lru_cache(maxsize=None)
def _layout(names):
    return KeyLayout(tuple(criteria.BY_NAME[n] for n in names))


def expected():
    """What a !keys may hold, for messages."""
    core = " ".join(c.name for c in criteria.CORE)
    optional = " ".join(c.name for c in criteria.CRITERIA if c.optional)
    return "surt, then %s%s" % (core, ", then any of %s in that order" % optional if optional else "")


def parse(value, path):
    """The KeyLayout of a !keys value (a JSON list of field names); a LayoutError otherwise."""
    chosen = None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        chosen = criteria.of_keys(value)
    if chosen is None:
        shown = jsonnum.dumps(value).decode("utf-8", "replace") if isinstance(value, (list, dict, str, int)) \
            else repr(value)
        raise LayoutError("%s: !keys %s is not a profile's key fields (%s)" % (path, shown[:120], expected()))
    return _layout(tuple(c.name for c in chosen))


def of_headers(headers, path):
    """The layout a file's header lines [(name, value)] declare: its !keys, else the core one."""
    for name, value in headers:
        if name in KEYS_HEADERS:
            return parse(value, path)
    return CORE_LAYOUT


def of_file(path):
    """The layout of a profile file (its header lines are read)."""
    from profiler.files.profilefile import read_header
    return of_headers(read_header(path), path)


def describe(layout):
    """'surt datetime mime status lang'."""
    return " ".join(layout.fields)


def has(layout, name):
    return name in layout.names


def index(layout, name):
    """The position of a criterion's field in a key (surt is 0)."""
    return layout.fields.index(name)


def fields(layout, surt, **values):
    """The key fields of a SURT with criteria values given by name, '-' for the others."""
    return [surt] + [values.get(n) or ANY_FIELD for n in layout.names]


def key(layout, surt, **values):
    """A key with the named criteria values, '-' elsewhere: bytes when the SURT is bytes."""
    if isinstance(surt, bytes):
        return b" ".join([surt] + [_bytes(values.get(n)) for n in layout.names])
    return " ".join(fields(layout, surt, **values))


def _bytes(value):
    return value if isinstance(value, bytes) else (value or ANY_FIELD).encode("utf-8", "surrogateescape")


def any_suffix(layout):
    """The all-any suffix of a layout's keys, after the SURT: ' - - -' (bytes)."""
    return (" " + ANY_FIELD).encode("ascii") * len(layout.names)


def is_any(key_fields, layout, but=()):
    """Whether every criterion field of split key fields is '-', but those named in ``but``."""
    return all(f in (ANY_FIELD, ANY_FIELD.encode()) for n, f in zip(layout.names, key_fields[1:]) if n not in but)


def require_same(verb, paths, layouts):
    """A LayoutError when the files' layouts differ: 'cannot merge: A has keys ..., B has ...'."""
    for p, other in zip(paths[1:], layouts[1:]):
        if other != layouts[0]:
            raise LayoutError("cannot %s: %s has keys %s, %s has %s"
                              % (verb, paths[0], describe(layouts[0]), p, describe(other)))
    return layouts[0]


def optional(layout):
    """The layout's optional criteria (those a policy adds to the core ones)."""
    return tuple(c for c in layout.criteria if c.optional)
