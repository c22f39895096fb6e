"""profiler.presorted: files in sorted runs merged into the bytes LC_ALL=C sort writes."""

import os
import random
import subprocess

import pytest

from profiler import fast, presorted

pytestmark = pytest.mark.skipif(not presorted.available(), reason="the C extension is not built (no compiler?)")


def _sort(paths):
    return subprocess.run(["sort"] + [str(p) for p in paths], env=dict(os.environ, LC_ALL="C"),
                          capture_output=True, check=True).stdout


def _random_line(rng):
    return bytes(rng.choice(b"ab\xff\xc3\r\t \x00!K") for _ in range(rng.randint(0, 7)))


def _random_files(rng, tmp_path):
    paths = []
    for i in range(rng.randint(1, 5)):
        runs = [sorted(_random_line(rng) for _ in range(rng.choice([0, 1, 3, 40, 200])))
                for _ in range(rng.choice([1, 1, 2, 4]))]
        data = b"".join(line + b"\n" for run in runs for line in run)
        if data and rng.random() < 0.2:
            data = data[:-1]                      # a last line without newline
        path = tmp_path / ("in%d" % i)
        path.write_bytes(data)
        paths.append(path)
    return paths


@pytest.mark.parametrize("seed", range(300))
def test_merge_writes_what_sort_writes(seed, tmp_path):
    """Runs long and short (short ones sorted in memory), empty lines, bytes past 0x7f, NUL, CR
    and tabs, a last line without newline, lines longer than the buffers."""
    rng = random.Random(seed)
    paths = _random_files(rng, tmp_path)
    out = tmp_path / "out"
    assert presorted.merge_sorted(paths, out, threads=rng.choice([1, 3]), short_run=rng.choice([1, 50, 1 << 20]),
                                  bufsize=rng.choice([2, 3, 16, 1 << 16]), buffers=rng.choice([1, 1 << 20]))
    assert out.read_bytes() == _sort(paths)


def test_runs_are_cut_where_the_order_breaks(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"a\nb\nb\na\nab\n!meta\nz")
    assert presorted.sorted_runs(path, bufsize=2) == [(0, 6), (6, 5), (11, 7)]
    assert presorted.sorted_runs(path, max_runs=2) is None
    path.write_bytes(b"")
    assert presorted.sorted_runs(path) == []


def test_nothing_is_written_for_files_not_in_a_few_long_runs(tmp_path):
    """Too many runs in a file, too many long runs, too many bytes of short runs: False, and the
    output file is not made (the runner sorts instead)."""
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    a.write_bytes(b"".join(b"%03d\n" % i for i in range(100)) + b"000\n")   # runs of 400 and 4 bytes
    b.write_bytes(b"b\na\n")
    assert not presorted.merge_sorted([a, b], out, max_runs=1)
    assert not presorted.merge_sorted([a, b], out, short_run=100, max_streams=0)
    assert not presorted.merge_sorted([a, b], out, short_run=1000, short_limit=100)
    assert not out.exists()
    assert presorted.merge_sorted([a, b], out, max_runs=2, short_run=100, max_streams=1, short_limit=12)
    assert out.read_bytes() == _sort([a, b])


def test_a_read_error_is_raised(tmp_path):
    (tmp_path / "a").write_bytes(b"a\n")
    with open(tmp_path / "out", "wb") as out, pytest.raises(OSError):
        fast.load().merge_lines(out.fileno(), [(10 ** 6, 2)], b"", 16)      # not an open file
    with pytest.raises(FileNotFoundError):
        presorted.merge_sorted([tmp_path / "a", tmp_path / "missing"], tmp_path / "out2")
    assert not (tmp_path / "out2").exists()


def test_without_the_extension_it_says_no(tmp_path, monkeypatch):
    monkeypatch.setenv(fast.PURE_ENV, "1")
    (tmp_path / "a").write_bytes(b"a\n")
    assert not presorted.merge_sorted([tmp_path / "a"], tmp_path / "out")
    assert not (tmp_path / "out").exists()
