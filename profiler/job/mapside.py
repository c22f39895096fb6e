"""Map side: read one input split, parse captures, aggregate them per URI-R.

In a sorted index a URI-R's captures are adjacent, so a small in-mapper table turns
many captures into one record per URI-R. Records of one URI-R from several splits or
files are merged by the reducer, so the result never depends on how input was cut.
"""

import functools
import os
import zlib

import orjson

from profiler.formats import cdx, cdxj, inputs, registry
from profiler.io.names import display_name
from profiler.io.readers import iter_chunks
from profiler.job import bigsums
from profiler.job.cells import BYTES, CellKeys, FIRST, LAST, MAXLEN, cell_items
from profiler.job.progress import TaskProgress
from profiler.model import collection as collections
from profiler.model.language import normalise_language

#: URI-Rs a map task holds before it flushes them
TABLE_LIMIT = 2000
#: CDXJ language entries (profiler.model.language.primary_language) the compiled map side learns
LANGUAGE_TABLE = 4096


class CaptureAggregator:
    """Aggregates captures per URI-R in a bounded table; ``flush()`` yields (urlkey, cells).

    ``on_record(digests)``, when given, sees the digests of each record written (a runner may
    sketch them: profiler.runtime.digestfilter).
    """

    def __init__(self, policy, resolve_revisits=True, limit=TABLE_LIMIT, on_record=None, max_bytes=None):
        self.cell_key = CellKeys(policy, resolve_revisits)
        self.k = self.cell_key.k
        self.max_bytes = max_bytes      # the most the lengths added may sum to (profiler.job.bigsums), or None
        self.bytes_total = 0
        self.on_record = on_record
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
        ck = self.cell_key(capture)
        if self.cell_key.checked:
            bad = self.cell_key.bad_value(ck)
            if bad is not None:
                self.skipped[bad] = self.skipped.get(bad, 0) + 1
                return False
        urlkey, ts, length = capture.urlkey, capture.timestamp, capture.length
        if self.max_bytes is not None and length > self.max_bytes - self.bytes_total:
            bigsums.past_budget()
        self.bytes_total += length
        self.captures += 1
        self.last = urlkey
        cells = self.table.get(urlkey)
        if cells is None:
            cells = self.table[urlkey] = {}
        c = cells.get(ck)
        if c is None:
            cells[ck] = [1, length, length, ts, ts]
        else:
            c[0] += 1
            c[BYTES] += length
            if length > c[MAXLEN]:
                c[MAXLEN] = length
            if ts < c[FIRST]:
                c[FIRST] = ts
            elif ts > c[LAST]:
                c[LAST] = ts
        return len(self.table) >= self.limit

    def flush(self, keep_last=False):
        """Yield (urlkey bytes, [cell, ...]) and empty the table; with keep_last, but for the URI-R
        of the last capture. A table fills up on a URI-R's first capture, and in a sorted index its
        next captures follow: kept, it is written once, and the records stay in the index's order."""
        table, self.table = self.table, {}
        kept = self.last if keep_last and self.last in table else None
        if kept is not None:
            self.table[kept] = table.pop(kept)
        k = self.k
        for urlkey, cells in table.items():
            if self.on_record is not None:
                self.on_record([ck[k] for ck in cells])
            yield urlkey.encode("utf-8"), [cell_items(ck, c) for ck, c in cells.items()]

    def meta(self):
        return {"captures": self.captures, "skipped": dict(self.skipped)}


def decode_split(manifest_line):
    """A manifest line's split; a file name that is not UTF-8 comes as hex in 'path_hex'
    (profiler.run.profile.encoded_path)."""
    split = orjson.loads(manifest_line)
    if "path_hex" in split:
        split["path"] = os.fsdecode(bytes.fromhex(split.pop("path_hex")))
    return split


class InputReplaced(Exception):
    """A split's file is no longer the file the run planned its splits from (replaced by a
    rename meanwhile): the splits read so far and those still to come would mix two files."""


def checked_opener(opener, split):
    """The opener, checking that the file it opens for a split is the one the run planned (its
    identity from profiler.formats.inputs.sniff, checked on the host that took it)."""
    planned = split.get("file")
    if not planned or planned[0] != inputs.HOST:
        return opener

    def checked(path, mode="rb"):
        f = opener(path, mode)
        try:
            st = os.fstat(f.fileno())
        except (AttributeError, OSError, ValueError):
            st = None
        if st is not None and [st.st_dev, st.st_ino] != list(planned[1:]):
            f.close()
            raise InputReplaced("%s was replaced while the run read it (another file has its name now): "
                                "run again" % display_name(path))
        return f
    return checked


