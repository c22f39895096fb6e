"""The profile job as one Spark application: the program spark-submit runs for ``-r spark``.

profiler.runtime.sparkrunner hands spark-submit this program instead of mrjob's harness, with the
harness's command line. It runs the job's three steps over partitions of raw lines
(profiler.runtime.sparksteps: the local runner's task functions, the compiled kernels shipped
with ``--files``), with partitionBy shuffles of one blob per task and partition:

    manifest lines -> map -> | step 1 reduce -> | step 2 reduce -> | step 3 reduce -> text parts

The map tasks run as a job of their own first; what they report (their digest filters, samples
of their digests) tells step 1's reducers which digest records to write and which digests to
spread over every partition of step 2 (profiler.runtime.sparksteps). On a local master they keep
their records on local disk instead of writing them to a shuffle: when the splits' records are
in key order and their spans apart (a sorted index's), each split's step-1 reducer reads its own
split's records, and the largest shuffle is not made at all; else they are shuffled from there.

Counters go to mrjob's counter folder, one dict per step, as its harness writes them. Each task
reports its own, and a task that Spark runs again (a lost executor) replaces its earlier report
rather than adding to it.
"""

import argparse
import contextlib
import functools
import glob
import gzip
import importlib
import json
import logging
import os
import re
import shlex
import sys
import urllib.parse

import orjson
from pyspark.accumulators import AccumulatorParam

from profiler.accel import fast
from profiler import contract
from profiler.runtime import digestfilter, sparksteps, sparkwatch

log = logging.getLogger(__name__)

#: input bytes per reduce partition, at most (a partition is sorted in memory 128 MiB at a time, in runs
#: on local disk past that, and its output held in memory)
PARTITION_INPUT_BYTES = 1 << 30
#: the codec of saveAsTextFile the tasks write themselves (part-NNNNN.gz)
GZIP_CODEC = "org.apache.hadoop.io.compress.GzipCodec"
#: an archive's path at the start of an import path (a folder in it may follow)
_ARCHIVE = re.compile(r".*?\.(?:jar|zip)(?=$|/)")
#: partitions of step 3 at most: the output parts the client opens at once to merge them
MAX_OUTPUT_PARTS = 256
#: a merged digest filter with more of its bits set than this filters too little to be sent
MAX_FILTER_SET = 0.5
#: index bytes past which the largest bitmap would be mostly set (about 32M captures: 4 bits a
#: capture of its 64M): the map tasks make no filters
MAX_FILTER_INPUT = 4 * digestfilter.MAX_BYTES * digestfilter.INPUT_BYTES_PER_CAPTURE


def parse_args(argv):
    """mrjob's harness command line (mrjob.spark.harness; the options this program uses)."""
    parser = argparse.ArgumentParser(prog="archive-profiler spark")
    parser.add_argument("job_class")
    parser.add_argument("input_path")
    parser.add_argument("output_path")
    parser.add_argument("--job-args", default="")
    parser.add_argument("--counter-output-dir")
    parser.add_argument("--num-reducers", type=int)
    parser.add_argument("--compression-codec")
    args, _ = parser.parse_known_args(argv)
    return args


def manifest_lines(input_path, sc=None):
    """The manifest lines (one split each) of mrjob's comma-separated input paths: read here when
    they are local files, else through Spark."""
    paths = [p for p in input_path.split(",") if p]
    local = [local_folder(p) for p in paths]
    if all(p is not None and os.path.isfile(p) for p in local):
        lines = []
        for path in local:
            with open(path, "rb") as f:
                lines.extend(line.rstrip(b"\r\n") for line in f if line.strip())
        return lines
    return [line for line in sc.textFile(",".join(paths), use_unicode=False).collect() if line.strip()]


