"""The profile job's steps over partitions of raw lines: what a Spark task runs (profiler.runtime.spark).

Every task calls the local runner's task functions, profiler.job.tasks.map_task and
reduce_task; what mrjob's Spark harness did per record (decode, group, encode, one Python
object per line through the JVM) is done here per partition, on bytes:

- a task's output lines are cut into one blob of whole lines per reduce partition
  (``bucketed``): a line goes to partition crc32(key) % parts, so every line of a key meets
  the others of its key, whichever task wrote it;
- a reduce partition's blobs are sorted by line (``sorted_chunks``: in memory up to
  RUN_BYTES, past it in sorted runs on local disk merged as a stream), the order the local
  runner's ``sort`` gives, and reduce_task reads them in buffers;
- the final step's lines come out sorted by key in each partition, so the client merges
  the parts as streams (profiler.files.output).

Nothing here imports pyspark: the tests run these functions with an in-process shuffle.
"""

import collections
import heapq
import os
import re
import tempfile
import zlib

from profiler import jsonnum
from profiler.accel import fast
from profiler.job import rawsteps, tasks
from profiler.model.policy import Policy

#: bytes of lines a reduce task sorts in memory at a time; past it they go to a sorted run on disk
RUN_BYTES = 128 << 20
#: bytes of the buffers reduce_task reads
CHUNK = 4 << 20
#: a byte below TAB in a key: key order and line order may differ there
_BELOW_TAB = re.compile(rb"[\x00-\x08]")

#: the job's own options, as the client passed them (profiler.runtime.contract)
JobOptions = collections.namedtuple("JobOptions", "policy_json resolve_revisits table_limit")

_policies = {}


def policy_of(job):
    """The Policy of a JobOptions, parsed once per process."""
    found = _policies.get(job.policy_json)
    if found is None:
        found = _policies[job.policy_json] = Policy.from_dict(jsonnum.loads(job.policy_json), "--policy-json")
    return found


class Counts(dict):
    """One task's counters, {group: {counter: amount}}, kept by mrjob's increment_counter signature."""

    def __call__(self, group, counter, amount=1):
        inner = self.setdefault(group, {})
        inner[counter] = inner.get(counter, 0) + amount


def part_of(key, parts):
    """The reduce partition of a key: the same in every task and every process."""
    return zlib.crc32(key) % parts


def bucketed(chunks, parts):
    """[(part, blob), ...]: the lines of chunks (bytes of whole key<TAB>value lines), one blob of
    whole lines per partition that gets any, in their order (the compiled bucket_lines() when
    there is one)."""
    data = b"".join(chunks)
    if not data:
        return []
    if parts == 1:
        return [(0, data if data.endswith(b"\n") else data + b"\n")]
    module = fast.load()
    if module is not None and hasattr(module, "bucket_lines"):
        return [(i, blob) for i, blob in enumerate(module.bucket_lines(data, parts)) if blob]
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    buckets = [[] for _ in range(parts)]
    adds = [b.append for b in buckets]
    crc32 = zlib.crc32
    for line in lines:
        tab = line.find(b"\t")
        adds[crc32(line if tab < 0 else line[:tab]) % parts](line)
    return [(i, b"\n".join(b) + b"\n") for i, b in enumerate(buckets) if b]


def _sorted_lines(blobs):
    """The lines of blobs (whole lines), sorted, without their newlines."""
    data = b"".join(blobs)
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    lines.sort()
    return lines


def _sorted_blob(blobs):
    """The lines of blobs (whole lines) sorted, as one buffer (the compiled sort_lines() when
    there is one)."""
    module = fast.load()
    if module is not None and hasattr(module, "sort_lines"):
        return module.sort_lines(blobs)
    lines = _sorted_lines(blobs)
    return b"\n".join(lines) + b"\n" if lines else b""


def _chunks(lines, size=CHUNK):
    """Buffers of about size bytes of whole lines (each with its newline)."""
    batch, n = [], 0
    for line in lines:
        batch.append(line)
        n += len(line) + 1
        if n >= size:
            yield b"\n".join(batch) + b"\n"
            batch, n = [], 0
    if batch:
        yield b"\n".join(batch) + b"\n"


def _spill(data):
    """(an unnamed temporary file of data, its length): gone when closed, or when the process dies."""
    run = tempfile.TemporaryFile()
    run.write(data)
    run.flush()
    run.seek(0)
    return run, len(data)


