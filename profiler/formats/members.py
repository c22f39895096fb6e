"""The gzip members of a WARC or ARC file, read around damage.

A gzip WARC/ARC is a member per record, or one gzip stream over many records. Where a member
does not inflate (a damaged byte, a failed checksum) or bytes that are no member stand where
one should start (garbage, a file appended to another), ``next_record_member`` finds the next
member that starts a record, so the records after the damage are read. ``InflatedStream``
reads a file that is one gzip stream (or whose members hold several records) as it inflates,
up to where it is damaged or ends early, and says which.
"""

import zlib

from profiler.io.readers import BOM

#: the first bytes of a gzip member (magic and the deflate method)
MEMBER_START = b"\x1f\x8b\x08"
#: raw bytes searched at a time for the next member
_SCAN = 1 << 20
#: raw bytes of a candidate member inflated to see whether it starts a record
_PEEK_RAW = 1 << 14
#: inflated bytes a candidate member must start a record within (an ARC header line is one line)
_PEEK = 1 << 13
_BLANK = b" \t\r\n"


def starts_warc_record(data):
    """Whether bytes begin a WARC record's version line: 'WARC/' in any case, as warcio reads it
    (``warc/1.0`` is a WARC/1.0 record)."""
    return data[:5].upper() == b"WARC/"


def record_start(data):
    """Bytes (a file's or a member's inflated start) past the UTF-8 byte order mark and the blank
    lines before its first record, which the readers pass over (profiler.formats.warc_records)."""
    data = data[len(BOM):] if data.startswith(BOM) else data
    stripped = data.lstrip(_BLANK)
    return data[data.rfind(b"\n", 0, len(data) - len(stripped)) + 1:]


def starts_record(data):
    """Whether bytes (a member's inflated start) begin a WARC or ARC record, as warcio reads one,
    after the byte order mark and blank lines the readers pass over (record_start)."""
    from profiler.formats.warc import looks_like_arc_record
    data = record_start(data)
    if starts_warc_record(data) or data.startswith(b"filedesc:"):
        return True
    line, newline, _ = data.partition(b"\n")
    return bool(newline) and looks_like_arc_record(line.rstrip(b"\r"))


def inflated_start(raw, most=_PEEK):
    """Up to most bytes inflated from the start of the gzip member raw begins with, as far as it
    inflates: damage further on loses nothing before it."""
    try:
        return zlib.decompressobj(31).decompress(raw, most)
    except zlib.error:
        return _salvage(zlib.decompressobj(31), raw, most)


def member_starts_record(f, pos):
    """Whether a gzip member starts at pos of the raw file f and inflates to a record's start."""
    f.seek(pos)
    raw = f.read(_PEEK_RAW)
    return raw.startswith(MEMBER_START) and starts_record(inflated_start(raw))


def next_record_member(f, start):
    """The offset of the first gzip member at or after start that starts a record, or None.
    f: the raw file, seekable; read _SCAN bytes at a time, so memory stays bounded."""
    base = start
    while True:
        f.seek(base)
        buf = f.read(_SCAN)
        if len(buf) < len(MEMBER_START):
            return None
        i = buf.find(MEMBER_START)
        while i >= 0:
            if member_starts_record(f, base + i):
                return base + i
            i = buf.find(MEMBER_START, i + 1)
        base += len(buf) - (len(MEMBER_START) - 1)


class InflatedStream:
    """The inflated bytes of the gzip members of a raw binary file from where it stands, as a
    read-only stream with tell() (the inflated offset). It ends where the members end, or where
    they are damaged; ``damage`` then says how: 'truncated' (the file ends inside a member) or
    'corrupt' (a member does not inflate or fails its checksum, or bytes that are not a member
    follow one; trailing white space is not damage). first_only: only the first member.
    ``tail``: the last bytes given out."""

    def __init__(self, raw, chunk=1 << 16, first_only=False):
        self.raw, self.chunk, self.first_only = raw, chunk, first_only
        self.inflater = None            # the member being inflated
        self.data = b""                 # raw bytes read and not inflated yet
        self.ready = b""                # inflated bytes not given out yet (those before damage)
        self.pos = 0
        self.tail = b""                 # the last bytes given out
        self.damage = None
        self.done = False

    def tell(self):
        return self.pos

    def read(self, size=-1):
        if size is None or size < 0:
            size = self.chunk
        while not self.ready and not self.done and size > 0:
            if self.inflater is None and not self._next_member():
                break
            if not self.data:
                self.data = self.raw.read(self.chunk)
                if not self.data:
                    self._stop("truncated")
                    break
            before = self.inflater.copy()
            try:
                self.ready = self.inflater.decompress(self.data, size)
            except zlib.error:
                self.ready = _salvage(before, self.data)
                self._stop("corrupt")
                break
            if self.inflater.eof:
                self.data, self.inflater = self.inflater.unused_data, None
                self.done = self.first_only
            else:
                self.data = self.inflater.unconsumed_tail
        out, self.ready = self.ready[:size], self.ready[size:]
        self.pos += len(out)
        if out:
            self.tail = (self.tail + out)[-4:]
        return out

    def _next_member(self):
        """Start the next member; False at the end of the file (or of its members)."""
        while len(self.data) < len(MEMBER_START):
            more = self.raw.read(self.chunk)
            if not more:
                break
            self.data += more
        if self.data.startswith(MEMBER_START):
            self.inflater = zlib.decompressobj(31)
            return True
        while not self.data.strip(_BLANK):       # white space to the end is no damage
            self.data = self.raw.read(self.chunk)
            if not self.data:
                self.done = True
                return False
        self._stop("corrupt")
        return False

    def _stop(self, damage):
        self.damage, self.done, self.data, self.inflater = damage, True, b"", None


def _salvage(inflater, data, most=None):
    """What inflater gives of data before the byte it fails on (at most most bytes): zlib keeps
    nothing of a call that fails, so the bytes are fed one at a time."""
    out, have = [], 0
    for i in range(len(data)):
        try:
            piece = inflater.decompress(data[i:i + 1])
        except zlib.error:
            break
        out.append(piece)
        have += len(piece)
        if inflater.eof or (most is not None and have >= most):
            break
    joined = b"".join(out)
    return joined if most is None else joined[:most]
