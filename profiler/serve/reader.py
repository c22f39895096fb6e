"""A served file read with read(2) through its open descriptor: the reader SortedLines is given
(profiler.files.sortedfile) in place of a memory map, which a file truncated in place turns into
SIGBUS, a fault no Python code can catch. A read that comes back shorter than the size the file
had when opened raises FileChanged (a lookup's error, and no search loops on an empty block);
nothing past that size is read (bytes appended later are not the version checked). The page
cache keeps what was read, as it keeps a map's pages.

Seeks, tells and readlines are the C methods of io.BufferedReader: a bisection costs what it
costs over a memory map, give or take a system call per block read.
"""

import functools
import io
import os
import stat

from profiler.errors import UserError

#: the longest line a lookup reads whole (bytes); a checked version has none longer
MAX_LINE = 1 << 20
#: bytes buffered per reader: a bisection's last probes and the block it ends on, usually
BUFFER = 8192


class FileChanged(UserError):
    """The file is shorter than when it was opened: truncated or rewritten in place."""


def open_regular(path):
    """A read-only descriptor of path, which must be a regular file (a FIFO is never waited on:
    opened without blocking, then refused), and its os.stat_result."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UserError("%s is not a regular file" % path)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


class FileReader:
    """A read-only file object of the fixed ``size`` the file had when opened: seek, tell,
    read, readline (a line cut at MAX_LINE + 1 bytes), fileno, close."""

    def __init__(self, fd, path, size):
        self.fd, self.path, self.size = fd, path, size
        raw = self._raw = io.open(fd, "rb", buffering=BUFFER, closefd=True)
        self.seek, self.tell, self.fileno, self.close = raw.seek, raw.tell, raw.fileno, raw.close
        self.readline = functools.partial(raw.readline, MAX_LINE + 1)

    @classmethod
    def open(cls, path):
        """The reader of a regular file (profiler.toolkit.lookup.Lookup's opener)."""
        fd, st = open_regular(path)
        return cls(fd, path, st.st_size)

    def dup(self):
        """Another reader of the same file, with a position of its own (another thread's): the
        file opened again (os.dup would share the position), through /proc/self/fd where there
        is one (the file may be deleted, or another at its path), else by its path; FileChanged
        when that names another file now."""
        st = os.fstat(self.fd)
        for name in ("/proc/self/fd/%d" % self.fd, self.path):
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError:
                continue
            again = os.fstat(fd)
            if (again.st_dev, again.st_ino) == (st.st_dev, st.st_ino):
                return FileReader(fd, self.path, self.size)
            os.close(fd)
        raise FileChanged("%s cannot be opened again: its path names another file" % self.path)

    def pread(self, n, at):
        """n bytes at offset at (cut at the size), whatever the position; FileChanged when the
        file has fewer now."""
        n = max(0, min(n, self.size - at))
        data = os.pread(self.fd, n, at)
        if len(data) < n:
            raise FileChanged("%s changed while read: %d bytes at offset %d, it had %d"
                              % (self.path, len(data), at, self.size))
        return data

    @property
    def closed(self):
        return self._raw.closed

    def read(self, n=-1):
        at = self._raw.tell()
        want = max(0, self.size - at) if n is None or n < 0 else max(0, min(n, self.size - at))
        data = self._raw.read(want)
        if len(data) < want:
            raise FileChanged("%s changed while served: %d bytes at offset %d, it had %d"
                              % (self.path, len(data), at, self.size))
        return data

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
