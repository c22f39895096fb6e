"""ACHE focused crawler FILES output -> captures.

ACHE's FILES data format: rolling files ``crawl_data-<millis>-<n>.deflate``, each one zlib
(DEFLATE) stream of JSON lines with ``url``, ``redirected_url``, ``content`` (base64),
``content_type``, ``response_headers`` ({name: [values]}) and ``fetch_time`` (epoch; ACHE
writes milliseconds, older versions seconds). ACHE flushes after every line, so a file
of a running crawl is a stream without its end: its complete lines count.

A page is captured at its final URL (``redirected_url`` when set, as ACHE's WARCs do);
status is ``unk`` (FILES has no status); digest is the base32 SHA-1 of the content,
as for a WARC record without WARC-Payload-Digest; length is the JSON line's length.
"""

import base64
import binascii
import datetime
import hashlib
import zlib

import orjson

from profiler.formats.cdx import urlkey
from profiler.io.readers import whole_lines
from profiler.model import capture, normalise

_CHUNK = 1 << 20
#: bytes inflated at a time
_OUT = 1 << 20
#: the longest page line read: a page of about 48 MB (base64); a longer one is skipped without being
#: held and counted as line_too_long
MAX_LINE = 64 << 20
_MS_THRESHOLD = 10 ** 11          # larger epoch values are milliseconds (10**11 s is year 5138)


def is_zlib(head):
    """True when bytes start with a zlib stream header (CMF 0x78, header check)."""
    return len(head) >= 2 and head[0] == 0x78 and (head[0] << 8 | head[1]) % 31 == 0


def sniff(path, opener=open):
    """True when path is an ACHE FILES file: a zlib stream whose first line is a JSON page."""
    try:
        with opener(path, "rb") as f:
            head = f.read(1 << 16)
        if not is_zlib(head):
            return False
        text = zlib.decompressobj().decompress(head, 1 << 16)
    except (OSError, zlib.error):
        return False
    return text.lstrip().startswith(b"{") and b'"url"' in text[:4096]


def iter_lines(path, opener=open, counts=None):
    """Yield the JSON lines (with their newline) of one zlib stream, inflated at most _OUT bytes at
    a time; a line longer than MAX_LINE is skipped without being held and counted in
    counts['line_too_long'] (profiler.io.readers.whole_lines), and runs of blank lines are passed
    over. EOFError when the stream has no end."""
    ended = []
    with opener(path, "rb") as f:
        for buf in whole_lines(_inflated(f, ended), counts, MAX_LINE):
            if not buf.strip():
                continue
            start = 0
            while True:
                nl = buf.find(b"\n", start)
                if nl < 0:
                    if start < len(buf):
                        yield buf[start:]
                    break
                yield buf[start:nl + 1]
                start = nl + 1
    if not ended:
        raise EOFError("deflate stream without end")


def _inflated(f, ended):
    """The inflated bytes of the zlib stream f holds, at most _OUT bytes a piece (a deflate bomb
    never inflates at once); bytes after the stream's end are not read. ``ended`` gets an item
    when the stream ends (a running crawl's file has no end yet)."""
    d = zlib.decompressobj()
    while not d.eof:
        data = f.read(_CHUNK)
        if not data:
            break
        while not d.eof:
            out = d.decompress(data, _OUT)
            data = d.unconsumed_tail
            if out:
                yield out
            if not data and len(out) < _OUT:        # all its input inflated, none held back
                break
    if d.eof:
        ended.append(True)
    else:
        out = d.flush()
        if out:
            yield out


def _timestamp(value):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    if value >= _MS_THRESHOLD:
        value //= 1000
    try:
        dt = datetime.datetime.fromtimestamp(value, datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return normalise.timestamp(dt.strftime("%Y%m%d%H%M%S").encode("ascii"))


def _content_type(page):
    value = page.get("content_type")
    if not value:
        for name, values in (page.get("response_headers") or {}).items():
            if name and name.lower() == "content-type" and values:
                value = values[0] if isinstance(values, list) else values
                break
    if not isinstance(value, str) or not value.strip():
        return normalise.UNKNOWN
    return normalise.mime(value.strip().split(";", 1)[0].split()[0].encode("utf-8", "surrogateescape"))


def parse(line):
    """One FILES JSON line -> Capture (profiler.model.capture; FILES has no status, revisit or
    language) or skip-reason str."""
    try:
        page = orjson.loads(line)
    except orjson.JSONDecodeError:
        return "bad_json"
    if not isinstance(page, dict):
        return "bad_json"
    url = page.get("redirected_url") or page.get("url")
    if not isinstance(url, str) or not url:
        return "bad_url"
    ts = _timestamp(page.get("fetch_time"))
    if ts is None:
        return "bad_timestamp"
    content = page.get("content") or ""
    if not isinstance(content, str):
        return "bad_content"
    try:
        payload = base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError):
        return "bad_content"
    key = urlkey(None, url.encode("utf-8", "surrogateescape"))
    if key is None:
        return "bad_url"
    digest = base64.b32encode(hashlib.sha1(payload).digest()).decode("ascii")
    return capture.new(urlkey=key, timestamp=ts, mime=_content_type(page), digest=digest, length=len(line))


def iter_captures(path, opener=open):
    """Yield Captures or skip-reason strs for one ACHE FILES file."""
    counts = {}
    try:
        for line in iter_lines(path, opener, counts):
            if line.strip():
                yield parse(line)
    except EOFError:
        yield "truncated_file"
    except (OSError, zlib.error):
        yield "unreadable_file"
    for reason, n in counts.items():
        for _ in range(n):
            yield reason
