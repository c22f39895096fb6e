"""Do merge's bounds hold? A generated archive cut into yearly inputs (they share URI-Rs, as
yearly or per-crawl profiles of one archive do), each profiled with revisit resolution on,
merged, and compared with the profile of the whole made from scratch: (key, feature) pairs whose
true value lies outside the merged value and its bounds, and from-scratch keys the merge lacks,
without and with the bounds for revisits resolved per input.

    python scripts/bench_merge_bounds.py [--captures 100000] [--runner local]
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--captures", type=int, default=100000)
    ap.add_argument("--runner", default="local")
    opts = ap.parse_args()
    import logging
    logging.getLogger("mrjob").setLevel(logging.ERROR)
    folder = tempfile.mkdtemp(prefix="bench-merge-")
    try:
        lines = list(synthetic.cdx_lines(opts.captures, seed=21))
        whole = os.path.join(folder, "all.cdx")
        with open(whole, "w") as f:
            f.write(synthetic.LEGEND + "\n" + "".join(lines))
        years = {}
        for line in lines:
            years.setdefault(line.split(" ", 2)[1][:4], []).append(line)
        parts = []
        for year, chosen in sorted(years.items()):
            cdx = os.path.join(folder, "y%s.cdx" % year)
            with open(cdx, "w") as f:
                f.write(synthetic.LEGEND + "\n" + "".join(chosen))
            out = os.path.join(folder, "y%s.cdxj" % year)
            run_profile([cdx], out, runner=opts.runner)
            parts.append(out)
        truth = os.path.join(folder, "whole.cdxj")
        run_profile([whole], truth, runner=opts.runner)
        revisits = sum(" warc/revisit " in line for line in lines)
        print("%d captures (%d revisits) in %d yearly inputs; the whole profiled from scratch"
              % (len(lines), revisits, len(parts)))
        for label, flag in (("before (no revisit bounds)", False), ("after", True)):
            out = os.path.join(folder, "merged-%d.cdxj" % flag)
            t = time.monotonic()
            merge(parts, out, bound_revisits=flag)
            took = time.monotonic() - t
            outside, missing, missing_outside, keys = violations(out, truth)
            from profiler.files.validate import validate
            lines = sum(1 for _ in iter_data(out))
            print("  %-27s %6d (key, feature) outside value and bounds; %d of %d keys missing (%d beyond "
                  "their '- -' line); %d lines (%s); merge %.1f s"
                  % (label, outside, missing, keys, missing_outside, lines,
                     "valid" if validate(out).ok else "INVALID", took))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
