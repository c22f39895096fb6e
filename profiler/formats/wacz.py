"""WACZ packages (Webrecorder's Web Archive Collection Zipped) -> the captures of their WARC files.

A WACZ is a ZIP file whose ``archive/`` folder holds WARC (or ARC) files, beside indexes, pages
and ``datapackage.json``. Its captures are those of its WARC and ARC members, each read as a
stream from the package by the WARC reader (profiler.formats.warc), so a package profiles as its
WARC files given directly do. Nothing is extracted or written. The package's indexes, pages and
``datapackage.json`` are not read (its hashes are not verified).

Damage is counted, as in a WARC file: a package without a readable central directory is read
by its local headers; a member that is encrypted, overlaps another, lies outside ``archive/``,
is no WARC or ARC, fails its CRC, does not inflate or ends early is one skip reason (the
constants below), and the records read before its damage count.
"""

import contextlib
import io
import struct
import zipfile
import zlib

from profiler.formats import members

#: the first bytes of a ZIP file (a local file header)
LOCAL_HEADER = b"PK\x03\x04"
#: the reason a ZIP file that holds no WARC files is refused
NOT_WACZ = "a ZIP file without archive/ WARC files: not a WACZ"
#: names of the members read: WARC and ARC files, plain or gzip
ARCHIVE_FOLDER = "archive/"
ARCHIVE_ENDINGS = (".warc", ".warc.gz", ".arc", ".arc.gz")
DATAPACKAGE = "datapackage.json"

#: skip reasons, by what happened to a member or the package
NO_DIRECTORY = "zip_no_directory"
CORRUPT_MEMBER = "zip_corrupt_member"
ENCRYPTED_MEMBER = "zip_encrypted_member"
UNSUPPORTED_MEMBER = "zip_unsupported_member"
OVERLAPPING_MEMBER = "zip_overlapping_member"
OUTSIDE_MEMBER = "warc_member_outside_archive"
NOT_WARC_MEMBER = "not_warc_member"
NO_ARCHIVE_MEMBER = "wacz_without_warc_files"

#: a local file header: signature, version, flags, method, time, date, CRC, sizes, name and extra lengths
_HEADER = struct.Struct("<4sHHHHHLLLHH")
_ENCRYPTED, _DATA_DESCRIPTOR, _UTF8 = 0x1, 0x8, 0x800
_ZIP64_EXTRA = 0x0001
#: local headers read at most when recognising a package without a central directory
_MOST_NAMES = 10000
#: bytes of a member's start read to tell a WARC or ARC from anything else
_PEEK = 1 << 14
#: bytes of a member read or inflated at a time where nobody asked for them (seeking, verifying)
_STEP = 1 << 16


def is_warc_name(name):
    """Whether a member's name is that of a WARC or ARC file (plain or gzip)."""
    return name.lower().endswith(ARCHIVE_ENDINGS)


def is_archive_member(name):
    """Whether a member is one of the package's WARC or ARC files: under ``archive/``."""
    return name.startswith(ARCHIVE_FOLDER) and is_warc_name(name)


def sniff(path):
    """{} for a WACZ (a ZIP whose directory, or its local headers when it has none, names
    ``datapackage.json`` or a WARC/ARC under ``archive/``), else {'format': None, 'reason': NOT_WACZ}."""
    try:
        with open(path, "rb") as f:
            names = _directory_names(f)
            if names is None:
                names = [m.filename for m, _ in _walked(f, _MOST_NAMES)]
    except OSError:
        names = []
    if any(n == DATAPACKAGE or is_archive_member(n) for n in names):
        return {}
    return {"format": None, "reason": NOT_WACZ}


def _directory_names(f):
    """The names in the package's central directory, or None when it has none it can read."""
    try:
        with zipfile.ZipFile(f) as package:
            return package.namelist()
    except Exception:           # zipfile raises BadZipFile, ValueError, struct.error... on damage
        return None


def iter_captures(path, opener=open, **options):
    """Yield Captures or skip-reason strs for every record of the WARC and ARC members of one
    WACZ; options: the WARC reader's (profiler.formats.warc.iter_captures)."""
    try:
        with opener(path, "rb") as f:
            yield from _package_captures(f, options)
    except OSError:
        yield "unreadable_file"