def map_split(manifest_line, policy, kernels, resolve_revisits=True, opener=open, lines=False, sketch=None):
    """The whole map side for one manifest line: yields (key, value) records.

    A value is a list of cells, or the same list already JSON-encoded (bytes, from the
    compiled aggregator; profiler.job.protocol writes both alike). With ``lines``, the compiled
    aggregator's records come as (None, bytes of key<TAB>value lines) instead, a table at a time.
    ``sketch``: a digest filter (profiler.runtime.digestfilter) every record's digests go into;
    it needs the compiled kernels.
    """
    split = decode_split(manifest_line)
    progress = TaskProgress(split)
    opener = progress.opener(checked_opener(opener, split))
    if kernels.parses(split["format"]):
        yield from _map_lines_compiled(kernels, split, resolve_revisits, opener, lines, sketch, progress)
        return
    on_record = None
    if sketch is not None:
        add = kernels.module.digest_filter_add

        def on_record(digests):
            add(sketch, digests)
    agg = CaptureAggregator(policy, resolve_revisits, limit=TABLE_LIMIT, on_record=on_record,
                            max_bytes=kernels.budget(split))
    n = 0
    for parsed in registry.captures(split, opener):
        if agg.add(parsed):
            yield from agg.flush(keep_last=True)
        n += 1
        if progress and not n & 4095:
            progress.update(agg.captures)
    yield from agg.flush()
    progress.done(agg.captures)
    yield b"!meta", agg.meta()


def _map_lines_compiled(kernels, split, resolve_revisits, opener, lines=False, sketch=None, progress=None):
    """map_split for a CDX or CDXJ split with the compiled parser and aggregator (profiler.accel).

    It reads whole chunks of lines; a line it does not take (a CDX legend, a line with a skip
    reason, a URL key that needs surt() or escaping, a JSON block it does not read as orjson
    does) comes back here and goes through the format's Python parser (profiler.formats.cdx or
    .cdxj), in its place among the lines. A CDXJ language entry it has not met yet comes back
    once: its code, by normalise_language, goes into the aggregator's table (at most
    LANGUAGE_TABLE entries; past them the lines come back whole). So does a file name (CDX ``g``,
    CDXJ ``filename``) when a collection pattern reads them: its collection goes into the
    aggregator's table (profiler.model.collection). Same records as the Python path.
    """
    letters = split["fields"] if split["format"] == "cdx" else None
    agg = kernels.aggregator(resolve_revisits, TABLE_LIMIT, letters)
    agg.set_language_limit(LANGUAGE_TABLE)
    collection = collections.of_split(split)
    if collection is not None:
        agg.set_collection(collection.default, collection.by_name)
    cell_key = CellKeys(kernels.policy, resolve_revisits)
    max_bytes = kernels.budget(split)
    if max_bytes is None:
        max_bytes = bigsums.MAX_TOTAL
    agg.set_max_bytes(max_bytes)
    if sketch is not None:
        agg.set_digest_filter(sketch)
    if lines:
        def flush(keep_last=False):
            return ((None, agg.flush_raw(keep_last)),)
    else:
        flush = agg.flush
    if letters is not None:
        parse = cdx.make_parser(letters, collection)
    else:
        parse = cdxj.parse if collection is None else functools.partial(cdxj.parse, collection=collection)
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
                if state == 3:
                    entry = agg.pending_language()
                    agg.add_language(entry, normalise_language(entry.decode("ascii")))
                    continue
                if state == 4:
                    name = agg.pending_collection()
                    agg.add_collection(name, collection(name))
                    continue
                line = buf[pos:end]
                pos = end + 1
                if line.endswith(b"\r"):
                    line = line[:-1]
                if letters is not None and cdx.is_legend(line):
                    try:
                        letters = cdx.legend_letters(line)
                        parse = cdx.make_parser(letters, collection)
                        agg.set_layout(letters)
                    except ValueError:
                        skipped["bad_legend"] = skipped.get("bad_legend", 0) + 1
                    continue
                capture = parse(line)
                if capture.__class__ is str:
                    skipped[capture] = skipped.get(capture, 0) + 1
                elif capture.length > max_bytes - agg.bytes_total:
                    bigsums.past_budget()
                elif agg.add_cell(capture.urlkey, capture.timestamp, cell_key(capture), capture.length):
                    yield from flush(True)
    except EOFError:
        skipped["truncated_file"] = skipped.get("truncated_file", 0) + 1
    except (OSError, zlib.error, ValueError):
        skipped["unreadable_file"] = skipped.get("unreadable_file", 0) + 1
    yield from flush()
    if progress:
        progress.done(agg.captures)
    yield b"!meta", {"captures": agg.captures, "skipped": skipped}