def partitions(sc, lines, wanted=None):
    """Reduce partitions of every step: as asked (mapreduce.job.reduces), else Spark's default
    parallelism, and at least one per PARTITION_INPUT_BYTES of input."""
    if wanted:
        return wanted
    total = sum(digestfilter.split_bytes(orjson.loads(line)) for line in lines)
    return max(1, sc.defaultParallelism, -(-total // PARTITION_INPUT_BYTES))


def run(sc, lines, job, parts, output_path, codec=None, hot_records=0, digest_filter=True):
    """The job over the manifest lines; the profile lines to output_path (text parts, each sorted
    by key). Returns the counters of each step.

    The map tasks run first as a job of their own (``map_stage``), so that step 1's reducers get
    what they reported: the merged digest filter and the hot digests (profiler.runtime.sparksteps).
    hot_records: estimated records that make a digest hot (0: from the input's size)."""
    size = 0
    total = sum(digestfilter.split_bytes(orjson.loads(line)) for line in lines)
    if digest_filter and fast.load() is not None and total <= MAX_FILTER_INPUT:
        size = digestfilter.bitmap_bytes(total)
    reports = sc.accumulator({}, _Replacing())
    filters = sc.accumulator(sparksteps.FilterMerge(size), _Filters())
    out_parts = min(parts, MAX_OUTPUT_PARTS)
    if sparksteps.is_local_master(sc.master):
        return _run_kept(sc, lines, job, parts, out_parts, reports, filters, size, output_path, codec, hot_records)
    mapped = sc.parallelize(lines, len(lines)).mapPartitionsWithIndex(
        functools.partial(_map, job, parts, reports, filters, size)).partitionBy(parts, int)
    shared = hot = points = None
    if map_stage(sc, mapped):
        shared, hot, points, _ = _learnt(sc, lines, parts, out_parts, reports, filters, hot_records)
    step1 = mapped.mapPartitionsWithIndex(functools.partial(_reduce, 0, job, parts, reports, shared, hot, None)) \
        .partitionBy(parts, int)
    return _last_steps(step1, job, out_parts, reports, points, output_path, codec)


def _learnt(sc, lines, parts, out_parts, reports, filters, hot_records):
    """What the driver learns from the map tasks' reports: (the shared-digest bitmap or None, the
    hot digests, step 3's split points or None), each broadcast when there is one."""
    merged = filters.value
    shared = merged.shared(len(lines))
    if shared is not None and merged.fraction_set() > MAX_FILTER_SET:
        log.info("digest filter not used: %.0f%% of its bits are set", 100 * merged.fraction_set())
        shared = None
    maps = [r for r in reports.value.values() if isinstance(r, sparksteps.MapReport)]
    hot = sparksteps.hot_digests(maps, hot_records or sparksteps.default_hot_threshold(maps, parts))
    if hot:
        log.info("%d hot digest(s) spread over %d partitions", len(hot), parts)
        reports.add({("driver", 0, 0): {"spark": {"hot digests (records spread over partitions)": len(hot)}}})
    points = sparksteps.split_points(maps, out_parts)
    return (sc.broadcast(shared) if shared else None, sc.broadcast(hot) if hot else None,
            sc.broadcast(points) if points else None, maps)


def _last_steps(step1, job, out_parts, reports, points, output_path, codec):
    """Steps 2 and 3 after step 1, their profile lines saved to output_path: the counters of each step."""
    step2 = step1.mapPartitionsWithIndex(functools.partial(_reduce, 1, job, out_parts, reports, None, None,
                                                           points)).partitionBy(out_parts, int)
    final = step2.mapPartitionsWithIndex(functools.partial(_final, job, reports))
    save_parts(final, output_path, codec)
    check_parts(output_path, out_parts)
    return sparksteps.step_counters(reports.value)


def _run_kept(sc, lines, job, parts, out_parts, reports, filters, size, output_path, codec, hot_records):
    """run() on a local master: the map tasks keep their records on local disk (a job of its
    own, no shuffle); step 1's reducers take each split's own when the splits' spans are apart,
    else the records are shuffled from there to step 1 as run() shuffles them."""
    import uuid
    run_id = uuid.uuid4().hex
    try:
        n = len(lines)
        sc.parallelize(lines, n).mapPartitionsWithIndex(
            functools.partial(_map_kept, job, parts, reports, filters, size, run_id)).count()
        shared, hot, points, maps = _learnt(sc, lines, parts, out_parts, reports, filters, hot_records)
        if sparksteps.spans_apart([m.span for m in maps]):
            log.info("step 1 reduces each split's own records: the splits hold URI-Rs apart")
            reports.add({("driver", 0, 1): {"spark": {"splits reduced where they were mapped": n}}})
            step1 = sc.parallelize(lines, n).mapPartitionsWithIndex(
                functools.partial(_reduce_kept, job, parts, reports, shared, hot, run_id)).partitionBy(parts, int)
        else:
            mapped = sc.parallelize(lines, n).mapPartitionsWithIndex(
                functools.partial(_shuffle_kept, job, parts, run_id)).partitionBy(parts, int)
            step1 = mapped.mapPartitionsWithIndex(functools.partial(_reduce, 0, job, parts, reports, shared, hot,
                                                                    None)).partitionBy(parts, int)
        return _last_steps(step1, job, out_parts, reports, points, output_path, codec)
    finally:
        for path in glob.glob(_kept_path(None, run_id, "*")):
            os.unlink(path)


def _kept_path(folder, run_id, index):
    """Where a map task keeps its records: the task's Spark local folder (removed with the
    application), else the system's temp folder (removed by the driver)."""
    import tempfile
    name = "archive-profiler-%s-map-%s" % (run_id, index if isinstance(index, str) else "%05d" % index)
    return os.path.join(folder or tempfile.gettempdir(), name)


def _map_kept(job, parts, reports, filters, size, run_id, index, lines):
    forget_archives()

    def report(task, value):
        reports.add({task: value})
        if value.filter is not None:
            filters.add({task[2]: value.filter})
    return sparksteps.map_partition(index, lines, job, parts, report, filter_bytes=size,
                                    keep=_kept_path(sparksteps.scratch(), run_id, index))


def _reduce_kept(job, parts, reports, shared, hot, run_id, index, lines):
    forget_archives()
    return sparksteps.reduce_kept(index, list(lines), job, parts, _reporter(reports),
                                  _kept_path(sparksteps.scratch(), run_id, index),
                                  shared=shared.value if shared else None, hot=hot.value if hot else None)


def _shuffle_kept(job, parts, run_id, index, lines):
    forget_archives()
    data = sparksteps.kept(index, list(lines), job, _kept_path(sparksteps.scratch(), run_id, index))
    return sparksteps.bucketed([data], parts)


def map_stage(sc, shuffled):
    """Run the map side of shuffled's shuffle (a partitionBy's result) as a job of its own; the
    next job finds its map outputs there. False when this Spark has no way to (its
    SparkContext.submitMapStage, reached through py4j, is not public API)."""
    from py4j.protocol import Py4JError, Py4JJavaError
    try:
        dependency = shuffled._jrdd.rdd().dependencies().head().rdd().dependencies().head()
        submit = sc._jsc.sc().submitMapStage
        future = submit(dependency)
    except Py4JJavaError:
        raise
    except (Py4JError, AttributeError) as e:
        log.info("no map stage of its own (%s): no digest filter, no hot digests", e)
        return False
    future.get()
    return True


def local_folder(path):
    """The local path of a file or folder given as a path or a file:// URI; None for other URIs.
    mrjob's file:// URIs are percent-encoded (a space, '%' or a non-ASCII letter in a name):
    taken as written, the manifest was not found and the parts went to another folder."""
    if path.startswith("file://"):
        return urllib.parse.unquote(path[len("file://"):], errors="surrogateescape")
    return None if "://" in path else path


def save_parts(rdd, output_path, codec=None):
    """The text records of rdd (blobs of whole lines) as the parts of output_path, one a
    partition, as saveAsTextFile writes them. A folder on a filesystem (a path, a file:// URI)
    gets them from the tasks themselves (``_write_part``: no Hadoop output format and committer
    in the JVM, no records through it); other URIs, or a codec other than gzip, go through
    saveAsTextFile."""
    folder = local_folder(output_path)
    if folder is None or codec not in (None, GZIP_CODEC):
        rdd.saveAsTextFile(output_path, compressionCodecClass=codec)
        return
    os.makedirs(folder)
    rdd.mapPartitionsWithIndex(functools.partial(_write_part, folder, codec is not None)).collect()
    with open(os.path.join(folder, "_SUCCESS"), "wb"):
        pass


def _write_part(folder, gz, index, records):
    """A task's part-NNNNN: written under a name of its attempt, then renamed, so that a part is
    whole whichever attempt of the task wrote it (they write the same bytes)."""
    name = "part-%05d%s" % (index, ".gz" if gz else "")
    os.makedirs(folder, exist_ok=True)      # on an executor that does not share it: check_parts says so
    tmp = os.path.join(folder, ".%s.%d-%d.tmp" % (name, os.getpid(), _attempt()))
    try:
        with open(tmp, "wb") as raw:
            f = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) if gz else raw
            for record in records:
                f.write(record)
                f.write(b"\n")
            if gz:
                f.close()
        os.replace(tmp, os.path.join(folder, name))
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return [index]


def _attempt():
    from pyspark import TaskContext
    context = TaskContext.get()
    return context.attemptNumber() if context is not None else 0


def check_parts(output_path, parts):
    """RuntimeError when an output on this machine lacks a part: its executors wrote to folders
    the driver does not see (a temp folder that is not on a filesystem they share)."""
    folder = local_folder(output_path)
    if folder is None:
        return
    found = {name.split(".")[0] for name in os.listdir(folder) if name.startswith("part-")}
    missing = [i for i in range(parts) if "part-%05d" % i not in found]
    if missing:
        raise RuntimeError("%d of %d output parts are not in %s: the executors write where this machine does "
                           "not see (--spark-tmp-dir must be a folder every node shares)"
                           % (len(missing), parts, folder))


def forget_archives():
    """Take off sys.path, and out of the import system's cache, the archives Spark puts on a
    Python worker's path that its imports do not come from: Spark's spark-core jar (thousands of
    entries), and pyspark's and py4j's zips when those packages are installed. pyspark's worker
    calls importlib.invalidate_caches() before every task, which reads every cached archive's
    directory again."""
    loaded = [getattr(sys.modules.get(name), "__file__", None) or "" for name in ("pyspark", "py4j")]

    def unused(archive):
        name = os.path.basename(archive)
        spark_archive = (name.endswith(".jar") or name == "pyspark.zip"
                         or (name.startswith("py4j") and name.endswith(".zip")))
        return spark_archive and not any(f.startswith(archive + os.sep) for f in loaded)
    if any(unused(p) for p in sys.path):
        sys.path[:] = [p for p in sys.path if not unused(p)]
    for key in list(sys.path_importer_cache):
        archive = _ARCHIVE.match(key)
        if archive and unused(archive.group(0)):
            del sys.path_importer_cache[key]


def preload(policy_json):
    """What a process that forks Python workers (a local master's daemon) reads once for them:
    the task code and what the policy's tasks read first (profiler.job.kernels.task_preloads)."""
    from profiler.job.kernels import task_preloads
    forget_archives()
    for name in task_preloads(sparksteps.policy_of(sparksteps.JobOptions(policy_json, True, 0))):
        module, _, function = name.partition(":")
        getattr(importlib.import_module(module), function)()


def _map(job, parts, reports, filters, size, index, lines):
    forget_archives()
    def report(task, value):
        reports.add({task: value})
        if value.filter is not None:
            filters.add({task[2]: value.filter})
    return sparksteps.map_partition(index, lines, job, parts, report, filter_bytes=size)


def _reduce(step_num, job, parts, reports, shared, hot, points, index, pairs):
    forget_archives()
    return sparksteps.reduce_partition(step_num, index, pairs, job, parts, _reporter(reports),
                                       shared=shared.value if shared else None, hot=hot.value if hot else None,
                                       points=points.value if points else None)


def _final(job, reports, index, pairs):
    forget_archives()
    return sparksteps.final_partition(index, pairs, job, _reporter(reports))


def _reporter(reports):
    return lambda task, counts: reports.add({task: counts})


class _Replacing(AccumulatorParam):
    """{task: report}: a task's later report replaces its earlier one."""

    def zero(self, value):
        return {}

    def addInPlace(self, value1, value2):
        value1.update(value2)
        return value1


class _Filters(AccumulatorParam):
    """The map tasks' digest filters: {map task: filter} on the executors, merged into a
    sparksteps.FilterMerge on the driver (each task once)."""

    def zero(self, value):
        return {}

    def addInPlace(self, value1, value2):
        if isinstance(value1, dict):
            value1.update(value2)
        else:
            for index, filter_ in value2.items():
                value1.add(index, filter_)
        return value1


def write_counters(sc, counters, folder):
    """mrjob's counter file: a JSON list of one {group: {counter: n}} per step."""
    text = json.dumps(counters)
    if "://" in folder and not folder.startswith("file://"):
        sc.parallelize([text], 1).saveAsTextFile(folder)
        return
    folder = local_folder(folder)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "part-00000"), "w") as f:
        f.write(text)


