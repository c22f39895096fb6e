#!/usr/bin/env python
"""Benchmark reading WARCs: records/s and MB/s of the readers, and of `profile` end to end.

    python scripts/bench_warc.py [--mb 50] [--seed 5] [--workdir DIR] [--repeat 3]
        [--runners inline,local] [--readers warcio,fastwarc] [--json FILE]
    python scripts/bench_warc.py --languages [--pages 4000] [--data ../shared/data]
        [--trees NAME=PATH,...] [--mb 50] [--repeat 3] [--json FILE]

The input is a generated gzip WARC (profiler.testing.synthetic_warc: many small records, one
gzip member each) of about --mb MB, cached in --workdir. Reported per reader:
- library: iterating the records with the library alone (warcio / fastwarc ArchiveIterator);
- captures: profiler.formats.warc / profiler.formats.warc_fast turning every record into a capture;
- profile: `archive-profiler profile FILE -r RUNNER --warc-reader READER` (wall and CPU time of
  all its processes; the profiles of every reader and runner must be the same bytes).
Times are the best of --repeat runs (CPU seconds for the in-process ones).

--languages measures languages instead (docs/language.md, "Costs in WARC profiling"):
- detection throughput: records/s of both readers with and without --detect-language on
  generated multilingual WARCs (synthetic_warc.write_language_warc, --pages captures: the
  usual mix of pages that declare a language or not, and the same with no page declaring one),
  on the HTML responses of the shared corpus, and `profile --policy lang` end to end;
- the cost of reading declared languages: the warcio reader's CPU time (reading languages) and
  `profile` (default policy, which reads none here; and --policy lang with this tree) on the
  --mb WARC and on the multilingual one, with this tree and each --trees checkout
  (e.g. before=/tmp/before, made by `git archive COMMIT | tar -x -C /tmp/before` and
  `python setup.py build_ext --inplace` there).
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


def cached_language_warc(workdir, pages, seed, declare):
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "languages-%d-seed%d%s.warc.gz" % (pages, seed, "" if declare else "-undeclared"))
    if not os.path.exists(path):
        partial = path + ".partial"
        synthetic_warc.write_language_warc(partial, pages, seed, declare=declare)
        os.replace(partial, path)
    return path


def corpus_archives(data):
    """The WARC/ARC files of the shared corpus (by their first bytes)."""
    out = []
    for folder, _, names in sorted(os.walk(data)):
        for name in sorted(names):
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                if f.read(16).startswith((b"\x1f\x8b", b"WARC/", b"filedesc:")) and not name.endswith((".cdx", ".cdxj")):
                    out.append(path)
    return out


def read_languages(paths, reader, detect):
    """(records, HTML responses, their languages) of reading paths with a reader."""
    import contextlib
    import logging
    logging.getLogger("warcio").setLevel(logging.CRITICAL)
    read = warc.iter_captures if reader == "warcio" else warc_fast.iter_captures
    records = html = 0
    found = {}
    with contextlib.redirect_stderr(open(os.devnull, "w")):
        for path in paths:
            for capture in read(path, detect_language=detect):
                records += 1
                if capture.__class__ is not str and capture.mime in warc.HTML_MIMES and not capture.revisit:
                    html += 1
                    found[capture.lang] = found.get(capture.lang, 0) + 1
    return records, html, found


READ_IN_TREE = ("import sys, time; from profiler.formats import warc; t = time.process_time(); "
                "n = sum(1 for _ in warc.iter_captures(sys.argv[1])); print(n, time.process_time() - t)")


def tree_reader_cpu(tree, path, repeat):
    """Best CPU seconds of the warcio reader of another checkout over path (a subprocess)."""
    best = None
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", READ_IN_TREE, path], cwd=tree, capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=tree), check=True).stdout.split()
        best = float(out[1]) if best is None else min(best, float(out[1]))
    return best


def tree_profile(tree, path, policy, repeat, workdir, extra=()):
    """Best (wall, CPU) seconds of `profile` with another checkout's code."""
    out = os.path.join(workdir, "bench-tree.cdxj")
    cmd = [sys.executable, "-m", "profiler.cli", "profile", path, "-o", out, "--policy", policy, "-q"] + list(extra)
    best = best_cpu_s = None
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(cmd, check=True, cwd=tree, env=dict(os.environ, PYTHONPATH=tree))
        spent = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        best = spent if best is None else min(best, spent)
        best_cpu_s = cpu if best_cpu_s is None else min(best_cpu_s, cpu)
    return best, best_cpu_s


