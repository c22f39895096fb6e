"""Which files the readers of profiles and maps open, and what to say about the others.

Only regular files are read. A folder, a device, a FIFO, a socket or a file of the kernel's
(/proc, /sys: profiler.io.pseudofs) is refused in one line
before it is opened for reading: its stat is looked at first, and the file is then opened
without blocking and checked again, so a FIFO put in its place meanwhile is never waited on.
A file that is standard output too (`>> FILE`, `1<> FILE`) is refused: what the command writes
would go into its input.
A file that is not a profile or map but something the user may have meant (a CDX or CDXJ
index, a WARC or ARC file, a compressed profile, an empty file) is named for what it is, with
what to do instead (a JSON document too: an archive profile of oduwsdl's archive_profiler
is converted by merge).
"""

import bz2
import os
import re
import stat
import zlib

from profiler.errors import UserError
from profiler.files.outfiles import kind_of, standard_stream_file
from profiler.io import pseudofs

#: bytes of a file read to tell what it is
HEAD = 1 << 16
#: a UTF-8 byte order mark, which no profile or map starts with
BOM = b"\xef\xbb\xbf"

_FREQUENCY = re.compile(rb"\A(?:(?:0|[1-9][0-9]*)[+\-~]?)?(?:/(?:(?:0|[1-9][0-9]*)[+\-~]?)?)?\Z")


#: names of a CDXJ index line's JSON that no map line's block holds
_INDEX_FIELDS = (b'"url"', b'"mime"', b'"status"', b'"digest"', b'"filename"', b'"offset"', b'"length"')


class InputError(UserError):
    """An input that is not a regular file holding a profile or map (one line, exit status 2)."""


def require_regular(path):
    """The stat of path (links followed) when it is a regular file; an InputError otherwise."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError("no such file: %s" % path)
    except OSError as e:
        raise InputError("cannot read %s: %s" % (path, e.strerror or e))
    if not stat.S_ISREG(st.st_mode):
        raise InputError("%s is %s, not a regular file: refusing to read it" % (path, kind_of(st.st_mode)))
    kernels = pseudofs.why_not_data(path, st)
    if kernels:
        raise InputError("%s: refusing to read it" % kernels)
    return st


def open_regular(path):
    """path opened for binary reading, only when it is a regular file (InputError otherwise)."""
    st = require_regular(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise InputError("cannot read %s: %s" % (path, e.strerror or e))
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise InputError("%s changed while it was opened (now %s): refusing to read it"
                             % (path, kind_of(now.st_mode) if not stat.S_ISREG(now.st_mode) else "another file"))
        out = standard_stream_file(1)
        if out is not None and (out.st_dev, out.st_ino) == (now.st_dev, now.st_ino):
            raise InputError("%s is standard output too (>> or 1<> it?): what is written there would go into it; "
                             "write the output elsewhere" % path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def repeated(paths):
    """The first two of paths that name one file (same device and inode: the same name twice,
    ./NAME, a hard link, a symlink), as (earlier, later), or None. Paths that cannot be looked at
    are left to the reads that name them."""
    seen = {}
    for path in paths:
        if not isinstance(path, str) or "://" in path or path == "-":
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen:
            return seen[st.st_dev, st.st_ino], path
        seen[st.st_dev, st.st_ino] = path
    return None


def identity(st):
    """What tells one version of a file from another: device, inode, size, mtime and ctime."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


# ---------------------------------------------------------------- what a file is

def recognise(path):
    """'cdxj' (a profile) or 'ukvs' (a map), from the file's first bytes; an InputError naming
    what the file is when it is neither (empty, compressed, a CDX/CDXJ index, a WARC/ARC file)."""
    with open_regular(path) as f:
        head = f.read(HEAD)
    if not head:
        raise InputError("%s is empty: not a profile or map" % path)
    packed = _compression(head)
    if packed is not None:
        inner = _inflate(head, packed)
        kind = _kind(inner) if inner else None
        if kind is not None:
            raise InputError("%s is %s-compressed: decompress it first (%s -dk %s)"
                             % (path, packed, "gzip" if packed == "gzip" else "bzip2", path))
        what = _index(inner) if inner else None
        if what is not None:
            raise InputError(_profile_it(path, "%s (%s-compressed)" % (what, packed)))
        raise InputError("%s is %s-compressed, and not a profile or map" % (path, packed))
    kind = _kind(head)
    if kind is not None:
        return kind
    if head.startswith(BOM) and _kind(head[len(BOM):]) is not None:
        raise InputError("%s starts with a UTF-8 byte order mark (an editor's?), before its first line: "
                         "remove it (tail -c +4 %s > FIXED)" % (path, path))
    what = _index(head)
    if what is not None:
        raise InputError(_profile_it(path, what))
    if is_odu(head):
        out = (path[:-len(".json")] if path.endswith(".json") else path) + ".cdxj"
        raise InputError("%s is %s, not a profile or map: convert it first: archive-profiler merge %s -o %s"
                         % (path, ODU, path, out))
    what = _json(head)
    if what is not None:
        raise InputError("%s is %s, not a profile or map: the commands read CDXJ profiles and UKVS maps "
                         "(lines of keys and counts)" % (path, what))
    first = next((x for x in head.split(b"\n") if x[:1] not in (b"!", b"@")), b"")
    raise InputError("%s is not a profile or map (its first data line: %r)" % (path, first[:60]))


