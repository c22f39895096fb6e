"""CDXJ lines (pywb, ipwb and Common Crawl styles) -> captures."""

from profiler import jsonnum
from profiler.formats.cdx import NON_CAPTURE_MIMES, urlkey
from profiler.model import capture, normalise
from profiler.model.language import primary_language

_MIME_KEYS = ("mime", "mime_type")
_STATUS_KEYS = ("status", "status_code")
_DIGEST_KEYS = ("digest", "payload_digest")
_URL_KEYS = ("url", "original_uri", "original")
#: Common Crawl's ``languages`` (ISO 639-3 codes, most prominent first), then a ``lang`` tag
_LANG_KEYS = ("languages", "lang")


def _field(record, names):
    for name in names:
        value = record.get(name)
        if value is not None:
            if isinstance(value, str):
                return value.encode("utf-8", "surrogateescape")
            return jsonnum.dumps(value)          # a number, or JSON where a string belongs
    return None


def parse(line):
    """Return a Capture (profiler.model.capture) or a skip-reason str."""
    parts = line.split(b" ", 2)
    if len(parts) != 3:
        return "bad_field_count"
    key_raw, ts_raw, block = parts
    try:
        record = jsonnum.loads(block)
    except jsonnum.JSONDecodeError:
        return "bad_json"
    if not isinstance(record, dict):
        return "bad_json"
    mime_raw = _field(record, _MIME_KEYS) or b"-"
    if mime_raw.startswith(NON_CAPTURE_MIMES):
        return "not_a_capture"
    ts = normalise.timestamp(ts_raw)
    if ts is None:
        return "bad_timestamp"
    length_raw = _field(record, ("length",))
    length, ok = normalise.length(length_raw) if length_raw is not None else (0, True)
    if not ok:
        return "bad_length"
    key = urlkey(key_raw, _field(record, _URL_KEYS))
    if key is None:
        return "bad_url"
    status_raw = _field(record, _STATUS_KEYS)
    digest_raw = _field(record, _DIGEST_KEYS)
    mime = normalise.mime(mime_raw)
    lang = normalise.UNKNOWN
    for name in _LANG_KEYS:
        value = record.get(name)
        if value is not None:
            lang = primary_language(value)
            break
    return capture.new(urlkey=key, timestamp=ts, mime=mime,
                       status=normalise.status(status_raw) if status_raw is not None else normalise.UNKNOWN,
                       digest=normalise.digest(digest_raw) if digest_raw is not None else "-",
                       length=length, revisit=mime == normalise.REVISIT_MIME, lang=lang)


def captures_of_lines(lines, split=None):
    """Captures or skip reasons of a split's lines."""
    for line in lines:
        if line and not line.startswith((b"!", b"@")):
            yield parse(line)
