"""The optional fastwarc reader: WARC records -> the captures profiler.formats.warc gives, faster.

The fastwarc extra (``pip install '.[fastwarc]'`` in the checkout) and ``profile --warc-reader fastwarc``. fastwarc
frames the records and reads WARC headers (several times faster than warcio); the
HTTP head is parsed as warcio parses it, so captures and profile bytes are the same.
ARC files, and WARCs fastwarc cannot open, are read with warcio. Known differences on
broken files are listed in the README.
"""

import base64
import hashlib
import os
import zlib

from profiler.formats import members, warc
from profiler.formats.cdx import urlkey
from profiler.model import capture, normalise

_BUF = 1 << 16
_HTTP_SCHEMES = ("http:", "https:")
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
    """warcio's StatusAndHeadersParser (verify off) over readline(); returns (_HttpHead, bytes read)."""
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


def capture_of(record, head_length=None, detect=None, languages=True):
    """The capture of one fastwarc record (or a skip reason). Its length: the WARC header's
    head_length plus Content-Length for plain files; None for gzip files (set by the caller).
    detect, languages: as for profiler.formats.warc.capture_of."""
    rec_type = str(record.record_type)
    headers = {}
    for name, value in record.headers.items():          # case-insensitive, first one wins
        if "\n" in value:
            return "bad_record"                  # a line end without CR: warcio splits the lines
        if "\ufffd" in value:                    # not UTF-8: decoded as warcio decodes it
            return _with_raw_headers(record, head_length, detect, languages)
        headers.setdefault(name.lower(), value)
    return _capture(record, rec_type, headers, head_length, detect, languages)


def _with_raw_headers(record, head_length, detect, languages):
    headers = {}
    for name, value in record.headers.items_bytes():
        if b"\n" in value:
            return "bad_record"
        headers.setdefault(_decode(name).lower(), _decode(value))
    return _capture(record, str(record.record_type), headers, head_length, detect, languages)


def _capture(record, rec_type, headers, head_length, detect, languages):
    if rec_type in _HTTP_RECORDS and "warc-target-uri" not in headers and headers.get("content-length") != "0":
        return "bad_record"                      # warcio cannot read it: it decides what follows
    if rec_type not in warc.CAPTURE_TYPES:
        return warc.SKIPPED_TYPES.get(rec_type, "other_record")
    if headers.get("content-type") == warc.WARC_FIELDS and rec_type == "resource":
        return "warc_fields_record"
    if headers.get("content-length") is None:
        return "header_only_record"
    url = headers.get("warc-target-uri")
    if url and url.startswith("<") and url.endswith(">"):
        url = url[1:-1]
    if not url:
        return "bad_record"                      # warcio decides (it may not read such a record)
    url = url.replace(" ", "%20")
    ts = warc.warc_timestamp(headers.get("warc-date"))
    if ts is None:
        return "bad_timestamp"
    content_length = record.content_length
    if content_length is None or content_length < 0:
        return "bad_record"                      # warcio decides what such a record is
    reader = record.reader
    http, consumed = None, 0
    if rec_type != "resource" and content_length and url.startswith(_HTTP_SCHEMES):
        http, consumed = parse_http_head(lambda: reader.readline(1 << 20))
    status = normalise.UNKNOWN
    if rec_type == "revisit":
        mime = normalise.REVISIT_MIME
        if http:
            status = normalise.status(warc._text(http.get_statuscode() or "-"))
    elif rec_type == "resource":
        mime = warc._mime(headers.get("content-type"))
    elif http and headers.get(warc.ACHE_HEADER.lower()) and not http.protocol.startswith("HTTP/"):
        mime = warc._ache_mime(http)
    else:
        mime = warc._mime(http.get_header("Content-Type") if http else None)
        if http:
            status = normalise.status(warc._text(http.get_statuscode() or "-"))
    digest = headers.get("warc-payload-digest")
    sha1 = hashlib.sha1() if not digest and rec_type != "revisit" else None
    lang = normalise.UNKNOWN
    if rec_type != "revisit" and languages:
        header = http.get_header if http else warc._no_header
        lang, read = warc.payload_language(reader, mime, header, sha1.update if sha1 else None, detect)
        consumed += read
    while True:
        buf = reader.read(_BUF)
        if not buf:
            break
        consumed += len(buf)
        if sha1:
            sha1.update(buf)
    if consumed < content_length:
        return "truncated_record"
    if sha1:
        digest = base64.b32encode(sha1.digest()).decode("ascii")
    key = urlkey(None, warc._text(url))
    if key is None:
        return "bad_url"
    length = head_length + content_length if head_length is not None else None
    return capture.new(urlkey=key, timestamp=ts, mime=mime, status=status,
                       digest=normalise.digest(warc._text(digest)), length=length,
                       revisit=rec_type == "revisit", lang=lang)


#: raw bytes before a member searched for a member that fastwarc passed over
_EXTRA_WINDOW = 512
#: the fewest inflated bytes a WARC record's member holds besides its block
_LEAST_HEAD = 40


def _next_member_follows(raw, start, pos, content_length):
    """Whether the gzip member at pos (where fastwarc found the next record) starts a WARC
    record and the member of the record at start, whose block holds content_length bytes, ends
    there: no member that holds no record (empty, or only blank lines: fastwarc passes over
    them, warcio does not) lies between. The trailer's ISIZE (the inflated size mod 2^32) must
    hold the record's block, and no whole member may end at pos after a member start in the
    bytes just before it."""
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


#: results after which fastwarc and warcio may part ways: warcio reads the rest
_HAND_OVER = ("other_record", "truncated_record", "header_only_record", "bad_record")


def iter_captures(path, opener=open, detect_language=False, languages=True):
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
        yield from warc.iter_captures(path, opener, detect_language=detect_language, languages=languages)
        return
    if not _is_warc(path, opener):
        yield from warc.iter_captures(path, opener, detect_language=detect_language, languages=languages)
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
            for record in ArchiveIterator(f, parse_http=False) if size is not None else ():
                pos = record.stream_pos
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
                result = capture_of(record, head, detect, languages)
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
                                      languages=languages)


def _finish(pending, next_pos):
    result, pos = pending[:2]
    if not isinstance(result, str) and result.length is None:       # gzip: the member's length
        result = result._replace(length=next_pos - pos)
    return result
