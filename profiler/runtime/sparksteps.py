"""The profile job's steps over partitions of raw lines: what a Spark task runs (profiler.runtime.spark).

Every task calls the local runner's task functions, profiler.runtime.task.run_mapper and
run_reducer (profiler.job.steps); what mrjob's Spark harness did per record (decode, group, encode, one Python
object per line through the JVM) is done here per partition, on bytes:

- a task's output lines are cut into one blob of whole lines per reduce partition
  (``bucketed``): a line goes to partition crc32(key) % parts (step 3: to its key's range
  between split points), so every line of a key meets the others of its key, whichever task
  wrote it;
- a reduce partition's blobs are sorted by line (``sorted_chunks``: in memory up to
  RUN_BYTES, past it in sorted runs on local disk merged as a stream), the order the local
  runner's ``sort`` gives, and reduce_task reads them in buffers;
- the final step's lines come out sorted by key in each partition, the partitions in key
  order, so the client writes the parts one after another (profiler.files.output).

Between the map tasks and step 1's reducers the driver learns three things from the map tasks'
reports (``MapReport``): step 3's split points (``split_points``), and

- **the digest filter** (profiler.runtime.digestfilter): each map task's bitmaps, merged once
  per task (``FilterMerge``), tell step 1's reducers which digests two or more map records hold;
  they write digest records for those only, as on the local runner;
- **hot digests**: digests the map tasks' sampled records say many URI-Rs hold (the empty
  payload's). Step 1's reducers give every record of a hot digest a salted key, ``S <salt>
  <digest>`` (``salted``), so they spread over every partition of step 2 instead of all meeting
  in one task; the steps write each partition's shares and add them up in step 3, keyed as
  their profile key's records, as on every runner (profiler.job.hotdigests).

Nothing here imports pyspark: the tests run these functions with an in-process shuffle
(``run_in_process``).
"""

import bisect
import collections
import functools
import heapq
import os
import re
import struct
import tempfile
import zlib

import orjson

from profiler import jsonnum
from profiler.accel import fast
from profiler.job import lines as job_lines
from profiler.model.policy import Policy
from profiler import contract, plugins
from profiler.runtime import digestfilter, task

#: bytes of lines a reduce task sorts in memory at a time; past it they go to a sorted run on disk
RUN_BYTES = 128 << 20
#: bytes of the buffers a merge of runs hands reduce_task
CHUNK = 4 << 20
#: bytes of its output lines a map or reduce task holds; past it they are bucketed into a file
#: (``Spilled``)
HOLD_BYTES = 64 << 20
#: a byte below TAB in a key: key order and line order may differ there
_BELOW_TAB = re.compile(rb"[\x00-\x08]")
#: map records a map task samples for hot digests, at most, and keys of them it reports
SAMPLES = 2048
KEY_SAMPLES = 64
#: the digest's place in a map record's cell (profiler.job.mapside: period, mime, status, digest, ...)
CELL_DIGEST = 3

#: the job's own options, as the client passed them (profiler.contract)
JobOptions = collections.namedtuple("JobOptions", "policy_json resolve_revisits table_limit")

_policies = {}


def policy_of(job):
    """The Policy of a JobOptions, parsed once per process."""
    found = _policies.get(job.policy_json)
    if found is None:
        plugins.load()
        found = _policies[job.policy_json] = Policy.from_dict(jsonnum.loads(job.policy_json), "--policy-json")
    return found


class Counts(dict):
    """One task's counters, {group: {counter: amount}}, kept by mrjob's increment_counter signature."""

    def __call__(self, group, counter, amount=1):
        inner = self.setdefault(group, {})
        inner[counter] = inner.get(counter, 0) + amount


# --- the shuffle: lines into partitions, a partition's lines sorted

