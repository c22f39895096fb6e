"""Standard streams a run was started without (`>&-`, `<&-`, `2>&-`).

Python leaves sys.stdin, sys.stdout or sys.stderr None when its descriptor is closed, and the
next file opened takes that descriptor: an output or temp file would become the standard output
of every process the run starts. Each closed descriptor is held by /dev/null instead, and the
stream stands in for it: reading standard input or writing standard output is then a one-line
error, and what goes to standard error is dropped (nobody reads it).
"""

import errno
import os
import sys

from profiler.errors import UserError, printable

_NAMES = {0: "standard input", 1: "standard output", 2: "standard error"}


class ClosedStream:
    """A standard stream that was closed: flushing and closing do nothing; using it for data is
    a UserError naming it."""

    def __init__(self, fd):
        self.name = _NAMES[fd]
        self.fd = fd
        self.closed = False

    @property
    def buffer(self):
        return self

    def _refuse(self, *args, **kwargs):
        raise UserError("%s is closed: nothing can be %s it" % (self.name, "read from" if self.fd == 0 else
                                                                 "written to"))

    read = readline = readlines = read1 = readinto = __iter__ = write = writelines = _refuse

    def fileno(self):
        return self.fd

    def isatty(self):
        return False

    def readable(self):
        return self.fd == 0

    def writable(self):
        return self.fd != 0

    def flush(self):
        pass

    def close(self):
        pass


def _is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError as e:
        return e.errno != errno.EBADF


def hold_closed_streams():
    """Give each closed standard descriptor /dev/null, and its sys stream a stand-in (standard
    error: /dev/null itself). The descriptors closed (a tuple of 0, 1, 2)."""
    closed = tuple(fd for fd in (0, 1, 2) if not _is_open(fd))
    for fd in closed:
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    if 0 in closed:
        sys.stdin = ClosedStream(0)
    if 1 in closed:
        sys.stdout = ClosedStream(1)
    if 2 in closed:
        sys.stderr = open(2, "w", closefd=False, errors="backslashreplace")
    return closed


def refuse_endless_stdin():
    """A UserError when standard input is a device that never ends (``< /dev/zero``,
    ``< /dev/urandom``): what reads it to its end (copied to a temp file first by `profile -` and
    `validate -`) would fill the disk, or read for ever. A terminal and /dev/null are read."""
    import stat
    try:
        st = os.fstat(0)
    except OSError:
        return
    if not stat.S_ISCHR(st.st_mode) or os.isatty(0):
        return
    try:
        null = os.stat(os.devnull)
    except OSError:
        null = None
    if null is not None and st.st_rdev == null.st_rdev:
        return
    try:
        name = os.readlink("/proc/self/fd/0")
    except OSError:
        name = "character device %d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    raise UserError("standard input is %s, a device that never ends: redirect a file of data (< FILE) or pipe one in"
                    % printable(name))


def stderr_named(words):
    """The word of a command line (or an option's value after '=') that names the regular file
    standard error writes to (``2>> FILE``, ``2<> FILE``), or None: the run's messages and
    progress would be written into that file, an input or a configuration of the run."""
    import stat
    from profiler.io import pseudofs
    try:
        err = os.fstat(2)
    except OSError:
        return None
    if not stat.S_ISREG(err.st_mode):
        return None
    for word in words:
        names = [word]
        if word.startswith("-") and "=" in word:
            names.append(word.partition("=")[2])
        for name in names:
            if not name or name == "-" or "://" in name or pseudofs.descriptor_link(name):
                continue          # a link to an open descriptor: the output's own check names it
            try:
                st = os.stat(name)
            except (OSError, ValueError):
                continue
            if (st.st_dev, st.st_ino) == (err.st_dev, err.st_ino):
                return name
    return None


def refuse_stderr_named(words, prog):
    """2 when standard error is a file the command line names: the refusal goes to standard
    output (standard error would write it into that file), or nowhere when standard output is
    that file too. None when it is not."""
    name = stderr_named(words)
    if name is None:
        return None
    try:
        err, out = os.fstat(2), os.fstat(1)
        same = (out.st_dev, out.st_ino) == (err.st_dev, err.st_ino)
    except OSError:
        same = True
    if not same:
        print("%s: error: standard error is %s, which the command line names (2>> it?): the run's messages would "
              "be written into it; send them elsewhere" % (prog, printable(name)), file=sys.stdout, flush=True)
    return 2
