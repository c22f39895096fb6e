#!/usr/bin/env python
"""Peak memory of each kind of process of one local `archive-profiler profile` run.

    python scripts/bench_memory.py INPUT [-o OUT] [--cores 2] [--json] [-- PROFILE ARGS...]
    python scripts/bench_memory.py --lines 10000000 [--seed 1] [--workdir DIR]
    python scripts/bench_memory.py --load 1m.json,10m.json,30m.json      (a Markdown table of saved --json runs)

Runs `archive-profiler profile INPUT -o OUT -r local --cores N` (default policy; anything
after `--` is passed on) and, every --interval seconds, reads VmHWM from /proc/PID/status of
every process descended from it. Each process is classified by its command line: the client,
its multiprocessing pool workers, the map or reduce task of step N (mrjob's `--step-num=N-1
--mapper/--reducer`), `sort` (the local runner's shuffle) or other. Prints the peak VmHWM and
the number of processes per kind, and the CPU seconds (user+sys of the whole tree, from
wait4) and wall time of the run. VmHWM is a high-water mark, so a process's peak is missed
only if it is reached in the last interval before the process exits.

With --lines N the input is a seeded synthetic CDX (profiler/testing/synthetic.py, as
scripts/gen_cdx.py writes it), generated once and cached in --workdir like scripts/bench.
"""

import argparse
import contextlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
sys.path.insert(0, REPO)

from bench_profile import BenchError, cached_input, git_commit, output_size, profiler_command  # noqa: E402
from profiler.cli.main import split_extra  # noqa: E402

KIND_ORDER = ["client", "pool worker"] + ["%s task, step %d" % (t, n) for n in range(1, 10)
                                          for t in ("map", "combine", "reduce")] \
    + ["sort", "task wrapper (sh)", "fork server", "other"]
_STEP = re.compile(r"^--step-num(?:=(\d+))?$")


_FORKED = re.compile(r"^ap-(map|red)(\d+)-\d+$")


def _is_fork_server(argv):
    """The local runner's fork server, or a task it forked (their command line is the server's)."""
    return any("profiler.runtime.forkserver" in arg for arg in argv[:4])


def classify(argv, client_argv, comm=""):
    """Kind of a descendant process from its argv (a list of str) and, for the local runner's fork
    server and the tasks it forks (profiler.runtime.forkserver), its process name."""
    if not argv:
        return "other"
    if _is_fork_server(argv):
        m = _FORKED.match(comm)
        if m:
            return "%s task, step %s" % ("map" if m.group(1) == "map" else "reduce", m.group(2))
        return "fork server"
    if argv == client_argv:
        return "pool worker"   # a fork of the client (mrjob's local runner's multiprocessing.Pool)
    if os.path.basename(argv[0]) == "sort":
        return "sort"
    if "setup-wrapper.sh" in argv[:3]:
        return "task wrapper (sh)"  # mrjob's setup wrapper, which runs the task's Python
    step = None
    for i, arg in enumerate(argv):
        m = _STEP.match(arg)
        if m:
            value = m.group(1) if m.group(1) is not None else (argv[i + 1] if i + 1 < len(argv) else "")
            if value.isdigit():
                step = int(value) + 1
            break
    if step is not None:
        if "--mapper" in argv:
            return "map task, step %d" % step
        if "--reducer" in argv:
            return "reduce task, step %d" % step
        if "--combiner" in argv:
            return "combine task, step %d" % step
    return "other"


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _stat(pid):
    """(ppid, starttime) of pid from /proc/PID/stat."""
    data = _read("/proc/%d/stat" % pid)
    fields = data[data.rindex(b")") + 2:].split()
    return int(fields[1]), int(fields[19])


def _hwm_kib(pid):
    for line in _read("/proc/%d/status" % pid).splitlines():
        if line.startswith(b"VmHWM:"):
            return int(line.split()[1])
    return None          # a zombie: no memory map left