def bucketed(chunks, parts, points=None):
    """[(part, blob), ...]: the lines of chunks (bytes of whole key<TAB>value lines), one blob of
    whole lines per partition that gets any, in their order: by crc32 of the key (the compiled
    bucket_lines() when there is one), or by the key's range between sorted split points (len
    parts - 1), so that partition i holds only keys below partition i+1's."""
    data = b"".join(chunks)
    if not data:
        return []
    if parts == 1:
        return [(0, data if data.endswith(b"\n") else data + b"\n")]
    module = fast.load()
    if points is None and module is not None and hasattr(module, "bucket_lines"):
        return [(i, blob) for i, blob in enumerate(module.bucket_lines(data, parts)) if blob]
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    buckets = [[] for _ in range(parts)]
    adds = [b.append for b in buckets]
    route = _router(parts, points)
    for line in lines:
        tab = line.find(b"\t")
        adds[route(line if tab < 0 else line[:tab])](line)
    return [(i, b"\n".join(b) + b"\n") for i, b in enumerate(buckets) if b]


class Spilled:
    """The next step's (part, blob) pairs of a task's output lines, taken as they are written:
    held up to hold bytes, each hold's worth then bucketed (``bucketed``) into an unnamed file in
    the task's scratch folder, so that a task holds about hold bytes of its output whatever its
    input (a map task over one whole compressed index held all its records, three times over).
    hook(data) sees (and may change) each hold's worth of whole lines before it is bucketed.
    ``pairs()``: the pairs, a list when nothing was spilled, else read back one at a time; a
    partition may then get several blobs of the task (its reducer sorts them all)."""

    _HEAD = struct.Struct("<IQ")

    def __init__(self, parts, points=None, hold=None, hook=None):
        self.parts, self.points, self.hook = parts, points, hook
        self.hold = HOLD_BYTES if hold is None else hold
        self.held, self.n, self.file = [], 0, None

    def write(self, data):
        self.held.append(data)
        self.n += len(data)
        if self.n >= self.hold:
            self._spill()

    def _take(self, whole=False):
        """The held lines' pairs; without whole, a last line without its newline stays held."""
        data = b"".join(self.held)
        cut = len(data) if whole else data.rfind(b"\n") + 1
        self.held, self.n = ([data[cut:]], len(data) - cut) if cut < len(data) else ([], 0)
        data = data[:cut]
        if self.hook is not None:
            data = self.hook(data)
        return bucketed([data], self.parts, self.points)

    def _spill(self):
        pairs = self._take()
        if self.file is None:
            self.file = tempfile.TemporaryFile(dir=scratch())
        for part, blob in pairs:
            self.file.write(self._HEAD.pack(part, len(blob)))
            self.file.write(blob)

    def pairs(self):
        last = self._take(whole=True) if self.held or self.file is None else []
        if self.file is None:
            return last
        return self._read_back(last)

    def _read_back(self, last):
        try:
            self.file.seek(0)
            while True:
                head = self.file.read(self._HEAD.size)
                if not head:
                    break
                part, n = self._HEAD.unpack(head)
                yield part, self.file.read(n)
            yield from last
        finally:
            self.file.close()


def _router(parts, points=None):
    """key -> its partition: crc32 % parts, or its range between the split points."""
    if points is None:
        return lambda key: zlib.crc32(key) % parts
    return functools.partial(bisect.bisect_right, points)


def _sorted_lines(blobs):
    """The lines of blobs (whole lines), sorted, without their newlines."""
    lines = b"".join(blobs).split(b"\n")
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


def scratch():
    """The folder of a task's own files: Spark's local folder for the task (removed with the
    application, whatever happens to the task), else the system's."""
    folder = os.environ.get("SPARK_LOCAL_DIRS", "").split(",")[0]
    return folder if folder and os.path.isdir(folder) else None


def _spill(data):
    """(an unnamed temporary file of data, its length): gone when closed, or when the process dies."""
    run = tempfile.TemporaryFile(dir=scratch())
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


# --- the tasks

class MapReport(collections.namedtuple("MapReport", "counts filter digests lines samples keys span",
                                       defaults=(None,))):
    """What a map task tells the driver: its counters; its digest filter ((one, two) bitmaps,
    zlib-compressed) or None; {digest: sampled records holding it} (digests sampled twice or
    more), its records, the records sampled, and some of their keys (URI-Rs, for the split
    points of step 3); with its records kept on local disk, their span (``record_span``)."""


def map_partition(index, manifest_lines, job, parts, report, environ=None, filter_bytes=0, keep=None):
    """Step 1's map task over a partition of manifest lines (profiler.runtime.task.run_mapper):
    [(part, blob), ...]. report(task, MapReport) gets what it tells the driver. With keep (a
    path), the records go to that file instead (``kept``), their span in the report, and the
    task returns nothing."""
    with job_lines.no_cycle_collection():
        return _map_partition(index, manifest_lines, job, parts, report, environ, filter_bytes, keep)


