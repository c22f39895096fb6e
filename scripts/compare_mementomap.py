#!/usr/bin/env python
"""Compare `archive-profiler compact` with `mementomap compact` on the same CDX.

    pip install mementomap      # for this measurement only; not a dependency of the project
    python scripts/compare_mementomap.py [--captures 100000] [--seed 5] [--probes 5000]
        [--workdir /tmp/archive-profiler-compare] [--json FILE]

Input: a seeded synthetic CDX (profiler.testing.synthetic). mementomap: `mementomap generate` (its
URL-level map) then `mementomap compact` (default factors). archive-profiler: `profile --policy
urls`, `ukvs`, then `compact --max-lines L` with L the line count of mementomap's compacted map
(and a second run with --max-bytes of its size). Every map is then asked, through each tool's own
lookup (mementomap.cli.lookup with the SURT; profiler.toolkit.lookup.Lookup), about:

- present: every URL of the CDX (recall = share answered with a non-zero count);
- absent siblings: a present URL's directory with a file name the archive does not hold;
- absent same-host: a path the archive does not hold on a held host;
- absent other-host: URLs of another seed whose SURT the archive does not hold.

A false positive is an absent URL answered with a non-zero count. The '*' line of our maps (the
archive's total) answers every URL; it is not counted as a positive, since mementomap maps have
no such line. Lookup errors (mementomap's binary search can fail at the end of the file) are
counted as misses and reported. To separate its compaction from its lookup, its maps are also
asked after `LC_ALL=C` sorting with the same lookup keys and an end-of-file-safe binary search.
"""

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from profiler.testing import synthetic  # noqa: E402
from profiler.toolkit.lookup import HELD, Lookup, canonical  # noqa: E402


def command(name):
    script = os.path.join(os.path.dirname(sys.executable), name)
    return [script] if os.path.isfile(script) else [name]


def run(cmd):
    t = time.perf_counter()
    res = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return time.perf_counter() - t, (res.stdout + res.stderr).decode().strip()


def size(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f), os.path.getsize(path)


def probes(cdx, n, seed):
    """present URLs, and the three kinds of absent URLs (n each)."""
    with gzip.open(cdx, "rt") as f:
        next(f)
        rows = [line.split(" ", 3)[:3] for line in f]
    urlkeys = {r[0] for r in rows}
    present = sorted({r[2] for r in rows})
    rng = random.Random(seed)
    siblings, same_host = [], []
    for url in rng.sample(present, min(len(present), 4 * n)):
        base = url.split("?")[0].split("#")[0]
        scheme, _, rest = base.partition("://")
        host, _, path = rest.partition("/")
        dirs = path.split("/")[:-1]
        sib = "%s://%s/%s" % (scheme, host, "/".join(dirs + ["zz-absent-%d.html" % rng.randrange(10 ** 9)]))
        other = "%s://%s/zz-absent-%d/page-%d.html" % (scheme, host, rng.randrange(10 ** 9), rng.randrange(99))
        for url2, out in ((sib, siblings), (other, same_host)):
            if len(out) < n and canonical(url2) not in urlkeys:
                out.append(url2)
    hosts = {k.split(")")[0] for k in urlkeys}
    other_host = [line.split(" ", 3)[2] for line in synthetic.cdx_lines(20 * n, seed=seed + 7777)]
    rng.shuffle(other_host)
    other_host = [u for u in other_host if canonical(u).split(")")[0] not in hosts][:n]
    return {"present": present, "absent_sibling": siblings, "absent_same_host": same_host,
            "absent_other_host": other_host}


def mementomap_answers(path, urls):
    """held (bool) per URL with mementomap's own lookup, one open file for the whole batch as its
    `batchlookup` does; errors count as not held. Its bin_search reads the 'first line' without
    seeking to the start, so after a search that ended at the end of the file it raises."""
    from mementomap.cli import lookup
    out, errors = [], 0
    with open(path, "rb") as f:
        for url in urls:
            try:
                res = lookup(f, canonical(url))
            except Exception:
                res, errors = None, errors + 1
            out.append(bool(res) and int(res["freq"]) > 0)
    return out, errors


def _safe_bin_search(f, key):
    """mementomap's bin_search with an end-of-file guard (its own one raises at the last line)."""
    f.seek(0)
    first = f.readline().split(maxsplit=2)
    if first and first[0] == key:
        return first[:2]
    left, right = 0, f.seek(0, 2)
    while right - left > 1:
        mid = (right + left) // 2
        f.seek(mid)
        f.readline()
        fields = f.readline().split(maxsplit=2)
        if not fields or key < fields[0]:
            right = mid
        elif key == fields[0]:
            return fields[:2]
        else:
            left = mid
    return None


