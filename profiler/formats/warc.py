"""WARC and ARC files -> captures, for crawls that have no index yet (warcio).

A record becomes the capture its CDXJ line (as written by cdxj-indexer) would give:
urlkey from surt, timestamp from WARC-Date (the ARC date for ARC), mime and status from
the HTTP headers, digest from WARC-Payload-Digest or computed, length = the record's
stored length (its gzip member for .gz). Other records and broken ones become skip
reasons. ACHE's WARCs (response blocks without an HTTP status line) are read here too.
"""

import base64
import hashlib
import io
import logging
import re
import zlib

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.exceptions import ArchiveLoadFailed
from warcio.recordloader import ArcWarcRecordLoader
from warcio.timeutils import iso_date_to_timestamp
from warcio.utils import BUFF_SIZE

from profiler.formats import members, payload
from profiler.formats.cdx import urlkey
from profiler.model import normalise
from profiler.model.language import html_language

CAPTURE_TYPES = ("response", "revisit", "resource")
#: skip reason of the records that are not captures, by WARC-Type
SKIPPED_TYPES = {"request": "request_record", "metadata": "metadata_record",
                 "warcinfo": "warcinfo_record"}
WARC_FIELDS = "application/warc-fields"
ACHE_HEADER = "ACHE-Requested-URL"
_BUF = 1 << 16
_MIME_END = re.compile(r"[;\s]")
_ARC_DATE = re.compile(rb"^\d{12,14}$")
# warcio logs every WARC-Target-URI with a space it percent-encodes: one line per record of
# old crawls, in every map task's stderr. The URI is still used (as cdxj-indexer does).
logging.getLogger("warcio.recordloader").setLevel(logging.ERROR)


def looks_like_arc_record(line):
    """An ARC v1 record header without filedesc: 'URL IP DATE MIME LENGTH'."""
    f = line.split(b" ")
    return len(f) >= 5 and f[-1].isdigit() and b":" in f[0] and any(_ARC_DATE.match(x) for x in f[1:-1])


def gzip_problem(path, opener=open):
    """A one-line note when a gzip WARC/ARC is one gzip stream (its first member holds more
    than one record: it is then read as it inflates, iter_captures(inflate=True)), else None."""
    try:
        with opener(path, "rb") as f:
            if _one_stream(f, 0):
                return ("whole-file gzip WARC/ARC (one gzip stream, not one member per record): "
                        "recompress it per record first (warcio recompress IN OUT)")
    except Exception:
        pass            # other damage is counted per record by the mapper
    return None


def _one_stream(f, start):
    """Whether the gzip member at offset start of f (its first) is one gzip stream over several
    records: it holds more than one record, as far as it inflates, and when it is damaged no
    later member starts a record (a file of a member per record has them; the bytes a damaged
    member inflates to past its damage may repeat its own, "WARC/" included)."""
    f.seek(start)
    stream = members.InflatedStream(f, first_only=True)
    it = _QuietIterator(stream, no_record_parse=True, arc2warc=True)
    several = False
    try:
        for _ in it:
            it.read_to_end()
            several = it.member_state() == "more"
            break
    except Exception:
        pass
    if several and stream.damage:
        return members.next_record_member(f, start + 1) is None
    return several


_DAYS = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def warc_timestamp(date):
    """14-digit timestamp of a WARC-Date, as warcio's iso_date_to_timestamp gives it; None when invalid.

    >>> warc_timestamp("2013-12-26T10:11:12Z"), warc_timestamp("2013-12-26T10:11:12.5Z")
    ('20131226101112', '20131226101112')
    """
    if date and len(date) == 20 and date[19] == "Z" and date[4] == date[7] == "-" and date[10] == "T":
        ts = date[:4] + date[5:7] + date[8:10] + date[11:13] + date[14:16] + date[17:19]
        if ts.isascii() and ts.isdigit() and date[13] == date[16] == ":":
            ts = normalise.timestamp(ts.encode("ascii"))
            if ts is not None:
                month, day = int(ts[4:6]), int(ts[6:8])
                if day <= _DAYS[month] and (month, day) != (2, 29) and ts[12:] < "60":
                    return ts
    try:                                  # other forms (fractions, no Z, Feb 29): warcio decides
        return normalise.timestamp(iso_date_to_timestamp(date).encode("ascii"))
    except Exception:
        return None


