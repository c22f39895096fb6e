#!/usr/bin/env python3
"""Benchmark archive-profiler on a Common Crawl-style CDXJ index, against the same captures as CDX
and against mementomap on the same CDXJ.

    scripts/bench_cdxj.py [--lines 200000] [--seed 1] [--cores N] [--repeat N] [--lang-policy FILE]
                          [--peers-venv DIR] [--no-peers] [--json OUT.json] [--markdown]

Generates (once, cached in --workdir by size and seed) a seeded Common Crawl-style index
(profiler/testing/synthetic_cc.py) and the same captures as an 11-field CDX, then runs, one
after the other, in rounds (--repeat; the run of least CPU time of each is kept):

  archive-profiler profile INDEX.cdxj -r local --policy default     (the default policy)
  archive-profiler profile INDEX.cdxj -r local --policy LANG        (a policy with the lang criterion)
  archive-profiler profile INDEX.cdx  -r local --policy default     (the same captures as CDX)
  mementomap generate INDEX.cdxj OUT                                (PyPI, scripts/bench's pin)

measured as scripts/bench measures (CPU time of the whole process tree, peak RSS) and checked the
same way; the default profiles of the CDXJ and of the CDX must be the same bytes. It prints
captures per CPU-second and the issue's ratios: the lang policy's CPU against the default's (at
most 1.5), CDXJ against CDX per capture, and CDXJ against mementomap (at least 1). LANG is
conf/policies/lang.yaml when there is one, else the policy in LANG_POLICY written to --workdir.
"""

import argparse
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
sys.path.insert(0, REPO)

from bench_profile import BenchError  # noqa: E402
from profiler.testing import synthetic_cc  # noqa: E402