def mementomap_fixed_answers(path, urls, sort=True):
    """mementomap's lookup keys and search, end-of-file guard added, on the map sorted (LC_ALL=C)."""
    from mementomap.cli import lookup_keys
    sorted_path = path + ".sorted" if sort else path
    if not os.path.exists(sorted_path):
        with open(path, "rb") as f:
            lines = sorted(f.read().splitlines(True))
        with open(sorted_path, "wb") as f:
            f.writelines(lines)
    out = []
    with open(sorted_path, "rb") as f:
        for url in urls:
            held = False
            for key in lookup_keys(canonical(url)):
                res = _safe_bin_search(f, key.encode())
                if res:
                    held = int(res[1]) > 0
                    break
            out.append(held)
    return out, 0


def our_answers(path, urls):
    with Lookup(path) as index:
        return [a.status == HELD and a.key != b"*" for _, a in index.batch(urls)], 0


def evaluate(name, path, answer, sets, extra=None):
    lines, nbytes = size(path)
    row = {"map": name, "lines": lines, "bytes": nbytes}
    errors = 0
    for kind, urls in sets.items():
        held, err = answer(path, urls)
        errors += err
        rate = sum(held) / max(len(urls), 1)
        row["recall" if kind == "present" else "fp_" + kind[len("absent_"):]] = round(rate, 4)
    absent = [k for k in sets if k != "present"]
    row["fp_all"] = round(sum(row["fp_" + k[len("absent_"):]] * len(sets[k]) for k in absent)
                          / sum(len(sets[k]) for k in absent), 4)
    row["lookup_errors"] = errors
    row.update(extra or {})
    print(json.dumps(row))
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--captures", type=int, default=100000)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--probes", type=int, default=5000)
    p.add_argument("--workdir", default="/tmp/archive-profiler-compare")
    p.add_argument("--json", default=None)
    args = p.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    w = lambda name: os.path.join(args.workdir, name)  # noqa: E731
    cdx = w("in-%d-seed%d.cdx.gz" % (args.captures, args.seed))
    if not os.path.exists(cdx):
        synthetic.write_cdx(cdx, args.captures, args.seed)
    ap, mm = command("archive-profiler"), command("mementomap")
    t_gen, _ = run(mm + ["generate", cdx, w("mm-full.txt")])
    t_mmc, _ = run(mm + ["compact", w("mm-full.txt"), w("mm-compact.txt")])
    t_prof, _ = run(ap + ["profile", cdx, "-o", w("urls.cdxj"), "--policy", "urls", "-q"])
    t_map, _ = run(ap + ["ukvs", w("urls.cdxj"), "-o", w("urls.ukvs"), "-q"])
    mm_lines, mm_bytes = size(w("mm-compact.txt"))
    t_apl, msg_l = run(ap + ["compact", w("urls.ukvs"), "-o", w("ap-lines.ukvs"), "--max-lines", str(mm_lines)])
    t_apb, msg_b = run(ap + ["compact", w("urls.ukvs"), "-o", w("ap-bytes.ukvs"), "--max-bytes", str(mm_bytes)])
    sets = probes(cdx, args.probes, args.seed)
    print("probes: " + ", ".join("%s %d" % (k, len(v)) for k, v in sets.items()))
    est = lambda msg: msg.rsplit("-> ", 1)[-1]  # noqa: E731
    rows = [
        evaluate("mementomap generate (URL level)", w("mm-full.txt"), mementomap_answers, sets,
                 {"seconds": round(t_gen, 1)}),
        evaluate("mementomap compact (defaults)", w("mm-compact.txt"), mementomap_answers, sets,
                 {"seconds": round(t_mmc, 1)}),
        evaluate("mementomap generate, EOF-safe search (map as written)", w("mm-full.txt"),
                 lambda path, urls: mementomap_fixed_answers(path, urls, sort=False), sets),
        evaluate("mementomap generate, sorted, EOF-safe search", w("mm-full.txt"), mementomap_fixed_answers,
                 sets),
        evaluate("mementomap compact, sorted, EOF-safe search", w("mm-compact.txt"), mementomap_fixed_answers,
                 sets),
        evaluate("archive-profiler ukvs (urls policy)", w("urls.ukvs"), our_answers, sets,
                 {"seconds": round(t_prof + t_map, 1)}),
        evaluate("archive-profiler compact --max-lines", w("ap-lines.ukvs"), our_answers, sets,
                 {"seconds": round(t_apl, 1), "estimated_fp": est(msg_l)}),
        evaluate("archive-profiler compact --max-bytes", w("ap-bytes.ukvs"), our_answers, sets,
                 {"seconds": round(t_apb, 1), "estimated_fp": est(msg_b)}),
    ]
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"captures": args.captures, "seed": args.seed,
                       "probes": {k: len(v) for k, v in sets.items()}, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
