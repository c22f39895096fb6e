"""The records of a WARC or ARC file, read with warcio a gzip member at a time, around damage.

Damage is one counted reason, and the records before it count. In a file of gzip members a
member that does not inflate ('corrupt_gzip') or holds no record ('bad_record') is skipped, and
reading goes on at the next member that starts a record (profiler.formats.members); from a
member that holds more than one record on, the file is read as it inflates ('not_chunked'). A
plain file, or one gzip stream, ends at its damage ('truncated_record', 'bad_record',
'corrupt_gzip'; 'truncated_file' when a gzip stream ends early between records). Lengths are a
member's bytes when the member ended with its record, or a record's bytes between offsets that
only grow: never negative. After its first record, a file's records are read in its format.
"""

import re
import zlib

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.exceptions import ArchiveLoadFailed
from warcio.recordloader import ARC2WARCHeadersParser, ArcWarcRecordLoader
from warcio.timeutils import timestamp_to_iso_date
from warcio.utils import BUFF_SIZE

from profiler.formats import members
from profiler.io.readers import BOM


#: the note (counted with the skip reasons, no record lost) of a record followed straight by the
#: next record's header, with no blank line between: both are read
UNSEPARATED = "unseparated_record"
#: the most bytes of header lines (a WARC or ARC header, an HTTP head) read in a row, with no
#: blank line or block read between: a record past it is 'bad_record' (warcio reads a line whole)
MAX_HEAD = 4 << 20


def captures(f, start, capture, inflate=False):
    """Yield capture(record, iterator) for every record of the file f stands in (at offset
    start, where a record or gzip member begins), and the reasons of its damage; inflate: the
    file is one gzip stream, read as it inflates."""
    if inflate:
        yield from _inflated_captures(f, capture)
    else:
        yield from _member_captures(f, start, capture)


def one_stream(f, start):
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


class _StrictReader(DecompressingBufferedReader):
    """warcio's reader, raising on a damaged gzip member instead of writing to stderr or
    reading it as plain bytes (warcio does that when a member's first block does not inflate)."""

    _head = b""                 # the first bytes fed to the member's inflater
    _lines = 0                  # bytes of the header lines read in a row (MAX_HEAD)

    def readline(self, length=None):
        """warcio's, reading at most what is left of MAX_HEAD: ArchiveLoadFailed past it. A blank
        line, or a read of a block, starts the count again."""
        room = MAX_HEAD - self._lines + 1
        line = super().readline(room if length is None or length > room else length)
        self._lines = 0 if not line.strip() else self._lines + len(line)
        if self._lines > MAX_HEAD:
            raise ArchiveLoadFailed("header lines past %d bytes" % MAX_HEAD)
        return line

    def read(self, length=None):
        self._lines = 0
        return super().read(length)

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


_LEADING_DIGITS = re.compile(r"\d*")


def arc_date_holds(date):
    """Whether warcio's WARC-Date for an ARC date stands for that date: its year is the date's
    first four digits, and text follows the digits only after a whole 14-digit timestamp
    ('20160211000000jpg'). warcio turns any other text into a date: 'null', '', a hex string or
    '99999999999999' into 2999-12-31, '2008-04-30' into 2008-01-31, '0000' into 1900.

    >>> arc_date_holds("20080430204825"), arc_date_holds("2016020900"), arc_date_holds("null")
    (True, True, False)
    """
    digits = _LEADING_DIGITS.match(date).group()
    if len(digits) < 4 or (len(digits) < 14 and len(digits) < len(date)):
        return False
    return timestamp_to_iso_date(date)[:4] == digits[:4]