def _text(value):
    return value.encode("utf-8", "surrogateescape") if value is not None else None


def _mime(value):
    if not value:
        return normalise.UNKNOWN
    return normalise.mime(_text(_MIME_END.split(value.strip(), 1)[0]))


def _no_header(name):
    return None


def capture_of(record, it, detect=None, languages=True):
    """The capture tuple of one warcio record, or a skip-reason str. Consumes the record.
    detect: the language detector for HTML that declares none (language_detector);
    languages=False: no language is read (lang 'unk'; a policy without lang levels)."""
    rec_type = record.rec_type
    if rec_type not in CAPTURE_TYPES:
        return SKIPPED_TYPES.get(rec_type, "other_record")
    headers = record.rec_headers
    if rec_type == "resource" and headers.get_header("Content-Type") == WARC_FIELDS:
        return "warc_fields_record"
    if record.length is None:
        return "header_only_record"              # no Content-Length: no block to count
    url = headers.get_header("WARC-Target-URI")
    if not url:
        return "bad_url"
    ts = warc_timestamp(headers.get_header("WARC-Date"))
    if ts is None:
        return "bad_timestamp"
    status = normalise.UNKNOWN
    http = record.http_headers
    if rec_type == "revisit":
        mime = normalise.REVISIT_MIME
        if http:
            status = normalise.status(_text(http.get_statuscode() or "-"))
    elif rec_type == "resource":
        mime = _mime(headers.get_header("Content-Type"))
    elif http and headers.get_header(ACHE_HEADER) and not http.protocol.startswith("HTTP/"):
        mime = _ache_mime(http)          # ACHE writes the response headers without a status line
    else:
        mime = _mime(http.get_header("Content-Type") if http else None)
        if http:
            status = normalise.status(_text(http.get_statuscode() or "-"))
    digest = headers.get_header("WARC-Payload-Digest")
    sha1 = hashlib.sha1() if not digest and rec_type != "revisit" else None
    lang = normalise.UNKNOWN
    if rec_type != "revisit" and languages:
        header = http.get_header if http else _no_header
        lang, _ = payload_language(record.raw_stream, mime, header, sha1.update if sha1 else None, detect)
    if sha1:
        stream = record.raw_stream
        while True:
            buf = stream.read(_BUF)
            if not buf:
                break
            sha1.update(buf)
        digest = base64.b32encode(sha1.digest()).decode("ascii")
    length = it.get_record_length()           # reads the record to its end
    if _cut(record):
        return "truncated_record"                # the file ended before Content-Length bytes
    key = urlkey(None, _text(url))
    if key is None:
        return "bad_url"
    return (key, ts, mime, status, normalise.digest(_text(digest)), length, rec_type == "revisit", lang)


#: media types whose payload may declare its language in HTML
HTML_MIMES = ("text/html", "application/xhtml+xml")


def payload_language(stream, mime, header, on_raw=None, detect=None):
    """A response's primary language (ISO 639-3, or 'unk') and the raw payload bytes read for it.

    An HTML media type: declared in the payload's decoded start (profiler.formats.payload),
    else by the Content-Language header, else, with detect(start, content_type) (the
    --detect-language detector, profiler.model.detect.content_language), detected from its
    text. Other media types: the Content-Language header, and nothing is read. stream: the raw
    payload; header(name): an HTTP header's value or None; on_raw sees every raw byte read.
    """
    declared = header("Content-Language")
    if mime not in HTML_MIMES:
        code = html_language(b"", declared) if declared else None
        return code or normalise.UNKNOWN, 0
    start = payload.read_start(stream, header, on_raw)
    code = html_language(start.data, declared, cut=start.cut)
    if code is None and detect is not None:
        code = detect(start.data, header("Content-Type"))
    return code or normalise.UNKNOWN, start.raw


