"""Extra per-line attributes (the format allows more than the features "without changing the
existing data"): merge keeps them when its inputs agree and drops them, counted, when they do
not; query prints them."""

import os
import shutil
import subprocess
import sys

import orjson

from profiler.run.profile import run_profile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=ROOT))


def with_extras(src, dst, extra_of):
    """A copy of a profile with extra attributes added to the JSON of some lines."""
    with open(src, "rb") as f, open(dst, "wb") as out:
        for line in f:
            if not line.startswith(b"!"):
                key, _, value = line.rstrip(b"\n").partition(b" {")
                extra = extra_of(key)
                if extra:
                    value = orjson.loads(b"{" + value)
                    value.update(extra)
                    line = key + b" " + orjson.dumps(value) + b"\n"
            out.write(line)


def lines_of(path):
    return {l.split(b" {")[0]: orjson.loads(l[l.index(b" {") + 1:]) for l in open(path, "rb")
            if not l.startswith(b"!")}


def test_merge_keeps_equal_extras_and_drops_differing_ones(tmp_path):
    base = tmp_path / "base.cdxj"
    run_profile([SAMPLE], str(base))
    a, b, out = tmp_path / "a.cdxj", tmp_path / "b.cdxj", tmp_path / "m.cdxj"
    with_extras(base, a, lambda k: {"note": "same", "lang": {"eng": 3}} if k.startswith(b"com,") else
                {"note": "a"})
    with_extras(base, b, lambda k: {"note": "same", "lang": {"eng": 3}} if k.startswith(b"com,") else
                {"note": "b"} if k.startswith(b"org,") else None)
    r = cli("merge", str(a), str(b), "-o", str(out))
    assert r.returncode == 0, r.stderr
    held = set(lines_of(a))
    merged = {k: v for k, v in lines_of(out).items() if k in held}     # not the keys merge adds
    differing = [k for k in merged if not k.startswith(b"com,")]
    assert all(merged[k]["note"] == "same" and merged[k]["lang"] == {"eng": 3}
               for k in merged if k.startswith(b"com,"))
    assert all("note" not in merged[k] for k in differing)
    assert ("%d merged line(s) dropped extra attributes" % len(differing)).encode() in r.stderr
    # the features are the same as without extras
    plain, copy = tmp_path / "plain.cdxj", tmp_path / "copy.cdxj"
    shutil.copyfile(base, copy)
    assert cli("merge", str(base), str(copy), "-o", str(plain)).returncode == 0
    for k, v in lines_of(plain).items():
        if k not in merged:
            continue
        assert {n: x for n, x in merged[k].items() if n not in ("note", "lang")} == v
    assert cli("validate", str(out)).returncode == 0


def test_query_prints_extras(tmp_path):
    base = tmp_path / "base.cdxj"
    run_profile([SAMPLE], str(base))
    a = tmp_path / "a.cdxj"
    with_extras(base, a, lambda k: {"note": "kept", "langs": ["eng", "fra"]} if k == b"* - - -" else None)
    r = cli("query", str(a))
    assert r.returncode == 0, r.stderr
    value = orjson.loads(r.stdout.split(b" ", 4)[4])
    assert value["note"] == "kept" and value["langs"] == ["eng", "fra"]
    assert list(value)[:2] == ["urim", "urir"]
