"""A shuffle's sort done as a merge when its inputs are in a few long sorted runs already.

The map outputs of a sorted index are sorted but for their last line (each map task's ``!meta``
record), and step 1's reducers write their records in sorted runs of some MiB. Sorting them again
was the local runner's longest serial work between tasks (GNU sort: 0.2 s and 145 MiB for the
123 MB of a 1M-capture CDX's map outputs; at 10M its 256 MiB buffer spills to temporary files).
``merge_sorted`` cuts each file into its runs of lines in byte order, sorts the lines of short
runs in memory, and merges everything in one pass: the same bytes as ``LC_ALL=C sort`` of the
files (byte order; equal lines are the same bytes, so their order cannot show). For input that
is not in such runs (more than ``MAX_RUNS`` a file, more than ``MAX_STREAMS`` long ones, or
more than ``SHORT_LIMIT`` bytes in short ones) it writes nothing and says so: the caller sorts.
"""

import concurrent.futures
import os

from profiler import fast

#: runs shorter than this are sorted in memory with the others' lines
SHORT_RUN = 64 << 10
#: bytes of short runs, over all files, sorted in memory; past this the files are sorted
SHORT_LIMIT = 4 << 20
#: runs a file may have before it counts as unsorted
MAX_RUNS = 1024
#: long runs merged at once
MAX_STREAMS = 1024
#: the merge's read buffers together, and the largest one
BUFFERS = 64 << 20
BUFFER = 1 << 20


def available():
    """True where the compiled merge is (profiler._apfast on a POSIX system)."""
    module = fast.load()
    return module is not None and hasattr(module, "merge_lines")


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
    """The lines of length bytes of path at offset (a last line without a newline counts)."""
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(length)
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    return lines


def merge_sorted(paths, out_path, threads=1, short_run=None, short_limit=None, max_runs=None,
                 max_streams=None, buffers=None, bufsize=None):
    """Write the lines of paths to out_path in byte order by merging their sorted runs.

    Returns False, and writes nothing, when the compiled merge is missing or the files are not
    in a few long runs (limits not given are the module's); True when out_path holds the lines
    in order.
    """
    if not available():
        return False
    short_run = SHORT_RUN if short_run is None else short_run
    short_limit = SHORT_LIMIT if short_limit is None else short_limit
    max_runs = MAX_RUNS if max_runs is None else max_runs
    max_streams = MAX_STREAMS if max_streams is None else max_streams
    buffers = BUFFERS if buffers is None else buffers
    bufsize = BUFFER if bufsize is None else bufsize
    paths = list(paths)
    with concurrent.futures.ThreadPoolExecutor(max(1, threads)) as pool:
        found = list(pool.map(lambda p: sorted_runs(p, max_runs, bufsize), paths))
    if any(runs is None for runs in found):
        return False
    streams, short = [], []
    for path, runs in zip(paths, found):
        for offset, length in runs:
            (streams if length >= short_run else short).append((path, offset, length))
    if len(streams) > max_streams or sum(length for _, _, length in short) > short_limit:
        return False
    tail = b"".join(line + b"\n" for line in sorted(line for run in short for line in range_lines(*run)))
    size = max(1 << 16, min(bufsize, buffers // max(1, len(streams))))
    fds = []
    try:
        for path, offset, length in streams:
            fd = os.open(path, os.O_RDONLY)
            fds.append(fd)
            os.lseek(fd, offset, os.SEEK_SET)
        with open(out_path, "wb") as out:
            fast.load().merge_lines(out.fileno(), [(fd, length) for fd, (_, _, length) in zip(fds, streams)],
                                    tail, size)
    finally:
        for fd in fds:
            os.close(fd)
    return True
