"""The URI-R and digest sets kept beside a nightly profile, and the scan that fills them.

A night can fold new captures into the published profile exactly only when they share no
URI-R and no payload digest with the captures already profiled. The sets are byte-sorted,
de-duplicated gzip text files (one urlkey or digest a line), so checking a night's sets
against them and writing their union are streaming passes; memory holds only the night's own
sets (spilled to sorted runs on disk past ``SPILL`` items).
"""

import bisect
import gzip
import heapq
import os
import tempfile

import orjson

from profiler.formats import captures as captures_format, inputs as inputs_mod, registry

SPILL = 1000000
CHUNK_ITEMS = 100000
CHUNK_BYTES = 8 << 20


class SortedSet:
    """Collects byte strings; ``sorted_items()`` yields them once each, in byte order."""

    def __init__(self, folder, limit=SPILL):
        self.folder = folder
        self.limit = limit
        self.items = set()
        self.runs = []

    def add(self, item):
        self.items.add(item)
        if len(self.items) >= self.limit:
            self._spill()

    def _spill(self):
        fd, path = tempfile.mkstemp(prefix="run-", suffix=".gz", dir=self.folder)
        os.close(fd)
        write_set(path, sorted(self.items))
        self.runs.append(path)
        self.items = set()

    def sorted_items(self):
        if not self.runs:
            return sorted(self.items)
        streams = [read_set(p) for p in self.runs] + [iter(sorted(self.items))]
        return unique(heapq.merge(*streams))


def unique(items):
    previous = None
    for item in items:
        if item != previous:
            yield item
            previous = item


def _batches(items, size=CHUNK_ITEMS):
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def write_set(path, items):
    """Write sorted byte strings one a line into a gzip file (not atomic: callers rename it)."""
    return _write_chunks(path, _batches(items))


def _write_chunks(path, chunks):
    n = 0
    with gzip.open(path, "wb", compresslevel=1) as f:
        for chunk in chunks:
            if chunk:
                f.write(b"\n".join(chunk) + b"\n")
                n += len(chunk)
    return n


def read_chunks(path, size=None):
    """The items of a set file in order, as lists of about ``size`` (CHUNK_BYTES) bytes of lines."""
    size = size or CHUNK_BYTES
    with gzip.open(path, "rb") as f:
        rest = b""
        while True:
            block = f.read(size)
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n") + 1
            rest = block[cut:]
            if cut:
                yield block[:cut - 1].split(b"\n")
        if rest:
            yield [rest]


def read_set(path):
    """The items of a set file, in order."""
    for chunk in read_chunks(path):
        yield from chunk


def union(path, new_sorted, out_path, common=None):
    """Write the union of the set file at path (None: empty) and a sorted iterable of unique
    items; returns its size. Streams the file in chunks; each chunk is merged with the new items
    that sort before its end (list sorts of two sorted runs: linear, in C). ``common``: a set the
    new items the file already holds are added to (in the same pass)."""
    new = new_sorted if isinstance(new_sorted, list) else list(new_sorted)
    if not path:
        return _write_chunks(out_path, _batches(new))

    def merged():
        i = 0
        for chunk in read_chunks(path):
            j = bisect.bisect_right(new, chunk[-1], i)
            if j > i:
                mine = set(new[i:j])
                extra = mine.difference(chunk)
                if common is not None:
                    common.update(mine - extra)
                if extra:
                    chunk = chunk + sorted(extra)
                    chunk.sort()
                i = j
            yield chunk
        yield new[i:]
    return _write_chunks(out_path, merged())


class Scan:
    """One client-side pass over input files: their URI-Rs, digests and (optionally) captures.

    ``captures_path``: also write every capture into a captures file (every field by name:
    profiler.formats.captures), so subsets of them can be profiled later as they were read.
    ``pairs``: also keep the (urlkey, digest) pairs in memory (a night's worth, for the revisit
    check).
    """

    def __init__(self, folder, captures_path=None, pairs=False):
        self.urirs = SortedSet(folder)
        self.digests = SortedSet(folder)
        self.pairs = set() if pairs else None
        self.captures_path = captures_path
        self.captures = 0

    def run(self, files, split_size=inputs_mod.DEFAULT_SPLIT_SIZE, warc_reader="warcio", progress=None,
            detect_language=False):
        infos = [inputs_mod.sniff(f) for f in files]
        splits = registry.choose_warc_reader(inputs_mod.plan_splits([i for i in infos if i["format"]], split_size),
                                             warc_reader)
        if detect_language:
            splits = registry.detect_languages(splits)
        out = open(self.captures_path, "wb") if self.captures_path else None
        try:
            for n, split in enumerate(splits, 1):
                for capture in registry.captures(split):
                    if capture.__class__ is str:
                        continue
                    self._add(capture, out)
                if progress:
                    progress(n, len(splits))
        finally:
            if out:
                out.close()
        return self

    def _add(self, capture, out):
        u = capture.urlkey.encode("utf-8", "surrogateescape")
        self.captures += 1
        self.urirs.add(u)
        if capture.digest != "-":
            d = capture.digest.encode("utf-8", "surrogateescape")
            self.digests.add(d)
            if self.pairs is not None:
                self.pairs.add((u, d))
        if out is not None:
            out.write(captures_format.line(capture))


def write_subset(captures_path, out_path, keep):
    """Copy the lines of a Scan's captures file for which ``keep(urlkey, digest)`` is true (both
    bytes): a captures file of those captures."""
    n = 0
    with open(captures_path, "rb") as f, open(out_path, "wb") as out:
        for line in f:
            record = orjson.loads(line)
            if keep(record["urlkey"].encode("utf-8", "surrogateescape"),
                    record["digest"].encode("utf-8", "surrogateescape")):
                out.write(line)
                n += 1
    return n
