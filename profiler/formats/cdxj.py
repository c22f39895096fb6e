"""CDXJ lines (pywb, ipwb and Common Crawl styles) -> captures."""

from profiler import jsonnum
from profiler.formats.cdx import NON_CAPTURE_MIMES, NON_CAPTURE_PREFIXES, urlkey
from profiler.model import capture, collection as collections, normalise
from profiler.model.language import primary_language

_MIME_KEYS = ("mime", "mime_type", "mimetype")
_STATUS_KEYS = ("status", "status_code", "statuscode")
_DIGEST_KEYS = ("digest", "payload_digest")
_URL_KEYS = ("url", "original_uri", "original")
#: Common Crawl's ``languages`` (ISO 639-3 codes, most prominent first), then a ``lang`` tag
_LANG_KEYS = ("languages", "lang")


#: the JSON keys of a ZipNum secondary index's lines (one line per gzip block of its .cdx.gz)
_BLOCK_KEYS = frozenset(("offset", "length", "digest", "part", "lines"))
ZIPNUM_INDEX = ("a ZipNum secondary index (.idx: a line per gzip block of its .cdx.gz, "
                "not per capture): profile its .cdx.gz")


def zipnum_index(lines):
    """Whether a CDXJ file's first lines (special lines included) are a ZipNum secondary index
    (cdxj-indexer's, pywb's and py-wacz's ``.idx``, and js-wacz's, whose lines are ``KEY {JSON}``
    without a timestamp): a ``!meta`` line naming the
    ``cdxj-gzip`` format, or JSON blocks that only locate blocks (offset and length, no URL,
    MIME or status). Its lines are blocks of captures, and would count as one capture each."""
    data = []
    for line in lines:
        if line.startswith(b"!meta") and b'"cdxj-gzip' in line:
            return True
        if not line.startswith((b"!", b"@")):
            data.append(line)
    if not data:
        return False
    for line in data:
        parts = line.split(b" ", 2)
        block = parts[2] if len(parts) == 3 else parts[1] if len(parts) == 2 else None   # 'KEY {JSON}' too
        try:
            record = jsonnum.loads(block) if block is not None else None
        except jsonnum.JSONDecodeError:
            return False
        if not isinstance(record, dict) or not {"offset", "length"} <= record.keys() <= _BLOCK_KEYS:
            return False
    return True


#: capture fields a plugin reads from an index entry's JSON fields (a CDXJ line's block, a CDX
#: server's answer), {field: (JSON name, value_of)}: value_of(the value as text, or None when the
#: entry has none) gives the field (profiler.formats.registry.index_field adds them)
PLUGIN_FIELDS = {}


def _field(record, names):
    for name in names:
        value = record.get(name)
        if value is not None:
            if isinstance(value, str):
                return value.encode("utf-8", "surrogateescape")
            return jsonnum.dumps(value)          # a number, or JSON where a string belongs
    return None


def parse(line, collection=None):
    """Return a Capture (profiler.model.capture) or a skip-reason str. collection: the split's
    profiler.model.collection.Collections, which read the WARC file name (``filename``), or None
    (the policy has no collection criterion)."""
    parts = line.split(b" ", 2)
    if len(parts) != 3:
        return "bad_field_count"
    key_raw, ts_raw, block = parts
    record = json_object(block)
    if record is None:
        return "bad_json"
    return capture_of_record(key_raw, ts_raw, record, collection)


def json_object(block):
    """The JSON object of an index line's block, or None when the block is not one."""
    try:
        record = jsonnum.loads(block)
    except jsonnum.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def capture_of_record(key_raw, ts_raw, record, collection=None):
    """A Capture, or a skip-reason str, of an index entry's urlkey and timestamp (bytes) and its
    other fields by name (a dict: a CDXJ line's JSON block, a CDX server's JSON answer)."""
    mime = normalise.mime(_field(record, _MIME_KEYS) or b"-")
    url_raw = _field(record, _URL_KEYS)
    if mime.startswith(NON_CAPTURE_MIMES) or key_raw.startswith(NON_CAPTURE_PREFIXES) \
            or (url_raw or b"").startswith(NON_CAPTURE_PREFIXES) or key_raw == b"-":
        return "not_a_capture"          # as in a CDX (profiler.formats.cdx): an ARC's filedesc, a warcinfo entry
    ts = normalise.fractional_timestamp(ts_raw)
    if ts is None:
        return "bad_timestamp"
    length_raw = _field(record, ("length",))
    length, ok = normalise.length(length_raw) if length_raw is not None else (0, True)
    if not ok:
        return "bad_length"
    key = urlkey(key_raw, url_raw)
    if key is None:
        return "bad_url"
    status_raw = _field(record, _STATUS_KEYS)
    digest_raw = _field(record, _DIGEST_KEYS)
    lang = normalise.UNKNOWN
    for name in _LANG_KEYS:
        value = record.get(name)
        if value is not None:
            lang = primary_language(value)
            break
    found = capture.new(urlkey=key, timestamp=ts, mime=mime,
                        status=normalise.status(status_raw) if status_raw is not None else normalise.UNKNOWN,
                        digest=normalise.digest(digest_raw) if digest_raw is not None else "-",
                        length=length, revisit=mime == normalise.REVISIT_MIME, lang=lang)
    if collection is not None:
        found = found._replace(collection=collection(_field(record, ("filename",))))
    return with_plugin_fields(found, record) if PLUGIN_FIELDS else found


def with_plugin_fields(found, record):
    """The capture with the fields plugins read from its index entry's JSON object (PLUGIN_FIELDS):
    a CDXJ's, a CDX server's and an OpenWayback CDXJ's alike."""
    if PLUGIN_FIELDS:
        found = found._replace(**{field: value_of(_text(_field(record, (name,))))
                                  for field, (name, value_of) in PLUGIN_FIELDS.items()})
    return found


def _text(raw):
    return raw.decode("utf-8", "surrogateescape") if raw is not None else None


def captures_of_lines(lines, split=None):
    """Captures or skip reasons of a split's lines."""
    collection = collections.of_split(split) if split is not None else None
    for line in lines:
        if line and not line.startswith((b"!", b"@")):
            yield parse(line, collection)