def languages_main(args):
    results = {"load": os.getloadavg()}
    print("load average %.1f %.1f %.1f" % results["load"])
    mixed = cached_language_warc(args.workdir, args.pages, args.seed, True)
    undeclared = cached_language_warc(args.workdir, args.pages, args.seed, False)
    for reader in args.readers.split(","):          # the language registry and CLD2 loaded once
        read_languages([mixed], reader, True)
    inputs = [("generated, mixed", [mixed]), ("generated, nothing declared", [undeclared])]
    if os.path.isdir(args.data):
        inputs.append(("shared corpus", corpus_archives(args.data)))
    print("\n| input | reader | records | HTML responses | records/s | records/s with detection | "
          "detection, µs per HTML response | HTML responses unk -> unk with detection |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name, paths in inputs:
        for reader in args.readers.split(","):
            (plain, (records, html, langs)), (detected, (_, _, langs_d)) = [
                best_cpu(lambda: read_languages(paths, reader, detect), args.repeat) for detect in (False, True)]
            per_html = (detected - plain) / max(1, html - sum(n for c, n in langs.items() if c != "unk")) * 1e6
            row = {"records": records, "html": html, "records_per_s": int(records / plain),
                   "records_per_s_detecting": int(records / detected), "us_per_detected_html": round(per_html, 1),
                   "unk": langs.get("unk", 0), "unk_detecting": langs_d.get("unk", 0)}
            results["%s, %s" % (name, reader)] = row
            print("| %s | %s | %d | %d | %d | %d | %.0f | %d -> %d |" % (
                name, reader, records, html, row["records_per_s"], row["records_per_s_detecting"], per_html,
                row["unk"], row["unk_detecting"]))
    print("\n| profile --policy lang (inline) | wall s | CPU s | records/s |\n|---|---:|---:|---:|")
    n_records = sum(1 for _ in warc.iter_captures(undeclared))
    for flag in ((), ("--detect-language",)):
        wall, cpu = tree_profile(REPO, undeclared, "lang", args.repeat, args.workdir, flag)
        label = "generated, nothing declared" + (" --detect-language" if flag else "")
        results["profile " + label] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
        print("| %s | %.2f | %.2f | %d |" % (label, wall, cpu, n_records / wall))
    trees = [("this", REPO)] + [tuple(t.split("=", 1)) for t in args.trees.split(",") if t]
    small = cached_warc(args.workdir, args.mb, args.seed)
    print("\n| tree | input | warcio reader CPU s | records/s | profile (default policy) wall s | CPU s |")
    print("|---|---|---:|---:|---:|---:|")
    for tree_name, tree in trees:
        for name, path in (("synthetic_warc %d MB" % args.mb, small), ("generated, mixed", mixed)):
            records = sum(1 for _ in warc.iter_captures(path))
            cpu_read = tree_reader_cpu(tree, path, args.repeat)
            wall, cpu = tree_profile(tree, path, "default", args.repeat, args.workdir)
            results["tree %s, %s" % (tree_name, name)] = {"reader_cpu_s": round(cpu_read, 3), "records": records,
                                                         "profile_wall_s": round(wall, 2),
                                                         "profile_cpu_s": round(cpu, 2)}
            print("| %s | %s | %.2f | %d | %.2f | %.2f |" % (tree_name, name, cpu_read, records / cpu_read,
                                                            wall, cpu))
    print("\n| this tree | input | profile --policy lang wall s | CPU s |\n|---|---|---:|---:|")
    for name, path in (("synthetic_warc %d MB" % args.mb, small), ("generated, mixed", mixed)):
        wall, cpu = tree_profile(REPO, path, "lang", args.repeat, args.workdir)
        results["this, lang policy, %s" % name] = {"profile_wall_s": round(wall, 2), "profile_cpu_s": round(cpu, 2)}
        print("| this | %s | %.2f | %.2f |" % (name, wall, cpu))
    results["load_after"] = os.getloadavg()
    print("\nload average after: %.1f %.1f %.1f" % results["load_after"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--languages", action="store_true", help="measure languages (see above)")
    ap.add_argument("--pages", type=int, default=4000, help="--languages: captures of the generated WARCs")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(REPO), "shared", "data"))
    ap.add_argument("--trees", default="", help="--languages: NAME=PATH,... other checkouts to compare")
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "archive-profiler-bench"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runners", default="inline,local")
    ap.add_argument("--readers", default="warcio,fastwarc")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.languages:
        return languages_main(args)

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
