"""`profile --dry-run`: inputs, formats and splits as the run would make them, an estimate from a
sample that holds against the real run, and nothing written."""

import gzip
import os
import re
import subprocess
import sys

import pytest

from profiler.run import dryrun
from profiler.testing import synthetic, synthetic_warc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=ROOT, **(env or {})))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dry")
    lines = [synthetic.LEGEND] + list(synthetic.cdx_lines(120000, seed=5))
    plain = folder / "a.cdx"
    plain.write_text("\n".join(lines) + "\n")
    packed = folder / "b.cdx.gz"
    with gzip.open(packed, "wt") as f:
        f.write("\n".join([synthetic.LEGEND] + list(synthetic.cdx_lines(30000, seed=6))) + "\n")
    warc = folder / "c.warc.gz"
    synthetic_warc.write_warc(str(warc), 300, seed=2)
    (folder / "notes.txt").write_text("not an index\n")
    return folder


def numbers(text):
    return [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", text)]


def test_lists_inputs_splits_and_an_estimate_that_holds(inputs, tmp_path):
    files = [str(inputs / n) for n in ("a.cdx", "b.cdx.gz", "c.warc.gz", "notes.txt")]
    tmp = tmp_path / "own-tmp"
    tmp.mkdir()
    r = cli("profile", *files, "--dry-run", "--split-size", "2M", "-r", "local", "--cores", "2",
            env={"TMPDIR": str(tmp)})
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr
    assert "a.cdx  cdx  " in out and "b.cdx.gz  cdx+gzip" in out and "c.warc.gz  warc+gzip" in out
    assert re.search(r"refused .*notes\.txt: ", out)
    infos, _, splits, _, _ = dryrun.plan(files, [], "local", 2 << 20, 2)
    assert "splits: %d " % len(splits) in out
    assert len(splits) > 3
    assert os.listdir(tmp) == []                    # the samples' folders are gone, nothing written
    assert not os.path.exists(os.path.join(ROOT, "-o"))
    # against the real run
    real = tmp_path / "p.cdxj"
    assert cli("profile", *files, "-o", str(real), "-q").returncode == 0
    captures = [line for line in out.splitlines() if line.strip().startswith("captures")][0]
    [estimated] = numbers(captures)
    true_captures = 120000 + 30000 + 300
    assert 0.7 * true_captures <= estimated <= 1.3 * true_captures, out
    profile = [line for line in out.splitlines() if line.strip().startswith("profile")][0]
    [mid] = numbers(profile.split("lines")[0])
    low, high = numbers(profile.split("at least")[1])
    lines = sum(1 for line in open(real, "rb") if not line.startswith(b"!"))
    assert low <= lines <= high and lines / 2 <= mid <= lines * 2, (low, mid, lines, high)
    assert "of CPU" in out


def test_nothing_usable_is_a_user_error(inputs):
    r = cli("profile", str(inputs / "notes.txt"), "--dry-run")
    assert r.returncode == 2
    assert r.stderr.decode().count("\n") == 1 and "an ARC file, a Heritrix crawl log, a CDX server's JSON answer, an OpenWayback CDXJ index, a CDXJ index or a CDX index" in r.stderr.decode()


def test_output_needed_without_dry_run(inputs):
    r = cli("profile", str(inputs / "a.cdx"))
    assert r.returncode == 2 and b"-o/--output is required" in r.stderr


def test_sample_windows_are_whole_sorted_lines(tmp_path):
    path = tmp_path / "x.cdx"
    lines = [synthetic.LEGEND] + [line.rstrip("\n") for line in synthetic.cdx_lines(20000, seed=1)]
    path.write_text("\n".join(lines) + "\n")
    data, dense, spread, used = dryrun.sample_windows(str(path), path.stat().st_size, 200000)
    whole = set(lines)
    for sample in (data, dense, spread):
        got = sample.decode().splitlines()
        assert got[0] == synthetic.LEGEND and set(got) <= whole
        assert got[1:] == sorted(got[1:], key=lines.index)      # file order
    assert len(dense) < len(data) and len(spread) < len(data) and used == len(data)


def test_hostile_inputs_keep_it_bounded(tmp_path):
    """A line longer than the sample and a gzip bomb: a quick answer, no estimate, no error."""
    long_line = tmp_path / "long.cdx.gz"
    with gzip.open(long_line, "wb") as f:
        f.write(synthetic.LEGEND.encode() + b"\n")
        for _ in range(64):
            f.write(b"x" * (1 << 20))
    bomb = tmp_path / "bomb.cdx.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as f:
        f.write(synthetic.LEGEND.encode() + b"\n")
        for _ in range(512):
            f.write(b"\n" * (1 << 20))
    for path in (long_line, bomb):
        r = cli("profile", str(path), "--dry-run")
        assert r.returncode == 0, r.stderr
        assert b"estimate: none" in r.stdout and b"Traceback" not in r.stderr


@pytest.mark.parametrize("mid, low, high, shown", [
    (140.6, 141, 150, "141"),            # two digits would say 140, below the bound it prints
    (1049, 1049.5, 1100, "1,049"),
    (1234, 1000, 2000, "1,200"),         # inside the bounds: rounded as before
    (99.4, 90, 120, "99")])
def test_the_estimate_shown_lies_within_the_bounds_shown(mid, low, high, shown):
    assert dryrun._about_within(mid, low, high) == shown