def language_detector(detect_language):
    """The detector payload_language takes (None unless detect_language): needs the detect extra."""
    if not detect_language:
        return None
    from profiler.model.detect import content_language
    return content_language


def _ache_mime(http):
    """Content-Type of an ACHE response block, whose first header line warcio took for a status line."""
    first = "%s %s" % (http.protocol, http.statusline)
    name, _, value = first.partition(":")
    if name.strip().lower() == "content-type":
        return _mime(value)
    return _mime(http.get_header("Content-Type"))


class _StrictReader(DecompressingBufferedReader):
    """warcio's reader, raising on a damaged gzip member instead of writing to stderr or
    reading it as plain bytes (warcio does that when a member's first block does not inflate)."""

    _head = b""                 # the first bytes fed to the member's inflater

    def _init_decomp(self, decomp_type):
        self._head = b""
        super()._init_decomp(decomp_type)

    def _decompress(self, data):
        if self.decompressor and data:
            if len(self._head) < len(members.MEMBER_START):
                self._head += data[:len(members.MEMBER_START)]
            if self.num_block_read or self._head.startswith(members.MEMBER_START):
                return self.decompressor.decompress(data)       # zlib.error: counted by the caller
        return super()._decompress(data)


class _Loader(ArcWarcRecordLoader):
    """warcio's record loader that says which format it read a record header as."""

    last_format = None

    def _detect_type_load_headers(self, stream, statusline=None, known_format=None):
        found = super()._detect_type_load_headers(stream, statusline, known_format)
        self.last_format = found[0]
        return found


class _QuietIterator(ArchiveIterator):
    """warcio's iterator that never writes to stderr (mrjob's inline runner gives tasks a
    binary stderr, so warcio's warnings would fail there and pass elsewhere), and that reads
    the records after a file's first one in its format (kind, 'warc' or 'arc', once known):
    warcio would take any line of five words in a damaged WARC for an ARC record. An ARC
    record header must end with a length (a number)."""

    def __init__(self, fileobj, kind=None, **kwargs):
        super().__init__(fileobj, **kwargs)
        self.reader = _StrictReader(self.fh, block_size=BUFF_SIZE)
        self.loader = _Loader(verify_http=False, arc2warc=kwargs.get("arc2warc", False))
        self.known_format = kind

    def _next_record(self, next_line):
        record = super()._next_record(next_line)
        if self.known_format is None or self.known_format == "arc":
            if self.loader.last_format != "warc" and _not_arc(record):
                raise ArchiveLoadFailed("not an ARC record header")
            self.known_format = "warc" if self.loader.last_format == "warc" else "arc"
        return record

    def _consume_blanklines(self):
        """warcio's, without the 'Record not followed by newline' warning (err_count still counts)."""
        empty_size, first_line = 0, True
        while True:
            line = self.reader.readline()
            if not line:
                return None, empty_size
            stripped = line.rstrip()
            if not stripped or first_line:
                empty_size += len(line)
                if stripped:
                    self.err_count += 1
                first_line = False
                continue
            return line, empty_size

    def member_state(self):
        """After a record is read to its end: 'ok' (its gzip member ended with it: its length
        is the member's), 'more' (the member goes on with another record: one gzip stream over
        several records), 'junk' (the member goes on with bytes that start no record), 'open'
        (the data ends inside the member); 'plain' when the record is not in a gzip member
        (its length is its bytes) or is read from inflated bytes."""
        inflater = self.reader.decompressor
        if self.next_line:
            inflated = isinstance(self.fh, members.InflatedStream)
            if inflater is None and not inflated:
                return "plain"
            if members.starts_record(self.next_line):
                return "more"
            ended = self.fh.done if inflated else not inflater.eof
            return "more" if ended and not self.next_line.endswith(b"\n") else "junk"     # a line cut short
        if inflater is None:
            return "plain"
        return "ok" if inflater.eof else "open"