def arc_fields(headerline, parts):
    """The five fields (URL, IP, date, MIME, length) of an ARC record header line. warcio splits
    the line from its end (parts), which keeps a URL with spaces whole; when that gives no date,
    the line is read from its start: an ARC v2 header (ten fields: URL IP date MIME status
    checksum location offset file length), a v1 header whose MIME holds spaces
    ('text/html; Charset=iso-8859-1'), or one whose date and IP are swapped."""
    if len(parts) != 5 or arc_date_holds(parts[2]) or headerline.startswith("filedesc:"):
        return parts
    f = headerline.split(" ")
    if not f[-1].isdigit():
        return parts
    if len(f) == 10 and arc_date_holds(f[2]) and f[7].isdigit():
        return [f[0], f[1], f[2], f[3], f[9]]
    if len(f) > 5 and arc_date_holds(f[2]):
        return [f[0], f[1], f[2], " ".join(f[3:-1]), f[-1]]
    if len(f) == 5 and arc_date_holds(f[1]) and not arc_date_holds(f[2]):
        return [f[0], f[2], f[1], f[3], f[4]]
    return parts


def arc_header_line(line):
    """An ARC record header line (bytes or str) with its fields parted by spaces: some tools
    part them by tabs, which warcio does not split at (the record was a bad_record, and a file
    without a filedesc record of no known format)."""
    return line.replace(b"\t" if isinstance(line, bytes) else "\t", b" " if isinstance(line, bytes) else " ")


class _ArcHeaders(ARC2WARCHeadersParser):
    """warcio's ARC -> WARC header parser, reading the header's fields by arc_fields (parted by
    tabs too: arc_header_line), whose WARC-Date is empty (a bad_timestamp for
    profiler.formats.warc.capture_of) when warcio's date does not stand for the ARC date."""

    def parse(self, stream, headerline=None):
        if headerline is None:
            headerline = stream.readline()
        return super().parse(stream, arc_header_line(headerline))

    def _get_protocol_and_headers(self, headerline, parts):
        parts = arc_fields(headerline, parts)
        date = parts[2] if len(parts) > 2 else ""
        protocol, headers = super()._get_protocol_and_headers(headerline, parts)
        if not headerline.startswith("filedesc://") and not arc_date_holds(date):
            headers = [(n, "" if n == "WARC-Date" else v) for n, v in headers]
        return protocol, headers


#: record types whose block may begin with an HTTP head
_HTTP_RECORDS = ("response", "revisit", "request")
#: URI schemes whose records hold an HTTP message, compared in lower case
_HTTP_SCHEMES = ("http:", "https:")
#: the media type of a WARC block that is an HTTP message (WARC 1.1, section 6.3.2)
HTTP_MESSAGE = "application/http"


def holds_http(rec_type, uri, content_type, warc=True):
    """Whether a record's block begins with an HTTP head: a response, revisit or request record
    of an http or https URI (the scheme in any case, as RFC 3986 reads it), or, in a WARC, one
    whose Content-Type says its block is an HTTP message (``application/http``), whatever the
    URI's scheme (Scoop's ``file:``, a browser extension's ``chrome-extension:``). An ARC file
    has no such field (warcio gives every ARC response that Content-Type)."""
    if rec_type not in _HTTP_RECORDS or not uri:
        return False
    if uri[:6].lower().startswith(_HTTP_SCHEMES):
        return True
    return warc and bool(content_type) and content_type.split(";", 1)[0].strip().lower() == HTTP_MESSAGE


