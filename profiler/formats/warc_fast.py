"""The optional fastwarc reader: WARC records -> the captures profiler.formats.warc gives, faster.

The fastwarc extra (``pip install '.[fastwarc]'`` in the checkout) and ``profile --warc-reader fastwarc``. fastwarc
frames the records and reads WARC headers (several times faster than warcio); the
HTTP head is parsed as warcio parses it, and each record becomes its capture through the one
profiler.formats.warc.capture_of, so captures and profile bytes are the same.
ARC files, and WARCs fastwarc cannot open, are read with warcio. Known differences on
broken files are listed in the README.
"""

import os
import zlib

from profiler.formats import hops, members, warc, warc_records
from profiler.io.readers import BOM

#: the record types whose block warcio parses as HTTP (it fails on them without a target URI)
_HTTP_RECORDS = ("response", "request", "revisit")


class _HttpHead:
    """The parts of warcio's StatusAndHeaders that profiler.formats.warc uses."""
    __slots__ = ("protocol", "statusline", "headers")

    def __init__(self, protocol, statusline, headers):
        self.protocol, self.statusline, self.headers = protocol, statusline, headers

    def get_header(self, name):
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None

    def get_statuscode(self):
        return self.statusline.split(" ", 1)[0]


def _decode(line):
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("iso-8859-1")


def parse_http_head(readline):
    """warcio's StatusAndHeadersParser (verify off) over readline(); returns (_HttpHead, bytes read).
    ValueError when its lines pass warc_records.MAX_HEAD (warcio reads the record: 'bad_record')."""
    read_line = readline
    read = [0]

    def readline():
        line = read_line()
        read[0] += len(line)
        if read[0] > warc_records.MAX_HEAD:
            raise ValueError("HTTP head past %d bytes" % warc_records.MAX_HEAD)
        return line
    raw = readline()
    total = len(raw)
    if not raw:
        return None, 0
    status = _decode(raw).rstrip()
    if not status:
        return _HttpHead("", "", []), total
    protocol_status = status.split(" ", 1)
    headers = []
    raw = readline()
    total += len(raw)
    line = _decode(raw).rstrip()
    while line:
        name, sep, value = line.partition(":")
        name, value = (name.rstrip(" \t"), value.lstrip()) if sep else (name, None)
        raw = readline()
        total += len(raw)
        next_line = _decode(raw).rstrip()
        while next_line and next_line.startswith((" ", "\t")):
            if value is not None:
                value += next_line
            raw = readline()
            total += len(raw)
            next_line = _decode(raw).rstrip()
        if value is not None:
            headers.append((name, value))
        line = next_line
    statusline = protocol_status[1].strip() if len(protocol_status) > 1 else ""
    return _HttpHead(protocol_status[0], statusline, headers), total


def _header_length(raw, pos):
    """Bytes of the WARC header of the record at pos of a plain file (up to its blank line)."""
    raw.seek(pos)
    data = raw.read(1 << 16)
    ends = [i + n for i, n in ((data.find(b"\n\r\n"), 3), (data.find(b"\n\n"), 2)) if i >= 0]
    return min(ends) if ends else None


def capture_of(record, head_length=None, detect=None, languages=True, depths=False):
    """The capture of one fastwarc record (or a skip reason), as profiler.formats.warc.capture_of
    gives it; 'bad_record' where warcio decides what the record is (warcio reads the file from it
    on). Its length: the WARC header's head_length plus Content-Length for plain files; None for
    gzip files (set by the caller). detect, languages, depths: as for warc.capture_of."""
    headers = {}
    for name, value in record.headers.items():          # case-insensitive, first one wins
        if "\n" in value:
            return "bad_record"                  # a line end without CR: warcio splits the lines
        if "\ufffd" in value:                    # not UTF-8: decoded as warcio decodes it
            return _with_raw_headers(record, head_length, detect, languages, depths)
        headers.setdefault(name.lower(), value)
    return _capture(_FastRecord(record, headers, head_length), detect, languages, depths)


def _with_raw_headers(record, head_length, detect, languages, depths=False):
    headers = {}
    for name, value in record.headers.items_bytes():
        if b"\n" in value:
            return "bad_record"
        headers.setdefault(_decode(name).lower(), _decode(value))
    return _capture(_FastRecord(record, headers, head_length), detect, languages, depths)


