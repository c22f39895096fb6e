#!/usr/bin/env python
"""Fingerprints of the profiles the code writes, to show that a change keeps them byte for byte.

Profiles every file of ../shared/data one at a time (each policy, inline runner), and a
generated CDX index with each policy but ``full`` on the inline and local runners (``default`` on
Spark); prints one line per profile,
``sha256 name``, of the bytes with the !meta "created" time and input paths taken out.
Run it before and after a change and compare the two outputs (``diff``).

    python scripts/check_identical.py --lines 1000000 --runners inline,local,spark > before.txt
"""

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
POLICIES = sorted(n[:-5] for n in os.listdir(os.path.join(ROOT, "conf", "policies")) if n.endswith(".yaml"))
VOLATILE = re.compile(rb'"created":"[^"]*"|"inputs":\[[^\]]*\]')


def fingerprint(path):
    with open(path, "rb") as f:
        return hashlib.sha256(VOLATILE.sub(b"", f.read())).hexdigest()


def profile(inputs, out, policy, runner):
    cmd = [sys.executable, "-m", "profiler.cli", "profile", *inputs, "-o", out, "-q", "--policy", policy,
           "-r", runner]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True)
    if r.returncode != 0:
        return "exit-%d" % r.returncode
    return fingerprint(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1000000, help="captures of the generated CDX")
    ap.add_argument("--runners", default="inline,local,spark")
    ap.add_argument("--no-corpus", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "p.cdxj")
        if not args.no_corpus:
            files = sorted(os.path.join(d, n) for d, _, names in os.walk(DATA) for n in names
                           if n != "README.md")
            for i, path in enumerate(files):
                for policy in POLICIES:
                    print(profile([path], out, policy, "inline"), os.path.relpath(path, DATA), policy,
                          flush=True)
                print("corpus %d/%d" % (i + 1, len(files)), file=sys.stderr, end="\r")
        index = os.path.join(tmp, "gen.cdx")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_cdx.py"), index, "--lines",
                        str(args.lines), "--seed", "1"], check=True, capture_output=True)
        for runner in args.runners.split(","):
            # 'full' writes about 47 times its input: it is checked on the corpus only
            for policy in [p for p in POLICIES if p != "full"] if runner != "spark" else ["default"]:
                print(profile([index], out, policy, runner), "generated-%d" % args.lines, policy, runner,
                      flush=True)


if __name__ == "__main__":
    main()
