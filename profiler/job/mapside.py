"""Map side: read one input split, parse captures, aggregate them per URI-R.

In a sorted index a URI-R's captures are adjacent, so a small in-mapper table turns
many captures into one record per URI-R. Records of one URI-R from several splits or
files are merged by the reducer, so the result never depends on how input was cut.
"""

import functools
import importlib
import os
import zlib


import orjson

from profiler.accel import fast
from profiler.formats import cdx, cdxj
from profiler.formats.readers import iter_chunks, iter_lines
from profiler.job import bigsums
from profiler.job.progress import TaskProgress

#: cell = (period, mime, status, digest, revisit) -> [count, bytes, max_length, first, last]
COUNT, BYTES, MAXLEN, FIRST, LAST = range(5)
#: URI-Rs a map task holds before it flushes them
TABLE_LIMIT = 2000
#: whole-file readers (path, opener) -> captures and skip reasons, by sniffed format: the
#: iter_captures of these modules, imported when a split needs them (a CDX task never does, and
#: warcio and the like are costly imports)
ARCHIVE_READERS = {"warc": "profiler.formats.warc", "ache": "profiler.formats.ache", "fastwarc": "profiler.formats.warc_fast"}


def archive_reader(name):
    """The iter_captures(path, opener) of an archive reader of ARCHIVE_READERS."""
    return importlib.import_module(ARCHIVE_READERS[name]).iter_captures


def _inflating(opener):
    """An opener whose files read the gzip-decompressed bytes of the file opener opens."""
    import contextlib
    import gzip

    @contextlib.contextmanager
    def open_inflated(path, mode="rb"):
        with opener(path, mode) as raw, gzip.GzipFile(fileobj=raw, mode="rb") as f:
            yield f
    return open_inflated


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
        if split.get("whole_gzip"):     # one gzip stream over all records: read it as it inflates
            yield "not_chunked"
            yield from archive_reader("warc")(split["path"], _inflating(opener))
            return
        yield from archive_reader(split.get("reader", split["format"]))(split["path"], opener)
        return
    parse = parser_for(split)
    is_cdx = split["format"] == "cdx"
    counts = {}
    try:
        for line in iter_lines(split["path"], split.get("start", 0), split.get("end"),
                               split.get("compression"), opener, counts):
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
    for reason, n in counts.items():
        for _ in range(n):
            yield reason


def cell_items(ck, c):
    """A cell as the map side writes it: [period, mime, status, digest, revisit, count, bytes,
    max_length, first, last], or for one capture [.., 1, bytes, timestamp] (its largest length is
    its bytes and its last timestamp its first: 8 items, a fifth less of the map output; the
    reducers read both, full_cell)."""
    if c[COUNT] == 1:
        return list(ck) + [1, c[BYTES], c[FIRST]]
    return list(ck) + c


def full_cell(cell):
    """A written cell in its 10 items: one of 8 ([.., count, bytes, timestamp], cell_items) has
    its largest length = bytes and its last timestamp = its first."""
    if len(cell) == 8:
        return cell[:7] + [cell[6], cell[7], cell[7]]
    if len(cell) != 10:
        raise ValueError("a cell has 8 or 10 items, not %d" % len(cell))
    return cell


class CaptureAggregator:
    """Aggregates captures per URI-R in a bounded table; ``flush()`` yields (urlkey, cells)."""

    def __init__(self, period_len, resolve_revisits=True, limit=TABLE_LIMIT, digest_filter=None,
                 max_bytes=None):
        self.period_len = period_len
        self.max_bytes = max_bytes      # the most the lengths added may sum to (profiler.job.bigsums), or None
        self.bytes_total = 0
        # a record's digests into the map task's filter (profiler.runtime.digestfilter), if it has one
        self._add_digests = None if digest_filter is None else \
            functools.partial(fast.load().digest_filter_add, digest_filter)
        self.resolve = resolve_revisits
        self.limit = limit
        self.table = {}
        self.captures = 0
        self.skipped = {}
        self.last = None        # the URI-R of the last capture

    def add(self, capture):
        """Add a parsed capture, or count a skip reason; returns True when the table is full."""
        if capture.__class__ is str:
            self.skipped[capture] = self.skipped.get(capture, 0) + 1
            return False
        urlkey, ts, mime, status, digest, length, revisit = capture
        if self.max_bytes is not None and length > self.max_bytes - self.bytes_total:
            bigsums.past_budget()
        self.bytes_total += length
        self.captures += 1
        self.last = urlkey
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

    def flush(self, keep_last=False):
        """Yield (urlkey bytes, [cell, ...]) and empty the table; with keep_last, but for the URI-R
        of the last capture. A table fills up on a URI-R's first capture, and in a sorted index its
        next captures follow: kept, it is written once, and the records stay in the index's order."""
        table, self.table = self.table, {}
        kept = self.last if keep_last and self.last in table else None
        if kept is not None:
            self.table[kept] = table.pop(kept)
        for urlkey, cells in table.items():
            if self._add_digests is not None:
                self._add_digests([ck[3] for ck in cells])
            yield urlkey.encode("utf-8"), [cell_items(ck, c) for ck, c in cells.items()]

    def meta(self):
        return {"captures": self.captures, "skipped": dict(self.skipped)}


