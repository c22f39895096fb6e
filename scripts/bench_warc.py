#!/usr/bin/env python
"""Benchmark reading WARCs: records/s and MB/s of the readers, and of `profile` end to end.

    python scripts/bench_warc.py [--mb 50] [--seed 5] [--workdir DIR] [--repeat 3]
        [--runners inline,local] [--readers warcio,fastwarc] [--json FILE]

The input is a generated gzip WARC (profiler.testing.synthetic_warc: many small records, one
gzip member each) of about --mb MB, cached in --workdir. Reported per reader:
- library: iterating the records with the library alone (warcio / fastwarc ArchiveIterator);
- captures: profiler.formats.warc / profiler.formats.warc_fast turning every record into a capture;
- profile: `archive-profiler profile FILE -r RUNNER --warc-reader READER` (wall and CPU time of
  all its processes; the profiles of every reader and runner must be the same bytes).
Times are the best of --repeat runs (CPU seconds for the in-process ones).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from profiler.formats import warc, warc_fast  # noqa: E402
from profiler.testing import synthetic_warc

CAPTURES_PER_MB = 1600           # ~1.22 records per capture, ~520 bytes per gzip record


def cached_warc(workdir, mb, seed):
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "synthetic-%dMB-seed%d.warc.gz" % (mb, seed))
    if not os.path.exists(path):
        started = time.perf_counter()
        partial = path + ".partial"
        records = synthetic_warc.write_warc(partial, mb * CAPTURES_PER_MB, seed, max_body=1200)
        os.replace(partial, path)
        print("generated  %s: %d records in %.1f s" % (path, records, time.perf_counter() - started))
    return path


def best_cpu(fn, repeat):
    best, result = None, None
    for _ in range(repeat):
        started = time.process_time()
        result = fn()
        spent = time.process_time() - started
        best = spent if best is None else min(best, spent)
    return best, result


def library_count(reader, path):
    if reader == "warcio":
        from warcio.archiveiterator import ArchiveIterator
        with open(path, "rb") as f:
            return sum(1 for _ in ArchiveIterator(f))
    from fastwarc.warc import ArchiveIterator
    with open(path, "rb") as f:
        return sum(1 for _ in ArchiveIterator(f, parse_http=False))


def capture_count(reader, path):
    read = warc.iter_captures if reader == "warcio" else warc_fast.iter_captures
    return sum(1 for _ in read(path))


def profile_wall(path, runner, reader, repeat, workdir):
    out = os.path.join(workdir, "bench-%s-%s.cdxj" % (runner, reader))
    cmd = [sys.executable, "-m", "profiler.cli", "profile", path, "-o", out, "-r", runner,
           "--warc-reader", reader, "-q"]
    best = best_cpu_s = None
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(cmd, check=True, cwd=REPO)
        spent = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        best = spent if best is None else min(best, spent)
        best_cpu_s = cpu if best_cpu_s is None else min(best_cpu_s, cpu)
    with open(out, "rb") as f:
        lines = [line for line in f.read().splitlines() if not line.startswith(b'!meta {"type"')]
    return best, best_cpu_s, hash(tuple(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "archive-profiler-bench"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runners", default="inline,local")
    ap.add_argument("--readers", default="warcio,fastwarc")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    path = cached_warc(args.workdir, args.mb, args.seed)
    mb = os.path.getsize(path) / 1e6
    results = {"file": path, "mb": round(mb, 1)}
    print("input      %s: %.1f MB" % (path, mb))
    for reader in args.readers.split(","):
        for what, fn in (("library", library_count), ("captures", capture_count)):
            seconds, records = best_cpu(lambda: fn(reader, path), args.repeat)
            results["%s %s" % (reader, what)] = {"records": records, "cpu_s": round(seconds, 2),
                                                 "records_per_s": int(records / seconds),
                                                 "mb_per_s": round(mb / seconds, 1)}
            print("%-8s %-9s %8d records %7.2f CPU s %8d records/s %6.1f MB/s"
                  % (reader, what, records, seconds, records / seconds, mb / seconds))
    records = results["warcio library"]["records"] if "warcio library" in results else None
    digests = set()
    for runner in args.runners.split(","):
        for reader in args.readers.split(","):
            seconds, cpu, digest = profile_wall(path, runner, reader, args.repeat, args.workdir)
            digests.add(digest)
            row = {"wall_s": round(seconds, 2), "cpu_s": round(cpu, 2), "mb_per_s": round(mb / seconds, 2)}
            if records:
                row["records_per_s"] = int(records / seconds)
            results["profile %s %s" % (runner, reader)] = row
            print("profile  %-6s %-8s %7.2f s wall %7.2f CPU s %6.2f MB/s%s" % (
                runner, reader, seconds, cpu, mb / seconds,
                " %8d records/s" % (records / seconds) if records else ""))
    results["same_profile"] = len(digests) == 1
    print("same profile bytes from every reader and runner: %s" % results["same_profile"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
