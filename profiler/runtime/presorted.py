"""A shuffle's sort replaced by a merge when its inputs are in a few long sorted runs already.

The map outputs of a sorted index are sorted but for their last line (each map task's ``!meta``
record), and step 1's reducers write their records in sorted runs of some MiB. Sorting them again
was the local runner's longest serial work between tasks, and past GNU sort's buffer it spills
to temporary files.

``plan`` cuts each file into its runs of lines in byte order; the lines of short runs are sorted
in memory. ``split`` cuts a plan into parts at key boundaries, each part a range of every run,
and a reduce task reads its part merged (``merged_chunks``): nothing is sorted, and nothing is
written between the map and the reduce tasks. The order is ``LC_ALL=C sort``'s (bytes; equal lines are the same bytes, so their order
cannot show). Input that is not in such runs (more than ``MAX_RUNS`` a file, more than
``MAX_STREAMS`` long ones, more than ``SHORT_LIMIT`` bytes in short ones) has no plan: the
caller sorts it.

Lines are key<TAB>value lines, as every step of the job writes them: a key's lines are never
cut apart.
"""

import collections
import concurrent.futures
import heapq
import os

import orjson

from profiler.accel import fast
from profiler.io.readers import iter_chunks, lines_of_chunks
from profiler.job.lines import key_of

#: runs shorter than this are sorted in memory with the others' lines
SHORT_RUN = 64 << 10
#: bytes of short runs, over all files, sorted in memory; past this the files are sorted
SHORT_LIMIT = 4 << 20
#: runs a file may have before it counts as unsorted
MAX_RUNS = 1024
#: long runs merged at once
MAX_STREAMS = 1024
#: a merge's read buffers together, the largest one and the smallest
BUFFERS = 16 << 20
BUFFER = 1 << 20
MIN_BUFFER = 16 << 10
#: lines sampled in each run to cut a plan into parts of about equal size
SAMPLES = 64

#: the lines to merge: streams [(path, offset, length), ...] of sorted lines, and tail, sorted lines
Plan = collections.namedtuple("Plan", "streams tail")


def available():
    """True where the compiled merge is (profiler.accel._apfast on a POSIX system)."""
    module = fast.load()
    return module is not None and hasattr(module, "LineMerger")


def sorted_runs(path, max_runs=MAX_RUNS, bufsize=BUFFER):
    """[(offset, length), ...] of the runs of lines in byte order that path is made of, or None
    when it has more than max_runs."""
    fd = os.open(path, os.O_RDONLY)
    try:
        lengths = fast.load().sorted_runs(fd, bufsize, max_runs)
    finally:
        os.close(fd)
    if lengths is None:
        return None
    runs, offset = [], 0
    for length in lengths:
        runs.append((offset, length))
        offset += length
    return runs


def range_lines(path, offset, length):
    """The lines (without newlines) of length bytes of path at offset, a run of whole lines (a last
    line without a newline counts), read as they are needed."""
    return lines_of_chunks(iter_chunks(path, offset, offset + length))


def plan(paths, threads=1, short_run=None, short_limit=None, max_runs=None, max_streams=None):
    """The Plan that merges the lines of paths, or None when the compiled merge is missing or
    the files are not in a few long runs (limits not given are the module's)."""
    if not available():
        return None
    short_run = SHORT_RUN if short_run is None else short_run
    short_limit = SHORT_LIMIT if short_limit is None else short_limit
    max_runs = MAX_RUNS if max_runs is None else max_runs
    max_streams = MAX_STREAMS if max_streams is None else max_streams
    paths = [str(p) for p in paths]
    with concurrent.futures.ThreadPoolExecutor(max(1, threads)) as pool:
        found = list(pool.map(lambda p: sorted_runs(p, max_runs), paths))
    if any(runs is None for runs in found):
        return None
    streams, short = [], []
    for path, runs in zip(paths, found):
        for offset, length in runs:
            (streams if length >= short_run else short).append((path, offset, length))
    if len(streams) > max_streams or sum(length for _, _, length in short) > short_limit:
        return None
    return Plan(streams, sorted(line for run in short for line in range_lines(*run)))


