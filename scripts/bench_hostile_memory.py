#!/usr/bin/env python3
"""Peak RSS of `archive-profiler profile` on hostile compressed inputs, built on the fly:
one long line in a gzip, a gzip bomb of one repeated line, the same as bz2, and the corpus's
giant_html.warc.gz (a 431 MB record) when ../shared/data is there.

Usage: scripts/bench_hostile_memory.py [--runner inline|local] [--mb 400]
Prints one line per case: name, compressed size, peak RSS of the run (its largest process),
wall seconds, exit status and the skip counts of the profile."""

import argparse
import bz2
import gzip
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data")
LEGEND = b" CDX N b a m s k r M S V g\n"
GOOD = b"com,example)/ 20130101000000 http://example.com/ text/html 200 AAA - - 100 0 a.warc.gz\n"


def long_line_gzip(path, mb):
    with gzip.open(path, "wb", compresslevel=6) as f:
        f.write(LEGEND + GOOD)
        block = b"x" * (1 << 20)
        for _ in range(mb):
            f.write(block)
        f.write(b"\n" + GOOD)


def bomb(path, mb, opener):
    line = b"com,example)/" + b"a" * 900 + b" 20130101000000 - text/html 200 A - - 1 0 a\n"
    block = line * ((1 << 20) // len(line))
    with opener(path, "wb") as f:
        f.write(LEGEND)
        for _ in range(mb):
            f.write(block)


def run(path, runner, out):
    # the run's own peak (VmHWM: ru_maxrss would keep this script's across fork and exec), and
    # its tasks'
    code = ("import resource, sys; from profiler.cli.main import main; r = main(sys.argv[1:]); "
            "print(max(int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]), "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(r)")
    t = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code, "profile", path, "-o", out, "-q", "-r", runner],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    wall = time.monotonic() - t
    rss = int(r.stdout.split()[-1]) // 1024 if r.stdout.split() else -1
    skipped = "-"
    if os.path.exists(out):
        with open(out, "rb") as f:
            for line in f:
                if line.startswith(b'!meta {"inputs"'):
                    import orjson
                    meta = orjson.loads(line[6:])
                    skipped = "captures=%d skipped=%s" % (meta["captures"], meta["skipped"])
    return rss, wall, r.returncode, skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runner", default="inline", choices=["inline", "local"])
    ap.add_argument("--mb", type=int, default=400, help="uncompressed MB of each built case")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        p = os.path.join(tmp, "long-line.cdx.gz")
        long_line_gzip(p, args.mb)
        cases.append(("one long line, gzip", p))
        p = os.path.join(tmp, "bomb.cdx.gz")
        bomb(p, args.mb, lambda path, mode: gzip.open(path, mode, compresslevel=9))
        cases.append(("bomb of long keys, gzip", p))
        p = os.path.join(tmp, "bomb.cdx.bz2")
        bomb(p, args.mb, lambda path, mode: bz2.open(path, mode, compresslevel=9))
        cases.append(("bomb of long keys, bz2", p))
        giant = os.path.join(SHARED, "cdx-writer", "small_warcs", "giant_html.warc.gz")
        if os.path.exists(giant):
            cases.append(("giant_html.warc.gz (corpus)", giant))
        print("%-30s %10s %10s %8s %4s  %s" % ("case", "size MB", "peak MB", "wall s", "exit", "profile"))
        for name, path in cases:
            rss, wall, code, skipped = run(path, args.runner, os.path.join(tmp, "out-%d.cdxj" % len(name)))
            print("%-30s %10.1f %10d %8.1f %4d  %s" % (name, os.path.getsize(path) / 1e6, rss, wall, code, skipped),
                  flush=True)


if __name__ == "__main__":
    main()
