"""The profile job as one Spark application: the program spark-submit runs for ``-r spark``.

profiler.runtime.sparkrunner hands spark-submit this program instead of mrjob's harness, with the
harness's command line. It runs the job's three steps over partitions of raw lines
(profiler.runtime.sparksteps: the local runner's task functions, the compiled kernels shipped
with ``--files``), with partitionBy shuffles of one blob per task and partition:

    manifest lines -> map -> | step 1 reduce -> | step 2 reduce -> | step 3 reduce -> text parts

Counters go to mrjob's counter folder, one dict per step, as its harness writes them; each task
reports its own, and a task that Spark runs again (a lost executor) replaces its earlier report
rather than adding to it.
"""

import argparse
import functools
import json
import os
import shlex
import sys

from profiler.runtime import contract, sparksteps

#: input bytes per reduce partition, at least (partitions are sorted in memory; the rest spills)
PARTITION_INPUT_BYTES = 256 << 20


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
    local = [p[len("file://"):] if p.startswith("file://") else p for p in paths]
    if all("://" not in p and os.path.isfile(p) for p in local):
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
    from profiler.runtime import digestfilter
    import orjson
    total = sum(digestfilter.split_bytes(orjson.loads(line)) for line in lines)
    return max(1, sc.defaultParallelism, -(-total // PARTITION_INPUT_BYTES))


def run(sc, lines, job, parts, output_path, codec=None):
    """The job over the manifest lines; the profile lines to output_path (text parts, each sorted
    by key). Returns the counters of each step."""
    by_task = sc.accumulator({}, _task_counters())
    mapped = sc.parallelize(lines, len(lines)).mapPartitionsWithIndex(
        functools.partial(_map, job, parts, by_task)).partitionBy(parts, int)
    step1 = mapped.mapPartitionsWithIndex(functools.partial(_reduce, 0, job, parts, by_task)).partitionBy(parts, int)
    step2 = step1.mapPartitionsWithIndex(functools.partial(_reduce, 1, job, parts, by_task)).partitionBy(parts, int)
    final = step2.mapPartitionsWithIndex(functools.partial(_final, job, by_task))
    final.saveAsTextFile(output_path, compressionCodecClass=codec)
    return sparksteps.step_counters(by_task.value)


def _reporter(by_task):
    return lambda task, counts: by_task.add({task: counts})


def _map(job, parts, by_task, index, lines):
    return sparksteps.map_partition(index, lines, job, parts, _reporter(by_task))


def _reduce(step_num, job, parts, by_task, index, pairs):
    return sparksteps.reduce_partition(step_num, index, pairs, job, parts, _reporter(by_task))


def _final(job, by_task, index, pairs):
    return sparksteps.final_partition(index, pairs, job, _reporter(by_task))


def _task_counters():
    from pyspark.accumulators import AccumulatorParam

    class TaskCounters(AccumulatorParam):
        """{task: counts}: a task's later report replaces its earlier one."""

        def zero(self, value):
            return {}

        def addInPlace(self, value1, value2):
            value1.update(value2)
            return value1
    return TaskCounters()


def write_counters(sc, counters, folder):
    """mrjob's counter file: a JSON list of one {group: {counter: n}} per step."""
    text = json.dumps(counters)
    if "://" in folder and not folder.startswith("file://"):
        sc.parallelize([text], 1).saveAsTextFile(folder)
        return
    folder = folder[len("file://"):] if folder.startswith("file://") else folder
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "part-00000"), "w") as f:
        f.write(text)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    opts, _ = contract.parse_options(shlex.split(args.job_args))
    job = sparksteps.JobOptions(opts["policy_json"], opts["resolve_revisits"], opts["table_limit"])
    from pyspark import SparkContext
    sc = SparkContext()
    counters = [{}, {}, {}]
    try:
        lines = manifest_lines(args.input_path, sc)
        counters = run(sc, lines, job, partitions(sc, lines, args.num_reducers), args.output_path,
                       args.compression_codec)
    finally:
        if args.counter_output_dir:
            write_counters(sc, counters, args.counter_output_dir)
        sc.stop()
    return 0
