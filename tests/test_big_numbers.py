"""Lengths near and past 2^63: no sum ever wraps. A length of 2^63 or more is bad_length; a run's
lengths are budgeted so that every sum (any key's bytes, in any step, compiled or Python) fits a
signed 64-bit integer, and a capture past its split's share is skipped and counted
(bytes_overflow): exact numbers for what was counted, a label for what was not."""

import os
import subprocess
import sys

import orjson
import pytest

from profiler import synthetic

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
I64 = (1 << 63) - 1


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=ROOT, **(env or {})))


def write_index(path, lengths):
    with open(path, "w") as f:
        f.write(synthetic.LEGEND + "\n")
        for i, n in enumerate(lengths):
            f.write("com,example)/p%05d 2013010100%04d http://example.com/p%05d text/html 200 D%d - - %d 0 a.warc.gz\n"
                    % (i // 3, i % 3600, i // 3, i, n))


def numbers(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from numbers(v)
    elif isinstance(value, int) and not isinstance(value, bool):
        yield value


def check_profile(path):
    meta, root = {}, None
    for line in open(path, "rb"):
        if line.startswith(b"!meta") and b'"captures"' in line:
            meta = orjson.loads(line[6:])
        elif not line.startswith(b"!"):
            value = orjson.loads(line[line.index(b" {") + 1:])
            assert all(0 <= n <= I64 for n in numbers(value)), line[:200]
            if line.startswith(b"* - - - "):
                root = value
    return meta, root


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("pure", [False, True])
def test_sums_past_2_63_never_wrap(tmp_path, runner, pure):
    lengths = [(1 << 62) + i for i in range(40)] + [I64, 1 << 63, (1 << 64) - 1, 10 ** 30, 17]
    index = tmp_path / "big.cdx"
    write_index(index, lengths)
    out = tmp_path / "p.cdxj"
    r = cli("profile", str(index), "-o", str(out), "-r", runner,
            env={"ARCHIVE_PROFILER_PURE_PYTHON": "1"} if pure else {})
    assert r.returncode == 0, r.stderr
    assert b"Traceback" not in r.stderr
    assert cli("validate", str(out)).returncode == 0
    meta, root = check_profile(out)
    skipped = meta["skipped"]
    assert skipped["bad_length"] == 3                       # 2^63, 2^64 - 1 and 10^30
    counted = meta["captures"]
    assert counted + skipped["bad_length"] + skipped.get("bytes_overflow", 0) == len(lengths)
    assert skipped.get("bytes_overflow", 0) >= 39           # at most two of the 2^62s fit one budget
    assert root["urim"]["total"] == counted and 0 < root["bytes"] <= I64
    # exact for what was counted: the bytes are a sum of counted lengths
    assert root["bytes"] >= 17
    assert b"bytes_overflow" in r.stderr


def test_merged_sums_stay_exact_or_refuse(tmp_path):
    index = tmp_path / "big.cdx"
    write_index(index, [(1 << 62) + 5])
    one = tmp_path / "one.cdxj"
    assert cli("profile", str(index), "-o", str(one), "-q").returncode == 0
    copies = []
    for i in range(3):
        copy = tmp_path / ("c%d.cdxj" % i)
        copy.write_bytes(one.read_bytes())
        copies.append(str(copy))
    merged = tmp_path / "m.cdxj"
    r = cli("merge", *copies, "-o", str(merged))
    assert r.returncode == 0, r.stderr
    root = [orjson.loads(l[l.index(b" {") + 1:]) for l in open(merged, "rb") if l.startswith(b"* - - - ")][0]
    assert root["bytes"] == 3 * ((1 << 62) + 5)             # past 2^63, exact (JSON integers are unbounded)
    five = copies + copies[:2]
    r = cli("merge", *five, "-o", str(tmp_path / "m5.cdxj"))
    assert r.returncode == 2 and b"passes 2^64" in r.stderr and b"Traceback" not in r.stderr
    assert not (tmp_path / "m5.cdxj").exists()