class Sampler:
    """Peak VmHWM of every descendant of root, by (pid, start time)."""

    def __init__(self, root):
        self.root = root
        self.client_argv = None
        self.parents = {}      # pid -> (ppid, starttime) of every live process seen
        self.procs = {}        # (pid, starttime) -> {"argv", "kind", "peak_kib"}
        self.samples = 0
        self.started = time.perf_counter()
        self.now = 0.0

    def sample(self):
        self.samples += 1
        self.now = round(time.perf_counter() - self.started, 2)
        live = set()
        for name in os.listdir("/proc"):
            if name.isdigit():
                pid = int(name)
                live.add(pid)
                if pid not in self.parents:
                    try:
                        self.parents[pid] = _stat(pid)
                    except (OSError, ValueError, IndexError):
                        pass
        for pid in list(self.parents):
            if pid not in live:
                del self.parents[pid]
        for pid in live:
            if pid in self.parents and self._descends(pid):
                self._read_proc(pid)

    def _descends(self, pid):
        seen = 0
        while pid in self.parents and seen < 64:
            if pid == self.root:
                return True
            pid, seen = self.parents[pid][0], seen + 1
        return pid == self.root

    def _read_proc(self, pid):
        key = (pid, self.parents[pid][1])
        try:
            argv = [a.decode("utf-8", "replace") for a in _read("/proc/%d/cmdline" % pid).split(b"\0")[:-1]]
            comm = _read("/proc/%d/comm" % pid).decode("utf-8", "replace").strip()
            hwm = _hwm_kib(pid)
        except OSError:
            return
        if not argv:         # a zombie
            return
        if not _is_fork_server(argv):
            comm = ""        # only a forked task's name says what it is
        proc = self.procs.get(key)
        if proc is None or proc["argv"] != argv or proc.get("comm", "") != comm:
            # new, or it has called exec() since the last sample (a fork on its way to a task or
            # `sort`): only the new program counts, and its VmHWM starts afresh
            if pid == self.root:
                self.client_argv = argv
            kind = "client" if pid == self.root else classify(argv, self.client_argv, comm)
            proc = self.procs[key] = {"argv": argv, "kind": kind, "peak_kib": 0, "first": self.now}
            if comm:
                proc["comm"] = comm
        proc["last"] = self.now
        if hwm:
            proc["peak_kib"] = max(proc["peak_kib"], hwm)

    def kinds(self):
        """{kind: {"processes": n, "peak_kib": largest peak}} over the processes seen."""
        out = {}
        for proc in self.procs.values():
            if not proc["peak_kib"]:
                continue
            kind = out.setdefault(proc["kind"], {"processes": 0, "peak_kib": 0})
            kind["processes"] += 1
            kind["peak_kib"] = max(kind["peak_kib"], proc["peak_kib"])
        return dict(sorted(out.items(), key=lambda kv: (KIND_ORDER.index(kv[0]) if kv[0] in KIND_ORDER
                                                        else len(KIND_ORDER), kv[0])))


def run(cmd, interval, log_path):
    """Run cmd, sampling its process tree; (returncode, wall, user, sys, Sampler)."""
    with open(log_path, "wb") as log:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        sampler = Sampler(proc.pid)
        done = threading.Event()

        def sample():
            while not done.is_set():
                sampler.sample()
                done.wait(interval)
        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)   # CPU of the whole tree; wall to the exit
        finally:
            wall = time.perf_counter() - started
            done.set()
            thread.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, ru.ru_utime, ru.ru_stime, sampler


def render(result):
    lines = ["%-24s %9s %12s" % ("process", "processes", "peak VmHWM")]
    for kind, k in result["kinds"].items():
        lines.append("%-24s %9d %8.0f MiB" % (kind, k["processes"], k["peak_kib"] / 1024))
    for p in result.get("processes", ()):
        lines.append("  %7d %-22s %6.0f MiB  %6.1f-%6.1f s  %s" % (
            p["pid"], p["kind"], p["peak_kib"] / 1024, p["seen"][0], p["seen"][1], " ".join(p["argv"])[:100]))
    lines.append("")
    lines.append("command    %s" % " ".join(result["command"]))
    lines.append("input      %s (%.1f MB%s)" % (result["input"], result["input_bytes"] / 1e6,
                                                ", %d lines" % result["lines"] if result["lines"] else ""))
    lines.append("wall       %.1f s" % result["wall_seconds"])
    lines.append("CPU        %.1f s (user %.1f, sys %.1f; all processes)" % (
        result["cpu_seconds"], result["user_seconds"], result["sys_seconds"]))
    lines.append("profile    %d bytes, %d lines" % (result["output_bytes"], result["output_lines"]))
    lines.append("samples    %d, every %.2f s; load average %s before, %s after" % (
        result["samples"], result["interval"], result["load_before"], result["load_after"]))
    return "\n".join(lines)


def _size(result):
    lines = result.get("lines")
    if lines:
        return "%dM" % (lines // 1000000) if lines % 1000000 == 0 else "{:,}".format(lines)
    return os.path.basename(result["input"])


def markdown(results):
    """Saved runs side by side: peak VmHWM per kind of process, then CPU, wall and output."""
    kinds = []
    for r in results:
        kinds += [k for k in r["kinds"] if k not in kinds]
    kinds.sort(key=lambda k: KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER))
    head = ["process"] + ["%s captures" % _size(r) for r in results]
    out = ["| " + " | ".join(head) + " |", "|---" + "|---:" * len(results) + "|"]
    for kind in kinds:
        cells = []
        for r in results:
            k = r["kinds"].get(kind)
            cells.append("%d MiB (%d)" % (round(k["peak_kib"] / 1024), k["processes"]) if k else "-")
        out.append("| %s | %s |" % (kind, " | ".join(cells)))
    out.append("| CPU (all processes) / wall | %s |" % " | ".join(
        "%.0f s / %.0f s" % (r["cpu_seconds"], r["wall_seconds"]) for r in results))
    out.append("| profile | %s |" % " | ".join(
        "{:,} lines, {:.1f} MB".format(r["output_lines"], r["output_bytes"] / 1e6) for r in results))
    out.append("")
    out.append("Peak VmHWM of the largest process of each kind (in brackets: processes of that kind). Commands:")
    out.append("")
    for r in results:
        out.append("- `%s`: `%s` (commit %s, %s, load average %s before, %s after)" % (
            r.get("bench_command", "scripts/bench_memory.py"), " ".join(shlex.quote(a) for a in r["command"]),
            r.get("commit"), r.get("date"), r["load_before"], r["load_after"]))
    return "\n".join(out)


