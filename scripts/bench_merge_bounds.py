"""Do merge's bounds hold, and how large is a merge? A generated archive cut into inputs of
several shapes (they share URI-Rs, as yearly, per-crawl or per-half profiles of one archive do),
each profiled with revisit resolution on, merged, and compared with the profile of the whole
made from scratch: (key, feature) pairs whose true value lies outside the merged value and its
bounds, from-scratch keys the merge lacks (and whether their SURT and datetime's '-' line bounds
them, as the merged !meta's "absent_keys" says), and the merged file's data lines over the whole
profile's.

    python scripts/bench_merge_bounds.py [--captures 100000] [--runner inline] [--shape halves]
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from profiler.testing import synthetic  # noqa: E402
from profiler.toolkit.merge import merge  # noqa: E402
from profiler.run.profile import run_profile  # noqa: E402
from profiler.files.profilefile import FEATURES, flatten, iter_data  # noqa: E402
from profiler.files.validate import validate  # noqa: E402


def data(path):
    return {k: (flatten(v), v.get("bounds") or {}) for k, v in iter_data(path)}


def violations(merged_path, truth_path):
    merged, truth = data(merged_path), data(truth_path)
    outside = missing = missing_outside = 0
    for key, (true, _) in truth.items():
        if key in merged:
            flat, bounds = merged[key]
            for name in FEATURES:
                low, high = bounds.get(name, (flat[name], flat[name]))
                outside += not (low <= true[name] <= high)
        else:
            missing += 1
            fields = key.split(b" ")
            envelope = merged.get(b" ".join(fields[:2]) + b" - -") or merged.get(fields[0] + b" - - -")
            if envelope is None or not all(
                    true[n] <= envelope[1].get(n, (0, envelope[0][n]))[1] for n in ("urim.total", "bytes")):
                missing_outside += 1
    return outside, missing, missing_outside, len(truth)


def cut(lines, shape):
    """The archive's CDX lines cut into inputs: 'halves' (its first and second half in capture
    time), 'alternate' (runs of 50 lines dealt to two inputs), 'years' (one input a year)."""
    if shape == "halves":
        ordered = sorted(lines, key=lambda l: l.split(" ", 2)[1])
        return [ordered[:len(ordered) // 2], ordered[len(ordered) // 2:]]
    if shape == "alternate":
        return [[l for i, l in enumerate(lines) if (i // 50) % 2 == k] for k in range(2)]
    years = {}
    for line in lines:
        years.setdefault(line.split(" ", 2)[1][:4], []).append(line)
    return [chosen for _, chosen in sorted(years.items())]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--captures", type=int, default=100000)
    ap.add_argument("--runner", default="inline")
    ap.add_argument("--shape", action="append", choices=("halves", "alternate", "years"))
    opts = ap.parse_args()
    import logging
    logging.getLogger("mrjob").setLevel(logging.ERROR)
    folder = tempfile.mkdtemp(prefix="bench-merge-")
    try:
        lines = list(synthetic.cdx_lines(opts.captures, seed=21))
        whole = os.path.join(folder, "all.cdx")
        with open(whole, "w") as f:
            f.write(synthetic.LEGEND + "\n" + "".join(lines))
        truth = os.path.join(folder, "whole.cdxj")
        run_profile([whole], truth, runner=opts.runner)
        whole_lines = sum(1 for _ in iter_data(truth))
        revisits = sum(" warc/revisit " in line for line in lines)
        print("%d captures (%d revisits); the whole profiled from scratch: %d lines"
              % (len(lines), revisits, whole_lines))
        for shape in opts.shape or ["halves", "alternate", "years"]:
            parts = []
            for i, chosen in enumerate(cut(lines, shape)):
                cdx = os.path.join(folder, "%s%d.cdx" % (shape, i))
                with open(cdx, "w") as f:
                    f.write(synthetic.LEGEND + "\n" + "".join(chosen))
                parts.append(os.path.join(folder, "%s%d.cdxj" % (shape, i)))
                run_profile([cdx], parts[-1], runner=opts.runner)
            for label, flag in (("no revisit bounds", False), ("revisit bounds", True)):
                out = os.path.join(folder, "merged-%s-%d.cdxj" % (shape, flag))
                t = time.monotonic()
                summary = merge(parts, out, bound_revisits=flag)
                took = time.monotonic() - t
                outside, missing, missing_outside, keys = violations(out, truth)
                n = sum(1 for _ in iter_data(out))
                print("  %-9s %d inputs, %-17s %6d (key, feature) outside value and bounds; %d of %d keys "
                      "absent (%d beyond their '- -' line); %d lines = %.2fx the whole's (summary says %d; "
                      "%s); merge %.1f s" % (shape, len(parts), label + ":", outside, missing, keys,
                                             missing_outside, n, n / whole_lines, summary["lines"],
                                             "valid" if validate(out).ok else "INVALID", took))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
