"""Heritrix crawl.log lines -> captures (spec section 1).

A line is space-padded fields: log time (``2013-04-02T10:00:01.123Z``), fetch status, size, URI,
hop path, via, mime, thread (``#042``; ``-`` in warcprox's logs), fetch start and duration (``20130402100000987+35``),
digest (``sha1:...``), source tag, annotations (comma-separated), and in Heritrix 3 sometimes a
JSON object after them. A line whose fetch status is an HTTP status (100-599) is a capture:
timestamp = the first 14 digits of the fetch start (else, when they are no datetime, of the log
time), length = the size field, digest = the digest field, depth = the hop path's hops (``-`` a seed, 0; else its letters;
Heritrix writes a long path as ``N+LETTERS``, N hops before the letters it shows); a line
annotated ``duplicate:...`` or ``warcRevisit:...`` is a revisit (mime ``warc/revisit``, as a WARC
revisit record). Other lines are skipped and counted: ``dns_fetch`` (status 1), ``failed_fetch``
(0 and negative codes), ``other_fetch_status``.
"""

import re

from profiler.formats.cdx import NON_CAPTURE_PREFIXES, urlkey
from profiler.model import capture, collection as collections, normalise

#: a log time as Heritrix writes it
_LOG_TIME = re.compile(rb"\A(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?Z\Z")
#: a fetch status: an integer, maybe negative
_STATUS = re.compile(rb"\A-?\d{1,6}\Z")
#: a hop path: '-' (a seed), hop letters, or N+LETTERS
_HOPS = re.compile(rb"\A(?:(\d{1,9})\+)?([A-Za-z]*)\Z")
#: the fields of a line (the annotations may be empty: then 11)
FIELDS = 11
#: annotations that make a line a revisit
REVISIT_ANNOTATIONS = (b"duplicate:", b"warcRevisit:")


def log_time(raw):
    """A log time's 14 digits, or None."""
    m = _LOG_TIME.match(raw)
    return normalise.timestamp(b"".join(m.groups())) if m else None


def fetch_start(raw):
    """The 14 digits a fetch start and duration field (``20130402100000987+35``) begins with, or
    None when it begins with no datetime (``-``, fewer digits, a month 13): the line's log time
    then stands for it (spec section 1), as it does for a line without one."""
    return normalise.timestamp(raw[:14]) if len(raw) >= 14 and raw[:14].isdigit() else None


def depth(raw):
    """A hop path's depth field: '-' is a seed (0), else its hops ('0' .. '9', '10+'); 'unk' when
    it is no hop path."""
    if raw == b"-":
        return "0"
    m = _HOPS.match(raw)
    if m is None or not (m.group(1) or m.group(2)):
        return normalise.UNKNOWN
    return normalise.depth_class(int(m.group(1) or 0) + len(m.group(2)))


def is_line(line):
    """Whether a line looks like a crawl.log line (for recognition): its thread is ``#042``
    (Heritrix) or ``-`` (warcprox's and brozzler's crawl logs, in Heritrix's layout)."""
    f = line.split()
    return len(f) >= FIELDS and _LOG_TIME.match(f[0]) is not None and _STATUS.match(f[1]) is not None \
        and (f[7].startswith(b"#") or f[7] == b"-")


def sniff(sample):
    """{} when the sample's first data line is a crawl.log line, else None."""
    first = sample.first
    return {} if first is not None and is_line(first) else None


def parse(line, collection=None):
    """Return a Capture (profiler.model.capture) or a skip-reason str. collection: the split's
    profiler.model.collection.Collections (a crawl.log names no WARC file: its input's label)."""
    f = line.split()
    if len(f) < FIELDS:
        return "bad_field_count"
    if _STATUS.match(f[1]) is None:
        return "bad_fetch_status"
    code = int(f[1])
    if not 100 <= code <= 599:
        return "dns_fetch" if code == 1 else "failed_fetch" if code <= 0 else "other_fetch_status"
    url = f[3]
    if url.startswith(NON_CAPTURE_PREFIXES):
        return "not_a_capture"
    ts = fetch_start(f[8]) or log_time(f[0])
    if ts is None:
        return "bad_timestamp"
    length, ok = normalise.length(f[2])
    if not ok:
        return "bad_length"
    key = urlkey(None, url)
    if key is None:
        return "bad_url"
    annotations = f[11].split(b",") if len(f) > FIELDS else ()
    revisit = any(a.startswith(REVISIT_ANNOTATIONS) for a in annotations)
    found = capture.new(urlkey=key, timestamp=ts,
                        mime=normalise.REVISIT_MIME if revisit else normalise.mime(f[6]),
                        status=normalise.status(f[1]), digest=normalise.digest(f[9]), length=length,
                        revisit=revisit, depth=depth(f[4]))
    if collection is not None:
        found = found._replace(collection=collection(None))
    return found


def captures_of_lines(lines, split=None):
    """Captures or skip reasons of a split's lines."""
    collection = collections.of_split(split) if split is not None else None
    for line in lines:
        if line.strip():
            yield parse(line, collection)
