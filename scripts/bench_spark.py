#!/usr/bin/env python
"""Benchmark the Spark runner against the local runner on a synthetic CDX index.

    python scripts/bench_spark.py [--lines 1000000] [--master local[2]] [--compare local]
        [--local-cores 2] [--repeat 1] [--floor] [--standalone 1,2] [--policy FILE] [--json FILE] [--keep DIR]

Runs `archive-profiler profile -r spark` (pyspark from the `spark` extra), then, with --compare
local, the same input with the local runner, and checks that the profiles are byte-identical
except the `created` time. Prints wall and CPU time (the least CPU of --repeat runs, and all
runs), the CPU by kind of process (Spark's JVMs, its Python workers, its driver's Python, the
client), the ratio of Spark's CPU to the local runner's, captures per second and per CPU second,
and the shuffle bytes per input capture: Spark's own "Shuffle Bytes Written" (from the event log
of two more runs: raw, as a local master writes them, and lz4-compressed, as a cluster's
executors do) and, with --local-shuffle, the bytes the local runner's streaming steps hand from
map to reduce (the text Hadoop Streaming would shuffle, raw and deflated; --cleanup NONE). With
--standalone 1,2 it starts a standalone cluster of 1, then 2 workers (--standalone-cores each;
profiler.testing.spark_cluster) on this machine and runs the profile there; their CPU counts the
cluster's daemons and executors during the run. Also times the client's merge of the profile cut
into 64 sorted parts (Hadoop's and Spark's) and 64 unsorted ones, with its memory growth. With
--floor it also times the least Spark program of the job's shape, started as the runner starts a
local master's driver: a SparkContext and one job of one map task and 1, then 3, shuffles of
empty blobs (no records), the fixed cost under any run on that master.

With --marginal A,B it runs Spark and the local runner (--local-cores) on inputs of A and B
captures instead, in rounds (--repeat; the least CPU of each kept), and prints each one's CPU per
capture between the two sizes (its marginal cost, the fixed start-up left out: what a larger input
costs more) and Spark's over the local runner's.
"""

import argparse
import glob
import itertools
import json
import random
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.path.insert(0, REPO)

from bench_profile import (cached_input, finish, output_size, package_env, profiler_command, resolve,  # noqa: E402
                          tail)