def main(argv=None):
    argv, passthrough = split_extra(list(sys.argv[1:] if argv is None else argv))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="Arguments after -- go to `archive-profiler profile`.")
    parser.add_argument("input", nargs="?", help="CDX input (or use --lines)")
    parser.add_argument("--lines", type=int, help="profile a generated, seeded CDX of N lines instead")
    parser.add_argument("--seed", type=int, default=1, help="seed of --lines (default 1)")
    parser.add_argument("--workdir", default="/tmp/archive-profiler-bench",
                        help="cache of generated inputs (default %(default)s)")
    parser.add_argument("-o", "--output", help="profile path (default: a temporary file, removed)")
    parser.add_argument("--cores", type=int, default=2, help="--cores of the profile run (default 2)")
    parser.add_argument("--interval", type=float, default=0.25, help="seconds between samples (default 0.25)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--processes", action="store_true",
                        help="also list every process seen (kind, peak, command line)")
    parser.add_argument("--load", metavar="FILE[,FILE...]",
                        help="print a Markdown table of saved --json runs instead of running")
    parser.add_argument("--log", help="keep the run's log here (default: a temporary file, removed)")
    args = parser.parse_args(argv)

    if args.load:
        try:
            results = []
            for name in args.load.split(","):
                with open(name) as f:
                    results.append(json.load(f))
            print(markdown(results))
        except (OSError, ValueError, KeyError) as e:
            print("bench_memory: cannot render %s: %s" % (args.load, e), file=sys.stderr)
            return 1
        return 0
    try:
        if not sys.platform.startswith("linux"):
            raise BenchError("needs Linux (/proc/PID/status)")
        if (args.input is None) == (args.lines is None):
            raise BenchError("give either an INPUT or --lines N")
        if not 0.05 <= args.interval <= 5:
            raise BenchError("--interval must be between 0.05 and 5 seconds")
        if args.input:
            path = os.path.abspath(args.input)
            if not os.path.isfile(path):
                raise BenchError("no such input file: %s" % args.input)
        else:
            with contextlib.redirect_stdout(sys.stderr):     # "reusing ..." / "generated ..."
                path, _ = cached_input(args.workdir, args.lines, args.seed, False)
        tmp = tempfile.mkdtemp(prefix="bench-memory-")
        try:
            out = os.path.abspath(args.output) if args.output else os.path.join(tmp, "profile.cdxj")
            log_path = os.path.abspath(args.log) if args.log else os.path.join(tmp, "run.log")
            cmd = profiler_command() + ["profile", path, "-o", out, "-r", "local",
                                        "--cores", str(args.cores)] + passthrough
            load_before = "%.2f" % os.getloadavg()[0]
            code, wall, user, system, sampler = run(cmd, args.interval, log_path)
            if code != 0:
                with open(log_path, "rb") as f:
                    last = [l for l in f.read().decode("utf-8", "replace").splitlines() if l.strip()][-1:]
                raise BenchError("archive-profiler exited with %d: %s" % (code, last[0] if last else "no output"))
            size, n_lines, _ = output_size(out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    except BenchError as e:
        print("bench_memory: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench_memory: interrupted", file=sys.stderr)
        return 130

    result = {
        "bench_command": " ".join(["scripts/bench_memory.py"] + [shlex.quote(a) for a in sys.argv[1:]]),
        "command": ["archive-profiler"] + [a if args.output or a != out else "OUT"
                                           for a in cmd[len(profiler_command()):]],
        "input": path, "input_bytes": os.path.getsize(path), "lines": args.lines,
        "cores": args.cores, "wall_seconds": round(wall, 2), "cpu_seconds": round(user + system, 2),
        "user_seconds": round(user, 2), "sys_seconds": round(system, 2),
        "output_bytes": size, "output_lines": n_lines,
        "kinds": sampler.kinds(), "samples": sampler.samples, "interval": args.interval,
        "load_before": load_before, "load_after": "%.2f" % os.getloadavg()[0],
        "machine": "%d cores, Linux %s, Python %s" % (os.cpu_count(), platform.release(),
                                                      platform.python_version()),
        "commit": git_commit(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    if args.processes:
        result["processes"] = [{"pid": pid, "kind": p["kind"], "peak_kib": p["peak_kib"], "seen": [p["first"], p["last"]],
                                "argv": p["argv"]}
                               for (pid, _), p in sorted(sampler.procs.items())]
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
