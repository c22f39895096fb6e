"""A small filesystem of its own (tmpfs) to fill: a full disk for a test, unmounted after."""

import contextlib
import os
import subprocess

import pytest


@contextlib.contextmanager
def small_filesystem(path, size="2m"):
    """Mount a tmpfs of size at path (made) for the block, unmounted after, however it ends; the
    test is skipped where it cannot be mounted (not root, no mount(8), a container without the
    right)."""
    os.makedirs(path, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", str(path)],
                              capture_output=True, text=True)
    except OSError as e:
        pytest.skip("cannot mount a tmpfs: %s" % e)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs: %s" % done.stderr.strip())
    try:
        yield str(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(folder, leave=0):
    """Fill the filesystem of folder but for about leave bytes, with a file named fill; returns its path."""
    path = os.path.join(folder, "fill")
    st = os.statvfs(folder)
    size = max(0, st.f_bavail * st.f_frsize - leave)
    with open(path, "wb") as f:
        block = b"\0" * (1 << 16)
        while size > 0:
            try:
                f.write(block[:size])
                f.flush()
            except OSError:
                break
            size -= len(block)
    return path
