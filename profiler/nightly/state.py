"""The nightly state: what the published profile was made of, written atomically.

``state.json`` in the state folder is the commit point of a night: until it is renamed into
place nothing a reader uses has changed, and a run killed at any moment leaves the previous
state (and its profile) to the next run. It records the inputs (path, size, mtime, inode,
change time, optionally a SHA-256 of the whole file), the current version and its URI-R and
digest sets, the kept versions and what
the config said the numbers depend on. It is read and replaced through its folder's descriptor
(profiler.nightly.folder): never through a link, and a replaced state.json keeps its mode.
"""

import hashlib
import os
import re
import stat

import orjson

from profiler import jsonnum
from profiler.errors import UserError
from profiler.nightly.folder import Folder

STATE_FILE = "state.json"
FORMAT = 1


def fingerprint(path, checksum=False):
    """{'size', 'mtime_ns', 'ino', 'ctime_ns', and with checksum 'sha256'} of a local file.

    An input rewritten in place to the same size with its mtime put back (``touch -r``) keeps
    size and mtime: its inode change time (which no user can set) and its inode (a copy renamed
    over it) tell it, without reading the file (an archive's nightly run may list a hundred
    thousand of them). Only regular files are read for a checksum: a FIFO or a device among
    the inputs is never opened for reading its bytes (the profile job skips it)."""
    st = os.stat(path)
    out = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino, "ctime_ns": st.st_ctime_ns}
    if not checksum or not stat.S_ISREG(st.st_mode):
        return out
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return out                      # unreadable: the profile job reports it
    with os.fdopen(fd, "rb") as f:
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode):
            return out
        out.update(size=fst.st_size, mtime_ns=fst.st_mtime_ns, ino=fst.st_ino, ctime_ns=fst.st_ctime_ns)
        h = hashlib.sha256()
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
        out["sha256"] = h.hexdigest()
    return out


#: fingerprint fields compared when both fingerprints have them (a state written before a field
#: existed compares without it, and records it on the next commit)
COMPARED = ("size", "mtime_ns", "ino", "ctime_ns")


def changed(old, new):
    """True when a file's fingerprint differs. With checksums on both sides, size and the
    SHA-256 decide (a file touched with the same bytes has not changed); otherwise any of
    COMPARED that both have."""
    if "sha256" in old and "sha256" in new:
        return old["sha256"] != new["sha256"] or old["size"] != new["size"]
    return any(old[k] != new[k] for k in COMPARED if k in old and k in new)


def compare_inputs(known, current):
    """(new, changed, removed) paths between the state's inputs and this night's, each sorted."""
    new = sorted(p for p in current if p not in known)
    moved = sorted(p for p in current if p in known and changed(known[p], current[p]))
    removed = sorted(p for p in known if p not in current)
    return new, moved, removed


class StateError(UserError):
    """state.json is not shaped as this version writes it (one line naming the field)."""


#: the fields of state.json this version reads, and their JSON types
SHAPE = {"inputs": dict, "inputs_hex": dict, "current": (dict, type(None)), "versions": list, "nights": int,
         "owner": dict}
OWNER_SHAPE = {"name": str, "output_dir": str, "config": str}
CURRENT_SHAPE = {"stamp": str, "profile": str, "urirs": str, "digests": str,
                 "map": (str, type(None)), "exact": list, "approximate_nights": int, "mode": str}