class _Loader(ArcWarcRecordLoader):
    """warcio's record loader that says which format it read a record header as, whose ARC
    records have no WARC-Date when their ARC date is none warcio keeps (arc_date_holds), that
    reads the HTTP head of every record that holds one (holds_http: warcio looked at the
    URI's scheme only, case-sensitively), and that reads a folded WARC-Target-URI."""

    last_format = None
    last_content_type = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if kwargs.get("arc2warc"):
            self.arc_parser = _ArcHeaders()

    def _detect_type_load_headers(self, stream, statusline=None, known_format=None):
        found = super()._detect_type_load_headers(stream, statusline, known_format)
        self.last_format = found[0]
        headers = found[1]
        self.last_content_type = headers.get_header("Content-Type") if hasattr(headers, "get_header") else None
        return found

    def _ensure_target_uri_format(self, rec_headers):
        """warcio's, after the white space around the URI is cut: a header folded onto the next
        line (the WARC grammar's LWS) starts its value with that line's blanks, which warcio
        kept and percent-encoded (``%20%20http://...``, a wrong SURT)."""
        uri = rec_headers.get_header("WARC-Target-URI")
        if uri is not None and uri != uri.strip(" \t"):
            rec_headers.replace_header("WARC-Target-URI", uri.strip(" \t"))
        return super()._ensure_target_uri_format(rec_headers)

    def load_http_headers(self, rec_type, uri, stream, length):
        """warcio's, for a record without WARC-Target-URI too (warcio raised on it, and a plain
        file ended there): no HTTP head is parsed, and capture_of skips the record. The head of
        every record that holds one (holds_http) is parsed, whatever its URI's scheme."""
        if uri is None:
            return None
        rec_type = rec_type.strip().lower() if rec_type else rec_type     # as capture_of reads it
        if holds_http(rec_type, uri, self.last_content_type, self.last_format == "warc"):
            uri = "http:"                # warcio parses a head only after this prefix
        return super().load_http_headers(rec_type, uri, stream, length)


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
        if next_line is None:
            next_line = self._past_blank_lines()
        record = super()._next_record(next_line)
        if self.known_format is None or self.known_format == "arc":
            if self.loader.last_format != "warc" and _not_arc(record):
                raise ArchiveLoadFailed("not an ARC record header")
            self.known_format = "warc" if self.loader.last_format == "warc" else "arc"
        return record

    def _past_blank_lines(self):
        """The first line of the record at the start of a file or gzip member, past the blank
        lines and UTF-8 byte order mark before it, or None when there is none (warcio then reads
        its first line itself, and ends the member). warcio took them for a record of their own,
        which in a gzip member or an ARC file swallowed the record after them (the ARC format's
        grammar puts a newline before each record, ``doc == <nl><URL-record>``, and a writer may
        compress it with the record it precedes; an editor may write a BOM). The record's offset
        starts after them in a plain file, and after a gzip member that holds nothing else, as
        if they were not there."""
        reader = self.reader
        line = reader.readline()
        if line.startswith(BOM):
            line = line[len(BOM):]
            skipped = len(BOM)
        else:
            skipped = 0
        while True:
            while line and not line.strip() and line.endswith(b"\n"):
                skipped += len(line)
                line = reader.readline()
            if line or reader.decompressor is None or not reader.decompressor.unused_data:
                break
            self.offset = self.fh.tell() - reader.rem_length()      # the next member's start
            reader.read_next_member()
            line = reader.readline()
        if reader.decompressor is None:
            self.offset += skipped
        return line or None

    #: records followed straight by the next record's header line (no separator between)
    unseparated = 0

    def _consume_blanklines(self):
        """warcio's, without the 'Record not followed by newline' warning (err_count still counts),
        and one difference: warcio takes whatever line follows a record for its separator, so a
        record followed straight by the next record's header (NetarchiveSuite's ARC files have
        no newline between records) would lose that header, and the lines of its block would be
        read as records. A first line that starts a record of the file's format is the next
        record's (``unseparated`` counts them); any other is taken for the separator."""
        empty_size, first_line = 0, True
        while True:
            line = self.reader.readline()
            if not line:
                return None, empty_size
            stripped = line.rstrip()
            if stripped and first_line and self._starts_record(line):
                self.unseparated += 1
                return line, empty_size
            if not stripped or first_line:
                empty_size += len(line)
                if stripped:
                    self.err_count += 1
                first_line = False
                continue
            return line, empty_size

    def _starts_record(self, line):
        """Whether a whole line is a record's first line in the file's format ('WARC/...' in a
        WARC; a 'filedesc:' or 'URL IP DATE MIME LENGTH' header line in an ARC)."""
        if not line.endswith(b"\n"):
            return False
        if self.known_format == "warc":
            return members.starts_warc_record(line)
        if self.known_format == "arc":
            return members.starts_record(line) and not members.starts_warc_record(line)
        return False

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


