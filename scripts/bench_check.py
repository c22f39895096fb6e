"""What reading a file whole and checked costs (profiler.files.datalines): the check `lookup`
and `query` make when they first open a file version, and the one every streaming command makes.

    python scripts/bench_check.py [--lines 1000000] [--folder /tmp/bench-check] [--json result.json]

Writes a sorted UKVS map and a CDXJ profile of --lines data lines (keys of generated hosts and
paths, values of the spec's shape), then times in CPU seconds (time.process_time): the check of
each file (first, then remembered), and a batch of 100,000 lookups in the map with and without
the check.
"""

import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from profiler.files import checkcache  # noqa: E402
from profiler.files.datalines import DataFile  # noqa: E402
from profiler.toolkit.lookup import Lookup  # noqa: E402

VALUE = ('{"urim":{"total":%d,"min":1,"max":%d},"urir":%d,"bytes":%d,"digests":%d,"dedup_bytes":%d,'
         '"first":"20130101000000","last":"20200101000000"}')


def keys(n):
    """n sorted SURT keys: hosts and their paths."""
    out = []
    host = 0
    while len(out) < n:
        h = "com,h%07d)" % host
        out.append(h + "/*")
        out += [h + "/p%03d" % i for i in range(min(9, n - len(out)))]
        host += 1
    return sorted(out[:n], key=str.encode)


def write(folder, n):
    rng = random.Random(1)
    found = keys(n)
    map_path, profile_path = os.path.join(folder, "m.ukvs"), os.path.join(folder, "p.cdxj")
    with open(map_path, "w") as f:
        f.write('!fields {"keys":["surt"],"values":["frequency"]}\n')
        for k in found:
            f.write("%s %d/%d\n" % (k, rng.randint(1, 99), 1))
    with open(profile_path, "w") as f:
        f.write('!keys ["surt","datetime","mime","status"]\n')
        for k in found:
            total = rng.randint(1, 99)
            f.write("%s - - - %s\n" % (k, VALUE % (total, total, 1, total * 1000, total, total * 900)))
    return found, map_path, profile_path


def cpu(fn):
    start = time.process_time()
    fn()
    return round(time.process_time() - start, 2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1000000)
    parser.add_argument("--folder", default="/tmp/bench-check")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    os.makedirs(args.folder, exist_ok=True)
    os.environ["XDG_CACHE_HOME"] = os.path.join(args.folder, "cache")
    checkcache.RACY_NS = 0                      # the files were just written: remember them anyway
    found, map_path, profile_path = write(args.folder, args.lines)
    result = {"lines": args.lines, "map_mb": round(os.path.getsize(map_path) / 1e6, 1),
              "profile_mb": round(os.path.getsize(profile_path) / 1e6, 1)}
    for name, path in (("map", map_path), ("profile", profile_path)):
        checkcache.forget()
        result[name + "_check_cpu_s"] = cpu(lambda: DataFile(path).check())
        checkcache.forget()
        result[name + "_check_remembered_cpu_s"] = cpu(lambda: DataFile(path).check())
    rng = random.Random(2)
    urls = ["http://h%07d.com/p%03d" % (rng.randrange(len(found) // 10), rng.randrange(12)) for _ in range(100000)]
    for verify in (False, True):
        checkcache.forget()
        os.environ["XDG_CACHE_HOME"] = os.path.join(args.folder, "cache-%s" % verify)

        def batch():
            with Lookup(map_path, verify=verify) as index:
                for _ in index.batch(urls):
                    pass
        result["batch_100k_cpu_s_verify_%s" % verify] = cpu(batch)
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