def _package_captures(f, options):
    from profiler.formats import warc
    if not _seekable(f):
        yield "unreadable_file"          # a ZIP is read from its end (its directory)
        return
    try:
        package = zipfile.ZipFile(f)
    except Exception:                   # zipfile raises BadZipFile, ValueError, struct.error... on damage
        package = None
    if package is None:
        yield NO_DIRECTORY
        found = _walked(f)
    else:
        found = _listed(package, f)
    archives = 0
    for info, member in found:
        archives += is_archive_member(info.filename)
        if member is None or isinstance(member, str):
            if member:
                yield member
            continue
        reason = _not_readable(member)
        if reason is None:
            yield from warc.iter_captures(info.filename, lambda _path, _mode: contextlib.nullcontext(member),
                                          **options)
            reason = member.verify()
        if reason:
            yield reason
    if not archives:
        yield NO_ARCHIVE_MEMBER         # its captures are in WARC files it does not hold


def _seekable(f):
    try:
        return f.seekable()
    except (AttributeError, OSError, ValueError):
        return False


def _file_size(f):
    """The bytes of the package (f left where it was)."""
    where = f.tell()
    try:
        return f.seek(0, io.SEEK_END)
    finally:
        f.seek(where)


def _listed(package, f):
    """(ZipInfo, _Member or skip reason) of the WARC/ARC members of a package's directory, in its
    order. A member's bytes end where the next member's header or the directory starts."""
    infos = package.infolist()
    starts = sorted({i.header_offset for i in infos} | {package.start_dir})
    seen = set()
    for info in infos:
        if not is_warc_name(info.filename) or info.is_dir():
            continue
        if not is_archive_member(info.filename):
            yield info, OUTSIDE_MEMBER
            continue
        if info.header_offset in seen:
            yield info, OVERLAPPING_MEMBER
            continue
        seen.add(info.header_offset)
        end = next((s for s in starts if s > info.header_offset), package.start_dir)
        try:
            data_start = _data_start(f, info.header_offset)
        except (ValueError, struct.error):
            yield info, CORRUPT_MEMBER
            continue
        yield info, _member(f, info, data_start, end)


def _member(f, info, data_start, end):
    """The _Member of a member whose data starts at data_start and ends by end, or a skip reason."""
    if info.flag_bits & _ENCRYPTED:
        return ENCRYPTED_MEMBER
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return UNSUPPORTED_MEMBER
    return _Member(f, info, data_start, min(info.compress_size, max(0, end - data_start)))


def _data_start(f, offset):
    """Where the data of the member whose local header is at offset starts."""
    f.seek(offset)
    fields = _HEADER.unpack(f.read(_HEADER.size))
    if fields[0] != LOCAL_HEADER:
        raise ValueError("no local header at %d" % offset)
    return offset + _HEADER.size + fields[9] + fields[10]


def _walked(f, most=None):
    """(ZipInfo, _Member or skip reason or None) of the members of a package without a central
    directory, by their local headers from its start, up to one whose size its header does not
    give (its data descriptor follows its data) or the end. Every member is given, for its name;
    those that are no WARC/ARC file with None."""
    offset, n, size = 0, 0, _file_size(f)
    while most is None or n < most:
        f.seek(offset)
        raw = f.read(_HEADER.size)
        if len(raw) < _HEADER.size or not raw.startswith(LOCAL_HEADER):
            return
        _, _, flags, method, _, _, crc, csize, usize, nlen, xlen = _HEADER.unpack(raw)
        name = f.read(nlen)
        extra = f.read(xlen)
        info = zipfile.ZipInfo(name.decode("utf-8" if flags & _UTF8 else "cp437", "replace"))
        info.flag_bits, info.compress_type, info.CRC = flags, method, crc
        info.compress_size, info.file_size = _zip64_sizes(extra, csize, usize)
        data_start = offset + _HEADER.size + nlen + xlen
        n += 1
        if flags & _DATA_DESCRIPTOR:
            yield info, (UNSUPPORTED_MEMBER if is_archive_member(info.filename) else None)
            return
        if not is_warc_name(info.filename):
            yield info, None
        elif not is_archive_member(info.filename):
            yield info, OUTSIDE_MEMBER
        else:
            yield info, _member(f, info, data_start, size)
        offset = data_start + info.compress_size


def _zip64_sizes(extra, csize, usize):
    """(compressed size, size) of a local header, from its zip64 extra field when it has one."""
    if csize != 0xFFFFFFFF and usize != 0xFFFFFFFF:
        return csize, usize
    at = 0
    while at + 4 <= len(extra):
        kind, size = struct.unpack_from("<HH", extra, at)
        if kind == _ZIP64_EXTRA and size >= 16:
            usize, csize = struct.unpack_from("<QQ", extra, at + 4)
            break
        at += 4 + size
    return csize, usize