def _map_partition(index, manifest_lines, job, parts, report, environ, filter_bytes, keep=None):
    environ = dict(os.environ if environ is None else environ)
    environ.pop(digestfilter.FILTER_ENV, None)
    out, counts, path = [], Counts(), None
    sampler = _Sampler()
    sink = Spilled(parts, hook=sampler.add) if keep is None else None
    if filter_bytes:
        fd, path = tempfile.mkstemp(prefix="digest-filter-", dir=scratch())
        os.close(fd)
        environ[digestfilter.FILTER_ENV] = "%d %s" % (filter_bytes, path)
    try:
        task.run_mapper(manifest_lines, policy_of(job), job.resolve_revisits,
                        out.append if sink is None else sink.write, counts, environ)
        filter_ = _read_filter(path, filter_bytes) if path else None
    finally:
        if path:
            os.unlink(path)
    if keep is not None:
        data = b"".join(out)
        _keep(data, keep)
        report(("map", 0, index), MapReport(counts, filter_, *sample_digests(data), span=record_span(data, keep)))
        return []
    pairs = sink.pairs()
    report(("map", 0, index), MapReport(counts, filter_, *sampler.result()))
    return pairs


# --- map records kept where the next job's task of the same split finds them (a local master)

def is_local_master(master):
    """Whether a Spark master runs every task on this machine (local, local[N], local[*])."""
    return (master or "local").split("[")[0] == "local"


