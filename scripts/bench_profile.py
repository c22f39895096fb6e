#!/usr/bin/env python
"""Benchmark `archive-profiler profile` on a synthetic CDX index.

    python scripts/bench_profile.py [--lines 1000000] [--runner local]
        [--policy conf/policies/default.yaml] [--cores N] [--keep DIR] [--json FILE]

The input is generated once per (lines, seed, gzip) and cached in --workdir.
Unrecognised options are passed through to the profile command.
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from profiler.testing import synthetic  # noqa: E402


def cached_input(workdir, lines, seed, gz):
    """Path of the synthetic CDX for (lines, seed), generating it if missing."""
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "synthetic-%d-seed%d.cdx%s" % (lines, seed, ".gz" if gz else ""))
    if os.path.exists(path):
        print("reusing    %s" % path)
        return path, None
    partial = path + ".partial" + (".gz" if gz else "")
    started = time.perf_counter()
    synthetic.write_cdx(partial, lines, seed)
    os.replace(partial, path)
    seconds = time.perf_counter() - started
    print("generated  %s in %.1f s" % (path, seconds))
    return path, seconds


def profiler_command():
    """The archive-profiler console script of this venv, else `python -m profiler.cli`."""
    script = os.path.join(os.path.dirname(sys.executable), "archive-profiler")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    return [sys.executable, "-m", "profiler.cli"]


def package_env(env, python=sys.executable):
    """env to run archive-profiler with `python` in, and a working directory: `python`'s own
    package when it imports one from anywhere (installed, with the compiled extension when it was
    built), else this checkout on PYTHONPATH. A checkout on the path would shadow an installed
    package, and the checkout of a non-editable install has no compiled extension: its tasks
    would run the pure-Python code."""
    neutral = tempfile.gettempdir()
    found = subprocess.run([python, "-c", "import profiler"], cwd=neutral, env=env, capture_output=True)
    if found.returncode == 0:
        return env, neutral
    return dict(env, PYTHONPATH=os.pathsep.join(p for p in (REPO, env.get("PYTHONPATH")) if p)), neutral


def code_path(python, env, cwd):
    """Which code archive-profiler runs with `python` there: "compiled" or "pure Python", and
    the folder of the package."""
    out = subprocess.run([python, "-c", "import os, profiler; from profiler.accel import fast; "
                          "print(fast.kind()); print(os.path.dirname(profiler.__file__))"],
                         cwd=cwd, env=env, capture_output=True, text=True)
    lines = out.stdout.split("\n")
    return (lines[0], lines[1]) if out.returncode == 0 and len(lines) > 1 else ("unknown", "")


def resolve(path):
    """Absolute path: as given if it exists, else relative to the repo root; bare names stay."""
    if path and "/" not in path and not path.endswith(".yaml"):
        return path
    if path and not os.path.isabs(path) and not os.path.exists(path):
        path = os.path.join(REPO, path)
    return os.path.abspath(path) if path else path


def output_size(path):
    """(bytes, lines, record lines not starting with '!') of a file or a directory of parts."""
    if os.path.isdir(path):
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs
                       if not f.startswith((".", "_")))
    else:
        files = [path] if os.path.exists(path) else []
    size = lines = records = 0
    for name in files:
        size += os.path.getsize(name)
        with open(name, "rb") as f:
            for line in f:
                lines += 1
                if not line.startswith(b"!"):
                    records += 1
    return size, lines, records


def tail(path, n=40):
    with open(path, "rb") as f:
        return b"".join(f.readlines()[-n:]).decode("utf-8", "replace")


class BenchError(Exception):
    """A one-line reason a benchmark cannot go on (the benchmark scripts print it and exit)."""


def git_commit():
    """This checkout's short commit, marked when the tree has uncommitted changes."""
    try:
        head = subprocess.check_output(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                       text=True, stderr=subprocess.DEVNULL).strip()
        dirty = subprocess.call(["git", "-C", REPO, "diff", "--quiet", "HEAD"],
                                stderr=subprocess.DEVNULL) != 0
        return head + (" + uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"



def finish(args, figures, scratch):
    """The end of a benchmark run: figures written to --json when given, the scratch folder
    removed unless --keep."""
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2, sort_keys=True)
            f.write("\n")
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1000000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--gzip", action="store_true", help="gzip the generated input")
    parser.add_argument("--runner", default="local", help="mrjob runner (default local)")
    parser.add_argument("--policy", help="policy YAML passed as --policy")
    parser.add_argument("--cores", type=int, help="passed as --cores")
    parser.add_argument("--keep", metavar="DIR", help="keep output, log and TMPDIR in DIR")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "archive-profiler-bench"),
                        help="cache for generated inputs (default %(default)s)")
    args, passthrough = parser.parse_known_args(argv)

    input_path, gen_seconds = cached_input(args.workdir, args.lines, args.seed, args.gzip)
    if args.keep:
        scratch = os.path.abspath(args.keep)
        os.makedirs(scratch, exist_ok=True)
    else:
        scratch = tempfile.mkdtemp(prefix="run-", dir=args.workdir)
    tmpdir = os.path.join(scratch, "tmp")
    shutil.rmtree(tmpdir, ignore_errors=True)
    os.makedirs(tmpdir)
    output = os.path.join(scratch, "profile.cdxj")
    if os.path.isdir(output):
        shutil.rmtree(output)
    elif os.path.exists(output):
        os.remove(output)
    log_path = os.path.join(scratch, "profile.log")

    cmd = profiler_command() + ["profile", input_path, "-o", output, "-r", args.runner]
    if args.policy:
        cmd += ["--policy", resolve(args.policy)]
    if args.cores:
        cmd += ["--cores", str(args.cores)]
    cmd += passthrough
    env, cwd = package_env(dict(os.environ, TMPDIR=tmpdir))
    kind, package = code_path(sys.executable, env, cwd)
    print("running    %s  (%s code of %s)" % (" ".join(cmd), kind, package))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with open(log_path, "wb") as log:
        returncode = subprocess.call(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)

    if returncode != 0:
        sys.stderr.write(tail(log_path))
        sys.stderr.write("\nprofile command failed (exit %d); log: %s\n" % (returncode, log_path))
        return returncode or 1

    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak_kib = after.ru_maxrss // (1024 if sys.platform == "darwin" else 1)
    input_bytes = os.path.getsize(input_path)
    out_bytes, out_lines, out_records = output_size(output)
    figures = {
        "lines": args.lines, "seed": args.seed, "runner": args.runner,
        "policy": args.policy, "cores": args.cores, "input": input_path,
        "generate_seconds": round(gen_seconds, 3) if gen_seconds else None, "wall_seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3), "peak_rss_kib": peak_kib,
        "input_bytes": input_bytes, "output_bytes": out_bytes,
        "output_lines": out_lines, "output_records": out_records,
        "captures_per_wall_second": round(args.lines / wall, 1) if wall else None,
        "captures_per_cpu_second": round(args.lines / cpu, 1) if cpu else None,
        "profile_percent_of_input": round(100.0 * out_bytes / input_bytes, 3) if input_bytes else None,
        "code": kind, "package": package,
    }
    rows = [
        ("captures", "%d" % args.lines),
        ("runner", args.runner + (" (cores %d)" % args.cores if args.cores else "")),
        ("code", "%s, %s" % (kind, package)),
        ("policy", args.policy or "(default)"),
        ("wall time", "%.2f s" % wall),
        ("CPU time", "%.2f s (user+sys, all processes)" % cpu),
        ("peak RSS", "%.1f MiB (largest single process)" % (peak_kib / 1024.0)),
        ("input", "%d bytes" % input_bytes),
        ("output", "%d bytes, %d lines (%d records)" % (out_bytes, out_lines, out_records)),
        ("captures / wall s", "%s" % figures["captures_per_wall_second"]),
        ("captures / CPU s", "%s" % figures["captures_per_cpu_second"]),
        ("profile size", "%s %% of input" % figures["profile_percent_of_input"]),
    ]
    print()
    for name, value in rows:
        print("%-18s %s" % (name, value))
    finish(args, figures, scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
