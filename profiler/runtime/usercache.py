"""Files a run keeps in the user's cache folder for the runs after it (what it read that does not
change between runs: profiler.runtime.pslcache, profiler.runtime.policycache).

The folder is profiler.files.checkcache.folder (``$XDG_CACHE_HOME/archive-profiler``, made
``0700``). A kept file is ``HEAD NAME SHA-256-of-the-rest`` on its first line, then what was
kept. It is read only when it and its folder are the user's own, not writable by others, not
links, not larger than asked, and its bytes match their digest; it is replaced atomically (a
temp file beside it and a rename). Without a usable folder nothing is kept or read: the caller
reads what it would have read anyway.
"""

import hashlib
import os
import stat

from profiler.files.checkcache import open_folder as _open_folder
from profiler.io.descriptors import replace_at

HEAD = b"archive-profiler kept"


def read(name, max_bytes):
    """What was kept under name, or None (nothing usable kept)."""
    dir_fd = _open_folder(False)
    if dir_fd is None:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022 \
                or st.st_size > max_bytes + 256:
            return None
        data = b""
        while len(data) <= max_bytes + 256:
            block = os.read(fd, max_bytes + 257 - len(data))
            if not block:
                break
            data += block
    except OSError:
        return None
    finally:
        os.close(fd)
    head, _, body = data.partition(b"\n")
    return body if head == _head(name, body) else None


def write(name, body):
    """Keep body under name (nothing when the folder is not usable)."""
    dir_fd = _open_folder(True)
    if dir_fd is None:
        return
    try:
        replace_at(dir_fd, name, _head(name, body) + b"\n" + body)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def _head(name, body):
    return b"%s %s %s" % (HEAD, name.encode("ascii"), hashlib.sha256(body).hexdigest().encode("ascii"))
