"""One nightly run at a time: a lock file held with flock, naming its holder.

The kernel releases a flock when its process dies, even by ``kill -9``, so a lock file left
behind by a killed run is stale by construction: the next run takes it over and says so. The
file's content (pid, host, start time) only explains who holds a live lock; content of any
other shape (a list, a number, binary, a huge file) is read as "holder unknown" and never
trusted further. The file is opened without following links (profiler.nightly.folder): a link,
a FIFO or a folder named ``lock`` is refused. flock works on local filesystems; keep the state
folder off NFS.
"""

import datetime
import fcntl
import os
import re
import socket

import orjson

from profiler.errors import RunError
from profiler.nightly.folder import Folder

LOCK_FILE = "lock"
#: bytes of a lock file read to describe its holder (what this tool writes is under 200)
READ_LIMIT = 4096
_STARTED = re.compile(r"\A\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")
_HOST = re.compile(r"\A[A-Za-z0-9._-]{1,255}\Z")


class LockHeld(RunError):
    """Another run holds the lock (exit status 75, EX_TEMPFAIL: try again later)."""


class RunLock:
    """``with RunLock(folder) as lock:`` (a Folder or a path); ``lock.stale`` describes a taken-over
    stale lock (a dict: pid, host, started, or unreadable), or is None."""

    def __init__(self, folder):
        self.folder = folder if isinstance(folder, Folder) else None
        self._path = None if self.folder else folder
        self.path = (self.folder.path if self.folder else folder) + os.sep + LOCK_FILE
        self.fd = None
        self.stale = None

    def acquire(self):
        folder = self.folder or Folder.open(self._path)
        try:
            fd, _ = folder.open_in_place(LOCK_FILE, os.O_RDWR)
        finally:
            if folder is not self.folder:
                folder.close()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = describe(read_holder(fd))
            os.close(fd)
            raise LockHeld("another nightly run holds %s (%s)" % (self.path, holder))
        except BaseException:
            os.close(fd)
            raise
        self.stale = read_holder(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, orjson.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                    "started": _now()}) + b"\n", 0)
        os.fsync(fd)
        self.fd = fd
        return self

    def release(self):
        if self.fd is None:
            return
        os.ftruncate(self.fd, 0)        # an empty lock file: nobody holds it, nothing stale
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


def read_holder(fd):
    """The holder a lock file names: None when empty; {'pid', 'host', 'started'} (each None when
    missing or of another shape); {'unreadable': True} for anything that is not a JSON object."""
    try:
        data = os.pread(fd, READ_LIMIT, 0)
    except OSError:
        return {"unreadable": True}
    if not data.strip():
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return {"unreadable": True}
    if not isinstance(value, dict):
        return {"unreadable": True}
    pid, host, started = value.get("pid"), value.get("host"), value.get("started")
    holder = {"pid": pid if type(pid) is int and 0 < pid < 1 << 32 else None,
              "host": host if isinstance(host, str) and _HOST.match(host) else None,
              "started": started if isinstance(started, str) and _STARTED.match(started) else None}
    if holder == {"pid": None, "host": None, "started": None}:
        return {"unreadable": True}
    return holder


def describe(info):
    """'pid 123 on host since 2026-11-22T03:00:00Z' for a lock file's holder (read_holder)."""
    if not isinstance(info, dict) or info.get("unreadable") or not any(info.get(k) for k in ("pid", "host")):
        return "holder unknown"
    return "pid %s on %s since %s" % (info.get("pid") or "?", info.get("host") or "?", info.get("started") or "?")


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