def _member_captures(f, pos, capture):
    """The records of a plain file, or of a file of gzip members, from offset pos (where f stands)."""
    seekable = _seekable(f)
    gzipped = seekable and f.read(len(members.MEMBER_START)) == members.MEMBER_START
    kind = None
    while pos is not None:
        if seekable:
            f.seek(pos)
        run = _Run(f, gzipped, seekable, kind)
        yield from run.records(capture)
        pos, kind = run.resume, run.kind




class _Run:
    """Records read by one warcio iterator from where f stands; ``resume``: where reading goes
    on after them (a raw offset), or None at the end of the file; ``kind``: 'warc' or 'arc',
    the format of the file's first record (given on)."""

    def __init__(self, f, gzipped, seekable, kind=None):
        self.f, self.gzipped, self.seekable, self.kind = f, gzipped, seekable, kind
        self.resume = None

    def records(self, capture):
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
                unseparated = it.unseparated
                result = capture(record, it)
                it.read_to_end()
                if cut(record):
                    result = "truncated_record"          # the file ends inside its block
                state = it.member_state()
                if state == "more":                  # one gzip stream over several records
                    if not self.seekable:
                        yield "whole_file_gzip"
                        return
                    yield "not_chunked"
                    f.seek(start)
                    yield from _inflated_captures(f, capture)
                    return
                if state == "open":                  # the file ends inside the record's member
                    yield self._ends_early(start)
                    return
                if state == "junk":                  # its member goes on with bytes that are no record
                    raise ArchiveLoadFailed("a gzip member holds more than its record")
                if record.length is None and state == "plain" and self.seekable:
                    after = _past_blank_lines(f, start + record.rec_headers.total_len)
                    if after is not None:    # warcio read the records after it as its block
                        yield result
                        self.resume = after
                        return
                yield result
                if it.unseparated > unseparated:
                    yield UNSEPARATED
            if _unread_tail(f, it.offset):
                yield self._ends_early(it.offset)
            return
        except ArchiveLoadFailed as e:
            reason = "whole_file_gzip" if "non-chunked" in str(e) else "bad_record"
        except zlib.error:
            if self.seekable and it.offset == 0 and one_stream(f, 0):     # one damaged gzip stream
                yield "not_chunked"
                f.seek(it.offset)
                yield from _inflated_captures(f, capture)
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


def _past_blank_lines(f, start):
    """The offset of the first byte other than white space at or after offset start of f (left
    where it was), or None when only white space follows: where the next record starts after a
    record without Content-Length (the blank lines between are no records)."""
    where = f.tell()
    try:
        f.seek(start)
        at = start
        while True:
            data = f.read(1 << 16)
            if not data:
                return None
            stripped = data.lstrip()
            if stripped:
                return at + len(data) - len(stripped)
            at += len(data)
    finally:
        f.seek(where)


def _inflated_captures(f, capture):
    """The records of a file that is one gzip stream, from where f stands, read as they inflate:
    lengths are record lengths in the inflated bytes. Damage ends the file with one reason."""
    stream = members.InflatedStream(f)
    it = _QuietIterator(stream, arc2warc=True)
    reported = False
    try:
        for record in it:
            header_cut = it.known_format == "warc" and stream.done and it.reader.empty() and \
                not stream.tail.endswith((b"\n\r\n", b"\n\n"))
            unseparated = it.unseparated
            result = capture(record, it)
            it.read_to_end()
            if header_cut or cut(record):
                result = _damage_reason(stream.damage, True)      # its header or its block is cut
                reported = bool(stream.damage)
            yield result
            if it.unseparated > unseparated:
                yield UNSEPARATED
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


def cut(record):
    """Whether a record read to its end holds fewer bytes than its Content-Length."""
    return getattr(record.raw_stream, "limit", 0) > 0


def _damage_reason(damage, record_lost):
    if damage == "corrupt":
        return "corrupt_gzip"
    return "truncated_record" if record_lost else "truncated_file"
