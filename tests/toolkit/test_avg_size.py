"""The sixth feature, avg_size (dedup_bytes / urir, spec section 3): derived by query, never
stored; null where a line has no URI-R, ranked last by --by."""

import os
import subprocess
import sys

import orjson

from profiler.files.profilefile import flatten, iter_data
from profiler.toolkit.query import derived_bounds, feature_value, query

from helpers.paths import ROOT

HEAD = b'!keys ["surt","datetime","mime","status"]\n'


def line(key, urim, urir, size, dedup, bounds=None):
    value = {"urim": {"total": urim, "min": 1 if urim else 0, "max": urim}, "urir": urir, "bytes": size,
             "digests": urir, "dedup_bytes": dedup, "first": "20130101000000", "last": "20131231000000"}
    if bounds:
        value["bounds"] = bounds
    return key.encode() + b" " + orjson.dumps(value) + b"\n"


def run(path, *args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "profiler.cli", "query", str(path)] + list(args),
                          capture_output=True, text=True, env=env)


def test_avg_size_in_feature_and_by(tmp_path):
    path = tmp_path / "p.cdxj"
    path.write_bytes(HEAD + line("com,a)/* - - -", 4, 2, 900, 701) + line("com,b)/* - - -", 0, 0, 0, 0)
                     + line("com,c)/* - - -", 3, 3, 3000, 2999) + line("com,d)/* - - -", 5, 1, 50, 50))
    r = run(path, "--surt", "com,a)/*", "--feature", "avg_size", "--feature", "urir")
    assert r.returncode == 0, r.stderr
    assert r.stdout == 'com,a)/* - - - {"avg_size":350.5,"urir":2}\n'
    r = run(path, "--surt", "com,b)/*", "--feature", "avg_size")
    assert r.stdout == 'com,b)/* - - - {"avg_size":null}\n'            # no URI-R: no average
    r = run(path, "--level", "host", "--by", "avg_size", "--feature", "avg_size")
    assert r.returncode == 0, r.stderr
    assert [l.split(" ")[0] for l in r.stdout.splitlines()] == ["com,c)/*", "com,a)/*", "com,d)/*", "com,b)/*"]
    r = run(path, "--level", "host", "--top", "1", "--by", "avg_size")
    assert r.stdout.startswith("com,c)/* ")


def test_avg_size_of_bounded_parts_has_bounds(tmp_path):
    path = tmp_path / "m.cdxj"
    path.write_bytes(HEAD + line("* - - -", 10, 6, 1000, 800, {"urir": [4, 6], "dedup_bytes": [500, 800]}))
    flat = [flatten(v) for _, v in iter_data(str(path))][0]
    flat["bounds"] = {"urir": [4, 6], "dedup_bytes": [500, 800]}
    assert feature_value(flat, "avg_size") == round(800 / 6, 2)
    low, high = derived_bounds(flat, "avg_size")
    assert low <= 500 / 6 and high >= 800 / 4 and high - 800 / 4 < 0.01
    r = run(path, "--feature", "avg_size")
    value = orjson.loads(r.stdout.split(" ", 4)[4])
    assert value["bounds"]["avg_size"] == [low, high] and value["avg_size"] == round(800 / 6, 2)
    found, _, _ = query(str(path), {})
    assert "bounds" in found[0][1]
