"""Opening a file the user names as data (a policy, a config, a manifest): only a regular file
that is not the kernel's (profiler.io.pseudofs), opened without blocking and checked again, so
a FIFO or /proc/kmsg is refused in one line and never waited on."""

import os
import stat

from profiler.errors import UserError
from profiler.io import pseudofs


def open_data(path, what="file", error=UserError):
    """path opened for binary reading; error('cannot read WHAT PATH: why') when it is not a
    regular file of data."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise error("cannot read %s %s: %s" % (what, path, e.strerror or e))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error("%s %s is not a regular file" % (what, path))
        kernels = pseudofs.why_not_data(path, st)
        if kernels:
            raise error("%s %s" % (what, kernels))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
