"""A CDX server's JSON answers saved to a file -> captures.

Two shapes: JSON lines, one object a line with the entry's fields by name (pywb and Common
Crawl's index server with ``output=json``: ``{"urlkey": ..., "timestamp": ..., "url": ...}``),
and the Wayback CDX API's ``output=json``: one JSON array, a row a line, its first row naming
the fields (``[["urlkey","timestamp","original","mimetype","statuscode","digest","length"],``).
The names of that first row reach every split of the file as its ``fields``, as a CDX legend's
letters do.
"""

import orjson

from profiler.formats import cdxj
from profiler.model import collection as collections

#: the names the first row needs: a timestamp, and a SURT or the URL
_TIMESTAMP = "timestamp"
_KEYS = ("urlkey", "url", "original")


def _row(line):
    """The JSON value of one line of either shape: a row's trailing ',' and the array's
    brackets on the first and last rows left out; None for a line of brackets alone."""
    line = line.strip()
    if line.endswith(b","):
        line = line[:-1].rstrip()
    if line.startswith(b"[["):
        line = line[1:]
    if line.endswith(b"]]"):
        line = line[:-1]
    if line in (b"", b"[", b"]"):
        return None
    return orjson.loads(line)


def _is_entry(record):
    return isinstance(record, dict) and _TIMESTAMP in record and any(k in record for k in _KEYS)


def _names(row):
    """The field names of a Wayback CDX API header row, or None when the row is not one."""
    if isinstance(row, list) and row and all(isinstance(n, str) for n in row) \
            and _TIMESTAMP in row and any(k in row for k in _KEYS):
        return row
    return None


def sniff(sample):
    """{} for JSON lines of entries, {'fields': 'NAME NAME ...'} for a Wayback CDX API array,
    else None."""
    first = sample.first
    if first is None or not first.lstrip().startswith((b"{", b"[")):
        return None
    try:
        row = _row(first)
    except orjson.JSONDecodeError:
        return None
    if _is_entry(row):
        return {}
    names = _names(row)
    if names is not None:
        return {"fields": " ".join(names)}
    return None


def captures_of_lines(lines, split=None):
    """Captures or skip reasons of a split's lines: 'bad_json' for a line that is no entry of
    the file's shape (a row of another length than the names), 'bad_field_count' for a row
    of another length than the header's."""
    split = split or {}
    names = split.get("fields")
    names = names.split(" ") if names else None
    collection = collections.of_split(split) if split else None
    for line in lines:
        if not line.strip():
            continue
        try:
            row = _row(line)
        except orjson.JSONDecodeError:
            yield "bad_json"
            continue
        if row is None:
            continue
        if names is None:
            record = row if isinstance(row, dict) else None
        elif isinstance(row, list):
            if row == names:
                continue                    # the header row
            if len(row) != len(names):
                yield "bad_field_count"
                continue
            record = dict(zip(names, row))
        else:
            record = None
        if record is None:
            yield "bad_json"
            continue
        ts = record.get(_TIMESTAMP)
        key = record.get("urlkey")
        yield cdxj.capture_of_record(
            key.encode("utf-8", "surrogateescape") if isinstance(key, str) else b"-",
            ts.encode("utf-8", "surrogateescape") if isinstance(ts, str) else b"-" if ts is None else
            orjson.dumps(ts), record, collection)
