"""Map side: read one input split, parse captures, aggregate them per URI-R.

In a sorted index a URI-R's captures are adjacent, so a small in-mapper table turns
many captures into one record per URI-R. Records of one URI-R from several splits or
files are merged by the reducer, so the result never depends on how input was cut.
"""

import zlib

import orjson

from profiler import ache, cdx, cdxj, warc, warc_fast
from profiler.readers import iter_lines

#: cell = (period, mime, status, digest, revisit) -> [count, bytes, max_length, first, last]
COUNT, BYTES, MAXLEN, FIRST, LAST = range(5)
#: whole-file readers (path, opener) -> captures and skip reasons, by sniffed format
ARCHIVE_READERS = {"warc": warc.iter_captures, "ache": ache.iter_captures, "fastwarc": warc_fast.iter_captures}


def parser_for(split):
    """The line parser of a split's format."""
    if split["format"] == "cdxj":
        return cdxj.parse
    return cdx.make_parser(split["fields"])


def iter_parsed(split, opener=open):
    """Yield capture tuples or skip-reason strs for the lines of one split.

    File-level failures end the split with a reason ('unreadable_file', 'truncated_file') after
    the lines read so far.
    """
    if split["format"] in ARCHIVE_READERS:
        yield from ARCHIVE_READERS[split.get("reader", split["format"])](split["path"], opener)
        return
    parse = parser_for(split)
    is_cdx = split["format"] == "cdx"
    try:
        for line in iter_lines(split["path"], split.get("start", 0), split.get("end"),
                               split.get("compression"), opener):
            if not line or line.startswith((b"!", b"@")):
                continue
            if is_cdx and cdx.is_legend(line):
                try:
                    parse = cdx.make_parser(cdx.legend_letters(line))
                except ValueError:
                    yield "bad_legend"
                continue
            yield parse(line)
    except EOFError:
        yield "truncated_file"
    except (OSError, zlib.error, ValueError):
        yield "unreadable_file"


class CaptureAggregator:
    """Aggregates captures per URI-R in a bounded table; ``flush()`` yields (urlkey, cells)."""

    def __init__(self, period_len, resolve_revisits=True, limit=50000):
        self.period_len = period_len
        self.resolve = resolve_revisits
        self.limit = limit
        self.table = {}
        self.captures = 0
        self.skipped = {}

    def add(self, capture):
        """Add a parsed capture, or count a skip reason; returns True when the table is full."""
        if capture.__class__ is str:
            self.skipped[capture] = self.skipped.get(capture, 0) + 1
            return False
        urlkey, ts, mime, status, digest, length, revisit = capture
        self.captures += 1
        cells = self.table.get(urlkey)
        if cells is None:
            cells = self.table[urlkey] = {}
        if revisit and self.resolve:
            ck = (ts[:self.period_len], "", "", digest, 1)
        else:
            ck = (ts[:self.period_len], mime, status, digest, 0)
        c = cells.get(ck)
        if c is None:
            cells[ck] = [1, length, length, ts, ts]
        else:
            c[0] += 1
            c[1] += length
            if length > c[2]:
                c[2] = length
            if ts < c[3]:
                c[3] = ts
            elif ts > c[4]:
                c[4] = ts
        return len(self.table) >= self.limit

    def flush(self):
        """Yield (urlkey bytes, [cell, ...]) and empty the table."""
        table, self.table = self.table, {}
        for urlkey, cells in table.items():
            yield urlkey.encode("utf-8"), [list(ck) + c for ck, c in cells.items()]

    def meta(self):
        return {"captures": self.captures, "skipped": dict(self.skipped)}


def map_split(manifest_line, period_len, resolve_revisits=True, opener=open):
    """The whole map side for one manifest line: yields (key, value) records."""
    split = orjson.loads(manifest_line)
    agg = CaptureAggregator(period_len, resolve_revisits)
    for parsed in iter_parsed(split, opener):
        if agg.add(parsed):
            yield from agg.flush()
    yield from agg.flush()
    yield b"!meta", agg.meta()