def _tree_cpu(roots, seen, stop, names=None):
    """Poll /proc: last utime+stime (seconds) of root and all its descendants, into seen (and
    their command lines into names).

    mrjob starts spark-submit on a pseudo-terminal (a new session), so the tree is followed
    through parent pids, remembering every process once seen.
    """
    tick = os.sysconf("SC_CLK_TCK")
    members = set(roots)
    while not stop.is_set():
        stats = {}
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open("/proc/%s/stat" % pid) as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                stats[int(pid)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
        grew = True
        while grew:
            grew = False
            for pid, (ppid, _) in stats.items():
                if pid not in members and ppid in members:
                    members.add(pid)
                    grew = True
        for pid in members & stats.keys():
            seen[pid] = stats[pid][1]
            if names is not None:
                try:
                    with open("/proc/%d/cmdline" % pid, "rb") as f:
                        names[pid] = f.read().replace(b"\0", b" ").decode("utf-8", "replace") or names.get(pid, "")
                except OSError:
                    pass
        stop.wait(0.2)


def _cpu_of(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def kind_of(cmdline):
    """The kind of a process of a run, by its command line."""
    if "java" in cmdline.split(" ", 1)[0] or "org.apache.spark" in cmdline:
        return "spark_jvm"
    if "pyspark.daemon" in cmdline or "pyspark/worker" in cmdline or "spark_daemon" in cmdline:
        return "spark_python_workers"
    if "archive_profiler_spark.py" in cmdline or "harness.py" in cmdline or "floor.py" in cmdline:
        return "spark_driver_python"
    return "client_and_tasks"


def run(cmd, env, log_path, cwd=REPO, cluster=()):
    """(exit status, wall seconds, CPU seconds, {kind of process: CPU seconds}) of a command.

    CPU is the larger of getrusage(RUSAGE_CHILDREN) and the sum over the command's process
    tree polled in /proc: Spark's Python workers are never waited for, so rusage misses them;
    polling misses at most 0.2 s of each process's last moments. cluster: pids of a cluster's
    daemons, whose CPU during the run and their executors' count too.
    """
    import threading
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    seen, names, stop = {}, {}, threading.Event()
    daemons = {pid: _cpu_of(pid) for pid in cluster}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        poller = threading.Thread(target=_tree_cpu, args=([proc.pid] + list(cluster), seen, stop, names),
                                  daemon=True)
        poller.start()
        status = proc.wait()
        stop.set()
        poller.join()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = max((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), sum(seen.values()))
    for pid, before_run in daemons.items():          # only the daemons' CPU during the run
        seen[pid] = seen.get(pid, before_run) - before_run
    cpu = max(cpu, sum(seen.values()))
    kinds = {}
    for pid, seconds in seen.items():
        kind = "cluster_daemons" if pid in daemons else kind_of(names.get(pid, ""))
        kinds[kind] = round(kinds.get(kind, 0) + seconds, 2)
    if status:
        sys.stderr.write(tail(log_path))
        sys.stderr.write("\ncommand failed (exit %d); log: %s\n" % (status, log_path))
    return status, wall, cpu, kinds


def spark_shuffle_bytes(event_dir):
    """(shuffle bytes written, shuffle records written) summed over the event logs' tasks."""
    written = records = 0
    for path in glob.glob(os.path.join(event_dir, "*")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if '"SparkListenerTaskEnd"' not in line:
                    continue
                metrics = json.loads(line).get("Task Metrics") or {}
                shuffle = metrics.get("Shuffle Write Metrics") or {}
                written += shuffle.get("Shuffle Bytes Written", 0)
                records += shuffle.get("Shuffle Records Written", 0)
    return written, records


def local_shuffle_bytes(tmpdir):
    """{step: [bytes, deflate-compressed bytes]} that a local-runner job left (--cleanup NONE)
    handed from map to reduce: step 1's map outputs, then each step's output (the next step's map
    is `cat`).

    The compressed size is what Hadoop's DefaultCodec (zlib, level 6) would move when
    mapreduce.map.output.compress is on (conf/mrjob-hadoop.conf).
    """
    per_step = {}
    inputs = [(0, p) for p in glob.glob(os.path.join(tmpdir, "*", "step", "000", "mapper", "*", "output"))]
    for step in (1, 2):
        parts = os.path.join(tmpdir, "*", "step-output", "%04d" % (step - 1), "part-*")
        inputs += [(step, p) for p in glob.glob(parts)]
    for step, path in inputs:
        sizes = per_step.setdefault(step, [0, 0])
        sizes[0] += os.path.getsize(path)
        z = zlib.compressobj(6)
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                sizes[1] += len(z.compress(chunk))
        sizes[1] += len(z.flush())
    return per_step


def split_into_parts(profile, folder, parts, presorted):
    """Write a profile's records as `parts` job output parts (key<TAB>value), hash-partitioned."""
    os.makedirs(folder, exist_ok=True)
    buckets = [[] for _ in range(parts)]
    with open(profile, "rb") as f:
        for line in f:
            if not line.startswith(b"!"):
                key, _, value = line.rstrip(b"\n").partition(b" {")
                buckets[zlib.crc32(key) % parts].append(key + b"\t{" + value + b"\n")
    for i, lines in enumerate(buckets):
        if presorted:
            lines.sort(key=lambda l: l.split(b"\t", 1)[0])
        else:                                  # Spark's parts: grouped by hash, in no key order
            random.Random(i).shuffle(lines)
        with open(os.path.join(folder, "part-%05d" % i), "wb") as f:
            f.writelines(lines)


def merge_parts(folder):
    """Merge the parts in folder like the client does; CPU seconds and peak RSS growth (KiB)."""
    from profiler.files import output
    paths = sorted(glob.glob(os.path.join(folder, "part-*")))
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    lines = output.write_profile(os.path.join(folder, "merged.cdxj"), [lambda p=p: open(p, "rb") for p in paths],
                                 lambda meta: [])
    return {"parts": len(paths), "lines": lines, "cpu_seconds": round(time.process_time() - started, 3),
            "peak_rss_growth_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base}


def merge_cost(profile, scratch, parts=64):
    """Client merge of `parts` sorted parts, and of unsorted ones (Spark's), each in a fresh process."""
    figures = {}
    for presorted in (True, False):
        folder = os.path.join(scratch, "merge-parts")
        shutil.rmtree(folder, ignore_errors=True)
        split_into_parts(profile, folder, parts, presorted)
        out = subprocess.check_output([sys.executable, os.path.abspath(__file__), "--merge-parts", folder])
        figures["sorted_parts" if presorted else "unsorted_parts"] = json.loads(out)
        shutil.rmtree(folder, ignore_errors=True)
    figures["profile_bytes"] = os.path.getsize(profile)
    return figures


def same_except_created(a, b):
    """True when two profiles differ at most in the `created` field of their header."""
    def lines(path):
        with open(path, "rb") as f:
            for line in f:
                if line.startswith(b"!meta ") and b'"created":' in line:
                    start = line.index(b'"created":')
                    line = line[:start] + line[line.index(b",", start):]
                yield line
    return all(x == y for x, y in itertools.zip_longest(lines(a), lines(b)))


def _runs(label, cmd, env, cwd, scratch, repeat, lines, cluster=()):
    """repeat runs of cmd: the figures of the one of least CPU and the runs' times, or an exit status."""
    runs = []
    for i in range(repeat):
        print("running    %s%s" % (" ".join(cmd), "" if repeat == 1 else "  (%d/%d)" % (i + 1, repeat)))
        tmp = _fresh(scratch, "tmp-" + label)
        status, wall, cpu, kinds = run(cmd, dict(env, TMPDIR=tmp), os.path.join(scratch, "%s-%d.log" % (label, i)), cwd,
                                       cluster)
        shutil.rmtree(tmp, ignore_errors=True)
        if status:
            return status
        runs.append({"wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2), "cpu_by_process": kinds})
    best = min(runs, key=lambda r: r["cpu_seconds"])
    return dict(best, least_wall_seconds=min(r["wall_seconds"] for r in runs),
                captures_per_cpu_second=round(lines / best["cpu_seconds"]),
                captures_per_wall_second=round(lines / best["wall_seconds"]),
                runs=[{"wall_seconds": r["wall_seconds"], "cpu_seconds": r["cpu_seconds"]} for r in runs])


#: the least a Spark program with the job's shape costs: a SparkContext and one job (one map task,
#: `shuffles` shuffles of an empty blob over two partitions, results collected), no records
FLOOR_PROGRAM = """import sys
_late = [p for p in sys.path if p.endswith(("pyspark.zip", "-src.zip", ".jar"))]
sys.path[:] = [p for p in sys.path if p not in _late] + _late
sys.modules.setdefault("numpy", None)
from pyspark import SparkContext
sc = SparkContext()
rdd = sc.parallelize([b"split"], 1).mapPartitions(lambda lines: [(0, b""), (1, b"")]).partitionBy(2, int)
for _ in range(int(sys.argv[1]) - 1):
    rdd = rdd.mapPartitions(lambda pairs: [(i, b"".join(b for _, b in pairs)) for i in (0, 1)]).partitionBy(2, int)
print(rdd.mapPartitions(lambda pairs: [sum(len(b) for _, b in pairs)]).collect())
sc.stop()
"""


def floor_runs(scratch, env, master, repeat):
    """{"shuffles_N": figures} of FLOOR_PROGRAM with 1 and 3 shuffles, started as the Spark runner
    starts a local master's driver (profiler.runtime.sparkrunner, profiler.runtime.sparklaunch:
    its Java options, class archive, settings and Python daemon, without the launcher JVM)."""
    from profiler.runtime import sparklaunch, sparkrunner
    from profiler.runtime.startup import import_mrjob_bin
    spark_submit = os.path.join(os.path.dirname(import_mrjob_bin().pyspark.__file__), "bin", "spark-submit")
    program = os.path.join(scratch, "floor.py")
    with open(program, "w") as f:
        f.write(FLOOR_PROGRAM)
    daemon = _fresh(scratch, "floor-daemon")
    with open(os.path.join(daemon, sparkrunner.DAEMON_MODULE + ".py"), "w") as f:
        f.write(sparkrunner.PRELUDE + "from pyspark import daemon\ndaemon.manager()\n")
    options = sparkrunner.LOCAL_DRIVER_JAVA_OPTIONS
    archive = sparklaunch.ClassArchive.for_spark(spark_submit)
    if archive and not archive.writing:
        options += " " + archive.option()
    args = ["--driver-java-options", options, "--master", master, "--conf", "spark.ui.enabled=false",
            "--conf", "spark.python.daemon.module=" + sparkrunner.DAEMON_MODULE,
            "--conf", "spark.executorEnv.PYTHONPATH=" + daemon, "--conf", "spark.pyspark.python=" + sys.executable]
    for key, value in sorted(sparkrunner.LOCAL_JOBCONF.items()):
        args += ["--conf", "%s=%s" % (key, value)]
    launch = sparklaunch.DriverCommand.for_spark(spark_submit)
    figures = {}
    for shuffles in (1, 3):
        submit = args + [program, str(shuffles)]
        cmd = launch.command(submit) if launch else None
        cmd, run_env = (cmd, dict(env, **launch.env)) if cmd else ([spark_submit] + submit, env)
        found = _runs("floor-%d" % shuffles, cmd, run_env, REPO, scratch, repeat, 1)
        if isinstance(found, int):
            return found
        figures["shuffles_%d" % shuffles] = {k: found[k] for k in ("cpu_seconds", "cpu_by_process",
                                                                     "least_wall_seconds", "runs")}
    figures["class_archive"] = bool(archive and not archive.writing)
    figures["without_launcher"] = launch is not None
    return figures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1000000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--master", default="local[2]", help="Spark master (default %(default)s)")
    parser.add_argument("--compare", choices=("local", "none"), default="local",
                        help="also run the local runner and compare the bytes (default local)")
    parser.add_argument("--local-cores", default="2", help="comma-separated core counts of local runs (default 2)")
    parser.add_argument("--local-shuffle", action="store_true",
                        help="one more local run with --cleanup NONE, to measure its shuffle bytes")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each; the least CPU is reported")
    parser.add_argument("--standalone", default="", help="comma-separated worker counts of standalone clusters")
    parser.add_argument("--standalone-cores", type=int, default=1, help="cores of each standalone worker")
    parser.add_argument("--executor-java-options", default="",
                        help="spark.executor.extraJavaOptions of the standalone runs (their executors' JVMs)")
    parser.add_argument("--policy", help="policy YAML passed as --policy")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--keep", metavar="DIR", help="keep outputs and logs in DIR")
    parser.add_argument("--no-merge", action="store_true", help="skip the client merge figures")
    parser.add_argument("--floor", action="store_true",
                        help="also time the least Spark program of the job's shape (no records) on --master")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "archive-profiler-bench"))
    parser.add_argument("--marginal", metavar="A,B", help="the marginal CPU per capture of Spark and the local "
                        "runner between inputs of A and B captures (e.g. 200000,1000000)")
    parser.add_argument("--merge-parts", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.merge_parts:
        print(json.dumps(merge_parts(args.merge_parts)))
        return 0
    if args.marginal:
        return marginal(args)

    input_path, _ = cached_input(args.workdir, args.lines, args.seed, False)
    scratch = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="spark-", dir=args.workdir)
    os.makedirs(scratch, exist_ok=True)
    env, cwd = package_env(dict(os.environ, SPARK_LOCAL_IP=os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")))
    base = profiler_command() + ["profile", input_path]
    if args.policy:
        base += ["--policy", resolve(args.policy)]
    figures = {"lines": args.lines, "seed": args.seed, "input": input_path,
               "input_bytes": os.path.getsize(input_path), "policy": args.policy,
               "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}

    spark_out = os.path.join(scratch, "spark.cdxj")
    spark_args = ["-c", os.path.join(REPO, "conf", "mrjob-spark.conf"), "--", "--python-bin", sys.executable]
    cmd = base + ["-o", spark_out, "-r", "spark"] + spark_args + ["--spark-master", args.master]
    found = _runs("spark", cmd, env, cwd, scratch, args.repeat, args.lines)
    if isinstance(found, int):
        return found
    # two more runs with Spark's event log, for the shuffle bytes (the log costs the driver some CPU):
    # as the run wrote them (a local master's shuffle is not compressed) and lz4-compressed, as a
    # cluster's executors write them (Spark's default)
    shuffles = {}
    for name, compress in (("raw", []), ("lz4", ["--jobconf", "spark.shuffle.compress=true"])):
        events = _fresh(scratch, "spark-events-" + name)
        tmp = _fresh(scratch, "tmp-spark")
        status, _, _, _ = run(cmd + compress + ["--jobconf", "spark.eventLog.enabled=true", "--jobconf",
                                                "spark.eventLog.dir=file://" + events],
                              dict(env, TMPDIR=tmp), os.path.join(scratch, "spark-events-%s.log" % name), cwd)
        if status:
            return status
        shuffles[name] = spark_shuffle_bytes(events)
    figures["spark"] = dict(found, master=args.master, shuffle_bytes_written=shuffles["raw"][0],
                            shuffle_records_written=shuffles["raw"][1],
                            shuffle_bytes_per_capture=round(shuffles["raw"][0] / args.lines, 1),
                            shuffle_lz4_bytes_per_capture=round(shuffles["lz4"][0] / args.lines, 1),
                            output_bytes=output_size(spark_out)[0])

    if not args.no_merge:
        figures["client_merge"] = merge_cost(spark_out, scratch)

    if args.floor:
        found = floor_runs(scratch, env, args.master, args.repeat)
        if isinstance(found, int):
            return found
        figures["spark_floor"] = found

    if args.compare == "local":
        figures["local"] = {}
        for cores in [int(c) for c in args.local_cores.split(",")]:
            local_out = os.path.join(scratch, "local-%d.cdxj" % cores)
            cmd = base + ["-o", local_out, "-r", "local", "--cores", str(cores)]
            found = _runs("local-%d" % cores, cmd, env, cwd, scratch, args.repeat, args.lines)
            if isinstance(found, int):
                return found
            found["identical_to_spark_except_created"] = same_except_created(spark_out, local_out)
            found["spark_cpu_over_local_cpu"] = round(figures["spark"]["cpu_seconds"] / found["cpu_seconds"], 2)
            if args.floor:
                found["spark_floor_over_local_cpu"] = {
                    n: round(figures["spark_floor"][n]["cpu_seconds"] / found["cpu_seconds"], 2)
                    for n in ("shuffles_1", "shuffles_3")}
            if args.local_shuffle:
                tmp = _fresh(scratch, "tmp-local")
                status, _, _, _ = run(cmd + ["--", "--cleanup", "NONE"], dict(env, TMPDIR=tmp),
                                      os.path.join(scratch, "local-shuffle.log"), cwd)
                if status:
                    return status
                per_step = local_shuffle_bytes(tmp)
                raw, deflated = (sum(v[i] for v in per_step.values()) for i in (0, 1))
                found.update(reducer_input_bytes_per_step=per_step,
                             shuffle_bytes_per_capture=round(raw / args.lines, 1),
                             shuffle_deflate_bytes_per_capture=round(deflated / args.lines, 1))
                shutil.rmtree(tmp, ignore_errors=True)
            figures["local"][cores] = found
        figures["identical_except_created"] = all(
            v["identical_to_spark_except_created"] for v in figures["local"].values())

    if args.standalone:
        from profiler.testing.spark_cluster import StandaloneCluster
        figures["standalone"] = {}
        for workers in [int(w) for w in args.standalone.split(",")]:
            folder = _fresh(scratch, "cluster-%d" % workers)
            out = os.path.join(scratch, "standalone-%d.cdxj" % workers)
            with StandaloneCluster(folder, workers=workers, cores=args.standalone_cores,
                                   env=dict(env, SPARK_LOCAL_DIRS=os.path.join(folder, "local"))) as cluster:
                cmd = base + ["-o", out, "-r", "spark"] + spark_args + [
                    "--spark-master", cluster.url, "--jobconf", "spark.executor.memory=1g",
                    "--jobconf", "spark.default.parallelism=%d" % (2 * workers * args.standalone_cores)]
                if args.executor_java_options:
                    cmd += ["--jobconf", "spark.executor.extraJavaOptions=" + args.executor_java_options]
                found = _runs("standalone-%d" % workers, cmd, env, cwd, scratch, args.repeat, args.lines,
                              [p.pid for p in cluster.procs.values()])
            if isinstance(found, int):
                return found
            found.update(workers=workers, cores_per_worker=args.standalone_cores,
                         executor_java_options=args.executor_java_options,
                         identical_to_spark_except_created=same_except_created(spark_out, out))
            figures["standalone"][workers] = found

    print(json.dumps(figures, indent=2, sort_keys=True))
    finish(args, figures, scratch)
    ok = figures.get("identical_except_created", True) and all(
        v["identical_to_spark_except_created"] for v in figures.get("standalone", {}).values())
    return 0 if ok else 1


def marginal(args):
    """--marginal A,B: Spark's and the local runner's CPU at both sizes, in rounds, and their CPU per
    capture between them (µs), fixed start-up apart; the profiles of one size must be the same bytes."""
    sizes = sorted(int(n) for n in args.marginal.split(","))
    if len(sizes) != 2 or sizes[0] == sizes[1]:
        print("bench_spark: --marginal takes two different sizes, e.g. 200000,1000000", file=sys.stderr)
        return 2
    scratch = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="spark-", dir=args.workdir)
    os.makedirs(scratch, exist_ok=True)
    env, cwd = package_env(dict(os.environ, SPARK_LOCAL_IP=os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")))
    inputs = {n: cached_input(args.workdir, n, args.seed, False)[0] for n in sizes}
    cores = args.local_cores.split(",")[0]
    spark_args = ["-c", os.path.join(REPO, "conf", "mrjob-spark.conf"), "--", "--python-bin", sys.executable,
                  "--spark-master", args.master]
    kinds = {"spark": ["-r", "spark"] + spark_args, "local": ["-r", "local", "--cores", cores]}
    if args.policy:
        kinds = {k: ["--policy", resolve(args.policy)] + v for k, v in kinds.items()}
    runs = {(kind, n): [] for kind in kinds for n in sizes}
    identical = True
    for r in range(args.repeat):
        for n in sizes:
            outs = {}
            for kind, extra in kinds.items():
                outs[kind] = os.path.join(scratch, "%s-%d.cdxj" % (kind, n))
                cmd = profiler_command() + ["profile", inputs[n], "-o", outs[kind]] + extra
                print("running    %s  (round %d of %d)" % (" ".join(cmd), r + 1, args.repeat), flush=True)
                tmp = _fresh(scratch, "tmp-" + kind)
                status, wall, cpu, by = run(cmd, dict(env, TMPDIR=tmp), os.path.join(scratch, "%s.log" % kind), cwd)
                shutil.rmtree(tmp, ignore_errors=True)
                if status:
                    return status
                runs[kind, n].append({"cpu_seconds": round(cpu, 3), "wall_seconds": round(wall, 3),
                                      "cpu_by_process": by})
            identical = identical and same_except_created(outs["spark"], outs["local"])
    best = {key: min(v, key=lambda x: x["cpu_seconds"]) for key, v in runs.items()}
    figures = {"sizes": sizes, "master": args.master, "local_cores": int(cores), "repeat": args.repeat,
               "load_average": [round(x, 2) for x in os.getloadavg()], "identical_except_created": identical,
               "runs": {"%s-%d" % key: v for key, v in runs.items()}}
    a, b = sizes
    for kind in kinds:
        per = (best[kind, b]["cpu_seconds"] - best[kind, a]["cpu_seconds"]) / (b - a)
        figures[kind] = {"cpu_seconds": {str(n): best[kind, n]["cpu_seconds"] for n in sizes},
                         "cpu_by_process": {str(n): best[kind, n]["cpu_by_process"] for n in sizes},
                         "marginal_us_per_capture": round(per * 1e6, 3),
                         "fixed_cpu_seconds": round(best[kind, a]["cpu_seconds"] - per * a, 3)}
    ratio = figures["spark"]["marginal_us_per_capture"] / figures["local"]["marginal_us_per_capture"]
    figures["spark_marginal_over_local"] = round(ratio, 2)
    print(json.dumps(figures, indent=2, sort_keys=True))
    for kind in kinds:
        f = figures[kind]
        print("%-6s %s CPU-s at %s captures: %.2f us per extra capture, %.2f CPU-s fixed" % (
            kind, " / ".join("%.2f" % f["cpu_seconds"][str(n)] for n in sizes), " / ".join(map(str, sizes)),
            f["marginal_us_per_capture"], f["fixed_cpu_seconds"]))
    print("Spark's marginal CPU per capture over the local runner's: %.2fx (goal <= 1.5: %s); profiles %s"
          % (ratio, "met" if ratio <= 1.5 else "NOT met", "identical" if identical else "DIFFER"))
    finish(args, figures, scratch)
    return 0 if identical else 1


def _fresh(scratch, name):
    path = os.path.join(scratch, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


if __name__ == "__main__":
    sys.exit(main())
