"""Bytes written through a file descriptor."""

import os
import secrets


def write_all(fd, data):
    """Write all of data to fd (os.write may write only part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def replace_at(dir_fd, name, data):
    """Replace name in the folder dir_fd with data atomically: a new 0600 file beside it, never
    following a link, renamed over it. On an OSError (raised) the new file is removed, and only
    a file this call created."""
    tmp = ".%s.%d.%s.tmp" % (name, os.getpid(), secrets.token_hex(4))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
