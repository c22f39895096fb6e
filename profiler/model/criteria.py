"""The criteria of a profile key, in key order: one registry (spec section 2).

A profile key is ``surt`` then one field per criterion of its policy (``!keys``). A criterion
says which capture field holds its value, the levels a policy may enable besides ``any``
(written ``-``) and how each level projects a value into a key field, what a revisit takes
when its original is not found, and what a written field may look like. Policies, key
suffixes, the job's steps, queries, validation and the compiled kernels all read it from
here; the SURT levels (root, TLD, domain, host, path, URL) are in profiler.model.keys.

Each level's projection is one of a few kinds (``PROJECTIONS``), so the compiled kernels can
expand any criterion made of them without knowing it by name.
"""

import re
from collections import namedtuple
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

from profiler.model.capture import Capture
from profiler.model.normalise import REVISIT_MIME, UNKNOWN

ANY = "any"
#: a key field at level any
ANY_FIELD = "-"

#: how a level turns a value into a key field: the value itself, its first n characters, a media
#: type's top-level type ('text/html' -> 'text/*'), a status code's class ('200' -> '2xx')
IDENTITY, PREFIX, CATEGORY, CLASS = "identity", "prefix", "category", "class"
PROJECTIONS = (IDENTITY, PREFIX, CATEGORY, CLASS)


def project(value, kind, n=0):
    """A value's key field under one projection kind (n: the length of a prefix)."""
    if kind == IDENTITY:
        return value
    if kind == PREFIX:
        return value[:n]
    if kind == CATEGORY:
        i = value.find("/")
        return value[:i] + "/*" if i > 0 else value
    if kind == CLASS:
        if not value:
            return value
        return value[0] + "xx" if value[0] in "12345" and value != UNKNOWN else UNKNOWN
    raise ValueError("unknown projection %r" % (kind,))


@dataclass(frozen=True)
class Level:
    """One level of a criterion: its name in policies and how it projects a value."""
    name: str
    kind: str
    n: int = 0                 # PREFIX: the number of characters kept

    def field(self, value):
        return project(value, self.kind, self.n)


@dataclass(frozen=True)
class Criterion:
    """One key field besides the SURT."""
    name: str
    source: str                            # the Capture field holding the value
    levels: Tuple[Level, ...]              # besides 'any', in the order policies list them
    default_levels: Tuple[str, ...]        # what a policy that names none enables
    levels_of: Callable[[str], Tuple[str, ...]]   # a written field (not '-') -> the levels it may be at
    samples: Tuple[str, ...]               # a field at each level, in the order of levels
    pattern: str                           # what a field may look like (validate), as a regex
    describe: str                          # the same, for a person
    revisit: Optional[str] = None          # a revisit's value when its original is not found;
                                           # None: a revisit keeps its own value (its time)
    optional: bool = False                 # in the key only when the policy uses it

    @property
    def level_names(self):
        return tuple(level.name for level in self.levels)

    def level(self, name):
        for level in self.levels:
            if level.name == name:
                return level
        raise KeyError(name)

    @property
    def coarse_to_fine(self):
        """The levels from the coarsest to the finest: each one's field determines the coarser
        ones' (PREFIX by length; a CATEGORY or CLASS is coarser than the IDENTITY it projects)."""
        rank = {CATEGORY: 0, CLASS: 0, IDENTITY: 1 << 30}
        return tuple(sorted(self.levels, key=lambda lv: lv.n if lv.kind == PREFIX else rank[lv.kind]))

    @property
    def bits(self):
        """{level: bit}: 1 for any, then 2, 4, ... from the coarsest level to the finest (a virtual
        tuple's mask of the levels whose combinations it stands for; profiler.job.expand)."""
        out = {ANY: 1}
        for i, level in enumerate(self.coarse_to_fine):
            out[level.name] = 2 << i
        return out

    def chain(self, value):
        """The value's fields from the coarsest level to the finest, after '' for any."""
        return ("",) + tuple(level.field(value) for level in self.coarse_to_fine)

    @property
    def resolved(self):
        """Whether a revisit takes this value from the capture it resolves to."""
        return self.revisit is not None

    def field(self, value, level):
        """The key field of a normalised value at a level ('-' at any)."""
        return ANY_FIELD if level == ANY else self.level(level).field(value)

    def field_levels(self, field):
        """The levels a written key field may be at (a field that fits several: all of them)."""
        return (ANY,) if field == ANY_FIELD else self.levels_of(field)

    def code(self, level):
        """The compiled kernels' number of a level: 0 any, then the levels in order."""
        return 0 if level == ANY else self.level_names.index(level) + 1