def _unread_tail(f, offset):
    """True when the bytes after the last record hold more than blank lines and empty gzip
    members: warcio ends quietly when the last record is cut inside its header."""
    try:
        f.seek(offset)
        data = f.read(1 << 16)
    except (OSError, ValueError, AttributeError):
        return False
    while data.startswith(b"\x1f\x8b"):
        d = zlib.decompressobj(31)
        try:
            if d.decompress(data).strip() or not d.eof:
                return True
        except zlib.error:
            return True
        data = d.unused_data
    return bool(data.strip())


def _seekable(f):
    try:
        return f.seekable()
    except (AttributeError, OSError, ValueError):
        return False


def iter_captures(path, opener=open, start=0, detect_language=False, languages=True, inflate=False):
    """Yield capture tuples or skip-reason strs for every record of one WARC/ARC file
    (from byte offset start, where a record or gzip member begins). detect_language: HTML
    that declares no language gets the detected one (--detect-language; the detect extra);
    languages=False: no language is read, every lang is 'unk' (a policy without lang levels);
    inflate: the file is one gzip stream over its records (profiler.formats.inputs.sniff):
    it is read as it inflates, and its lengths are the uncompressed records'.

    Damage is one counted reason, and the records before it count. In a file of gzip members
    a member that does not inflate ('corrupt_gzip') or holds no record ('bad_record') is
    skipped, and reading goes on at the next member that starts a record; from a member that
    holds more than one record on, the file is read as it inflates ('not_chunked'). A plain
    file, or one gzip stream, ends at its damage ('truncated_record', 'bad_record',
    'corrupt_gzip'; 'truncated_file' when a gzip stream ends early between records).
    Lengths are a member's bytes, or a record's bytes between offsets that only grow: never
    negative.
    """
    detect = language_detector(detect_language)
    try:
        with opener(path, "rb") as f:
            if start:
                f.seek(start)
            if inflate:
                yield from _inflated_captures(f, detect, languages)
            else:
                yield from _member_captures(f, start, detect, languages)
    except OSError:
        yield "unreadable_file"


def _member_captures(f, pos, detect, languages):
    """The records of a plain file, or of a file of gzip members, from offset pos (where f stands)."""
    seekable = _seekable(f)
    gzipped = seekable and f.read(len(members.MEMBER_START)) == members.MEMBER_START
    kind = None
    while pos is not None:
        if seekable:
            f.seek(pos)
        run = _Run(f, gzipped, seekable, kind)
        yield from run.records(detect, languages)
        pos, kind = run.resume, run.kind




class _Run:
    """Records read by one warcio iterator from where f stands; ``resume``: where reading goes
    on after them (a raw offset), or None at the end of the file; ``kind``: 'warc' or 'arc',
    the format of the file's first record (given on)."""

    def __init__(self, f, gzipped, seekable, kind=None):
        self.f, self.gzipped, self.seekable, self.kind = f, gzipped, seekable, kind
        self.resume = None

    def records(self, detect, languages):
        f = self.f
        it = _QuietIterator(f, arc2warc=True, kind=self.kind)
        try:
            for record in it:
                start = it.offset
                if self.gzipped and it.reader.decompressor is None:
                    raise ArchiveLoadFailed("bytes that are no gzip member between members")
                self.kind = it.known_format
                if self.kind == "warc" and self.seekable and it.reader.empty() and \
                        _header_cut(f, start, record.rec_headers.total_len, it.reader.decompressor is None):
                    yield self._ends_early(start)        # the data ends inside its header
                    return
                result = capture_of(record, it, detect, languages)
                it.read_to_end()
                if _cut(record):
                    result = "truncated_record"          # the file ends inside its block
                state = it.member_state()
                if state == "more":                  # one gzip stream over several records
                    if not self.seekable:
                        yield "whole_file_gzip"
                        return
                    yield "not_chunked"
                    f.seek(start)
                    yield from _inflated_captures(f, detect, languages)
                    return
                if state == "open":                  # the file ends inside the record's member
                    yield self._ends_early(start)
                    return
                if state == "junk":                  # its member goes on with bytes that are no record
                    raise ArchiveLoadFailed("a gzip member holds more than its record")
                if record.length is None and state == "plain" and self.seekable:
                    after = start + record.rec_headers.total_len
                    if _more_than_blank_lines(f, after):     # warcio read the records after it as its block
                        yield result
                        self.resume = after
                        return
                yield result
            if _unread_tail(f, it.offset):
                yield self._ends_early(it.offset)
            return
        except ArchiveLoadFailed as e:
            reason = "whole_file_gzip" if "non-chunked" in str(e) else "bad_record"
        except zlib.error:
            if self.seekable and it.offset == 0 and _one_stream(f, 0):     # one damaged gzip stream
                yield "not_chunked"
                f.seek(it.offset)
                yield from _inflated_captures(f, detect, languages)
                return
            reason = "corrupt_gzip"
        except EOFError:
            yield self._ends_early(it.offset)
            return
        except OSError:
            raise
        except Exception:                # warcio raises AttributeError, ValueError... on broken headers
            reason = "bad_record"
        yield reason
        if self.gzipped and self.seekable:
            self.resume = members.next_record_member(f, it.offset + 1)

    def _ends_early(self, start):
        """The reason for the record at start whose data ends early. In a file of gzip members
        where a later member starts a record, its member is damaged (its header may claim bytes
        past the next member's start): reading goes on there. Else the file ends there."""
        if self.gzipped and self.seekable:
            later = members.next_record_member(self.f, start + 1)
            if later is not None:
                self.resume = later
                return "corrupt_gzip"
        return "truncated_record"


