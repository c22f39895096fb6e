#!/usr/bin/env python3
"""What a night costs: `archive-profiler nightly` on an archive of N captures growing by 5 %.

Generates a seeded archive (profiler/testing/synthetic.py) of --lines captures plus --growth of new
ones, builds the first profile (a full run), then, from a copy of that state each time, runs
one night per scenario and reports wall time and CPU seconds (the whole process tree, from
wait4) against the full rebuild:

  new-hosts        new URI-Rs with new payload digests: folded exactly
  new-hosts-shared the same new URI-Rs, their digests as generated (some are shared with the
                   archive: error pages, spacers): approximate fold / rebuild
  recrawl          5 % of the archive's URI-Rs captured again with new content:
                   approximate fold / rebuild

    python scripts/bench_nightly.py --lines 1000000 --runner local
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from profiler.testing import synthetic  # noqa: E402


def write_cdx(path, captures, tag=""):
    with open(path, "w") as f:
        f.write(synthetic.LEGEND + "\n")
        for urlkey, ts, url, mime, status, digest, length in captures:
            if tag and digest != "-":
                digest = tag + digest
            f.write("%s %s %s %s %s %s - - %d 0 x.warc.gz\n" % (urlkey, ts, url, mime, status, digest, length))


def generate(folder, pool, lines, growth, seed):
    """folder/base.cdx (about `lines` captures) and the nights' files in pool; returns their counts.

    Run in a child process: the captures held here would otherwise count in the peak RSS of every
    command this script starts (Linux carries a forked process's peak over exec)."""
    total = int(lines * (1 + growth))
    every = max(2, round((1 + growth) / growth))
    base, new, host, index = [], [], None, -1
    for c in synthetic.generate_captures(total, seed):
        h = c[0].split(")", 1)[0]
        if h != host:
            host, index = h, index + 1
        (new if index % every == every - 1 else base).append(c)
    write_cdx(os.path.join(folder, "base.cdx"), base)
    step = max(1, round(1 / growth))
    recrawl = [(u, "2025" + ts[4:], url, mime, status, "R" + d if d != "-" else "-", n)
               for u, ts, url, mime, status, d, n in base[::step] if mime != "warc/revisit"]
    write_cdx(os.path.join(pool, "new-hosts.cdx"), new, "N")
    write_cdx(os.path.join(pool, "new-hosts-shared.cdx"), new)
    write_cdx(os.path.join(pool, "recrawl.cdx"), recrawl)
    return {"base": len(base), "new-hosts": len(new), "new-hosts-shared": len(new), "recrawl": len(recrawl)}


def run(cmd, env=None):
    """(wall s, CPU s of the process tree, peak RSS MiB of the largest process, stdout)."""
    t = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=tempfile.gettempdir())
    out = proc.stdout.read().decode()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t
    if status:
        raise SystemExit("failed (%d): %s\n%s" % (status, " ".join(cmd), out))
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, out.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1000000)
    ap.add_argument("--growth", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runner", default="local")
    ap.add_argument("--delta-runner", default=None, help="the config's delta_runner (default: the runner)")
    ap.add_argument("--cores", type=int, default=None)
    ap.add_argument("--work", default=None, help="folder for the archive (default: a temp folder, removed)")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--generate", nargs=2, metavar=("FOLDER", "POOL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.generate:
        print(json.dumps(generate(args.generate[0], args.generate[1], args.lines, args.growth, args.seed)))
        return
    work = args.work or tempfile.mkdtemp(prefix="bench-nightly-")
    exe = [sys.executable, "-m", "profiler.cli"]
    # the installed package (with its compiled extension when built); the source tree only when
    # profiler is not installed in this Python
    installed = subprocess.run([sys.executable, "-c", "import profiler"], cwd=tempfile.gettempdir(),
                               capture_output=True).returncode == 0
    env = dict(os.environ) if installed else dict(os.environ, PYTHONPATH=ROOT)
    results = []
    try:
        folder, pool = os.path.join(work, "seed"), os.path.join(work, "pool")
        os.makedirs(os.path.join(folder, "in"))
        os.makedirs(pool)
        print("generating %d + %.0f %% captures in %s ..." % (args.lines, args.growth * 100, work), flush=True)
        counts = json.loads(subprocess.check_output([sys.executable, __file__, "--generate", os.path.join(folder, "in"), pool,
                                                     "--lines", str(args.lines), "--growth", str(args.growth),
                                                     "--seed", str(args.seed)]))
        n_base = counts["base"]
        print("archive: %d captures; new hosts: %d captures; recrawl: %d captures"
              % (n_base, counts["new-hosts"], counts["recrawl"]))

        def config(folder, on_overlap):
            with open(os.path.join(folder, "nightly.yaml"), "w") as f:
                json.dump({"inputs": ["in"], "output_dir": "out", "runner": args.runner, "cores": args.cores,
                           "delta_runner": args.delta_runner,
                           "on_overlap": on_overlap, "archive_uri": "https://archive.example.org/"}, f)
            return os.path.join(folder, "nightly.yaml")

        out, saved = os.path.join(folder, "out"), os.path.join(work, "first-out")
        night = os.path.join(folder, "in", "night.cdx")
        wall, cpu, rss, line = run(exe + ["nightly", "--config", config(folder, "rebuild"), "-q"], env)
        results.append({"night": "first (full build)", "captures": n_base, "wall": wall, "cpu": cpu, "rss": rss,
                        "summary": line})
        print("%-34s %7.1f s wall %7.1f CPU-s  %s" % ("first (full build)", wall, cpu, line), flush=True)
        shutil.copytree(out, saved, symlinks=True)
        for scenario in ("new-hosts", "new-hosts-shared", "recrawl"):
            for on_overlap in ("approximate", "rebuild"):
                if scenario == "new-hosts" and on_overlap == "rebuild":
                    continue            # folds exactly either way
                shutil.rmtree(out)                      # every night starts from the first build's state
                shutil.copytree(saved, out, symlinks=True)
                shutil.copyfile(os.path.join(pool, scenario + ".cdx"), night)
                wall, cpu, rss, line = run(exe + ["nightly", "--config", config(folder, on_overlap), "-q"], env)
                with open(os.path.join(out, ".nightly", "runs.jsonl")) as f:
                    record = json.loads(f.read().splitlines()[-1])
                name = "%s, on_overlap %s" % (scenario, on_overlap)
                results.append({"night": name, "captures": counts[scenario], "wall": wall, "cpu": cpu, "rss": rss,
                                "mode": record.get("mode"), "bounded_keys": record.get("bounded_keys", 0),
                                "lines": record.get("lines"), "timings": record.get("timings"), "summary": line})
                print("%-34s %7.1f s wall %7.1f CPU-s  %s" % (name, wall, cpu, line), flush=True)
                os.unlink(night)
        full = results[0]["cpu"]
        print("\n| night | new captures | mode | wall | CPU-s | of a full build | peak RSS | keys with bounds |")
        print("|---|---:|---|---:|---:|---:|---:|---:|")
        for r in results:
            print("| %s | %s | %s | %.1f s | %.1f | %.0f %% | %.0f MiB | %s |" % (
                r["night"], "{:,}".format(r["captures"]), r.get("mode", "rebuild"), r["wall"], r["cpu"],
                100 * r["cpu"] / full, r["rss"], "{:,}".format(r.get("bounded_keys", 0))))
        print("\nCPU seconds by phase (profile: the MapReduce jobs; scan: the client's pass for the URI-R "
              "and digest sets; sets: checking and merging them; fold; validate; report):")
        for r in results[1:]:
            print("  %-42s %s" % (r["night"], ", ".join("%s %.1f" % (k, v[1]) for k, v in (r["timings"] or {}).items())))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=2)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
