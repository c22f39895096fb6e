"""The key layout of a profile file: its ``!keys`` read as criteria (profiler.model.criteria).

A profile key is ``surt`` then one field per criterion its ``!keys`` names: the core ones, then
the optional ones (``lang``) its policy used. Writers use the registry's order; a reader finds
each field by its name (spec section 2), so a ``!keys`` listing them in another order is read as
it is. Tools read the layout from the file, build their keys and ``- - -`` suffixes from it, and
refuse to mix files whose layouts differ. A file
without ``!keys`` has the core layout; an unknown or malformed ``!keys`` is a LayoutError.

Other producers name the fields otherwise (the CDXJ blog's ``@keys ["surt_uri", "year"]``) and
may leave criteria out: ALIASES maps their names to ours, and a ``!keys`` naming the SURT field
then some of the criteria, each once, is a foreign layout (is_foreign): its lines may hold
the values other producers write (profiler.files.datalines.foreign_value).
"""

import functools

from profiler import contract, jsonnum
from profiler.errors import UserError
from profiler.model import criteria
from profiler.model.criteria import ANY_FIELD, CORE_LAYOUT, KeyLayout

KEYS_HEADERS = ("!keys", "@keys")


class LayoutError(UserError):
    """A ``!keys`` that is not a profile's key fields, or files whose key fields differ."""


@functools.lru_cache(maxsize=None)
def _layout(names):
    return KeyLayout(tuple(criteria.BY_NAME[n] for n in names))


#: the names other producers give key fields, by the field they are (the one place they are listed)
ALIASES = {
    "surt": ("surt", "surt_uri", "surt_url", "surtkey", "surt_key", "urlkey", "urikey", "uri_key"),
    "datetime": ("datetime", "year", "month", "day", "date", "timestamp", "memento_datetime", "time"),
    "mime": ("mime", "mimetype", "mime_type", "media_type", "content_type"),
    "status": ("status", "statuscode", "status_code", "http_status"),
    "lang": ("lang", "language", "content_language"),
}
_CANONICAL_NAME = {alias: name for name, aliases in ALIASES.items() for alias in aliases}


def canonical_names(names):
    """Key field names as ours ('surt_uri' -> 'surt', 'year' -> 'datetime'); None for a name
    no producer we know gives."""
    out = [_CANONICAL_NAME.get(n.lower()) if isinstance(n, str) else None for n in names]
    return None if None in out else out


def writers_order(layout):
    """The layout of the same criteria in the registry's order, the order writers use."""
    return _layout(tuple(c.name for c in criteria.CRITERIA if c in layout.criteria))


def in_writers_order(layout):
    """Whether a layout's criteria come in the registry's order (spec section 2's order)."""
    return writers_order(layout) == layout


def is_foreign(layout):
    """Whether a layout is another producer's: the SURT and only some of the core criteria (its
    lines may hold other value styles)."""
    return not all(c in layout.criteria for c in criteria.CORE)


def expected():
    """What a !keys may hold, for messages."""
    core = " ".join(c.name for c in criteria.CORE)
    optional = " ".join(c.name for c in criteria.CRITERIA if c.optional)
    return "surt, then %s%s, each once; or another producer's: its SURT field, then some of these" % (
        core, " and any of %s" % optional if optional else "")


def unregistered(value):
    """A message's note on the names of a !keys that are no criterion here and no other
    producer's name for one (criteria.not_registered), or ''."""
    names = value if isinstance(value, list) else []
    return criteria.not_registered([n for n in names if not isinstance(n, str) or n.lower() not in _CANONICAL_NAME])


def parse(value, path):
    """The KeyLayout of a !keys value (a JSON list of field names); a LayoutError otherwise."""
    chosen = None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        chosen = criteria.of_keys(value)
        names = canonical_names(value) if chosen is None else None
        if names:
            chosen = criteria.of_keys(names) or _partial(names)
    if chosen is None:
        shown = jsonnum.dumps(value).decode("utf-8", "replace") if isinstance(value, (list, dict, str, int)) \
            else repr(value)
        raise LayoutError("%s: !keys %s is not a profile's key fields (%s)%s" % (
            path, shown[:120], expected(), unregistered(value)))
    return _layout(tuple(c.name for c in chosen))


def _partial(names):
    """The criteria of a foreign !keys (canonical names): the SURT field, then known criteria,
    each once, in the file's order; or None."""
    by_name = criteria.BY_NAME
    if not names or names[0] != "surt" or not all(n in by_name for n in names[1:]):
        return None
    chosen = tuple(by_name[n] for n in names[1:])
    if len(set(chosen)) != len(chosen):
        return None
    return chosen


def of_headers(headers, path):
    """The layout a file's header lines [(name, value)] declare: its !keys, else the core one;
    a LayoutError when its !meta policy writes a field at a level its criterion here lacks."""
    layout = CORE_LAYOUT
    for name, value in headers:
        if name in KEYS_HEADERS:
            layout = parse(value, path)
            break
    refuse_unknown_levels(headers, layout, path)
    return layout


def refuse_unknown_levels(headers, layout, path):
    """A LayoutError when the !meta policy writes a key field at a level that field's criterion
    does not have here (unknown_levels)."""
    found = unknown_levels(headers, layout)
    if found:
        raise LayoutError("%s: %s" % (path, found))


def unknown_levels(headers, layout):
    """What a !meta policy among these header lines writes at a level its criterion does not have
    here (a plugin's criterion loaded in another version, with fewer levels: its lines of that
    level would be read as another level's, answered and counted as such), or None."""
    for name, value in headers:
        policy = value.get("policy") if name[1:] == "meta" and isinstance(value, dict) else None
        levels = policy.get("levels") if isinstance(policy, dict) else None
        if not isinstance(levels, dict):
            continue
        for c in layout.criteria:
            written = levels.get(c.name)
            unknown = [lv for lv in written if isinstance(lv, str) and lv != criteria.ANY
                       and lv not in c.level_names] if isinstance(written, list) else []
            if unknown:
                return ("its !meta policy writes %s at level %s, which the %s criterion here does not have "
                        "(its levels: %s): read it where the criterion that wrote it is loaded (a plugin's: "
                        "the same version of its module in %s)" % (
                            c.name, ", ".join(repr(lv) for lv in unknown[:3])[:80], c.name,
                            ", ".join(c.level_names), contract.PLUGINS_ENV))
    return None


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