def _capture(view, detect, languages, depths=False):
    """'bad_record' for a record warcio must read (it decides what it is and what follows it),
    else warc.capture_of over the record."""
    headers, rec_type = view.headers, view.rec_type
    if rec_type in _HTTP_RECORDS and "warc-target-uri" not in headers and headers.get("content-length") != "0":
        return "bad_record"                      # warcio cannot read it: it decides what follows
    if rec_type in warc.CAPTURE_TYPES and "content-length" in headers:
        if not view.url:
            return "bad_record"                  # warcio decides (it may not read such a record)
        if view.content_length is None or view.content_length < 0:
            return "bad_record"                  # warcio decides what such a record is
    return warc.capture_of(view, detect, languages, depths)


class _FastRecord:
    """A fastwarc record as profiler.formats.warc.capture_of views it: its WARC headers (lower-case
    names), its target URI as warcio reads it (without <>, spaces percent-encoded), its HTTP head
    parsed as warcio parses it, on first use."""
    __slots__ = ("record", "headers", "head_length", "url", "_http", "_head_read")

    def __init__(self, record, headers, head_length):
        self.record, self.headers, self.head_length = record, headers, head_length
        url = headers.get("warc-target-uri")
        url = url.strip(" \t") if url else url        # a folded header's blanks
        if url and url.startswith("<") and url.endswith(">"):
            url = url[1:-1]
        self.url = url.replace(" ", "%20") if url else url
        self._http, self._head_read = False, 0

    @property
    def rec_type(self):
        known = str(self.record.record_type)
        return known if known != "unknown" else warc.record_type(self.headers.get("warc-type")) or known

    def header(self, name):
        name = name.lower()
        if name == "warc-target-uri":
            return self.url
        value = self.headers.get(name)
        return value.strip(" \t") if value else value     # a folded header's blanks

    @property
    def content_length(self):
        return self.record.content_length if "content-length" in self.headers else None

    @property
    def http(self):
        if self._http is False:
            self._http = None
            if self.record.content_length and warc_records.holds_http(self.rec_type, self.url,
                                                                      self.headers.get("content-type")):
                reader = self.record.reader
                self._http, self._head_read = parse_http_head(lambda: reader.readline(1 << 20))
        return self._http

    @property
    def stream(self):
        return self.record.reader

    def length(self, read):
        content_length = self.record.content_length
        if self._head_read + read < content_length:
            return warc.TRUNCATED
        return self.head_length + content_length if self.head_length is not None else None


#: raw bytes before a member searched for a member that fastwarc passed over
_EXTRA_WINDOW = 512
#: the fewest inflated bytes a WARC record's member holds besides its block
_LEAST_HEAD = 40


def _next_member_follows(raw, start, pos, content_length):
    """Whether the gzip member at pos (where fastwarc found the next record) starts a WARC
    record and the member of the record at start, whose block holds content_length bytes, ends
    there: no member that holds no record (empty, or only blank lines: fastwarc passes over
    them; warcio's reader gives the next record's offset after them) lies between. The
    trailer's ISIZE (the inflated size mod 2^32) must hold the record's block, and no whole
    member may end at pos after a member start in the bytes just before it."""
    first = max(start + 1, pos - _EXTRA_WINDOW)
    raw.seek(first)
    data = raw.read(pos - first + 512)
    window, head = data[:pos - first], data[pos - first:]
    try:
        if not zlib.decompressobj(31).decompress(head, 8).startswith(b"WARC/"):
            return False
    except zlib.error:
        return False
    if content_length + _LEAST_HEAD < 1 << 32 and int.from_bytes(window[-4:], "little") < content_length + _LEAST_HEAD:
        return False
    i = window.find(members.MEMBER_START)
    while i >= 0:
        inflater = zlib.decompressobj(31)
        try:
            inflater.decompress(window[i:])
            if inflater.eof and not inflater.unused_data:
                return False
        except zlib.error:
            pass
        i = window.find(members.MEMBER_START, i + 1)
    return True