def _datetime_levels(field):
    return {4: ("year",), 6: ("month",), 8: ("day",)}.get(len(field), ())


def _mime_levels(field):
    return ("category",) if field.endswith("/*") else ("type",) if "/" in field else ("type", "category")


def _status_levels(field):
    return ("class", "code") if field == UNKNOWN else ("class",) if field.endswith("xx") else ("code",)


DATETIME = Criterion(
    "datetime", "timestamp",
    (Level("year", PREFIX, 4), Level("month", PREFIX, 6), Level("day", PREFIX, 8)), ("year",),
    _datetime_levels, ("2013", "201301", "20130115"),
    r"-|[0-9]{4}|[0-9]{6}|[0-9]{8}", "'-', YYYY, YYYYMM or YYYYMMDD")
MIME = Criterion(
    "mime", "mime", (Level("type", IDENTITY), Level("category", CATEGORY)), ("type",),
    _mime_levels, ("text/html", "text/*"),
    r"[^ \t\n]+", "a media type without blanks", revisit=REVISIT_MIME)
STATUS = Criterion(
    "status", "status", (Level("class", CLASS), Level("code", IDENTITY)), ("class",),
    _status_levels, ("2xx", "200"),
    r"-|[1-5]xx|[0-9]{3}|unk", "'-', 'Nxx', a 3-digit code or 'unk'", revisit=UNKNOWN)

LANG = Criterion(
    "lang", "lang", (Level("code", IDENTITY),), ("code",),
    lambda field: ("code",), ("ara",),
    r"-|[a-z]{3}", "'-', an ISO 639-3 code or 'unk'", revisit=UNKNOWN, optional=True)

#: the criteria, in key order
CRITERIA = (DATETIME, MIME, STATUS, LANG)
NAMES = tuple(c.name for c in CRITERIA)
BY_NAME = {c.name: c for c in CRITERIA}
#: the criteria every profile key has
CORE = tuple(c for c in CRITERIA if not c.optional)

for _c in CRITERIA:
    assert _c.source in Capture._fields, _c


def of_levels(names):
    """The criteria of the keys of a policy whose ``levels`` names these criteria: every core
    one, and the optional ones it names, in key order."""
    return tuple(c for c in CRITERIA if not c.optional or c.name in names)


def of_keys(fields):
    """The criteria of a profile's !keys (['surt', 'datetime', ...]), or None when they are not
    'surt' then core criteria then optional ones, in registry order."""
    fields = list(fields)
    if not fields or fields[0] != "surt" or not all(f in BY_NAME for f in fields[1:]):
        return None
    chosen = tuple(BY_NAME[f] for f in fields[1:])
    if chosen != tuple(c for c in CRITERIA if c in chosen) or not all(c in chosen for c in CORE):
        return None
    return chosen


class KeyLayout:
    """How the keys of one profile split into fields: 'surt' and its criteria (its !keys)."""

    def __init__(self, chosen=CORE):
        self.criteria = tuple(chosen)
        self.names = tuple(c.name for c in self.criteria)
        self.fields = ("surt",) + self.names
        self.Key = namedtuple("Key", self.fields)
        self.patterns = {c.name: re.compile((r"\A(?:%s)\Z" % c.pattern).encode("ascii")) for c in self.criteria}

    def split(self, key):
        """A key (str or bytes) -> Key, or None when it has not one field per key field."""
        fields = key.split(b" " if isinstance(key, bytes) else " ")
        return self.Key(*fields) if len(fields) == len(self.fields) else None

    def __eq__(self, other):
        return isinstance(other, KeyLayout) and self.names == other.names

    def __hash__(self):
        return hash(self.names)


#: the layout of a profile with the core criteria only
CORE_LAYOUT = KeyLayout(CORE)
#: a profile key split into its fields, by name (core criteria)
Key = CORE_LAYOUT.Key
#: each criterion's field pattern, as bytes (validate reads bytes)
FIELD_PATTERNS = {c.name: re.compile((r"\A(?:%s)\Z" % c.pattern).encode("ascii")) for c in CRITERIA}


def split_key(key, layout=CORE_LAYOUT):
    """A key (str or bytes) -> Key, or None when it has not one field per key field."""
    return layout.split(key)


def others_any(key, name=None):
    """Whether every criterion's field of a Key but the named one is '-' (any)."""
    return all(field in ("-", b"-") for c, field in zip(key._fields[1:], key[1:]) if c != name)


def suffix(chosen, values, combo):
    """The key suffix ('datetime mime status ...') of a capture's values (one per criterion of
    chosen) at a combination of levels (one per criterion)."""
    return " ".join(c.field(v, level) for c, v, level in zip(chosen, values, combo))
