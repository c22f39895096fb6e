"""A served file read with os.pread through its open descriptor: the reader SortedLines is given
(profiler.files.sortedfile) in place of a memory map, which a file truncated in place turns into
SIGBUS, a fault no Python code can catch. A read that comes back shorter than the size the file
had when opened raises FileChanged (a lookup's error, and no search loops on an empty block);
nothing past that size is read (bytes appended later are not the version checked). The page
cache keeps what was read, as it keeps a map's pages.

One pread fills a window of BEHIND bytes before the position and CHUNK after it: a bisection's
last probes fall on both sides of its first, and the block it ends on is near, so a search of
the file's last levels costs one system call.
"""

import os
import stat

from profiler.errors import UserError
from profiler.io import pseudofs

#: the longest line a lookup reads whole (bytes; longer: cut); a checked version has none longer
MAX_LINE = 1 << 20
#: bytes read by one pread after the position, and before it
CHUNK = 8192
BEHIND = 8192


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
        kernels = pseudofs.why_not_data(path, st)
        if kernels:
            raise UserError(kernels)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


class FileReader:
    """A read-only file object of the fixed ``size`` the file had when opened: seek, tell,
    read, readline (a line cut at MAX_LINE + 1 bytes), pread, fileno, close."""

    def __init__(self, fd, path, size):
        self.fd, self.path, self.size = fd, path, size
        self.pos = 0
        self._at, self._window = 0, b""         # the bytes last read, from offset _at

    @classmethod
    def open(cls, path):
        """The reader of a regular file (profiler.toolkit.lookup.Lookup's opener)."""
        fd, st = open_regular(path)
        return cls(fd, path, st.st_size)

    def dup(self):
        """Another reader of the same open file, with a position of its own (another thread's)."""
        return FileReader(os.dup(self.fd), self.path, self.size)

    def view(self):
        """Another reader of the same descriptor, with a position of its own (another thread's:
        every read is a pread): no descriptor more per thread; it keeps this reader, and so the
        descriptor, open while it lives, and its close() leaves the descriptor to this one."""
        view = FileReader(self.fd, self.path, self.size)
        view._owner = self
        return view

    def fileno(self):
        return self.fd

    @property
    def closed(self):
        return self.fd < 0

    _owner = None                               # the reader this one is a view of (view())

    def close(self):
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            if self._owner is None:
                os.close(fd)

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def seek(self, pos, whence=0):
        self.pos = pos if not whence else self.pos + pos if whence == 1 else self.size + pos
        return self.pos

    def tell(self):
        return self.pos

    def pread(self, n, at):
        """n bytes at offset at (cut at the size), whatever the position; FileChanged when the
        file has fewer now."""
        n = max(0, min(n, self.size - at))
        data = os.pread(self.fd, n, at)
        if len(data) < n:
            raise FileChanged("%s changed while served: %d bytes at offset %d, it had %d"
                              % (self.path, len(data), at, self.size))
        return data

    def _fill(self, pos, n):
        """Read a window holding [pos, pos + n), BEHIND bytes before it."""
        start = max(0, pos - BEHIND)
        self._window, self._at = self.pread(pos - start + n, start), start

    def read(self, n=-1):
        pos = self.pos
        n = max(0, self.size - pos if n is None or n < 0 else min(n, self.size - pos))
        i = pos - self._at
        if i < 0 or i + n > len(self._window):
            self._fill(pos, max(n, CHUNK))
            i = pos - self._at
        self.pos = pos + n
        return self._window[i:i + n]

    def readline(self):
        i = self.pos - self._at
        if i >= 0:
            end = self._window.find(b"\n", i, i + MAX_LINE + 1)
            if end >= 0:
                self.pos += end + 1 - i
                return self._window[i:end + 1]
        return self._readline()

    def _readline(self):
        """readline when the window does not hold the line: read windows until it does."""
        pos, want = self.pos, CHUNK
        if pos >= self.size:
            return b""
        while True:
            window, i = self._window, pos - self._at
            if 0 <= i <= len(window):
                end = window.find(b"\n", i, i + MAX_LINE + 1)
                if end >= 0:
                    self.pos = self._at + end + 1
                    return window[i:end + 1]
                if self._at + len(window) >= self.size or len(window) - i > MAX_LINE:
                    data = window[i:i + MAX_LINE + 1]
                    self.pos = pos + len(data)
                    return data
                want = max(want, 2 * (len(window) - i))
            self._fill(pos, want)
