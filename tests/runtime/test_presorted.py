"""profiler.runtime.presorted: files in sorted runs merged into the bytes LC_ALL=C sort writes."""

import os
import random
import subprocess

import pytest

from profiler.accel import fast
from profiler.runtime import presorted

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


def _merged(paths, **limits):
    p = presorted.plan(paths, **limits)
    return None if p is None else b"".join(presorted.merged_chunks(p, 1000))


@pytest.mark.parametrize("seed", range(300))
def test_merge_gives_what_sort_writes(seed, tmp_path, monkeypatch):
    """Runs long and short (short ones sorted in memory), empty lines, bytes past 0x7f, NUL, CR
    and tabs, a last line without newline, lines longer than the read buffers."""
    rng = random.Random(seed)
    paths = _random_files(rng, tmp_path)
    monkeypatch.setattr(presorted, "MIN_BUFFER", 2)
    monkeypatch.setattr(presorted, "BUFFERS", rng.choice([2, 3, 16, 1 << 16]))
    assert _merged(paths, threads=rng.choice([1, 3]), short_run=rng.choice([1, 50, 1 << 20])) == _sort(paths)


def test_runs_are_cut_where_the_order_breaks(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"a\nb\nb\na\nab\n!meta\nz")
    assert presorted.sorted_runs(path, bufsize=2) == [(0, 6), (6, 5), (11, 7)]
    assert presorted.sorted_runs(path, max_runs=2) is None
    path.write_bytes(b"")
    assert presorted.sorted_runs(path) == []


