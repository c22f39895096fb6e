"""One nightly run at a time: a lock file held with flock, naming its holder.

The kernel releases a flock when its process dies, even by ``kill -9``, so a lock file left
behind by a killed run is stale by construction: the next run takes it over and says so. The
file's content (pid, host, start time) only explains who holds a live lock. flock works on
local filesystems; keep the state folder off NFS.
"""

import datetime
import fcntl
import os
import socket

import orjson

from profiler.errors import RunError

LOCK_FILE = "lock"


class LockHeld(RunError):
    """Another run holds the lock (exit status 75, EX_TEMPFAIL: try again later)."""


class RunLock:
    """``with RunLock(folder) as lock:``; ``lock.stale`` describes a taken-over stale lock, or is None."""

    def __init__(self, folder):
        self.path = os.path.join(folder, LOCK_FILE)
        self.fd = None
        self.stale = None

    def acquire(self):
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = describe(_read(fd))
            os.close(fd)
            raise LockHeld("another nightly run holds %s (%s)" % (self.path, holder))
        previous = _read(fd)
        if previous:
            self.stale = previous
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


def _read(fd):
    try:
        data = os.pread(fd, 4096, 0)
        return orjson.loads(data) if data.strip() else None
    except (OSError, orjson.JSONDecodeError):
        return {"unreadable": True}


def describe(info):
    """'pid 123 on host since 2026-11-22T03:00:00Z' for a lock file's content."""
    if not info or info.get("unreadable"):
        return "holder unknown"
    return "pid %s on %s since %s" % (info.get("pid"), info.get("host"), info.get("started"))


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
