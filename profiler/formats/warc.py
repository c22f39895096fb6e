"""WARC and ARC files -> captures, for crawls that have no index yet (warcio).

A record becomes the capture its CDXJ line (as written by cdxj-indexer) would give, by one
definition (capture_of, over a view of the record that either reader, warcio here or fastwarc
in profiler.formats.warc_fast, gives):
urlkey from surt, timestamp from WARC-Date (the ARC date for ARC), mime and status from
the HTTP headers, digest from WARC-Payload-Digest or computed, length = the record's
stored length (its gzip member for .gz). Other records and broken ones become skip
reasons. ACHE's WARCs (response blocks without an HTTP status line) are read here too.
"""

import base64
import hashlib
import logging
import re

from warcio.timeutils import iso_date_to_timestamp

from profiler.formats import hops, payload, registry, w3c_dates, warc_records
from profiler.formats.cdx import urlkey
from profiler.model import capture, normalise
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
#: the numeric zone that ends a WARC-Date's time written with one (``+02:00``, ``-0500``, ``-08``: ISO
#: 8601 lets a zone name its hours only)
_ZONE = re.compile(r"([+-])([0-9]{2})(?::?([0-9]{2}))?\Z")
# warcio logs every WARC-Target-URI with a space it percent-encodes: one line per record of
# old crawls, in every map task's stderr. The URI is still used (as cdxj-indexer does).
logging.getLogger("warcio.recordloader").setLevel(logging.ERROR)


def looks_like_arc_record(line):
    """An ARC v1 record header without filedesc: 'URL IP DATE MIME LENGTH' (or parted by tabs)."""
    f = warc_records.arc_header_line(line).split(b" ")
    return len(f) >= 5 and f[-1].isdigit() and b":" in f[0] and any(_ARC_DATE.match(x) for x in f[1:-1])


def gzip_problem(path, opener=open):
    """A one-line note when a gzip WARC/ARC is one gzip stream (its first member holds more
    than one record: it is then read as it inflates, iter_captures(inflate=True)), else None."""
    try:
        with opener(path, "rb") as f:
            if warc_records.one_stream(f, 0):
                return ("whole-file gzip WARC/ARC (one gzip stream, not one member per record): "
                        "recompress it per record first (warcio recompress IN OUT)")
    except Exception:
        pass            # other damage is counted per record by the mapper
    return None


_DAYS = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def warc_timestamp(date):
    """14-digit timestamp of a WARC-Date, as warcio's iso_date_to_timestamp gives it; None when invalid.
    A date with a numeric zone (``+00:00``, as Python's isoformat writes it, or ``-0500``) is
    converted to UTC (profiler.formats.w3c_dates): warcio refused the first and read the second
    as local time.

    >>> warc_timestamp("2013-12-26T10:11:12Z"), warc_timestamp("2013-12-26T10:11:12.5Z")
    ('20131226101112', '20131226101112')
    >>> warc_timestamp("2013-12-26T23:11:12.5-05:00"), warc_timestamp("2013-12-26T10:11:12+0000")
    ('20131227041112', '20131226101112')
    >>> warc_timestamp("2013-12-26T23:11:12-05"), warc_timestamp("2013-12-26T23:11:12,5-0500")
    ('20131227041112', '20131227041112')
    """
    if date and len(date) == 20 and date[19] == "Z" and date[4] == date[7] == "-" and date[10] == "T":
        ts = date[:4] + date[5:7] + date[8:10] + date[11:13] + date[14:16] + date[17:19]
        if ts.isascii() and ts.isdigit() and date[13] == date[16] == ":":
            ts = normalise.timestamp(ts.encode("ascii"))
            if ts is not None:
                month, day = int(ts[4:6]), int(ts[6:8])
                if day <= _DAYS[month] and (month, day) != (2, 29) and ts[12:] < "60":
                    return ts
    zone = _ZONE.search(date) if date else None
    if zone and ":" in date[:zone.start()]:  # a time's numeric zone: warcio ignored it (read an
        text = date[:zone.start()].rstrip()  # hours-only one as microseconds), or failed
        text = text[:10] + "T" + text[11:] if text[10:11] == " " else text
        text = text[:19] + "." + text[20:] if text[19:20] == "," else text     # ISO 8601's decimal comma
        sign, hours, minutes = zone.groups()
        return w3c_dates.timestamp(("%s%s%s:%s" % (text, sign, hours, minutes or "00")).encode("ascii", "replace"))
    try:                                  # other forms (fractions, no Z, Feb 29): warcio decides
        return normalise.timestamp(iso_date_to_timestamp(date).encode("ascii"))
    except Exception:
        return None


def record_type(value):
    """A WARC-Type as capture_of compares it: in lower case (the WARC standard's grammar, ABNF,
    reads its names in any case: JWAT's ``RESPONSE`` is a response), None kept."""
    return value.strip().lower() if value else value


def _text(value):
    return value.encode("utf-8", "surrogateescape") if value is not None else None


def _mime(value):
    if not value:
        return normalise.UNKNOWN
    return normalise.mime(_text(_MIME_END.split(value.strip(), 1)[0]))


def _no_header(name):
    return None


#: what a view's length() gives for a record that holds fewer bytes than its Content-Length
TRUNCATED = "truncated"