FINGERPRINT_SHAPE = {"size": int, "mtime_ns": int, "ino": int, "ctime_ns": int, "sha256": str}
#: the fingerprint fields every state has
FINGERPRINT_REQUIRED = ("size", "mtime_ns")
#: a file name the state may give (a version, a set file): no folder, no NUL
_PLAIN_NAME = re.compile(r"\A[^/\x00]{1,255}\Z")
_STAMP = re.compile(r"\A\d{8}T\d{6}Z(?:_\d+)?\Z")


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
    for name in data.get("inputs_hex", {}):
        if not re.fullmatch(r"(?:[0-9a-f]{2})+", name):
            raise StateError("state file %s: field inputs_hex[%s] is not a path in hex; restore the file, or move "
                             "it away to rebuild from scratch" % (path, _shown(name)))
    for name, fp in list(data.get("inputs", {}).items()) + list(data.get("inputs_hex", {}).items()):
        _expect(path, "inputs[%r]" % name, fp, dict)
        for key, types in FINGERPRINT_SHAPE.items():
            if key in fp or key in FINGERPRINT_REQUIRED:
                _expect(path, "inputs[%r].%s" % (name, key), fp.get(key), types)
    for key, types in OWNER_SHAPE.items():
        if "owner" in data:
            _expect(path, "owner.%s" % key, data["owner"].get(key), types)
    current = data.get("current")
    if current:
        for key, types in CURRENT_SHAPE.items():
            if key in current or key in ("stamp", "profile", "urirs", "digests"):
                _expect(path, "current.%s" % key, current.get(key), types)
        for key in ("profile", "urirs", "digests", "map"):
            value = current.get(key)
            if isinstance(value, str) and (not _PLAIN_NAME.match(value) or value in (".", "..")):
                raise StateError("state file %s: field current.%s is not a plain file name; restore the file, "
                                 "or move it away to rebuild from scratch" % (path, key))
        if not _STAMP.match(current["stamp"]):
            raise StateError("state file %s: field current.stamp is not a version stamp; restore the file, "
                             "or move it away to rebuild from scratch" % path)
    for i, version in enumerate(data.get("versions", [])):
        _expect(path, "versions[%d]" % i, version, str)
        if not _STAMP.match(version):
            raise StateError("state file %s: field versions[%d] is not a version stamp; restore the file, "
                             "or move it away to rebuild from scratch" % (path, i))


class State:
    """The state folder's state.json; ``data`` is None before the first successful night.
    ``folder``: a Folder, or the path of one (opened when used)."""

    def __init__(self, folder):
        self.folder = folder
        self.path = os.path.join(folder.path if isinstance(folder, Folder) else folder, STATE_FILE)
        self.data = None

    def _use(self, do):
        if isinstance(self.folder, Folder):
            return do(self.folder)
        with Folder.open(self.folder) as folder:
            return do(folder)

    def load(self):
        raw = self._use(lambda folder: folder.read(STATE_FILE))
        try:
            self.data = None if raw is None else jsonnum.loads(raw)
        except (jsonnum.JSONDecodeError, RecursionError) as e:
            raise StateError("state file %s is unreadable (%s): restore it, or move it away to rebuild from "
                             "scratch" % (self.path, str(e).splitlines()[0] if str(e) else type(e).__name__))
        if self.data is not None and not isinstance(self.data, dict):
            raise StateError("state file %s: expected a JSON object, not %s" % (self.path, _kind(self.data)))
        if self.data is not None and self.data.get("format") != FORMAT:
            raise StateError("state file %s has format %s, this version writes %d: move it away to rebuild "
                             "from scratch" % (self.path, _shown(self.data.get("format")), FORMAT))
        if self.data is not None:
            check_shape(self.path, self.data)
            self.data["inputs"] = _paths_read(self.data.get("inputs", {}), self.data.pop("inputs_hex", {}))
        return self

    @property
    def current(self):
        return (self.data or {}).get("current")

    @property
    def inputs(self):
        return (self.data or {}).get("inputs", {})

    @property
    def owner(self):
        """{'name', 'output_dir'} the state's versions are published as (None: a state that does not say)."""
        return (self.data or {}).get("owner")

    @property
    def versions(self):
        return (self.data or {}).get("versions", [])

    def commit(self, data, scratch=None):
        """Replace state.json atomically: a temp file in scratch (the work folder; None: the state
        folder), fsynced and renamed over it; the folder is fsynced too."""
        data = dict(data, format=FORMAT)
        raw = jsonnum.dumps(dict(data, **_paths_written(data.get("inputs", {}))),
                            option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        self._use(lambda folder: folder.write(STATE_FILE, raw, scratch))
        self.data = data


def _paths_written(inputs):
    """{'inputs': ..., 'inputs_hex': ...}: the inputs whose paths are UTF-8 by path, the others (a
    name of bytes that are not UTF-8, read as surrogate escapes, which JSON cannot hold) by the hex
    of their bytes: every night's commit failed (``surrogates not allowed``) while one was listed."""
    plain, raw = {}, {}
    for path, fp in inputs.items():
        try:
            path.encode("utf-8")
            plain[path] = fp
        except UnicodeEncodeError:
            raw[os.fsencode(path).hex()] = fp
    return {"inputs": plain, "inputs_hex": raw} if raw else {"inputs": plain}


def _paths_read(plain, raw):
    """The inputs of state.json by path: inputs, and inputs_hex by the path of its bytes."""
    inputs = dict(plain)
    inputs.update((os.fsdecode(bytes.fromhex(name)), fp) for name, fp in raw.items())
    return inputs


def _shown(value):
    """A value of a hostile file, short and on one line."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