def _bufsize(streams):
    return max(MIN_BUFFER, min(BUFFER, BUFFERS // max(1, len(streams))))


def _opened(streams):
    """fds of the streams, each at its offset (the caller closes them)."""
    fds = []
    try:
        for path, offset, _ in streams:
            fds.append(os.open(path, os.O_RDONLY))
            os.lseek(fds[-1], offset, os.SEEK_SET)
    except OSError:
        for fd in fds:
            os.close(fd)
        raise
    return fds


def _tail_bytes(tail):
    return b"".join(line + b"\n" for line in tail)


def _line_at(f, pos):
    f.seek(pos)
    return f.readline()


def _next_line_start(f, pos, start):
    """The first line start at or after pos in a file whose lines start at start."""
    if pos <= start:
        return start
    f.seek(pos - 1)
    return pos - 1 + len(f.readline())


def cut_offset(path, offset, length, cut, window=1 << 16):
    """Offset of the first line of the sorted run (path, offset, length) that is not below
    cut (the run's end when there is none)."""
    end = offset + length
    with open(path, "rb") as f:
        lo, hi = offset, end        # lines before lo are below cut; hi is end or a line not below it
        while hi - lo > window:
            s = _next_line_start(f, (lo + hi) // 2, offset)
            if s >= hi:
                break
            line = _line_at(f, s)[:hi - s]
            if line.rstrip(b"\n") >= cut:
                hi = s
            else:
                lo = s + len(line)
        f.seek(lo)
        pos = lo
        while pos < hi:
            line = f.readline()[:hi - pos]
            if not line or line.rstrip(b"\n") >= cut:
                return pos
            pos += len(line)
        return hi


def _samples(p, cost=None):
    """(key, weight) samples of Plan p's lines: their bytes, times cost(key) when given."""
    out = []
    for path, offset, length in p.streams:
        with open(path, "rb") as f:
            step = length / SAMPLES
            for i in range(SAMPLES):
                s = _next_line_start(f, offset + int(i * step), offset)
                if s < offset + length:
                    out.append((_line_at(f, s)[:offset + length - s].rstrip(b"\n").partition(b"\t")[0], step))
    out.extend((line.partition(b"\t")[0], len(line) + 1) for line in p.tail)
    if cost is not None:
        out = [(key, weight * cost(key)) for key, weight in out]
    return out


def split(p, parts, cost=None):
    """Plan p cut into at most parts Plans of about equal size at key boundaries: each holds a
    range of every stream and of the tail; in order, their lines are p's. cost(key): the work of
    a byte of a key's lines, relative to others' (the parts are then of about equal work)."""
    keys = _cut_keys(sorted(_samples(p, cost)), parts)
    cuts = [key + b"\t" for key in keys]         # a key's lines are all below its cut, or none
    offsets = [[offset] + [cut_offset(path, offset, length, c) for c in cuts] + [offset + length]
               for path, offset, length in p.streams]
    bounds = [0] + [_bisect(p.tail, c) for c in cuts] + [len(p.tail)]
    out = []
    for i in range(len(cuts) + 1):
        streams = [(path, offs[i], offs[i + 1] - offs[i])
                   for (path, _, _), offs in zip(p.streams, offsets) if offs[i + 1] > offs[i]]
        tail = p.tail[bounds[i]:bounds[i + 1]]
        if streams or tail:
            out.append(Plan(streams, tail))
    return out or [Plan([], [])]            # no lines: one empty part (a step needs a reduce task)


def _cut_keys(samples, parts):
    """Keys to cut sorted (key, weight) samples into parts of about equal weight before: each
    cut at the start or the end of the key whose samples hold its target, whichever is nearer
    (a key's lines stay together, and one key may weigh much: a digest most URI-Rs hold)."""
    groups = []                             # (key, weight of the samples before it, its weight)
    done = 0.0
    for key, weight in samples:
        if groups and groups[-1][0] == key:
            groups[-1][2] += weight
        else:
            groups.append([key, done, weight])
        done += weight
    keys = []
    for at in range(1, parts):
        target = done * at / parts
        for i, (key, before, weight) in enumerate(groups):
            if before + weight < target:
                continue
            if before + weight - target < target - before and i + 1 < len(groups):
                key = groups[i + 1][0]          # the end of this key is nearer
            if key and (not keys or key > keys[-1]):
                keys.append(key)
            break
    return keys


def _bisect(lines, cut):
    lo, hi = 0, len(lines)
    while lo < hi:
        mid = (lo + hi) // 2
        if lines[mid] < cut:
            lo = mid + 1
        else:
            hi = mid
    return lo


def dumps(p):
    """Plan p as the bytes of a reduce task's input file."""
    return orjson.dumps({"streams": p.streams, "tail": [line.decode("latin-1") for line in p.tail]})


def loads(data):
    d = orjson.loads(data)
    return Plan([tuple(s) for s in d["streams"]], [line.encode("latin-1") for line in d["tail"]])


def merged_chunks(p, size=4 << 20):
    """The lines of Plan p in order, in buffers of whole lines of about size bytes."""
    module = fast.load()
    if module is None or not hasattr(module, "LineMerger"):
        yield from _merged_chunks_python(p, size)
        return
    fds = _opened(p.streams)
    try:
        merger = module.LineMerger([(fd, length) for fd, (_, _, length) in zip(fds, p.streams)],
                                   _tail_bytes(p.tail), _bufsize(p.streams))
        while True:
            data = merger.read(size)
            if not data:
                return
            yield data
    finally:
        for fd in fds:
            os.close(fd)


def _merged_chunks_python(p, size):
    """merged_chunks without the extension (heapq.merge of the streams' lines)."""
    streams = [range_lines(*stream) for stream in p.streams] + [iter(p.tail)]
    batch, n = [], 0
    for line in heapq.merge(*streams):
        batch.append(line + b"\n")
        n += len(line) + 1
        if n >= size:
            yield b"".join(batch)
            batch, n = [], 0
    if batch:
        yield b"".join(batch)


def key_bounds(path, split_size):
    """Offsets [0, ..., size] cutting a sorted file of key<TAB>value lines where mrjob's
    _split_records would: a part ends at the first key change at or after split_size bytes."""
    size = os.path.getsize(path)
    bounds = [0]
    with open(path, "rb") as f:
        while True:
            target = bounds[-1] + max(split_size, 1)
            if target >= size:
                break
            # the line holding byte target-1 ends the part's first split_size bytes
            line_start = _line_start(f, target - 1)
            f.seek(line_start)
            line = f.readline()
            key = key_of(line)
            pos = line_start + len(line)
            while pos < size:           # lines of the same key stay in this part
                nxt = f.readline()
                if key_of(nxt) != key:
                    break
                pos += len(nxt)
            if pos >= size:
                break
            bounds.append(pos)
    bounds.append(size)
    return bounds


def _line_start(f, offset, window=1 << 16):
    """Offset of the start of the line holding byte offset."""
    end = offset
    while end > 0:
        start = max(0, end - window)
        f.seek(start)
        data = f.read(end - start)
        i = data.rfind(b"\n")
        if i >= 0:
            return start + i + 1
        end = start
    return 0