def _is_warc(path, opener):
    """True for a WARC (plain or gzip) that fastwarc can frame: first record starts with 'WARC/'."""
    with opener(path, "rb") as f:
        head = f.read(1 << 16)
    if head.startswith(b"\x1f\x8b"):
        try:
            head = zlib.decompressobj(31).decompress(head, 64)
        except zlib.error:
            return False
    return head.lstrip().startswith(b"WARC/")


def _first_record_at(raw):
    """The offset where warcio reads a plain WARC's first record: past a UTF-8 byte order mark
    and the blank lines at its start (profiler.formats.warc_records)."""
    raw.seek(0)
    data = raw.read(1 << 16)
    pos = len(BOM) if data.startswith(BOM) else 0
    while True:
        end = data.find(b"\n", pos)
        if end < 0 or data[pos:end].strip():
            return pos
        pos = end + 1


#: results after which fastwarc and warcio may part ways: warcio reads the rest
_HAND_OVER = ("other_record", "truncated_record", "header_only_record", "bad_record")


def iter_captures(path, opener=open, detect_language=False, languages=True, depths=False):
    """What profiler.formats.warc.iter_captures yields for the same file, read with fastwarc
    (_iter_captures); depths: as there (profiler.formats.hops)."""
    found = _iter_captures(path, opener, detect_language, languages, depths)
    yield from hops.with_depths(found) if depths else found


def _iter_captures(path, opener, detect_language, languages, depths):
    """Yield what profiler.formats.warc.iter_captures yields for the same file, read with fastwarc.

    A record is given out only once the next one starts where warcio would look for it
    (plain files: right after the record and its two CRLFs). At the first record that is
    not so, or that is odd (unknown type, truncated, no Content-Length), or when fastwarc
    fails, warcio reads the file from that record on; it also reads a gzip file's last
    record (its member length and what follows it). So fastwarc only ever reads the
    well-formed part of a file.
    """
    try:
        from fastwarc.warc import ArchiveIterator
    except ImportError:                  # not installed: the same captures, read with warcio
        yield from warc.iter_captures(path, opener, detect_language=detect_language, languages=languages,
                                      depths=depths, wrapped=True)
        return
    if not _is_warc(path, opener):
        yield from warc.iter_captures(path, opener, detect_language=detect_language, languages=languages,
                                      depths=depths, wrapped=True)
        return
    detect = warc.language_detector(detect_language)
    hand_over = 0
    pending = None                       # (capture or reason, position, expected next position, Content-Length)
    with opener(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
        f.seek(0)
        try:
            size = os.fstat(f.fileno()).st_size
        except (AttributeError, OSError, ValueError):       # not a local file: warcio reads it
            size = None
        raw = opener(path, "rb")
        try:
            first = 0 if gz else _first_record_at(raw)
            for record in ArchiveIterator(f, parse_http=False) if size is not None else ():
                pos = record.stream_pos
                if first is not None:
                    if pos != first:
                        break             # fastwarc passed over what warcio reads (a member of blank lines...)
                    first = None
                if pending is not None:
                    if pending[2] != pos if not gz else (pos <= pending[1] or
                                                         not _next_member_follows(raw, pending[1], pos, pending[3])):
                        break
                    yield _finish(pending, pos)
                    pending = None
                hand_over = pos
                head = expected = None
                if not gz:
                    head = _header_length(raw, pos)
                    if head is None:
                        break
                    expected = pos + head + record.content_length + 4
                result = capture_of(record, head, detect, languages, depths)
                if isinstance(result, str) and result in _HAND_OVER:
                    break
                pending = (result, pos, expected, record.content_length)
            else:
                if pending is not None and not gz and pending[2] == size:
                    yield _finish(pending, size)
                    hand_over = None
        except Exception:
            pass                          # warcio reads from the unconfirmed record on
        finally:
            raw.close()
    if hand_over is not None:
        yield from warc.iter_captures(path, opener, start=hand_over, detect_language=detect_language,
                                      languages=languages, depths=depths, wrapped=True)


def _finish(pending, next_pos):
    result, pos = pending[:2]
    if not isinstance(result, str) and result.length is None:       # gzip: the member's length
        result = result._replace(length=next_pos - pos)
    return result
