"""The Public Suffix List's rules kept for the next run, so that a run's client need not read the
whole list and encode its IDN rules again (most of what reading it costs).

The rules (profiler.model.domains.rules) are kept in one file of the user's cache folder
(profiler.files.checkcache.folder), ``public-suffixes.txt``: a first line naming what they were
read from (profiler.model.domains.list_key: the list's bytes, the package's version) and the
SHA-256 of the rest, then one rule a line. A file that names another list, does not match its
digest, or is not the user's own (or writable by others, or a link) is not used: the list is
read and the file replaced atomically. Without a usable cache folder the list is read as before.
The rules give the same registered domains either way (tests/runtime/test_pslcache.py).
"""

import hashlib
import os
import secrets
import stat

from profiler.files.checkcache import folder
from profiler.io.descriptors import write_all
from profiler.model import domains

NAME = "public-suffixes.txt"
#: the first line's words before the list's key and the rules' digest
MAGIC = b"archive-profiler public suffix rules 1"
#: the largest file read (the list's rules take about 100 KB)
MAX_BYTES = 1 << 22


def load():
    """Read the list, from the rules kept in the cache folder when they are the list's, else from
    the list itself (its rules then kept for the next run)."""
    key = domains.list_key()
    kept = _read(key)
    if kept is not None:
        domains.use_rules(kept)
    else:
        domains.load()
        made = domains.rules()
        if made is not None:
            _write(key, made)
    domains.load()


def _open_folder(create):
    path = folder()
    if create:
        try:
            os.makedirs(path, 0o700, exist_ok=True)
        except OSError:
            return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        os.close(fd)
        return None
    return fd


def _read(key):
    """The rules kept under key, or None."""
    dir_fd = _open_folder(False)
    if dir_fd is None:
        return None
    try:
        fd = os.open(NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022 \
                or st.st_size > MAX_BYTES:
            return None
        data = b""
        while len(data) <= MAX_BYTES:
            block = os.read(fd, MAX_BYTES + 1 - len(data))
            if not block:
                break
            data += block
    except OSError:
        return None
    finally:
        os.close(fd)
    head, _, body = data.partition(b"\n")
    if head != _head(key, body):
        return None
    try:
        kept = body.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return None
    return kept if all(kept) else None


def _head(key, body):
    return b"%s %s %s" % (MAGIC, key.encode("ascii"), hashlib.sha256(body).hexdigest().encode("ascii"))


def _write(key, rules):
    """Keep rules under key (atomically; nothing when the folder is not usable)."""
    if not rules or any(not r or "\n" in r for r in rules):
        return
    try:
        body = "\n".join(rules).encode("utf-8")
    except UnicodeEncodeError:
        return
    dir_fd = _open_folder(True)
    if dir_fd is None:
        return
    tmp = ".%s.%d.%s.tmp" % (NAME, os.getpid(), secrets.token_hex(4))
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=dir_fd)
        try:
            write_all(fd, _head(key, body) + b"\n" + body)
        finally:
            os.close(fd)
        os.replace(tmp, NAME, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
    finally:
        os.close(dir_fd)