def test_no_plan_for_files_not_in_a_few_long_runs(tmp_path):
    """Too many runs in a file, too many long runs, too many bytes of short runs: no plan (the
    runner sorts instead)."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"".join(b"%03d\n" % i for i in range(100)) + b"000\n")   # runs of 400 and 4 bytes
    b.write_bytes(b"b\na\n")
    assert presorted.plan([a, b], max_runs=1) is None
    assert presorted.plan([a, b], short_run=100, max_streams=0) is None
    assert presorted.plan([a, b], short_run=1000, short_limit=100) is None
    assert _merged([a, b], max_runs=2, short_run=100, max_streams=1, short_limit=12) == _sort([a, b])


def test_a_read_error_is_raised(tmp_path):
    (tmp_path / "a").write_bytes(b"a\n" * 100)
    with pytest.raises(OSError):
        fast.load().LineMerger([(10 ** 6, 2)], b"", 16).read(100)         # not an open file
    with pytest.raises(FileNotFoundError):
        presorted.plan([tmp_path / "a", tmp_path / "missing"])


def test_without_the_extension_there_is_no_plan(tmp_path, monkeypatch):
    monkeypatch.setenv(fast.PURE_ENV, "1")
    (tmp_path / "a").write_bytes(b"a\n")
    assert presorted.plan([tmp_path / "a"]) is None


def _keyed_files(rng, tmp_path):
    """Files of key<TAB>value lines in a few sorted runs (keys share prefixes; bytes past 0x7f)."""
    keys = [bytes(rng.choice(b"ab\xffc") for _ in range(rng.randint(1, 4))) for _ in range(30)]
    paths = []
    for i in range(rng.randint(1, 4)):
        runs = [sorted(rng.choice(keys) + b"\t" + _random_line(rng).replace(b"\n", b"") for _ in range(rng.choice([0, 5, 60])))
                for _ in range(rng.choice([1, 2, 3]))]
        path = tmp_path / ("k%d" % i)
        path.write_bytes(b"".join(line + b"\n" for run in runs for line in run))
        paths.append(path)
    return paths


@pytest.mark.parametrize("seed", range(200))
def test_a_plan_cut_into_parts_keeps_each_key_in_one_part(seed, tmp_path, monkeypatch):
    """split: the parts, merged and read in turn (any read size, compiled or not), are the lines
    sort writes, and no key has lines in two parts."""
    rng = random.Random(seed)
    monkeypatch.setattr(presorted, "SAMPLES", rng.choice([1, 4, 64]))
    paths = _keyed_files(rng, tmp_path)
    p = presorted.plan(paths, short_run=rng.choice([1, 100, 1 << 20]))
    cost = rng.choice([None, lambda key: 1 + len(key) % 5, lambda key: 100 if key[:1] in b"ab" else 1])
    parts = presorted.split(p, rng.choice([1, 2, 3, 7]), cost)
    if rng.random() < 0.3:
        monkeypatch.setenv(fast.PURE_ENV, "1")
    size = rng.choice([1, 10, 1 << 20])
    data = [b"".join(presorted.merged_chunks(presorted.loads(presorted.dumps(part)), size)) for part in parts]
    assert b"".join(data) == _sort(paths)
    keys = [{line.partition(b"\t")[0] for line in d.split(b"\n")[:-1]} for d in data]
    assert all(not (a & b) for i, a in enumerate(keys) for b in keys[i + 1:])
    assert all(d for d in data) or data == [b""], [len(d) for d in data]       # no empty part but for no lines


def test_parts_are_cut_at_the_nearer_end_of_the_key_holding_their_target():
    """A key's lines stay in one part: a cut goes before or after the key whose samples hold its
    target, whichever is nearer it; a heavy key gets a part of its own when parts allow."""
    samples = [(b"a", 10), (b"b", 10), (b"c", 200), (b"d", 60), (b"e", 10)]      # 290 in all
    assert presorted._cut_keys(samples, 2) == [b"d"]            # 145: c is 20-220, its end nearer
    assert presorted._cut_keys([(b"a", 60), (b"b", 10), (b"c", 200), (b"d", 10), (b"e", 10)], 2) == [b"c"]
    assert presorted._cut_keys(samples, 3) == [b"c", b"d"]      # 97 (c's start nearer), 193 (its end)
    assert presorted._cut_keys(samples, 1) == []
    assert presorted._cut_keys([(b"a", 5), (b"a", 5), (b"b", 1)], 2) == [b"b"]   # a key's samples add up
    heavy = [(b"x%03d" % i, 1) for i in range(100)] + [(b"y", 1000)] + [(b"z%03d" % i, 1) for i in range(100)]
    keys = presorted._cut_keys(heavy, 4)
    assert b"y" in keys and keys == sorted(set(keys)) and len(keys) <= 3


def test_cut_offset_finds_the_first_line_not_below_the_cut(tmp_path):
    path = tmp_path / "f"
    lines = [b"%05d\tx" % i for i in range(0, 20000, 2)]
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    size = path.stat().st_size
    for cut in (b"", b"00000\t", b"00001\t", b"09999\t", b"10000\t", b"19998\t", b"2"):
        expected = sum(len(line) + 1 for line in lines if line < cut)
        assert presorted.cut_offset(path, 0, size, cut, window=64) == expected, cut
    assert presorted.cut_offset(path, 8, 16, b"00002\t", window=1) == 8       # a run inside the file
    assert presorted.cut_offset(path, 8, 16, b"00004\t", window=1) == 16


@pytest.mark.parametrize("seed", range(50))
def test_runs_of_a_file_mapped_or_read_are_the_same(seed, tmp_path):
    """A regular file is mapped into memory (its pages let go as the scan goes); anything else,
    a pipe here, is read: the same runs."""
    import threading
    rng = random.Random(seed)
    path = _random_files(rng, tmp_path)[0]
    data = path.read_bytes()
    fd = os.open(path, os.O_RDONLY)
    try:
        mapped = fast.load().sorted_runs(fd, 1 << 16, 1000)
    finally:
        os.close(fd)
    r, w = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(w, data) if data else None, os.close(w)))
    writer.start()
    try:
        read = fast.load().sorted_runs(r, rng.choice([1, 7, 1 << 16]), 1000)
    finally:
        writer.join()
        os.close(r)
    assert mapped == read and sum(mapped) == len(data)


def test_empty_input_is_one_empty_part(tmp_path):
    (tmp_path / "a").write_bytes(b"")
    parts = presorted.split(presorted.plan([tmp_path / "a"]), 2)
    assert parts == [presorted.Plan([], [])] and b"".join(presorted.merged_chunks(parts[0])) == b""