def map_split(manifest_line, period_len, resolve_revisits=True, opener=open, lines=False, digest_filter=None):
    """The whole map side for one manifest line: yields (key, value) records.

    A value is a list of cells, or the same list already JSON-encoded (bytes, from the
    compiled aggregator; profiler.job.protocol writes both alike). With ``lines``, the compiled
    aggregator's records come as (None, bytes of key<TAB>value lines) instead, a table at a time.
    ``digest_filter``: the map task's (profiler.runtime.digestfilter), which every record's digests go
    into; it needs the compiled module.
    """
    split = orjson.loads(manifest_line)
    if "path_hex" in split:                     # a file name that is not UTF-8 (pipeline.encoded_path)
        split["path"] = os.fsdecode(bytes.fromhex(split.pop("path_hex")))
    progress = TaskProgress(split)
    opener = progress.opener(opener)
    module = fast.load()
    if module is not None and split["format"] == "cdx":
        yield from _map_cdx_compiled(module, split, period_len, resolve_revisits, opener, lines, digest_filter,
                                     progress)
        return
    agg = CaptureAggregator(period_len, resolve_revisits, digest_filter=digest_filter,
                            max_bytes=bigsums.budget(split))
    n = 0
    for parsed in iter_parsed(split, opener):
        if agg.add(parsed):
            yield from agg.flush(keep_last=True)
        n += 1
        if progress and not n & 4095:
            progress.update(agg.captures)
    yield from agg.flush()
    progress.done(agg.captures)
    yield b"!meta", agg.meta()


def _map_cdx_compiled(module, split, period_len, resolve_revisits, opener, lines=False, digest_filter=None,
                      progress=None):
    """map_split for a CDX split with the compiled parser and aggregator (profiler/accel/_apfast.c).

    It reads whole chunks of lines; a line it does not take (a legend, a line with a skip
    reason, a URL key that needs surt() or escaping) comes back here and goes through
    profiler.formats.cdx's parser, in its place among the lines. Same records as the Python path.
    """
    letters = split["fields"]
    agg = module.Aggregator(period_len, resolve_revisits, TABLE_LIMIT, letters)
    max_bytes = bigsums.budget(split)
    if max_bytes is None:
        max_bytes = bigsums.MAX_TOTAL
    agg.set_max_bytes(max_bytes)
    if digest_filter is not None:
        agg.set_digest_filter(digest_filter)
    if lines:
        def flush(keep_last=False):
            return ((None, agg.flush_raw(keep_last)),)
    else:
        flush = agg.flush
    parse = cdx.make_parser(letters)
    skipped = {}
    try:
        for buf in iter_chunks(split["path"], split.get("start", 0), split.get("end"),
                               split.get("compression"), opener, skipped):
            if progress:
                progress.update(agg.captures)
            pos = 0
            while True:
                state, pos, end = agg.feed(buf, pos)
                if state == 0:
                    break
                if state == 2:
                    yield from flush(True)
                    continue
                line = buf[pos:end]
                pos = end + 1
                if line.endswith(b"\r"):
                    line = line[:-1]
                if cdx.is_legend(line):
                    try:
                        letters = cdx.legend_letters(line)
                        parse = cdx.make_parser(letters)
                        agg.set_layout(letters)
                    except ValueError:
                        skipped["bad_legend"] = skipped.get("bad_legend", 0) + 1
                    continue
                capture = parse(line)
                if capture.__class__ is str:
                    skipped[capture] = skipped.get(capture, 0) + 1
                elif capture[5] > max_bytes - agg.bytes_total:
                    bigsums.past_budget()
                elif agg.add_capture(*capture):
                    yield from flush(True)
    except EOFError:
        skipped["truncated_file"] = skipped.get("truncated_file", 0) + 1
    except (OSError, zlib.error, ValueError):
        skipped["unreadable_file"] = skipped.get("unreadable_file", 0) + 1
    yield from flush()
    if progress:
        progress.done(agg.captures)
    yield b"!meta", {"captures": agg.captures, "skipped": skipped}
