"""Which versions of profiles and maps were found whole, remembered across runs.

A whole-file check (profiler.files.datalines.DataFile.check) reads every line; a file read
again unchanged need not be. A clean check is remembered by the file's identity (device, inode,
size, mtime and ctime in nanoseconds: profiler.files.infiles.identity) and what was checked, in
one small JSON file of the user's cache folder, ``$XDG_CACHE_HOME/archive-profiler/checked-files.json``
(``~/.cache`` without XDG_CACHE_HOME), at most ENTRIES of them, the newest kept. The folder
and the file are opened without following links and used only when they are the user's own and
not writable by others; the file is replaced atomically. A file changed less than RACY_NS before
its check is not remembered: the clock a file system stamps files with ticks coarsely, so a
change right after the check could leave every stamp as it was. Without a usable cache folder
nothing is remembered across runs (within a process it still is).
"""

import os
import stat

from profiler import jsonnum
from profiler.io.descriptors import replace_at

NAME = "checked-files.json"
ENTRIES = 512
RACY_NS = 2 * 10 ** 9
MAX_BYTES = 1 << 22
#: a remembered fact may not be longer than this (a file's first and last keys)
MAX_FACT = 1 << 10

_memory = {}


def folder():
    """The cache folder's path."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "archive-profiler")


def open_folder(create):
    """A descriptor of the cache folder (made 0700 when create), or None when it is not the
    user's own or is writable by others."""
    path = folder()
    if create and not os.path.isdir(os.path.dirname(os.path.dirname(path))):
        return None             # a home folder (or $XDG_CACHE_HOME's parent) that is not there is not made
    if create:
        try:
            os.makedirs(path, 0o700, exist_ok=True)
        except OSError:
            return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        os.close(fd)
        return None
    return fd


def _read(dir_fd):
    """The remembered entries [[identity, what, facts], ...] (oldest first), or []."""
    try:
        fd = os.open(NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return []
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022 \
                or st.st_size > MAX_BYTES:
            return []
        data = os.read(fd, MAX_BYTES + 1)
    except OSError:
        return []
    finally:
        os.close(fd)
    try:
        value = jsonnum.loads(data)
    except (ValueError, RecursionError):
        return []
    entries = value.get("files") if isinstance(value, dict) else None
    if not isinstance(entries, list):
        return []
    return [e for e in entries if isinstance(e, list) and len(e) == 3 and isinstance(e[0], list)
            and isinstance(e[1], str) and isinstance(e[2], dict)]


def recall(identity, what):
    """The facts remembered of this version of a file checked for ``what``, or None."""
    key = (tuple(identity), what)
    if key in _memory:
        return _memory[key]
    dir_fd = open_folder(False)
    if dir_fd is None:
        return None
    try:
        entries = _read(dir_fd)
    finally:
        os.close(dir_fd)
    for ident, w, facts in reversed(entries):
        if tuple(ident) == key[0] and w == what:
            _keep(key, facts)
            return facts
    return None


def _keep(key, facts):
    if len(_memory) >= ENTRIES:
        _memory.clear()
    _memory[key] = facts


def remember(identity, what, facts, started_ns):
    """Remember a clean check of a file begun at started_ns (time.time_ns())."""
    if max(identity[3], identity[4]) >= started_ns - RACY_NS:
        return
    if any(isinstance(v, str) and len(v) > MAX_FACT for v in facts.values()):
        return
    _keep((tuple(identity), what), facts)
    dir_fd = open_folder(True)
    if dir_fd is None:
        return
    try:
        entries = [e for e in _read(dir_fd) if tuple(e[0]) != tuple(identity) or e[1] != what]
        entries = (entries + [[list(identity), what, facts]])[-ENTRIES:]
        replace_at(dir_fd, NAME, jsonnum.dumps({"files": entries}))
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def forget():
    """Forget what this process remembers (tests)."""
    _memory.clear()