#: what an archive profile of oduwsdl's archive_profiler is called (its host keys count a host with
#: its subdomains and its criteria are counted apart: not keys of this format; merge converts the
#: keys that are: profiler.files.oduprofile)
ODU = "a JSON archive profile (oduwsdl archive_profiler's), whose keys are not this format's"


def is_odu(head):
    """Whether a file's first bytes read as an archive profile of oduwsdl's archive_profiler."""
    return head.lstrip()[:1] == b"{" and b'"suburi"' in head and b'"stats"' in head


def odu_document(path):
    """Whether path is a regular file holding an archive profile of oduwsdl's archive_profiler."""
    with open_regular(path) as f:
        return is_odu(f.read(HEAD))


def _json(head):
    """What a JSON document is, when the head is one (else None): this tool's JSON-LD export,
    or other JSON."""
    if head.lstrip()[:1] not in (b"{", b"["):
        return None
    if b'"@context"' in head:
        return "a JSON-LD document (as `export` writes from a profile: give the profile itself)"
    return "a JSON document"


def _profile_it(path, what):
    out = path[:-len(".cdxj")] + ".profile.cdxj" if path.endswith(".cdxj") else path + ".cdxj"
    return ("%s is %s, not a profile or map; profile it first: archive-profiler profile %s -o %s"
            % (path, what, path, out))


def _compression(head):
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head[:3] == b"BZh" and head[4:10] == b"1AY&SY":
        return "bz2"
    return None


def _inflate(head, packed):
    """The start of a compressed file's content, as far as the head holds it (b'' if none)."""
    try:
        if packed == "gzip":
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, HEAD)
        return bz2.BZ2Decompressor().decompress(head, HEAD)
    except (OSError, ValueError, zlib.error, EOFError):
        return b""


def _kind(head):
    """'cdxj' or 'ukvs' when the head reads as a profile or map (its header lines, else its first
    data line), else None."""
    lines = head.split(b"\n")
    for line in lines:
        if line[:1] in (b"!", b"@"):
            name, _, rest = line.partition(b" ")
            if name[1:] == b"keys":
                return "cdxj"
            if name[1:] == b"fields":
                return "ukvs"
            if name[1:] == b"context" and b"ukvs" in rest:
                return "ukvs"
            if name[1:] == b"context" and b"archiveprofiles" in rest:
                return "cdxj"
            continue
        line = line.rstrip(b"\r")
        i = line.find(b" {")
        if i > 0 and b'"urim"' in line[i:]:
            return "cdxj"
        if i > 0 and any(name in line[i:] for name in _INDEX_FIELDS):
            return None             # a CDXJ index line: SURT TIMESTAMP {"url":...}
        fields = (line[:i] if i >= 0 else line).split()
        if len(fields) >= 2 and _FREQUENCY.match(fields[-1]) and fields[-1] not in (b"", b"/") \
                and not (len(fields) > 3 and i < 0):
            return "ukvs"
        return None
    return "cdxj"               # header lines only (a profile of no captures)


def _index(head):
    """'a CDX index', 'a CDXJ index', 'a WARC file', 'an ARC file' when the head is one, else None."""
    if head[:5].upper() == b"WARC/":      # in any case, as warcio reads it
        return "a WARC file"
    if head.startswith(b"filedesc:"):
        return "an ARC file"
    from profiler.formats.registry import format_of
    lines = head.split(b"\n")
    if len(head) >= HEAD and len(lines) > 1:
        lines.pop()             # cut by the head
    try:
        found = format_of([x + b"\n" for x in lines[:1000] if x.strip()])
    except (ValueError, UserError):
        return None
    return {"cdx": "a CDX index", "cdxj": "a CDXJ index", "warc": "a WARC or ARC file"}.get(found.get("format"))
