"""The collection of a capture: FacetRedux's site/session identifier (spec section 2, ``collection``).

First that applies: the first group of the run's pattern (``--collection-pattern``) searched in the
capture's WARC file name (a CDX line's ``g`` field, a CDXJ line's ``filename``, the archive file's
own name for WARC, ARC and ACHE input); the label given for its input (``LABEL=PATH``); the label
given for the run (``--collection``); else ``unk``. The value is a key field
(profiler.model.normalise.collection: percent-encoded, '-' as '%2D', a name 'unk' as '%75nk').

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
    """A label as its key field ('unk' is no collection, as without a label: the field of the
    name 'unk' a pattern finds is '%75nk'); a CollectionError when it is empty."""
    if text == UNKNOWN:
        return UNKNOWN
    field = normalise.collection(text.encode("utf-8", "surrogateescape")) if text else None
    if field is None:
        raise CollectionError("%s: an empty collection label" % where)
    return field


def options(pattern=None, label=None):
    """What a split carries for its reader: the run's pattern and its input's label (a key field,
    or None: 'unk')."""
    return {"pattern": pattern, "label": None if label == UNKNOWN else label}


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


def _under(path, given):
    """Whether an input path is the path given, or inside the folder given."""
    if "://" in path or "://" in given:
        return path == given or path.startswith(given.rstrip("/") + "/")
    real, top = os.path.realpath(path), os.path.realpath(given)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def parse_input_label(text):
    """'LABEL=PATH' (profile --input-collection) -> (label field, path); a CollectionError otherwise."""
    label, sep, path = text.partition("=")
    if not sep or not path:
        raise CollectionError("--input-collection %r: give LABEL=PATH" % text[:80])
    return label_field(label, "--input-collection"), path


def for_splits(splits, line_formats, pattern=None, label=None, input_labels=()):
    """The splits, each carrying its reader's collection options (``split["collection"]``).

    pattern: the run's regular expression (its first group is the collection); label: the run's
    label; input_labels: (label field, path) pairs, the label of the inputs at or under path (the
    first that holds one). Line formats read each line's file name (CDX ``g``, CDXJ ``filename``)
    in their tasks; a file read whole (WARC, ARC, ACHE) is named here by its own file name.
    """
    if pattern:
        check_pattern(pattern)
    run_label = label_field(label) if label is not None else None
    out = []
    for split in splits:
        own = next((lab for lab, path in input_labels if _under(split["path"], path)), run_label)
        opts = options(pattern or None, own)
        if split["format"] not in line_formats:
            opts = options(None, Collections(opts)(file_name(split["path"])))
        out.append(dict(split, collection=opts))
    return out