def _header_cut(f, start, header_length, plain):
    """Whether the WARC header of header_length bytes that starts at offset start of f (plain)
    or of the gzip member there ends without its blank line: the data ends inside it. f is
    left where it was."""
    where = f.tell()
    try:
        f.seek(start)
        if plain:
            head = f.read(header_length)
        else:
            head = members.inflated_start(f.read(header_length + (1 << 12)), header_length)
        return not head.endswith((b"\n\r\n", b"\n\n"))
    finally:
        f.seek(where)


def _more_than_blank_lines(f, start):
    """Whether bytes other than white space follow offset start of f (left where it was)."""
    where = f.tell()
    try:
        f.seek(start)
        while True:
            data = f.read(1 << 16)
            if not data:
                return False
            if data.strip():
                return True
    finally:
        f.seek(where)


def _inflated_captures(f, detect, languages):
    """The records of a file that is one gzip stream, from where f stands, read as they inflate:
    lengths are record lengths in the inflated bytes. Damage ends the file with one reason."""
    stream = members.InflatedStream(f)
    it = _QuietIterator(stream, arc2warc=True)
    reported = False
    try:
        for record in it:
            header_cut = it.known_format == "warc" and stream.done and it.reader.empty() and \
                not stream.tail.endswith((b"\n\r\n", b"\n\n"))
            result = capture_of(record, it, detect, languages)
            it.read_to_end()
            if header_cut or _cut(record):
                result = _damage_reason(stream.damage, True)      # its header or its block is cut
                reported = bool(stream.damage)
            yield result
        error = None
    except OSError:
        raise
    except Exception:                   # a broken record header
        error = "bad_record"
    lost = stream.tell() > it.offset     # bytes after the last whole record that made none
    if stream.damage and not reported:
        yield _damage_reason(stream.damage, lost)
    elif error or (lost and not reported):
        yield error or "truncated_record"


_ARC_LENGTH = re.compile(r"-?[0-9]+\Z")


def _not_arc(record):
    """Whether an ARC record's header line has no length (a number) at its end: warcio takes any
    line of five words for one."""
    return not _ARC_LENGTH.match((record.rec_headers.get_header("Content-Length") or "").strip())


def _cut(record):
    """Whether a record read to its end holds fewer bytes than its Content-Length."""
    return getattr(record.raw_stream, "limit", 0) > 0


def _damage_reason(damage, record_lost):
    if damage == "corrupt":
        return "corrupt_gzip"
    return "truncated_record" if record_lost else "truncated_file"
