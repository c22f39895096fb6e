"""The nightly state: what the published profile was made of, written atomically.

``state.json`` in the state folder is the commit point of a night: until it is renamed into
place nothing a reader uses has changed, and a run killed at any moment leaves the previous
state (and its profile) to the next run. It records the inputs (path, size, mtime, optionally
a SHA-256), the current version and its URI-R and digest sets, the kept versions and what
the config said the numbers depend on.
"""

import hashlib
import os

import orjson

from profiler import jsonnum
from profiler.errors import UserError
from profiler.files.outfiles import fsync_dir
from profiler.files.output import write_bytes_atomic

STATE_FILE = "state.json"
FORMAT = 1


def fingerprint(path, checksum=False):
    """{'size', 'mtime_ns'[, 'sha256']} of a local file."""
    st = os.stat(path)
    out = {"size": st.st_size, "mtime_ns": st.st_mtime_ns}
    if checksum:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        out["sha256"] = h.hexdigest()
    return out


def changed(old, new):
    """True when a file's fingerprint differs (checksums compared when both have one)."""
    if "sha256" in old and "sha256" in new:
        return old["sha256"] != new["sha256"] or old["size"] != new["size"]
    return old["size"] != new["size"] or old["mtime_ns"] != new["mtime_ns"]


def compare_inputs(known, current):
    """(new, changed, removed) paths between the state's inputs and this night's, each sorted."""
    new = sorted(p for p in current if p not in known)
    moved = sorted(p for p in current if p in known and changed(known[p], current[p]))
    removed = sorted(p for p in known if p not in current)
    return new, moved, removed


class StateError(UserError):
    """state.json is not shaped as this version writes it (one line naming the field)."""


#: the fields of state.json this version reads, and their JSON types
SHAPE = {"inputs": dict, "current": (dict, type(None)), "versions": list, "nights": int}
CURRENT_SHAPE = {"stamp": str, "profile": str, "urirs": str, "digests": str,
                 "map": (str, type(None)), "exact": list, "approximate_nights": int, "mode": str}
FINGERPRINT_SHAPE = {"size": int, "mtime_ns": int, "sha256": str}


def _kind(value):
    return {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number",
            bool: "true/false", type(None): "null"}.get(type(value), type(value).__name__)


def _expect(path, field, value, types):
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        raise StateError("state file %s: field %s is %s, expected %s; restore the file, or move it "
                         "away to rebuild from scratch"
                         % (path, field, _kind(value), " or ".join(_kind(t()) for t in types)))


def check_shape(path, data):
    """StateError naming the first field of state.json with the wrong JSON type."""
    for key, types in SHAPE.items():
        if key in data:
            _expect(path, key, data[key], types)
    for name, fp in data.get("inputs", {}).items():
        _expect(path, "inputs[%r]" % name, fp, dict)
        for key, types in FINGERPRINT_SHAPE.items():
            if key in fp or key != "sha256":
                _expect(path, "inputs[%r].%s" % (name, key), fp.get(key), types)
    current = data.get("current")
    if current:
        for key, types in CURRENT_SHAPE.items():
            if key in current or key in ("stamp", "profile", "urirs", "digests"):
                _expect(path, "current.%s" % key, current.get(key), types)
    for i, version in enumerate(data.get("versions", [])):
        _expect(path, "versions[%d]" % i, version, str)


class State:
    """The state folder's state.json; ``data`` is None before the first successful night."""

    def __init__(self, folder):
        self.folder = folder
        self.path = os.path.join(folder, STATE_FILE)
        self.data = None

    def load(self):
        try:
            with open(self.path, "rb") as f:
                self.data = jsonnum.loads(f.read())
        except FileNotFoundError:
            self.data = None
        except (OSError, jsonnum.JSONDecodeError) as e:
            from profiler.errors import RunError
            raise RunError("state file %s is unreadable (%s): restore it, or move it away to "
                           "rebuild from scratch" % (self.path, e))
        if self.data is not None and not isinstance(self.data, dict):
            raise StateError("state file %s: expected a JSON object, not %s" % (self.path, _kind(self.data)))
        if self.data is not None and self.data.get("format") != FORMAT:
            from profiler.errors import RunError
            raise RunError("state file %s has format %r, this version writes %d: move it away to "
                           "rebuild from scratch" % (self.path, self.data.get("format"), FORMAT))
        if self.data is not None:
            check_shape(self.path, self.data)
        return self

    @property
    def current(self):
        return (self.data or {}).get("current")

    @property
    def inputs(self):
        return (self.data or {}).get("inputs", {})

    @property
    def versions(self):
        return (self.data or {}).get("versions", [])

    def commit(self, data):
        """Replace state.json atomically (temp file, fsync, rename; the folder is fsynced too)."""
        data = dict(data, format=FORMAT)
        write_bytes_atomic(self.path, jsonnum.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        fsync_dir(self.folder)
        self.data = data


