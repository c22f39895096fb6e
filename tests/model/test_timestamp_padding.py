"""Timestamps shorter than 14 digits pad to the earliest valid datetime (spec section 1):
`2013` -> `20130101000000`, never a month key `201300`; the compiled and the Python paths agree."""

import os
import subprocess
import sys

import pytest

from profiler.accel import fast
from profiler.model import normalise
from profiler.files.profilefile import iter_data

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LEGEND = " CDX N b a m s k r M S V g"


@pytest.mark.parametrize("raw, padded", [
    ("2013", "20130101000000"), ("20130", "20130101000000"), ("20131", "20131001000000"),
    ("201305", "20130501000000"), ("2013052", "20130520000000"), ("2013050", "20130501000000"),
    ("20130512", "20130512000000"), ("201305120830", "20130512083000"),
])
def test_padding(raw, padded):
    assert normalise.timestamp(raw.encode()) == padded


@pytest.mark.parametrize("raw", ["201300", "20130100", "20131301", "20135", "201"])
def test_invalid(raw):
    assert normalise.timestamp(raw.encode()) is None


def profile(tmp_path, pure):
    cdx = tmp_path / "in.cdx"
    lines = [LEGEND]
    for i, ts in enumerate(["2013", "20131", "201305", "2013052", "20130", "20140101120000", "201300"]):
        lines.append("com,example)/p%d %s http://example.com/p%d text/html 200 D%d - - 100 0 a.warc.gz"
                     % (i, ts, i, i))
    cdx.write_text("\n".join(lines) + "\n")
    out = tmp_path / ("pure.cdxj" if pure else "fast.cdxj")
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop(fast.PURE_ENV, None)
    if pure:
        env[fast.PURE_ENV] = "1"
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", str(cdx), "-o", str(out), "-q"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return dict(iter_data(str(out)))


def test_month_keys_and_first_on_both_paths(tmp_path):
    pure = profile(tmp_path, pure=True)
    compiled = profile(tmp_path, pure=False)
    assert pure == compiled
    months = {k.split(b" ")[1] for k in pure if k.startswith(b"com,example)/p") or k.startswith(b"*")}
    assert not [m for m in months if m != b"-" and (m.endswith(b"00") and len(m) == 6)]
    root = pure[b"* - - -"]
    assert root["first"] == "20130101000000" and root["urim"]["total"] == 6      # 201300 is skipped
    assert b"* 201310 - -" in pure and b"* 201301 - -" in pure
