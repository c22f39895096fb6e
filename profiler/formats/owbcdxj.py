"""OpenWayback CDXJ 1.x lines (IIPC's "OpenWayback CDXJ File Format 1.0") -> captures.

A line is ``SEARCHABLE-URI TIMESTAMP RECORD-TYPE {JSON}``: OpenWayback's SURT without scheme
(``(com,example,)/``), a W3C date (``2015``, ... ``2015-09-03T13:27:52.123Z``), a WARC-Type and
a JSON block (``uri``, ``sha``, ``dig``, ``hsc``, ``mct``, ``rle``, ``ref``, ...). Files start
with ``!OpenWayback-CDXJ 1.0`` headers; another major version is refused. A line gives the
capture its WARC record gives (profiler.formats.warc.capture_of): the urlkey is the SURT of
``uri`` (the searchable URI is canonicalised as the archive chose), the record type decides
what is a capture, the length is the record's stored length (``rle``).
"""

import re

from profiler import jsonnum
from profiler.formats.cdx import urlkey
from profiler.formats.cdxj import json_object, with_plugin_fields
from profiler.formats.w3c_dates import DIGITS_14, W3C_DATE, timestamp
from profiler.model import capture, collection as collections, normalise

HEADER = b"!OpenWayback-CDXJ"
#: the major version read
MAJOR = 1
_VERSION = re.compile(rb"([0-9]{1,9})\.([0-9]{1,9})")


CAPTURE_TYPES = ("response", "revisit", "resource")
#: skip reason of the records that are not captures, by record type (the WARC reader's names)
SKIPPED_TYPES = {"request": "request_record", "metadata": "metadata_record",
                 "warcinfo": "warcinfo_record"}
RECORD_TYPES = frozenset(CAPTURE_TYPES) | frozenset(SKIPPED_TYPES) | {"conversion", "continuation"}
_TYPE_WORDS = frozenset(t.encode("ascii") for t in RECORD_TYPES)
WARC_FIELDS = "application/warc-fields"
_WARCFILE = b"warcfile:"


def header_version(line):
    """(major, minor) of a ``!OpenWayback-CDXJ M.N`` line; None for another line; () for the
    header with no version that can be read."""
    if not line.startswith(HEADER):
        return None
    rest = line[len(HEADER):]
    if rest[:1] not in (b"", b" ", b"\t"):
        return None                             # '!OpenWayback-CDXJx': no header of this format
    match = _VERSION.fullmatch(rest.strip())
    return (int(match.group(1)), int(match.group(2))) if match else ()


def sniff(sample):
    """{} for an OpenWayback CDXJ 1.x file: the headers among its first special lines ('!',
    '@') are of major version 1, or, without a header, its first line is ``KEY W3C-DATE
    RECORD-TYPE {JSON}``; a reason for a header of another major version; else None."""
    versions = []
    for line in sample.lines:
        if not line.startswith((b"!", b"@")):
            break
        version = header_version(line.rstrip())
        if version is not None:
            versions.append(version)
    if versions:
        for version in versions:
            if not version:
                return {"format": None, "reason": "OpenWayback CDXJ of no version that can be read "
                                                  "(a header '!OpenWayback-CDXJ MAJOR.MINOR' was expected)"}
            if version[0] != MAJOR:
                return {"format": None, "reason": "OpenWayback CDXJ %d.%d: only major version %d is read"
                                                  % (version + (MAJOR,))}
        return {}
    first = sample.first
    if first is None:
        return None
    parts = first.split(b" ", 3)
    if len(parts) == 4 and parts[3].lstrip().startswith(b"{") and parts[2].lower() in _TYPE_WORDS \
            and (W3C_DATE.fullmatch(parts[1]) or DIGITS_14.fullmatch(parts[1])):
        return {}
    return None


def _text(record, name):
    """A JSON block's field as bytes (JSON where a string belongs: a number as its digits),
    None when absent or null."""
    value = record.get(name)
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    return jsonnum.dumps(value)


def warc_file(ref):
    """The WARC file name of a ``warcfile:NAME#OFFSET`` ref, else None."""
    if ref is None or not ref.startswith(_WARCFILE):
        return None
    return ref[len(_WARCFILE):].rsplit(b"#", 1)[0] or None


def parse(line, collection=None):
    """A Capture (profiler.model.capture) or a skip-reason str of one line. collection: the
    split's profiler.model.collection.Collections, which read the WARC file name of ``ref``, or
    None (the policy has no collection criterion)."""
    parts = line.split(b" ", 3)
    if len(parts) != 4 or any(p.startswith(b"{") for p in parts[:3]):
        return "bad_field_count"                # a JSON block, whose spaces split it, too early
    key_raw, ts_raw, type_raw, block = parts
    record = json_object(block)
    if record is None:
        return "bad_json"
    rec_type = type_raw.decode("utf-8", "replace").strip().lower()
    if rec_type not in CAPTURE_TYPES:
        return SKIPPED_TYPES.get(rec_type, "other_record")
    mime_raw = _text(record, "mct")
    if rec_type == "revisit":
        mime = normalise.REVISIT_MIME
    else:
        mime = normalise.mime(mime_raw) if mime_raw is not None else normalise.UNKNOWN
        if rec_type == "resource" and mime == WARC_FIELDS:
            return "warc_fields_record"
    ts = timestamp(ts_raw)
    if ts is None:
        return "bad_timestamp"
    length_raw = _text(record, "rle")
    length, ok = normalise.length(length_raw) if length_raw is not None else (0, True)
    if not ok:
        return "bad_length"
    uri = record.get("uri")
    if uri is not None and not isinstance(uri, str):
        return "bad_url"                        # a number or an object where the URL belongs
    if uri:
        key = urlkey(None, uri.encode("utf-8", "surrogateescape"))
    else:
        key = urlkey(key_raw, None) if key_raw else None    # its SURT form: the URL it stands for
    if key is None:
        return "bad_url"
    status_raw = _text(record, "hsc")
    digest_raw = _text(record, "sha")
    if digest_raw is None:
        digest_raw = _text(record, "dig")
    found = capture.new(urlkey=key, timestamp=ts, mime=mime,
                        status=normalise.status(status_raw) if status_raw is not None else normalise.UNKNOWN,
                        digest=normalise.digest(digest_raw) if digest_raw is not None else "-",
                        length=length, revisit=rec_type == "revisit")
    if collection is not None:
        found = found._replace(collection=collection(warc_file(_text(record, "ref"))))
    return with_plugin_fields(found, record)


def captures_of_lines(lines, split=None):
    """Captures or skip reasons of a split's lines (header lines, starting '!', left out)."""
    collection = collections.of_split(split) if split is not None else None
    for line in lines:
        if line.strip() and not line.startswith((b"!", b"@")):
            yield parse(line, collection)
