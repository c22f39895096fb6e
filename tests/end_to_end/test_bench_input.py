"""scripts/bench --input: an index of one's own is benchmarked as it is, its data lines counted as
its captures, and nothing is written beside it."""

import json
import os
import subprocess
import sys

from helpers.paths import ROOT
from profiler.testing import synthetic

BENCH = os.path.join(ROOT, "scripts", "bench")


def _bench(*args, cwd):
    return subprocess.run([sys.executable, BENCH, "--python", sys.executable] + list(args),
                          cwd=cwd, capture_output=True, text=True, timeout=600)


def test_a_given_index_is_run_and_checked_against_its_own_lines(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    cdx = mine / "my-index.cdx"
    synthetic.write_cdx(str(cdx), 2000, seed=3)
    with open(cdx, "rb") as f:
        data = [line for line in f if line.strip() and not line.startswith(b" CDX")]
    out = tmp_path / "results.json"
    done = _bench("--shapes", "none", "--input", str(cdx), "--no-peers", "--cores", "1", "--repeat", "1",
                  "--workdir", str(tmp_path / "work"), "--json", str(out), cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr + done.stdout
    results = json.loads(out.read_text())
    [shape] = results["shapes"]
    assert shape["name"] == "my-index.cdx"
    assert shape["input"]["captures"] == len(data)
    [run] = shape["tools"]
    assert run["check_ok"], run["check"]
    assert sorted(os.listdir(mine)) == ["my-index.cdx"]


def test_nothing_to_run_is_an_error(tmp_path):
    done = _bench("--shapes", "none", "--no-peers", "--workdir", str(tmp_path / "work"), cwd=str(tmp_path))
    assert done.returncode == 1
    assert "nothing to run" in done.stderr
