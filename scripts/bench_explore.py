"""Latency of the explorer's refinements: a scripted walk over the JSON API of
`archive-profiler explore`, as a person clicks through it, with p50/p95/p99.

    python scripts/bench_explore.py PROFILE.cdxj [--steps 400] [--seed 1] [--json OUT.json]

The explorer is started as the command line starts it (`archive-profiler explore PROFILE
--port 0`); one keep-alive connection asks /api/answer. Each step is one refinement of the
question before it, chosen with a seeded generator from what the answer shows: a row of a
breakdown clicked (a child SURT, a period, a MIME type, a status...), a breakdown's level
switched, the ranking feature changed, a time range set (years, months), a refinement taken
back (the browser's back button: the explorer keeps recent answers), or a fresh start. Printed:
the time from request to the last byte of the answer at the client (wall), and the server's
own CPU time for the answer, as p50/p95/p99 over every step and over the steps whose answer
was not kept from before (cold).
"""

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start(profile, nice=0):
    command = [sys.executable, "-m", "profiler.cli", "explore", profile, "--port", "0"]
    env = dict(os.environ, PYTHONPATH=ROOT)
    started = time.monotonic()
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=(lambda: os.nice(nice)) if nice else None)
    line = proc.stderr.readline()
    if "http://" not in line:
        proc.kill()
        raise SystemExit("the explorer did not start: %s" % line)
    url = line.strip().rsplit(" ", 1)[-1]
    return proc, urllib.parse.urlsplit(url), time.monotonic() - started, line.strip()


def process_figures(pid):
    """(VmRSS MiB, VmHWM MiB, CPU seconds) of a process, from /proc."""
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    out[line.split(":")[0]] = round(int(line.split()[1]) / 1024, 1)
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out["cpu_seconds"] = round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)
    except OSError:
        pass
    return out


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = min(len(values) - 1, max(0, int(round(p / 100.0 * len(values) + 0.5)) - 1))
    return values[k]


def next_question(rng, params, answer, history):
    """The next question: one click away from this answer."""
    roll = rng.random()
    rows = [(b, r) for b in answer.get("breakdowns", []) for r in b["rows"][:8]]
    if roll < 0.08 or (not rows and roll < 0.5) or len(params) > 6:
        return {}
    if roll < 0.2 and history:
        return "back"
    if roll < 0.3:
        b = rng.choice(answer["breakdowns"])
        if len(b["levels"]) > 1:
            out = dict(params)
            out["levels"] = "%s:%s" % (b["field"], rng.choice(b["levels"]))
            return out
    if roll < 0.36:
        out = dict(params)
        out["sort"] = rng.choice(["urim.total", "urir", "bytes", "dedup_bytes", "avg_size"])
        return out
    if roll < 0.46:
        out = {k: v for k, v in params.items() if k not in ("datetime", "levels")}
        year = rng.randint(2005, 2022)
        if rng.random() < 0.5:
            out["from"], out["to"] = str(year), str(year + rng.randint(0, 4))
        else:
            out["from"], out["to"] = "%d%02d" % (year, rng.randint(1, 12)), "%d%02d" % (year + 1, rng.randint(1, 12))
        return out
    if not rows:
        return {}
    b, row = rows[min(int(rng.expovariate(0.4)), len(rows) - 1)]
    out = {k: v for k, v in params.items() if k != "levels"}
    if b["field"] == "datetime":
        if ":" in row["value"]:
            out["from"], out["to"] = row["value"].split(":")
        else:
            out.pop("from", None), out.pop("to", None)
            out["datetime"] = row["value"]
    else:
        out[b["field"]] = row["value"]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", default=None, help="write the figures here")
    parser.add_argument("--nice", type=int, default=0,
                        help="the explorer's niceness (negative, as root: it gets its core on a machine busy "
                             "with other work, as on a machine of its own)")
    args = parser.parse_args(argv)

    proc, url, startup, banner = start(args.profile, args.nice)
    at_start = process_figures(proc.pid)
    rng = random.Random(args.seed)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    walls, cpus, cold_walls, cold_cpus, statuses, slowest = [], [], [], [], {}, []
    cold_server_walls = []
    params, history = {}, []
    load_before = os.getloadavg()
    try:
        for step in range(args.steps):
            query = urllib.parse.urlencode(params)
            started = time.perf_counter()
            conn.request("GET", "/api/answer?" + query)
            response = conn.getresponse()
            body = response.read()
            wall = (time.perf_counter() - started) * 1000
            answer = json.loads(body)
            if response.status != 200:
                statuses[response.status] = statuses.get(response.status, 0) + 1
                params = history.pop() if history else {}
                continue
            statuses[answer["status"]] = statuses.get(answer["status"], 0) + 1
            walls.append(wall)
            cpus.append(answer["cpu_milliseconds"])
            kept = answer.get("kept", False)
            slowest.append((round(wall, 1), answer["milliseconds"], answer["cpu_milliseconds"], query))
            if not kept:
                cold_walls.append(wall)
                cold_cpus.append(answer["cpu_milliseconds"])
                cold_server_walls.append(answer["milliseconds"])
            nxt = next_question(rng, params, answer, history)
            if nxt == "back":
                params = history.pop()
            else:
                history.append(params)
                params = nxt
    finally:
        conn.close()
        at_end = process_figures(proc.pid)
        proc.terminate()
        proc.wait(timeout=30)
    figures = {"profile": args.profile, "steps": args.steps, "nice": args.nice, "startup_seconds": round(startup, 2), "banner": banner,
               "load_average_before": [round(x, 2) for x in load_before],
               "load_average_after": [round(x, 2) for x in os.getloadavg()], "answers": statuses,
               "server_at_start": at_start, "server_at_end": at_end}
    for name, values in (("wall_ms", walls), ("server_cpu_ms", cpus), ("cold_wall_ms", cold_walls),
                         ("cold_server_wall_ms", cold_server_walls), ("cold_server_cpu_ms", cold_cpus)):
        figures[name] = {"n": len(values), "p50": round(percentile(values, 50), 1),
                         "p95": round(percentile(values, 95), 1), "p99": round(percentile(values, 99), 1),
                         "max": round(max(values), 1) if values else None}
    figures["slowest"] = sorted(slowest, reverse=True)[:8]
    print(json.dumps(figures, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