def sorted_chunks(blobs, run_bytes=RUN_BYTES):
    """The lines of blobs (whole lines) in byte order (LC_ALL=C sort's), in buffers of whole
    lines: sorted in memory, run_bytes at a time; runs past the first on disk, merged."""
    runs, held, n = [], [], 0
    try:
        for blob in blobs:
            held.append(blob)
            n += len(blob)
            if n >= run_bytes:
                runs.append(_spill(_sorted_blob(held)))
                held, n = [], 0
        last = _sorted_blob(held) if held else b""
        if not runs:
            if last:
                yield last
            return
        yield from _merged(runs, last, CHUNK)
    finally:
        for run, _ in runs:
            run.close()


def _merged(runs, tail, size):
    """The lines of sorted runs on disk [(file, length), ...] and of the sorted buffer tail,
    merged, in buffers of about size bytes."""
    module = fast.load()
    if module is not None and hasattr(module, "LineMerger"):
        bufsize = max(16 << 10, min(1 << 20, (16 << 20) // len(runs)))
        merger = module.LineMerger([(run.fileno(), n) for run, n in runs], tail, bufsize)
        while True:
            data = merger.read(size)
            if not data:
                return
            yield data
    streams = [(line.rstrip(b"\n") for line in run) for run, _ in runs] + [iter(tail.split(b"\n")[:-1])]
    yield from _chunks(heapq.merge(*streams), size)


def map_partition(index, manifest_lines, job, parts, report, environ=None):
    """Step 1's map task over a partition of manifest lines (profiler.job.tasks.map_task):
    [(part, blob), ...]. report(task, counts) gets its counters."""
    out, counts = [], Counts()
    tasks.map_task(manifest_lines, policy_of(job), job.resolve_revisits, out.append, counts,
                   os.environ if environ is None else environ)
    report(("map", 0, index), counts)
    return bucketed(out, parts)


def reduce_partition(step_num, index, pairs, job, parts, report, environ=None):
    """Reduce task of step step_num over one partition's (part, blob) pairs
    (profiler.job.tasks.reduce_task): the next step's [(part, blob), ...]."""
    out, counts = [], Counts()
    tasks.reduce_task(step_num, sorted_chunks(blob for _, blob in pairs), policy_of(job), job.table_limit,
                      out.append, counts, os.environ if environ is None else environ)
    report(("reduce", step_num, index), counts)
    return bucketed(out, parts)


def final_partition(index, pairs, job, report, environ=None):
    """Step 3's reduce task: the partition's profile lines (key<TAB>value, sorted by key) in
    blobs of whole lines without their last newline (what a text file's records are)."""
    out, counts = [], Counts()
    tasks.reduce_task(2, sorted_chunks(blob for _, blob in pairs), policy_of(job), job.table_limit,
                      out.append, counts, os.environ if environ is None else environ)
    report(("reduce", 2, index), counts)
    if any(_BELOW_TAB.search(chunk) for chunk in out):
        # a key with a byte below TAB: line order is not key order there (JSON values hold none)
        lines = b"".join(out).split(b"\n")
        lines = sorted((line for line in lines if line), key=rawsteps.key_of)
        out = list(_chunks(lines))
    return [chunk[:-1] for chunk in out if chunk]


def add_counts(total, counts):
    """counts ({group: {counter: n}}) added into total."""
    for group, inner in counts.items():
        into = total.setdefault(group, {})
        for counter, amount in inner.items():
            into[counter] = into.get(counter, 0) + amount
    return total


def step_counters(by_task, steps=3):
    """mrjob's counters, one {group: {counter: n}} per step, of the counters of each task
    ({(kind, step, index): counts}: a task Spark ran again is counted once)."""
    out = [{} for _ in range(steps)]
    for (_, step, _), counts in sorted(by_task.items()):
        add_counts(out[step], counts)
    return out


def run_in_process(manifest_lines, job, parts=3, environ=None):
    """The whole job with a shuffle in this process (tests; what Spark does between the
    functions above): (profile lines of each partition, counters per step)."""
    by_task = {}

    def report(task, counts):
        by_task[task] = counts

    def shuffle(pairs_lists):
        into = collections.defaultdict(list)
        for pairs in pairs_lists:
            for part, blob in pairs:
                into[part].append((part, blob))
        return [into.get(i, []) for i in range(parts)]

    mapped = shuffle(map_partition(i, [line], job, parts, report, environ) for i, line in enumerate(manifest_lines))
    for step in (0, 1):
        mapped = shuffle(reduce_partition(step, i, pairs, job, parts, report, environ)
                         for i, pairs in enumerate(mapped))
    out = [final_partition(i, pairs, job, report, environ) for i, pairs in enumerate(mapped)]
    return out, step_counters(by_task)