def capture_of(view, detect=None, languages=True, depths=False):
    """The Capture of one WARC/ARC record, or a skip-reason str: the one definition of which
    record is a capture and what its fields are, whichever reader framed the record.

    view: the record as its reader gives it (WarcioRecord here, the fastwarc reader's in
    profiler.formats.warc_fast): ``rec_type`` (the WARC-Type; ARC records are 'response'),
    ``header(name)`` (a WARC header's value or None, case-insensitive, the first one wins),
    ``content_length`` (None without one), ``http`` (the parsed HTTP head or None, read on first
    use), ``stream`` (the block after the HTTP head, read once) and ``length(read)`` (after the
    block is read to its end, read bytes of it after the HTTP head: the record's stored length,
    None when its reader gives it later, or TRUNCATED). Consumes the record.
    detect: the language detector for HTML that declares none (language_detector);
    languages=False: no language is read (lang 'unk'; a policy without lang levels); depths: a
    metadata record gives its hop path (profiler.formats.hops)."""
    rec_type = view.rec_type
    if depths and rec_type == "metadata":        # its hop path (profiler.formats.hops)
        url = view.header("WARC-Target-URI")
        return hops.note(_text(url) if url else None, view.stream.read(hops.BODY_BYTES))
    if rec_type not in CAPTURE_TYPES:
        return SKIPPED_TYPES.get(rec_type, "other_record")
    if rec_type == "resource" and view.header("Content-Type") == WARC_FIELDS:
        return "warc_fields_record"
    if view.content_length is None:
        return "header_only_record"              # no Content-Length: no block to count
    url = view.header("WARC-Target-URI")
    if not url:
        return "bad_url"
    ts = warc_timestamp(view.header("WARC-Date"))
    if ts is None:
        return "bad_timestamp"
    status = normalise.UNKNOWN
    http = view.http
    if rec_type == "revisit":
        mime = normalise.REVISIT_MIME
        if http:
            status = normalise.status(_text(http.get_statuscode() or "-"))
    elif rec_type == "resource":
        mime = _mime(view.header("Content-Type"))
    elif http and view.header(ACHE_HEADER) and not http.protocol.startswith("HTTP/"):
        mime = _ache_mime(http)          # ACHE writes the response headers without a status line
    else:
        mime = _mime(http.get_header("Content-Type") if http else None)
        if http:
            status = normalise.status(_text(http.get_statuscode() or "-"))
    digest = view.header("WARC-Payload-Digest")
    sha1 = hashlib.sha1() if not digest and rec_type != "revisit" else None
    lang, read = normalise.UNKNOWN, 0
    stream = view.stream
    if rec_type != "revisit" and languages:
        header = http.get_header if http else _no_header
        lang, read = payload_language(stream, mime, header, sha1.update if sha1 else None, detect)
    while True:                                  # the rest of the block: hashed, or only read
        buf = stream.read(_BUF)
        if not buf:
            break
        read += len(buf)
        if sha1:
            sha1.update(buf)
    length = view.length(read)
    if length is TRUNCATED:
        return "truncated_record"                # the file ended before Content-Length bytes
    if sha1:
        digest = base64.b32encode(sha1.digest()).decode("ascii")
    key = urlkey(None, _text(url))
    if key is None:
        return "bad_url"
    found = capture.new(urlkey=key, timestamp=ts, mime=mime, status=status, digest=normalise.digest(_text(digest)),
                        length=length, revisit=rec_type == "revisit", lang=lang)
    if registry.WARC_HEADERS:     # fields a plugin reads from the record's WARC headers
        found = found._replace(**{field: value_of(view.header(header))
                                  for field, (header, value_of) in registry.WARC_HEADERS.items()})
    if registry.HTTP_HEADERS:     # and from its HTTP response headers
        found = found._replace(**{field: value_of(http.get_header(header) if http else None)
                                  for field, (header, value_of) in registry.HTTP_HEADERS.items()})
    return found


class WarcioRecord:
    """A warcio record as capture_of views it; it: its ArchiveIterator (which gives its length)."""
    __slots__ = ("record", "it")

    def __init__(self, record, it):
        self.record, self.it = record, it

    @property
    def rec_type(self):
        return record_type(self.record.rec_type)

    def header(self, name):
        value = self.record.rec_headers.get_header(name)
        return value.strip(" \t") if value else value     # a folded header's blanks

    @property
    def content_length(self):
        return self.record.length

    @property
    def http(self):
        return self.record.http_headers

    @property
    def stream(self):
        return self.record.raw_stream

    def length(self, read):
        length = self.it.get_record_length()          # reads the record to its end
        return TRUNCATED if warc_records.cut(self.record) else length


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


def iter_captures(path, opener=open, start=0, detect_language=False, languages=True, inflate=False, depths=False,
                  wrapped=False):
    """Yield Captures or skip-reason strs for every record of one WARC/ARC file
    (from byte offset start, where a record or gzip member begins). detect_language: HTML
    that declares no language gets the detected one (--detect-language; the detect extra);
    languages=False: no language is read, every lang is 'unk' (a policy without lang levels);
    inflate: the file is one gzip stream over its records (profiler.formats.inputs.sniff):
    it is read as it inflates, and its lengths are the uncompressed records'; depths: captures get
    the hop path of the Heritrix metadata record that follows them (profiler.formats.hops;
    wrapped: the caller applies hops.with_depths, and the notes come out as they are). How damage
    is read around and counted: profiler.formats.warc_records.
    """
    found = _iter_captures(path, opener, start, detect_language, languages, inflate, depths)
    yield from hops.with_depths(found) if depths and not wrapped else found


def _iter_captures(path, opener, start, detect_language, languages, inflate, depths):
    detect = language_detector(detect_language)

    def capture(record, it):
        return capture_of(WarcioRecord(record, it), detect, languages, depths)
    try:
        with opener(path, "rb") as f:
            if start:
                f.seek(start)
            yield from warc_records.captures(f, start, capture, inflate)
    except OSError:
        yield "unreadable_file"
