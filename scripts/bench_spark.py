#!/usr/bin/env python
"""Benchmark the Spark runner against the local runner on a synthetic CDX index.

    python scripts/bench_spark.py [--lines 1000000] [--master local[2]] [--compare local]
        [--local-cores 1,2] [--policy FILE] [--json FILE] [--keep DIR]

Runs `archive-profiler profile -r spark` (pyspark from the `spark` extra, Spark's event log
on), then, with --compare local, the same input with the local runner, and checks that the two
profiles are byte-identical except the `created` time. Prints wall and CPU time, captures per
second and per CPU second, and the shuffle bytes per input capture: Spark's own
"Shuffle Bytes Written" (pickled records, from the event log) and the bytes the local runner's
streaming steps hand from map to reduce (the text Hadoop Streaming would shuffle, raw and
deflated; measured with --cleanup NONE). Also times the client's merge of the profile cut into
64 sorted parts (Hadoop's) and 64 unsorted ones (Spark's), with its memory growth.
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

from bench_profile import cached_input, output_size, package_env, profiler_command, resolve, tail  # noqa: E402


def _tree_cpu(root, seen, stop):
    """Poll /proc: last utime+stime (seconds) of root and all its descendants, into seen.

    mrjob starts spark-submit on a pseudo-terminal (a new session), so the tree is followed
    through parent pids, remembering every process once seen.
    """
    tick = os.sysconf("SC_CLK_TCK")
    members = {root}
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
        stop.wait(0.2)


def run(cmd, env, log_path, cwd=REPO):
    """(exit status, wall seconds, CPU seconds) of a command.

    CPU is the larger of getrusage(RUSAGE_CHILDREN) and the sum over the command's process
    tree polled in /proc: Spark's Python workers are never waited for, so rusage misses them;
    polling misses at most 0.2 s of each process's last moments.
    """
    import threading
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    seen, stop = {}, threading.Event()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        poller = threading.Thread(target=_tree_cpu, args=(proc.pid, seen, stop), daemon=True)
        poller.start()
        status = proc.wait()
        stop.set()
        poller.join()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = max((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), sum(seen.values()))
    if status:
        sys.stderr.write(tail(log_path))
        sys.stderr.write("\ncommand failed (exit %d); log: %s\n" % (status, log_path))
    return status, wall, cpu


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
    """{step: [bytes, deflate-compressed bytes]} of the reducer inputs a local-runner job left.

    The compressed size is what Hadoop's DefaultCodec (zlib, level 6) would move when
    mapreduce.map.output.compress is on (conf/mrjob-hadoop.conf).
    """
    per_step = {}
    for path in glob.glob(os.path.join(tmpdir, "*", "step", "*", "reducer", "*", "input")):
        step = int(path.split(os.sep)[-4])
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1000000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--master", default="local[2]", help="Spark master (default %(default)s)")
    parser.add_argument("--compare", choices=("local", "none"), default="local",
                        help="also run the local runner and compare the bytes (default local)")
    parser.add_argument("--local-cores", default="2", help="comma-separated core counts of local runs (default 2)")
    parser.add_argument("--policy", help="policy YAML passed as --policy")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--keep", metavar="DIR", help="keep outputs and logs in DIR")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "archive-profiler-bench"))
    parser.add_argument("--merge-parts", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.merge_parts:
        print(json.dumps(merge_parts(args.merge_parts)))
        return 0

    input_path, _ = cached_input(args.workdir, args.lines, args.seed, False)
    scratch = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="spark-", dir=args.workdir)
    os.makedirs(scratch, exist_ok=True)
    env, cwd = package_env(dict(os.environ, SPARK_LOCAL_IP=os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")))
    base = profiler_command() + ["profile", input_path]
    if args.policy:
        base += ["--policy", resolve(args.policy)]
    figures = {"lines": args.lines, "seed": args.seed, "input": input_path,
               "input_bytes": os.path.getsize(input_path), "policy": args.policy}

    events = os.path.join(scratch, "spark-events")
    shutil.rmtree(events, ignore_errors=True)
    os.makedirs(events)
    spark_out = os.path.join(scratch, "spark.cdxj")
    cmd = base + ["-o", spark_out, "-r", "spark", "-c", os.path.join(REPO, "conf", "mrjob-spark.conf"),
                  "--", "--spark-master", args.master, "--python-bin", sys.executable,
                  "--jobconf", "spark.eventLog.enabled=true",
                  "--jobconf", "spark.eventLog.dir=file://" + events]
    print("running    %s" % " ".join(cmd))
    status, wall, cpu = run(cmd, dict(env, TMPDIR=_fresh(scratch, "tmp-spark")), os.path.join(scratch, "spark.log"), cwd)
    if status:
        return status
    shuffle, shuffle_records = spark_shuffle_bytes(events)
    figures["spark"] = {"master": args.master, "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
                        "captures_per_wall_second": round(args.lines / wall),
                        "captures_per_cpu_second": round(args.lines / cpu),
                        "shuffle_bytes_written": shuffle, "shuffle_records_written": shuffle_records,
                        "shuffle_bytes_per_capture": round(shuffle / args.lines, 1),
                        "output_bytes": output_size(spark_out)[0]}

    figures["client_merge"] = merge_cost(spark_out, scratch)

    if args.compare == "local":
        figures["local"] = {}
        for cores in [int(c) for c in args.local_cores.split(",")]:
            local_out = os.path.join(scratch, "local-%d.cdxj" % cores)
            tmp = _fresh(scratch, "tmp-local")
            cmd = base + ["-o", local_out, "-r", "local", "--cores", str(cores), "--", "--cleanup", "NONE"]
            print("running    %s" % " ".join(cmd))
            status, wall, cpu = run(cmd, dict(env, TMPDIR=tmp), os.path.join(scratch, "local-%d.log" % cores), cwd)
            if status:
                return status
            per_step = local_shuffle_bytes(tmp)
            figures["local"][cores] = {
                "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
                "captures_per_wall_second": round(args.lines / wall),
                "captures_per_cpu_second": round(args.lines / cpu),
                "reducer_input_bytes_per_step": per_step,
                "shuffle_bytes_per_capture": round(sum(v[0] for v in per_step.values()) / args.lines, 1),
                "shuffle_deflate_bytes_per_capture": round(sum(v[1] for v in per_step.values()) / args.lines, 1),
                "identical_to_spark_except_created": same_except_created(spark_out, local_out)}
            shutil.rmtree(tmp, ignore_errors=True)
        figures["identical_except_created"] = all(
            v["identical_to_spark_except_created"] for v in figures["local"].values())

    print(json.dumps(figures, indent=2, sort_keys=True))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2, sort_keys=True)
            f.write("\n")
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if figures.get("identical_except_created", True) else 1


def _fresh(scratch, name):
    path = os.path.join(scratch, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


if __name__ == "__main__":
    sys.exit(main())