def _watched(sc):
    """The executors of a cluster's master watched while the job runs (profiler.runtime.sparkwatch);
    None for a local master, whose driver runs the tasks."""
    if sparksteps.is_local_master(sc.master):
        return contextlib.nullcontext()
    return sparkwatch.ExecutorWatch(sc, sparkwatch.timeout_of(sc.getConf()))


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    opts, _ = contract.parse_options(shlex.split(args.job_args))
    job = sparksteps.JobOptions(opts["policy_json"], opts["resolve_revisits"], opts["table_limit"])
    logging.basicConfig(level=logging.INFO, format="archive-profiler spark: %(message)s")
    from pyspark import SparkContext
    sc = SparkContext()
    counters = [{}, {}, {}]
    try:
        lines = manifest_lines(args.input_path, sc)
        with _watched(sc) as watch:
            try:
                counters = run(sc, lines, job, partitions(sc, lines, args.num_reducers), args.output_path,
                               args.compression_codec, opts["hot_digest_records"])
            except Exception:
                if watch is None or watch.gave_up is None:
                    raise
                print(sparkwatch.GAVE_UP + watch.gave_up, file=sys.stderr, flush=True)
                return 1
    finally:
        if args.counter_output_dir:
            write_counters(sc, counters, args.counter_output_dir)
        sc.stop()
    return 0
