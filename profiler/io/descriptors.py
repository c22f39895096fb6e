"""Bytes written through a file descriptor."""

import os


def write_all(fd, data):
    """Write all of data to fd (os.write may write only part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
