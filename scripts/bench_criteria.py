#!/usr/bin/env python
"""What a criterion costs: the Python map side, and whole runs with the compiled and the Python kernels.

    python scripts/bench_criteria.py [--lines 200000] [--repeat 3] [--checkout DIR]
        [--policy FILE ...] [--plugins MODULE,... [--plugin-path DIR]] [--runner local] [--map-side-only]

On a generated CDX (profiler.testing.synthetic, cached in --workdir) it prints the CPU of the
Python map side over the whole file in one process (profiler.job.mapside.map_split with the
Python kernels: the CDX reader's captures, aggregated), then per policy the CPU of
``archive-profiler profile -r RUNNER --cores 2`` summed over every process, with the compiled
kernels and with ARCHIVE_PROFILER_PURE_PYTHON=1 (the least of --repeat runs), and which code each
run's step 1 used. --checkout runs another checkout's package (its extension built in place), so
two versions compare on one input; --plugins names modules the runs load
(ARCHIVE_PROFILER_PLUGINS), for a policy of a criterion they register, found in --plugin-path
(default tests/, whose helpers.throwaway adds the criterion scheme).
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def generated(workdir, lines, checkout):
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "criteria-%d.cdx" % lines)
    if not os.path.exists(path):
        subprocess.check_call([sys.executable, "-c", "import sys; from profiler.testing import synthetic; "
                               "synthetic.write_cdx(sys.argv[1], int(sys.argv[2]), 1)", path + ".partial",
                               str(lines)], env=environment(checkout))
        os.replace(path + ".partial", path)
    return path


def environment(checkout, pure=False, plugins=None, plugin_path=None):
    path = (checkout, plugin_path if plugins else None, os.environ.get("PYTHONPATH"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))
    env.pop("ARCHIVE_PROFILER_PURE_PYTHON", None)
    if pure:
        env["ARCHIVE_PROFILER_PURE_PYTHON"] = "1"
    if plugins:
        env["ARCHIVE_PROFILER_PLUGINS"] = plugins
    return env


def run(path, policy, checkout, pure, plugins, plugin_path, runner, folder):
    out = os.path.join(folder, "out.cdxj")
    cmd = [sys.executable, "-m", "profiler.cli", "profile", path, "-o", out, "-r", runner, "--cores", "2", "-v"]
    if policy:
        cmd += ["--policy", policy]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, env=dict(environment(checkout, pure, plugins, plugin_path), TMPDIR=folder), cwd=folder,
                          capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit("profile failed:\n" + done.stderr[-2000:])
    kinds = sorted(set(re.findall(r"step-1 reducers \(([a-zA-Z ]+)\)", done.stderr)))
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    with open(out, "rb") as f:
        data = f.read()
    os.remove(out)
    return cpu, "/".join(kinds) or "?", data


def map_side(path, checkout, repeat):
    code = ("import sys, time, orjson\n"
            "from profiler.job.kernels import Kernels\n"
            "from profiler.job.mapside import map_split\n"
            "from profiler.model.policy import load\n"
            "policy = load('default'); kernels = Kernels(policy, pure=True); best = None\n"
            "split = orjson.dumps({'path': sys.argv[1], 'format': 'cdx', 'fields': 'N b a m s k r M S V g'})\n"
            "for _ in range(int(sys.argv[2])):\n"
            "    t = time.process_time()\n"
            "    for record in map_split(split, policy, kernels): pass\n"
            "    best = min(best or 1e9, time.process_time() - t)\n"
            "print(best, record[1]['captures'])")
    out = subprocess.check_output([sys.executable, "-c", code, path, str(repeat)], env=environment(checkout))
    seconds, n = out.split()
    return float(seconds), int(n)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--checkout", default=REPO, help="the package to run (default: this checkout)")
    parser.add_argument("--policy", action="append", help="policy files or names (default: the default policy)")
    parser.add_argument("--plugins", help="modules to load in every process (ARCHIVE_PROFILER_PLUGINS)")
    parser.add_argument("--plugin-path", default=os.path.join(REPO, "tests"), help="where they are (default tests/)")
    parser.add_argument("--runner", default="local")
    parser.add_argument("--map-side-only", action="store_true")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "archive-profiler-bench"))
    args = parser.parse_args(argv)
    checkout = os.path.abspath(args.checkout)
    path = generated(args.workdir, args.lines, checkout)
    seconds, n = map_side(path, checkout, args.repeat)
    print("checkout %s, %d lines, load %.1f" % (checkout, args.lines, os.getloadavg()[0]))
    print("Python map side: %d captures in %.3f CPU-s (%.2f us a capture)" % (n, seconds, seconds / n * 1e6))
    if args.map_side_only:
        return 0
    for policy in args.policy or [None]:
        outputs = {}
        for pure in (False, True):
            best, kind = None, "?"
            with tempfile.TemporaryDirectory(dir=args.workdir) as folder:
                for _ in range(args.repeat):
                    cpu, kind, data = run(path, policy, checkout, pure, args.plugins, args.plugin_path, args.runner,
                                          folder)
                    best = cpu if best is None else min(best, cpu)
            outputs[pure] = b"\n".join(l for l in data.split(b"\n") if not l.startswith(b"!meta"))
            print("%-28s %-22s %6.2f CPU-s  (step 1: %s)" % (os.path.basename(policy or "default"),
                                                            "ARCHIVE_PROFILER_PURE_PYTHON=1" if pure else "compiled",
                                                            best, kind))
        if outputs[False] != outputs[True]:
            print("  the two profiles differ!")
    return 0


if __name__ == "__main__":
    sys.exit(main())