def _load_bench():
    """scripts/bench (a script without .py) as a module: its tools, measuring and checks."""
    loader = importlib.machinery.SourceFileLoader("bench", os.path.join(SCRIPTS, "bench"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("bench", loader))
    loader.exec_module(module)
    return module


bench = _load_bench()

#: the lang policy used until conf/policies has one
LANG_POLICY = """name: lang
host_depth: 3
levels: {datetime: [year], mime: [type], status: [class], lang: [code]}
emit:
  root: {datetime: [any, year], lang: [any, code]}
  tld: {datetime: [any, year], lang: [any, code]}
  domain: {datetime: [any], lang: [any, code]}
  host: {datetime: [any]}
"""
CDX_LEGEND = b" CDX N b a m s k r M S V g\n"


def cached_inputs(workdir, lines, seed):
    """Paths of the Common Crawl-style index and of its captures as CDX, generated when missing."""
    os.makedirs(workdir, exist_ok=True)
    cdxj = os.path.join(workdir, "cc-%d-seed%d.cdxj" % (lines, seed))
    cdx = cdxj[:-1]
    if not os.path.exists(cdxj):
        started = time.perf_counter()
        synthetic_cc.write_cc_index(cdxj + ".partial", lines, seed)
        os.replace(cdxj + ".partial", cdxj)
        print("generated  %s in %.1f s" % (cdxj, time.perf_counter() - started))
    else:
        print("reusing    %s" % cdxj)
    if not os.path.exists(cdx):
        with open(cdxj, "rb") as src, open(cdx + ".partial", "wb") as out:
            out.write(CDX_LEGEND)
            for line in src:
                out.write(cdx_line(line))
        os.replace(cdx + ".partial", cdx)
        print("wrote      %s (the same captures as CDX)" % cdx)
    return cdxj, cdx


def cdx_line(line):
    """A Common Crawl index line as an 11-field CDX line (N b a m s k r M S V g)."""
    urlkey, timestamp, block = line.split(b" ", 2)
    fields = json.loads(block)
    values = [urlkey, timestamp] + [fields.get(k, "-").encode() for k in ("url", "mime", "status", "digest")] + \
        [b"-", b"-"] + [fields.get(k, "-").encode() for k in ("length", "offset", "filename")]
    if any(not v or len(v.split()) != 1 for v in values):
        raise BenchError("a field of %r has blanks: not a CDX field" % line[:100])
    return b" ".join(values) + b"\n"


def lang_policy(workdir):
    bundled = os.path.join(REPO, "conf", "policies", "lang.yaml")
    if os.path.exists(bundled):
        return bundled
    path = os.path.join(workdir, "lang.yaml")
    with open(path, "w") as f:
        f.write(LANG_POLICY)
    return path


def summarise(results):
    """The issue's ratios, added to results in place."""
    by = {r["role"]: r for r in results["tools"]}
    default, lang, cdx, mm = (by.get(k) for k in ("cdxj default", "cdxj lang", "cdx default", "mementomap"))
    ratios = {}
    if default and lang:
        ratios["lang_vs_default_cpu"] = round(lang["cpu_seconds"] / default["cpu_seconds"], 2)
    if default and cdx:
        ratios["cdxj_vs_cdx_cpu_per_capture"] = round(default["cpu_seconds"] / cdx["cpu_seconds"], 2)
        ratios["cdxj_cdx_profiles_identical"] = default.get("body_sha256") == cdx.get("body_sha256")
    if default and mm:
        ratios["cdxj_vs_mementomap_captures_per_cpu_second"] = round(
            default["captures_per_cpu_second"] / mm["captures_per_cpu_second"], 2)
    results["ratios"] = ratios


def verdicts(results):
    r = results["ratios"]
    lines = []
    if "cdxj_vs_mementomap_captures_per_cpu_second" in r:
        x = r["cdxj_vs_mementomap_captures_per_cpu_second"]
        lines.append("CDXJ, default policy, captures per CPU-second against mementomap's on the same CDXJ: "
                     "%.2fx (target >= 1: %s)" % (x, "met" if x >= 1 else "NOT met"))
    if "lang_vs_default_cpu" in r:
        x = r["lang_vs_default_cpu"]
        lines.append("lang policy CPU against the default policy's: %.2fx (target <= 1.5: %s)"
                     % (x, "met" if x <= 1.5 else "NOT met"))
    if "cdxj_vs_cdx_cpu_per_capture" in r:
        lines.append("CDXJ against CDX of the same captures, CPU per capture: %.2fx; default profiles %s"
                     % (r["cdxj_vs_cdx_cpu_per_capture"],
                        "identical" if r["cdxj_cdx_profiles_identical"] else "DIFFER"))
    return lines


def print_table(results):
    rows = [("run", "input", "wall s", "CPU s", "capt/CPU-s", "peak RSS", "check")]
    for r in results["tools"]:
        rows.append((r["tool"], r["input_kind"], "%.2f" % r["wall_seconds"], "%.2f" % r["cpu_seconds"],
                     "{:,.0f}".format(r["captures_per_cpu_second"]), bench.mib(r["peak_rss_kib"]),
                     "ok" if r["check_ok"] else "FAILED"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print()
    for row in rows:
        print("  ".join(c.ljust(w) if i in (0, 1, 6) else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    print()
    for line in verdicts(results):
        print(line)


def markdown(results):
    m, inp = results["machine"], results["input"]
    out = ["Machine: %d cores (%s), Python %s, mrjob %s; %s; commit %s; load average at start %s; best of %d "
           "run%s by CPU time." % (m["cores"], m["cpu"], m["python"], m["mrjob"], m["date"], m["commit"],
                                   " / ".join("%.2f" % x for x in m["load_average_at_start"]), results["repeat"],
                                   "s" * (results["repeat"] != 1)),
           "",
           "Input: `scripts/bench_cdxj.py --lines %d --seed %d`: %s Common Crawl-style lines (%s, %s URI-Rs, %s "
           "hosts), and the same captures as an 11-field CDX (%s)." % (
               inp["captures"], inp["seed"], "{:,}".format(inp["captures"]), bench.human_bytes(inp["bytes"]),
               "{:,}".format(inp["urirs"]), "{:,}".format(inp["hosts"]), bench.human_bytes(inp["cdx_bytes"])),
           "",
           "| run | input | CPU (all processes) | wall | captures / CPU s | peak RSS |",
           "|---|---|---:|---:|---:|---:|"]
    for r in results["tools"]:
        out.append("| %s | %s | %.2f s | %.2f s | %s | %s |" % (
            r["tool"], r["input_kind"], r["cpu_seconds"], r["wall_seconds"],
            "{:,.0f}".format(r["captures_per_cpu_second"]), bench.mib(r["peak_rss_kib"])))
    out.append("")
    out.extend("- " + line for line in verdicts(results))
    return "\n".join(out)


def run(args):
    ap_python = bench.profiler_python(args.python)
    workdir = os.path.abspath(args.workdir)
    cdxj, cdx = cached_inputs(workdir, args.lines, args.seed)
    lang = os.path.abspath(args.lang_policy) if args.lang_policy else lang_policy(workdir)
    stats = bench.input_stats(cdxj, args.lines)
    stats.update(seed=args.seed, cdx_bytes=os.path.getsize(cdx))
    plan = []                                  # (role, tool, input path, input kind)
    for role, policy, path, kind in (("cdxj default", "default", cdxj, "CDXJ"), ("cdxj lang", lang, cdxj, "CDXJ"),
                                     ("cdx default", "default", cdx, "CDX")):
        tool = bench.ArchiveProfiler(ap_python, policy, args.cores)
        tool.name = "archive-profiler, %s policy" % ("lang" if policy == lang else policy)
        plan.append((role, tool, path, kind))
    if not args.no_peers:
        bindir = bench.peers_venv(os.path.abspath(args.peers_venv or os.path.join(workdir, "peers-venv")))
        plan.append(("mementomap", bench.MementoMap(bindir), cdxj, "CDXJ"))
    for path in (cdxj, cdx):
        bench.warm(path)
    results = {"machine": bench.machine(ap_python), "input": stats, "repeat": args.repeat, "lang_policy": lang}
    scratch = tempfile.mkdtemp(prefix="bench-cdxj-", dir=workdir)
    runs = {role: [] for role, _, _, _ in plan}
    try:
        for _ in range(args.repeat):          # rounds, so that drift hits every run alike
            for role, tool, path, kind in plan:
                runs[role].append(dict(bench.run_tool(tool, path, scratch, stats), role=role, input_kind=kind))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    results["tools"] = [dict(bench.best(runs[role]), cpus=[r["cpu_seconds"] for r in runs[role]])
                        for role, _, _, _ in plan]
    summarise(results)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    parser.add_argument("--lines", type=int, default=200000, help="index lines to generate (default 200000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1, help="archive-profiler --cores")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each; the least CPU time is kept")
    parser.add_argument("--lang-policy", help="the policy with languages (default: see above)")
    parser.add_argument("--python", help="Python with archive-profiler installed (default: this one, else .venv)")
    parser.add_argument("--peers-venv", help="venv for mementomap (default: WORKDIR/peers-venv)")
    parser.add_argument("--no-peers", action="store_true", help="run archive-profiler only")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "archive-profiler-bench"),
                        help="cache of generated inputs and the peers venv (default %(default)s)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--markdown", action="store_true", help="also print the table for the docs")
    args = parser.parse_args(argv)
    try:
        results = run(args)
    except BenchError as e:
        print("bench_cdxj: error: %s" % e, file=sys.stderr)
        return 1
    print_table(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2, sort_keys=True)
            f.write("\n")
    if args.markdown:
        print()
        print(markdown(results))
    ok = all(r["check_ok"] for r in results["tools"]) and results["ratios"].get("cdxj_cdx_profiles_identical", True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
