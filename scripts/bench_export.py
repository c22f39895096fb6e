"""Peak memory of `archive-profiler export --format jsonld` on a large profile: a generated
profile of N lines (hosts by year, mime and status, sorted, our value style) exported in a
child process, its peak RSS (ru_maxrss), time and output size printed (tests/toolkit/test_export.py
parses outputs back; a parser here would hold the whole tree).

    python scripts/bench_export.py [--lines 1000000]
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VALUE = (b'{"urim":{"total":%d,"min":1,"max":%d},"urir":%d,"bytes":%d,"digests":%d,"dedup_bytes":%d,'
         b'"first":"20150101000000","last":"20151231000000"}')


def write_profile(path, n):
    """n data lines: 'com,hNNNNNNN)/* YEAR MIME STATUS', eight a host, in byte order."""
    keys = [(b"- - -", 40), (b"- - 2xx", 30), (b"- text/html -", 20), (b"- text/html 2xx", 15),
            (b"2015 - -", 25), (b"2015 - 2xx", 20), (b"2016 - -", 15), (b"2016 text/html -", 5)]
    with open(path, "wb") as f:
        f.write(b'!context ["http://oduwsdl.github.io/contexts/archiveprofiles"]\n!id {"uri":null}\n'
                b'!keys ["surt","datetime","mime","status"]\n')
        for i in range(n):
            suffix, total = keys[i % len(keys)]
            f.write(b"com,h%07d)/* %s %s\n" % (i // len(keys), suffix,
                                              VALUE % (total, total, total, total * 900, total, total * 800)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1000000)
    opts = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-export-")
    try:
        profile = os.path.join(folder, "big.cdxj")
        write_profile(profile, opts.lines)
        out = os.path.join(folder, "big.jsonld")
        t = time.monotonic()
        subprocess.run([sys.executable, "-m", "profiler.cli", "export", profile, "-o", out], check=True,
                       env=dict(os.environ, PYTHONPATH=ROOT, XDG_CACHE_HOME=folder))
        took = time.monotonic() - t
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        with open(out, "rb") as f:
            f.seek(-2, os.SEEK_END)
            assert f.read() == b"}\n"
        print("%d lines (%.0f MB) exported in %.1f s to %.0f MB of JSON-LD; peak RSS of the export %.0f MB"
              % (opts.lines, os.path.getsize(profile) / 1e6, took, os.path.getsize(out) / 1e6, peak / 1024))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
