"""The collection of a capture: FacetRedux's site/session identifier (spec section 2, ``collection``).

First that applies: the first group of the run's pattern (``--collection-pattern``) searched in the
capture's WARC file name (a CDX line's ``g`` field, a CDXJ line's ``filename``, the archive file's
own name for WARC, ARC and ACHE input); the label given for its input (``LABEL=PATH``); the label
given for the run (``--collection``); else ``unk``. The value is a key field
(profiler.model.normalise.collection: percent-encoded, '-' as '%2D').

The pattern runs in time linear in the name whatever it is (profiler.model.linear_regex), over the
name's first NAME_BYTES bytes. A split carries what its reader needs as ``split["collection"]``
(``{"pattern": ..., "label": ...}``, profiler.run.profile), so every runner's tasks have it.
"""

import os

from profiler.errors import UserError
from profiler.model import normalise
from profiler.model.linear_regex import MAX_TEXT, Pattern, PatternError
from profiler.model.normalise import UNKNOWN

#: the bytes of a file name the pattern reads
NAME_BYTES = MAX_TEXT
#: file names whose collection a reader remembers
CACHE = 65536


class CollectionError(UserError):
    """A collection pattern or label that cannot be used (one-line message)."""


def check_pattern(text):
    """The pattern, compiled; a CollectionError (one line) when it is not one this engine takes."""
    try:
        return Pattern(text)
    except PatternError as e:
        raise CollectionError("--collection-pattern %r: %s" % (text[:60], e))


def label_field(text, where="--collection"):
    """A label as its key field; a CollectionError when it is empty."""
    field = normalise.collection(text.encode("utf-8", "surrogateescape")) if text else None
    if field is None:
        raise CollectionError("%s: an empty collection label" % where)
    return field


def options(pattern=None, label=None):
    """What a split carries for its reader: the run's pattern and its input's label (a key field,
    or None)."""
    return {"pattern": pattern, "label": label}


class Collections:
    """name (bytes, or None when the capture names no file) -> its collection, for one split."""

    def __init__(self, opts):
        self.default = (opts or {}).get("label") or UNKNOWN
        text = (opts or {}).get("pattern")
        self.pattern = check_pattern(text) if text else None
        self.known = {}

    @property
    def by_name(self):
        """Whether a name may change the answer (a pattern is given)."""
        return self.pattern is not None

    def __call__(self, name):
        if self.pattern is None or not name or name == b"-":
            return self.default
        key = name[:NAME_BYTES]
        found = self.known.get(key)
        if found is None:
            group = self.pattern.first_group(key.decode("utf-8", "surrogateescape"))
            found = normalise.collection(group.encode("utf-8", "surrogateescape")) if group else None
            found = found or self.default
            if len(self.known) >= CACHE:
                self.known.clear()
            self.known[key] = found
        return found


def of_split(split):
    """The Collections of a split, or None when its policy has no collection criterion."""
    opts = split.get("collection")
    return Collections(opts) if opts is not None else None


def file_name(path):
    """An archive file's own name (bytes), the name a pattern reads for WARC, ARC and ACHE input."""
    return os.fsencode(path.rstrip("/").rsplit("/", 1)[-1])