def _keep(data, path):
    """A map task's records into path, whole or not at all (a task run again writes the same)."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def kept(index, manifest_lines, job, path, environ=None):
    """The records a map task kept in path (taken: the file is removed), or, when the file is not
    there (another machine's task wrote it, or a task run again took it), the split mapped again:
    the same records (its counters are the kept ones', already reported)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        out = []
        environ = dict(os.environ if environ is None else environ)
        environ.pop(digestfilter.FILTER_ENV, None)
        with job_lines.no_cycle_collection():
            task.run_mapper(manifest_lines, policy_of(job), job.resolve_revisits, out.append, Counts(), environ)
        return b"".join(out)
    try:
        os.unlink(path)
    except OSError:
        pass
    return data


def record_span(data, path=None):
    """(first key, last key) of a map task's records when they are in key order (a sorted split's:
    each URI-R once, the task's !meta record last), (None, None) when it has none, else None.
    Splits whose spans do not overlap hold every record of their URI-Rs: each reduces its own
    (``spans_apart``). path: a file holding data (the kept records), read to check the order."""
    meta = job_lines.META + b"\t"
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    cut = data.rfind(b"\n", 0, end) + 1                 # the last line's start
    body_end = cut if data.startswith(meta, cut) else len(data)
    if body_end == 0:
        return (None, None)
    if data.startswith(meta) or data.find(b"\n" + meta, 0, body_end) >= 0 or not _in_order(data, body_end, path):
        return None
    first = job_lines.key_of(data[:data.find(b"\n", 0, body_end) if b"\n" in data[:body_end] else body_end])
    tail_end = body_end - 1 if data[body_end - 1:body_end] == b"\n" else body_end
    last = job_lines.key_of(data[data.rfind(b"\n", 0, tail_end) + 1:tail_end])
    return (first, last)


def _in_order(data, body_end, path=None):
    """Whether the lines of data[:body_end] are in byte order (LC_ALL=C sort's): then each key's
    lines follow each other. The compiled sorted_runs() reads them from path when there is one."""
    module = fast.load()
    if path is not None and module is not None and hasattr(module, "sorted_runs"):
        fd = os.open(path, os.O_RDONLY)
        try:
            runs = module.sorted_runs(fd, 1 << 20, 2)
        finally:
            os.close(fd)
        # one run, or two of which the second is the !meta record after the body
        return runs is not None and (len(runs) == 1 or runs[0] == body_end)
    lines = data[:body_end].rstrip(b"\n").split(b"\n")
    return all(a <= b for a, b in zip(lines, lines[1:]))


def spans_apart(spans):
    """Whether the map tasks' records, by their spans (record_span), hold every URI-R in one task
    only, each in key order: no span unknown, and the spans of tasks with records apart."""
    if any(span is None for span in spans):
        return False
    known = sorted(span for span in spans if span[0] is not None)
    return all(a[1] < b[0] for a, b in zip(known, known[1:]))


def reduce_kept(index, manifest_lines, job, parts, report, path, environ=None, shared=None, hot=None):
    """Step 1's reduce task over one split's kept records (a split whose URI-Rs no other split
    holds: ``spans_apart``), in place of a shuffle to step 1: the next step's [(part, blob), ...]."""
    data = kept(index, manifest_lines, job, path, environ)
    return reduce_partition(0, index, [(index, data)], job, parts, report, environ, shared, hot, presorted=True)


def _read_filter(path, size):
    """(one, two) of a map task's filter file, compressed; None when the task wrote none."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if not data.startswith(digestfilter.MAGIC) or len(data) != len(digestfilter.MAGIC) + 2 * size:
        return None
    body = data[len(digestfilter.MAGIC):]
    return zlib.compress(body[:size], 1), zlib.compress(body[size:], 1)


class _Sampler:
    """sample_digests over a map task's output taken a part at a time (``add``): each part's
    records at even byte steps (samples of each), the counts added up; one part gives
    sample_digests' answer."""

    def __init__(self):
        self.found, self.lines, self.sampled, self.some = collections.Counter(), 0, 0, []

    def add(self, data):
        found, lines, sampled, some = _samples(data)
        self.found.update(found)
        self.lines += lines
        self.sampled += sampled
        self.some += some
        return data

    def result(self):
        return ({d.encode("utf-8"): n for d, n in self.found.items() if n > 1}, self.lines, self.sampled,
                self.some)


def sample_digests(data, samples=SAMPLES, keys=KEY_SAMPLES):
    """({digest: sampled records holding it, for digests sampled twice or more}, records,
    records sampled, [keys of about keys sampled records]) of a map task's output: its records
    at even byte steps."""
    found, lines, sampled, some = _samples(data, samples, keys)
    return {d.encode("utf-8"): n for d, n in found.items() if n > 1}, lines, sampled, some


def _samples(data, samples=SAMPLES, keys=KEY_SAMPLES):
    """(Counter of the digests of the sampled records, records, records sampled, some keys)."""
    lines = data.count(b"\n")
    if not lines:
        return collections.Counter(), 0, 0, []
    step = max(1, len(data) // samples)
    found = collections.Counter()
    sampled = pos = 0
    some, every = [], max(1, samples // keys)
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        key, _, value = data[pos:end].partition(b"\t")
        if key != job_lines.META and value.startswith(b"[["):
            if not sampled % every:
                some.append(key)
            sampled += 1
            try:         # orjson: a sample of integers past 64 bits is left out
                found.update({cell[CELL_DIGEST] for cell in orjson.loads(value)} - {"-"})
            except (ValueError, TypeError, IndexError):
                pass
        if pos + step <= end + 1:
            pos = end + 1
        else:                                   # the first line that starts at or past pos + step
            nl = data.find(b"\n", pos + step - 1)
            if nl < 0:
                break
            pos = nl + 1
    return found, lines, sampled, some


def _task_env(environ, shared):
    """environ with the shared-digest bitmap in a file for reduce_task (profiler.runtime.digestfilter),
    and that file's path (None without a bitmap)."""
    environ = dict(os.environ if environ is None else environ)
    environ.pop(digestfilter.SHARED_ENV, None)
    if not shared:
        return environ, None
    fd, path = tempfile.mkstemp(prefix="shared-digests-", dir=scratch())
    with os.fdopen(fd, "wb") as f:
        f.write(digestfilter.SHARED_MAGIC)
        f.write(shared)
    environ[digestfilter.SHARED_ENV] = path
    return environ, path


def reduce_partition(step_num, index, pairs, job, parts, report, environ=None, shared=None, hot=None,
                     points=None, presorted=False):
    """Reduce task of step step_num (0 or 1) over one partition's (part, blob) pairs
    (profiler.runtime.task.run_reducer): the next step's [(part, blob), ...]. Step 1 reads the
    shared-digest bitmap shared (bytes) and salts the records of the hot digests; step 2 cuts
    its output at the split points when there are some. presorted: the blobs' records are in
    an order where each key's follow each other (one sorted split's): not sorted again."""
    with job_lines.no_cycle_collection():
        return _reduce_partition(step_num, index, pairs, job, parts, report, environ, shared, hot, points,
                                 presorted)


def _reduce_partition(step_num, index, pairs, job, parts, report, environ, shared, hot, points, presorted=False):
    environ, path = _task_env(environ, shared if step_num == 0 else None)
    counts = Counts()
    hook = (lambda data: b"".join(salted([data], hot, parts))) if step_num == 0 and hot else None
    sink = Spilled(parts, points, hook=hook)
    chunks = (blob for _, blob in pairs) if presorted else sorted_chunks(blob for _, blob in pairs)
    try:
        task.run_reducer(step_num, chunks, policy_of(job), job.table_limit, sink.write, counts, environ)
    finally:
        if path:
            os.unlink(path)
    report(("reduce", step_num, index), counts)
    return sink.pairs()


def final_partition(index, pairs, job, report, environ=None):
    """Step 3's reduce task: the partition's profile lines (key<TAB>value, sorted by key) in
    blobs of whole lines without their last newline (what a text file's records are)."""
    with job_lines.no_cycle_collection():
        return _final_partition(index, pairs, job, report, environ)


def _final_partition(index, pairs, job, report, environ):
    out, counts = [], Counts()
    task.run_reducer(2, sorted_chunks(blob for _, blob in pairs), policy_of(job), job.table_limit, out.append,
                     counts, os.environ if environ is None else environ)
    report(("reduce", 2, index), counts)
    if any(_BELOW_TAB.search(chunk) for chunk in out):
        # a key with a byte below TAB: line order is not key order there (JSON values hold none)
        lines = sorted((line for line in b"".join(out).split(b"\n") if line), key=job_lines.key_of)
        out = list(_chunks(lines))
    return [chunk[:-1] for chunk in out if chunk]


# --- hot digests

def salted(chunks, hot, salts):
    """Step 1's output with each record of a hot digest (``D <digest>``) keyed ``S <salt>
    <digest>``, the salt from its URI-R's record: spread over salts partitions of step 2, whose
    shares step 3 adds up (profiler.job.hotdigests)."""
    pattern = re.compile(rb"^D (" + b"|".join(re.escape(d) for d in sorted(hot)) + rb")\t(.*)$", re.M)

    def salt(m):
        return b"S %d %s\t%s" % (zlib.crc32(m.group(2)) % salts, m.group(1), m.group(2))
    return [pattern.sub(salt, chunk) for chunk in chunks]


def hot_digests(reports, threshold):
    """The digests whose estimated records (from the map tasks' MapReports) reach threshold."""
    reports = [r for r in reports if isinstance(r, MapReport)]
    lines = sum(r.lines for r in reports)
    sampled = sum(r.samples for r in reports)
    if not sampled:
        return set()
    found = collections.Counter()
    for r in reports:
        found.update(r.digests)
    scale = lines / sampled
    return {d for d, n in found.items() if n * scale >= threshold}


def split_points(reports, parts):
    """parts - 1 sorted split points of step 3's keys (``K <profile key>``) from the map tasks'
    sampled URI-R keys (a profile key sorts among the URI-Rs it counts), or None without samples:
    the partitions of step 3 then hold ranges of keys in order, and the client writes their
    parts one after the other."""
    keys = sorted(b"K " + key for r in reports if isinstance(r, MapReport) for key in r.keys)
    if parts < 2 or not keys:
        return None
    return [keys[len(keys) * i // parts] for i in range(1, parts)]


# --- the digest filter, merged in the driver

class FilterMerge:
    """The map tasks' digest filters merged, each task once (a task Spark runs again is not
    merged twice): ``shared()`` is the bitmap of digests two or more map records hold, as
    profiler.runtime.digestfilter.merge makes it."""

    def __init__(self, size=0):
        self.size, self.tasks, self.one, self.two = size, set(), 0, 0

    def add(self, index, filter_):
        if filter_ is None or index in self.tasks:
            return
        one, two = (int.from_bytes(zlib.decompress(b), "little") for b in filter_)
        self.two |= two | (self.one & one)
        self.one |= one
        self.tasks.add(index)

    def shared(self, map_tasks):
        """The bitmap (bytes), or None when a map task wrote no filter."""
        if not self.size or len(self.tasks) != map_tasks:
            return None
        return self.two.to_bytes(self.size, "little")

    def fraction_set(self):
        return self.two.bit_count() / (8 * self.size) if self.size else 1.0


# --- counters

def add_counts(total, counts):
    """counts ({group: {counter: n}}) added into total."""
    for group, inner in counts.items():
        into = total.setdefault(group, {})
        for counter, amount in inner.items():
            into[counter] = into.get(counter, 0) + amount
    return total


def step_counters(by_task, steps=3):
    """mrjob's counters, one {group: {counter: n}} per step, of the counters of each task
    ({(kind, step, index): counts or a MapReport}: a task Spark ran again is counted once)."""
    out = [{} for _ in range(steps)]
    for (_, step, _), value in sorted(by_task.items()):
        add_counts(out[step], value.counts if isinstance(value, MapReport) else value)
    return out


# --- the whole job in this process (tests)

def run_in_process(manifest_lines, job, parts=3, environ=None, digest_filter=True, hot=None,
                   hot_threshold=None, out_parts=None, ranged=True, keep=None, lose=()):
    """The whole job with a shuffle in this process, what Spark does between the functions above:
    (profile lines of each partition, counters per step, the hot digests). hot: the hot digests,
    or None to find them from the map tasks' samples with hot_threshold (None: none); out_parts:
    the partitions of step 3 (parts when None); ranged: step 3's partitions by key ranges; keep:
    a folder where the map tasks keep their records (a local master's way: step 1 reduces each
    split's own when their spans are apart), lose: the splits whose kept records are lost."""
    by_task = {}
    out_parts = out_parts or parts

    def report(task, value):
        by_task[task] = value

    def shuffle(pairs_lists, n):
        into = collections.defaultdict(list)
        for pairs in pairs_lists:
            for part, blob in pairs:
                into[part].append((part, blob))
        return [into.get(i, []) for i in range(n)]

    size = 0
    if digest_filter and fast.load() is not None:
        size = digestfilter.bitmap_bytes(sum(digestfilter.split_bytes(jsonnum.loads(line)) for line in manifest_lines))
    paths = [os.path.join(keep, "map-%05d" % i) for i in range(len(manifest_lines))] if keep else None
    mapped = shuffle([map_partition(i, [line], job, parts, report, environ, size, paths[i] if keep else None)
                      for i, line in enumerate(manifest_lines)], parts)
    for i in lose:
        if keep and os.path.exists(paths[i]):
            os.unlink(paths[i])
    merged = FilterMerge(size)
    for (_, _, index), value in by_task.items():
        merged.add(index, value.filter)
    reports = list(by_task.values())
    shared = merged.shared(len(manifest_lines))
    if hot is None:
        hot = hot_digests(reports, hot_threshold) if hot_threshold is not None else set()
    fused = keep is not None and spans_apart([r.span for r in reports])
    if fused:
        step1 = shuffle([reduce_kept(i, [line], job, parts, report, paths[i], environ, shared, hot)
                         for i, line in enumerate(manifest_lines)], parts)
    else:
        if keep:
            mapped = shuffle([bucketed([kept(i, [line], job, paths[i], environ)], parts)
                              for i, line in enumerate(manifest_lines)], parts)
        step1 = shuffle([reduce_partition(0, i, pairs, job, parts, report, environ, shared, hot)
                         for i, pairs in enumerate(mapped)], parts)
    points = split_points(reports, out_parts) if ranged else None
    step2 = shuffle([reduce_partition(1, i, pairs, job, out_parts, report, environ, points=points)
                     for i, pairs in enumerate(step1)], out_parts)
    out = [final_partition(i, pairs, job, report, environ) for i, pairs in enumerate(step2)]
    return out, step_counters(by_task), hot


def default_hot_threshold(reports, parts):
    """Records a digest must reach to be hot: a share of a partition's map records, and at least
    contract.HOT_DIGEST_RECORDS."""
    lines = sum(r.lines for r in reports if isinstance(r, MapReport))
    return max(contract.HOT_DIGEST_RECORDS, lines / max(1, parts))