def _not_readable(member):
    """The reason a member is not read (its start is no WARC or ARC record), or None; the member
    is left at its start. A member damaged at its start is read: the WARC reader counts it."""
    start = member.read(_PEEK)
    damaged, member.damage = member.damage, None        # found again by the WARC reader, after the records before it
    member.seek(0)
    if start.startswith(members.MEMBER_START):
        start = members.inflated_start(start)
        if not start:
            return None                  # a damaged first gzip member: the WARC reader counts it
    elif not start and damaged:
        return None
    return None if members.starts_record(start.lstrip(b" \t\r\n")) else NOT_WARC_MEMBER


class _Member(io.RawIOBase):
    """A member of the package as the WARC reader reads a file: its bytes (inflated when it is
    DEFLATED), read from the package as they are asked for, never held whole, and seekable (a
    DEFLATED member inflates again from its start to go back). Its stored bytes are its own only:
    they end where the next member or the directory starts. Damage (bytes that do not inflate,
    stored bytes that end before the member does) ends its bytes there; its CRC and size are
    checked as its bytes go by, and the rest of it read by ``verify``."""

    def __init__(self, f, info, start, stored):
        super().__init__()
        self.f, self.start, self.stored = f, start, stored
        self.deflated = info.compress_type == zipfile.ZIP_DEFLATED
        self.expected = (info.CRC, info.file_size)
        self.cut = stored < info.compress_size      # its stored bytes end before its header says
        self.damage = None
        self.pos = 0                     # bytes of the member given
        self.checked, self.crc = 0, 0    # the CRC of its first checked bytes
        self.end = None                  # its size, once read to its end
        self._rewind()

    def _rewind(self):
        self.pos = self.raw = 0          # raw: stored bytes consumed
        self.inflater = zlib.decompressobj(-zlib.MAX_WBITS) if self.deflated else None
        self.pending = b""

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, offset, whence=io.SEEK_SET):
        target = offset if whence == io.SEEK_SET else self.pos + offset if whence == io.SEEK_CUR \
            else (self.end if self.end is not None else self._size()) + offset
        target = max(0, target)
        if not self.deflated:
            self.pos = self.raw = min(target, self.stored)
            return self.pos
        if target < self.pos:
            self._rewind()
        while self.pos < target and self._next(min(_STEP, target - self.pos)):
            pass
        return self.pos

    def _size(self):
        """The member's size: for a DEFLATED one, read to its end (a seek from its end: rare)."""
        if not self.deflated:
            return self.stored
        where = self.pos
        while self._next(_STEP):
            pass
        size = self.pos
        self.seek(where)
        return size

    def readinto(self, buf):
        data = self._next(len(buf))
        buf[:len(data)] = data
        return len(data)

    def _next(self, n):
        """Up to n more bytes of the member, b"" at its end or its damage."""
        if self.damage or n <= 0:
            return b""
        at = self.pos
        data = self._inflated(n) if self.deflated else self._stored(n)
        self.pos += len(data)
        if self.checked >= at and self.checked < self.pos:
            self.crc = zlib.crc32(data[self.checked - at:], self.crc)
            self.checked = self.pos
        if not data and not self.damage:
            self.end = self.pos
        return data

    def _stored(self, n):
        want = min(n, self.stored - self.raw)
        if want <= 0:
            if self.cut:
                self.damage = CORRUPT_MEMBER
            return b""
        self.f.seek(self.start + self.raw)
        data = self.f.read(want)
        self.raw += len(data)
        if not data:
            self.damage = CORRUPT_MEMBER     # the package is shorter than it was
        return data

    def _inflated(self, n):
        inflater = self.inflater
        while not inflater.eof:
            if not self.pending:
                want = min(_STEP, self.stored - self.raw)
                self.f.seek(self.start + self.raw)
                self.pending = self.f.read(want) if want > 0 else b""
                self.raw += len(self.pending)
                if not self.pending:     # its stored bytes end before its deflate stream does
                    self.damage = CORRUPT_MEMBER
                    return b""
            try:
                data = inflater.decompress(self.pending, n)
            except zlib.error:
                self.damage = CORRUPT_MEMBER
                return b""
            self.pending = inflater.unconsumed_tail
            if data:
                return data
        return b""

    def verify(self):
        """The member's damage, or None: what ended its bytes, or, once read to its end, a CRC or
        size that is not its header's (bytes the WARC reader seeked past are read for the CRC; a
        member it left before its end is not read on)."""
        if self.damage is None and self.end is not None and self.checked < self.end:
            self.seek(self.checked)
            while self._next(_STEP):
                pass
        if self.damage is None and self.end is not None and (self.crc, self.end) != self.expected:
            self.damage = CORRUPT_MEMBER
        return self.damage
