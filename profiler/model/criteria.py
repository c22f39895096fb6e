"""The criteria of a profile key, in key order: one registry (spec section 2).

A profile key is ``surt`` then one field per criterion (``!keys``). Each criterion has the
levels a policy may enable besides ``any`` (written ``-``), what a capture's normalised value
is at each level, which levels a written field may stand for, and what a field may look like.
Policies, key suffixes, queries, validation and the compiled kernels' option codes all read
it from here; the SURT levels (root, TLD, domain, host, path, URL) are in profiler.model.keys.
"""

import re
from collections import namedtuple
from dataclasses import dataclass
from typing import Callable, Tuple

from profiler.model.normalise import UNKNOWN, mime_category, status_class

ANY = "any"
#: a key field at level any
ANY_FIELD = "-"


@dataclass(frozen=True)
class Criterion:
    """One key field besides the SURT."""
    name: str
    levels: Tuple[str, ...]            # besides 'any', as a policy names them
    default_levels: Tuple[str, ...]    # what a policy that names none enables
    at: Callable[[str, str], str]      # (the capture's normalised value, level) -> the key field
    levels_of: Callable[[str], Tuple[str, ...]]   # a written field -> the levels it may be at
    samples: Tuple[str, ...]           # a value at each level, in the order of levels
    pattern: str                       # what a field may look like (validate), as a regex
    describe: str                      # the same, for a person
    bits: Tuple[Tuple[str, int], ...]  # the level masks of virtual tuples, coarse to fine (profiler.job.expand)

    def field(self, value, level):
        """The key field of a normalised value at a level ('-' at any)."""
        return ANY_FIELD if level == ANY else self.at(value, level)

    def field_levels(self, field):
        """The levels a written key field may be at."""
        return (ANY,) if field == ANY_FIELD else self.levels_of(field)

    def code(self, level):
        """The compiled kernels' number of a level: 0 any, then the levels in order."""
        return 0 if level == ANY else self.levels.index(level) + 1


def _datetime_levels(field):
    return ("year",) if len(field) == 4 else ("month",) if len(field) == 6 else ()


def _mime_levels(field):
    return ("category",) if field.endswith("/*") else ("type",) if "/" in field else ("type", "category")


def _status_levels(field):
    return ("class", "code") if field == UNKNOWN else ("class",) if field.endswith("xx") else ("code",)


DATETIME = Criterion(
    "datetime", ("year", "month"), ("year",),
    lambda period, level: period[:4] if level == "year" else period[:6],
    _datetime_levels, ("2013", "201301"),
    r"-|[0-9]{4}|[0-9]{6}", "'-', YYYY or YYYYMM",
    (("any", 1), ("year", 2), ("month", 4)))
MIME = Criterion(
    "mime", ("type", "category"), ("type",),
    lambda mime, level: mime if level == "type" else mime_category(mime),
    _mime_levels, ("text/html", "text/*"),
    r"[^ \t\n]+", "a media type without blanks",
    (("any", 1), ("category", 2), ("type", 4)))
STATUS = Criterion(
    "status", ("class", "code"), ("class",),
    lambda status, level: status_class(status) if level == "class" else status,
    _status_levels, ("2xx", "200"),
    r"-|[1-5]xx|[0-9]{3}|unk", "'-', 'Nxx', a 3-digit code or 'unk'",
    (("any", 1), ("class", 2), ("code", 4)))

#: the criteria, in key order
CRITERIA = (DATETIME, MIME, STATUS)
NAMES = tuple(c.name for c in CRITERIA)
BY_NAME = {c.name: c for c in CRITERIA}
#: the key fields of a profile line (its !keys)
KEY_FIELDS = ("surt",) + NAMES
#: a profile key split into its fields, by name
Key = namedtuple("Key", KEY_FIELDS)
#: each criterion's field pattern, as bytes (validate reads bytes)
FIELD_PATTERNS = {c.name: re.compile((r"\A(?:%s)\Z" % c.pattern).encode("ascii")) for c in CRITERIA}


def split_key(key):
    """A key (str or bytes) -> Key, or None when it has not one field per key field."""
    fields = key.split(b" " if isinstance(key, bytes) else " ")
    return Key(*fields) if len(fields) == len(KEY_FIELDS) else None


def others_any(key, name=None):
    """Whether every criterion's field of a Key but the named one is '-' (any)."""
    return all(field in ("-", b"-") for c, field in zip(NAMES, key[1:]) if c != name)


def suffix(values, combo):
    """The key suffix 'datetime mime status' of a capture's (period, mime, status) at a
    combination of levels (one per criterion)."""
    return " ".join(c.field(v, level) for c, v, level in zip(CRITERIA, values, combo))
