#!/usr/bin/env python
"""Benchmark `archive-profiler lookup` on a 1M-line MementoMap made by the real pipeline.

    python scripts/bench_lookup.py [--urirs 1000000] [--captures 1100000] [--queries 100000]
        [--single 3000] [--workdir /tmp/archive-profiler-bench] [--json FILE]

A synthetic CDX (profiler.testing.synthetic, seeded) with --captures lines over --urirs URI-Rs is
profiled with the `urls` policy (one line per URI-R plus '*') by the local runner, and turned
into a UKVS map with `archive-profiler ukvs`: a real map of about --urirs lines. Both are cached
in --workdir. Queries: half original URLs of the CDX (present), half URLs of another seed that
the CDX does not hold (absent), shuffled. Measured: single lookups (one bisection each) and
batch lookups (sorted probes, one forward walk), with URLs (canonicalised with surt) and with
SURTs; recall = present queries answered held by their exact line; absent queries answered
held (here only '*' can hold them). Also the CDXJ profile itself (--profile-too).
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from profiler.testing import synthetic  # noqa: E402
from profiler.toolkit.lookup import HELD, Lookup, canonical  # noqa: E402


def command():
    script = os.path.join(os.path.dirname(sys.executable), "archive-profiler")
    return [script] if os.path.isfile(script) else [sys.executable, "-m", "profiler.cli"]


def build(workdir, captures, urirs, seed):
    """(cdx, profile, map) paths, generated when missing."""
    os.makedirs(workdir, exist_ok=True)
    stem = os.path.join(workdir, "lookup-%d-%d-seed%d" % (captures, urirs, seed))
    cdx, prof, ukvs = stem + ".cdx.gz", stem + ".urls.cdxj", stem + ".urls.ukvs"
    if not os.path.exists(cdx):
        t = time.perf_counter()
        synthetic.write_cdx(cdx + ".partial.gz", captures, seed, urirs=urirs)
        os.replace(cdx + ".partial.gz", cdx)
        print("generated  %s in %.1f s" % (cdx, time.perf_counter() - t))
    if not os.path.exists(prof):
        t = time.perf_counter()
        subprocess.run(command() + ["profile", cdx, "-o", prof, "--policy", "urls", "-r", "local", "-q"],
                       check=True)
        print("profiled   %s in %.1f s" % (prof, time.perf_counter() - t))
    if not os.path.exists(ukvs):
        t = time.perf_counter()
        subprocess.run(command() + ["ukvs", prof, "-o", ukvs, "-q"], check=True)
        print("map        %s in %.1f s" % (ukvs, time.perf_counter() - t))
    return cdx, prof, ukvs


def queries(cdx, n, seed):
    """(present URLs, absent URLs): n // 2 of each."""
    import gzip
    with gzip.open(cdx, "rt") as f:
        next(f)
        rows = [line.split(" ", 3)[:3] for line in f]
    urlkeys = {r[0] for r in rows}
    rng = random.Random(seed)
    present = rng.sample(sorted({r[2] for r in rows}), n // 2)
    absent = []
    for line in synthetic.cdx_lines(n * 2, seed=seed + 1000):
        fields = line.split(" ", 3)
        if fields[0] not in urlkeys and canonical(fields[2]) not in urlkeys:
            absent.append(fields[2])
        if len(absent) >= n // 2:
            break
    return present, absent, urlkeys


def measure(path, present, absent, n_single, label):
    qs = [(q, True) for q in present] + [(q, False) for q in absent]
    random.Random(3).shuffle(qs)
    urls = [q for q, _ in qs]
    surts = [canonical(q) for q in urls]
    out = {"file": os.path.basename(path), "lines": sum(1 for _ in open(path, "rb")),
           "bytes": os.path.getsize(path), "queries": len(qs)}
    with Lookup(path) as index:
        for name, batch in (("urls", urls), ("surts", surts)):
            t, c = time.perf_counter(), time.process_time()
            answers = [a for _, a in index.batch(batch)]
            out["batch_%s_per_s" % name] = round(len(batch) / (time.perf_counter() - t))
            out["batch_%s_per_cpu_s" % name] = round(len(batch) / (time.process_time() - c))
            t, c = time.perf_counter(), time.process_time()
            single = [index.lookup(q) for q in batch[:n_single]]
            out["single_%s_per_s" % name] = round(n_single / (time.perf_counter() - t))
            out["single_%s_per_cpu_s" % name] = round(n_single / (time.process_time() - c))
            assert single == answers[:n_single], "single and batch answers differ"
        held_exact = sum(1 for (q, p), a in zip(qs, answers) if p and a.status == HELD
                         and a.key.split(b" ")[0] == a.urlkey.encode())
        held = sum(1 for (q, p), a in zip(qs, answers) if p and a.status == HELD)
        fp = [a for (q, p), a in zip(qs, answers) if not p and a.status == HELD]
        out["recall"] = held / len(present)
        out["recall_exact_line"] = held_exact / len(present)
        out["absent_held"] = len(fp) / len(absent)
        out["absent_held_by_star_only"] = all(a.key.split(b" ")[0] == b"*" for a in fp)
    print("%-8s %s" % (label, json.dumps(out)))
    return out


def cli_batch(path, present, absent):
    """End to end: `archive-profiler lookup FILE < queries` (a separate process)."""
    data = ("\n".join(present + absent) + "\n").encode()
    t = time.perf_counter()
    before = os.times()
    res = subprocess.run(command() + ["lookup", path], input=data, stdout=subprocess.PIPE, check=True)
    seconds = time.perf_counter() - t
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    n = len(present) + len(absent)
    assert res.stdout.count(b"\n") == n
    return round(n / seconds), round(n / cpu)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--urirs", type=int, default=1000000)
    p.add_argument("--captures", type=int, default=1100000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--queries", type=int, default=100000)
    p.add_argument("--single", type=int, default=3000)
    p.add_argument("--workdir", default="/tmp/archive-profiler-bench")
    p.add_argument("--profile-too", action="store_true", help="also look up in the CDXJ profile")
    p.add_argument("--json", default=None)
    args = p.parse_args()
    cdx, prof, ukvs = build(args.workdir, args.captures, args.urirs, args.seed)
    present, absent, _ = queries(cdx, args.queries, args.seed)
    results = {"map": measure(ukvs, present, absent, args.single, "ukvs")}
    if args.profile_too:
        results["profile"] = measure(prof, present, absent, args.single, "cdxj")
    wall, cpu = cli_batch(ukvs, present, absent)
    results["cli_batch_urls_per_s"], results["cli_batch_urls_per_cpu_s"] = wall, cpu
    print("cli      `archive-profiler lookup MAP < %d URLs` (process start included): %d lookups/s, "
          "%d per CPU second" % (len(present) + len(absent), wall, cpu))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
