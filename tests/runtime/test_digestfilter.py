"""profiler.runtime.digestfilter: the map tasks' digest filters, their merge, and step 1 writing digest
records only for digests of two or more map records; the profile stays exact."""

import os
import random
import sys

import pytest

from profiler.accel import fast
from profiler.accel import fast
from profiler.job import mapside
from profiler.job.cells import CellKeys
from profiler.model.capture import Capture
from profiler.runtime import task as tasks
from profiler.runtime import digestfilter
from profiler.run.profile import run_profile
from profiler.model.policy import load as load_policy
from helpers import localpaths
from helpers.exactness import check_against_oracle, without_created, generate_lines, write_files

MODULE = fast.load()
needs_compiled = pytest.mark.skipif(MODULE is None, reason="the C extension is not built (no compiler?)")

M64 = (1 << 64) - 1


def reference_hash(data):
    """hash_bytes of profiler/accel/_apfast.c, written again: 8 bytes at a time in machine order."""
    n = len(data)
    h = 0x9E3779B97F4A7C15 ^ n
    i = 0
    while n - i >= 8:
        h = ((h ^ int.from_bytes(data[i:i + 8], sys.byteorder)) * 0xBF58476D1CE4E5B9) & M64
        h ^= h >> 32
        i += 8
    rest = data[i:] + bytes(8 - (n - i))
    h = ((h ^ int.from_bytes(rest, sys.byteorder)) * 0x94D049BB133111EB) & M64
    h ^= h >> 31
    h = (h * 0xBF58476D1CE4E5B9) & M64
    return h ^ (h >> 29)


def reference_bits(digest, nbytes):
    """The bit numbers a digest sets in a bitmap of nbytes: 4 in one 64-byte block."""
    h = reference_hash(digest.encode("utf-8"))
    block = (h >> 36) & (nbytes // 64 - 1)
    return [block * 512 + ((h >> (9 * i)) & 511) for i in range(4)]


def reference_filter(records, nbytes):
    """A map task's two bitmaps (one, two or more) over records (lists of digests), as ints."""
    one = two = 0
    for record in records:
        for digest in set(record) - {"-"}:
            mask = sum(1 << b for b in set(reference_bits(digest, nbytes)))
            if one & mask == mask:
                two |= mask
            one |= mask
    return one, two


def random_records(rng, n_records, pool):
    return [[rng.choice(pool) for _ in range(rng.randint(1, 6))] for _ in range(n_records)]


@needs_compiled
@pytest.mark.parametrize("nbytes", [64, 1024, 1 << 14])
def test_the_compiled_filter_sets_the_bits_of_the_reference(nbytes):
    rng = random.Random(nbytes)
    pool = ["".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(rng.choice([1, 7, 8, 9, 32])))
            for _ in range(300)] + ["-", "sha1:é"]
    records = random_records(rng, 400, pool)
    f = bytearray(2 * nbytes)
    for record in records:
        MODULE.digest_filter_add(f, record)
    one, two = reference_filter(records, nbytes)
    assert int.from_bytes(f[:nbytes], "little") == one
    assert int.from_bytes(f[nbytes:], "little") == two
    assert two and one != two
    for digest in pool:
        assert MODULE.digest_filter_has(bytes(f[:nbytes]), digest) == \
            (digest != "-" and all(one >> b & 1 for b in reference_bits(digest, nbytes)))


@needs_compiled
def test_bitmaps_that_are_not_powers_of_two_of_blocks_are_refused():
    for bad in (bytearray(2 * 96), bytearray(2 * 32), bytearray(3)):
        with pytest.raises(ValueError):
            MODULE.digest_filter_add(bad, ["A"])
    with pytest.raises(ValueError):
        MODULE.digest_filter_has(b"\0" * 100, "A")


def _task_files(tmp_path, tasks_records, nbytes):
    paths = []
    for i, records in enumerate(tasks_records):
        f = bytearray(2 * nbytes)
        for record in records:
            MODULE.digest_filter_add(f, record)
        path = str(tmp_path / ("map-%d" % i))
        digestfilter.write_filter(f, path)
        paths.append(path)
    return paths


@needs_compiled
@pytest.mark.parametrize("seed", range(6))
def test_the_merged_bitmap_holds_every_digest_of_two_records_and_few_others(tmp_path, seed):
    """Against a brute-force count over all tasks' records: no digest of two or more records is
    missing, whichever tasks they are in (a digest twice in one record counts once); with room
    enough, few digests of one record are held."""
    rng = random.Random(seed)
    pool = ["D%05d" % i for i in range(3000)]
    n_tasks = rng.randint(1, 5)
    tasks_records = [random_records(rng, rng.randint(0, 300), pool) for _ in range(n_tasks)]
    nbytes = 1 << 13
    paths = _task_files(tmp_path, tasks_records, nbytes)
    out = str(tmp_path / "shared")
    figures = digestfilter.merge(paths, out, chunk=rng.choice([64, 1000 - 1000 % 64, 1 << 20]))
    assert figures["tasks"] == n_tasks and figures["bytes"] == nbytes
    bitmap = digestfilter.load_shared({digestfilter.SHARED_ENV: out})
    assert len(bitmap) == nbytes
    records_with = {}
    for records in tasks_records:
        for record in records:
            for digest in set(record):
                records_with[digest] = records_with.get(digest, 0) + 1
    shared = [d for d, n in records_with.items() if n >= 2]
    single = [d for d, n in records_with.items() if n == 1]
    assert all(MODULE.digest_filter_has(bitmap, d) for d in shared)
    wrongly = sum(MODULE.digest_filter_has(bitmap, d) for d in single)
    assert wrongly <= max(3, len(single) // 50), (wrongly, len(single))


@needs_compiled
def test_no_merged_bitmap_without_every_task_s_filter(tmp_path):
    paths = _task_files(tmp_path, [[["A", "B"]], [["B"]]], 1024)
    out = str(tmp_path / "shared")
    assert digestfilter.merge(paths + [str(tmp_path / "missing")], out) is None
    assert digestfilter.merge([], out) is None
    other = _task_files(tmp_path / "..", [[["A"]]], 2048)
    assert digestfilter.merge(paths + other, out) is None          # of another size
    with open(paths[0], "r+b") as f:
        f.write(b"x")
    assert digestfilter.merge(paths, out) is None                  # not a filter
    assert not os.path.exists(out) and not os.path.exists(out + ".tmp")
    assert digestfilter.load_shared({digestfilter.SHARED_ENV: paths[1]}) is None
    assert digestfilter.load_shared({digestfilter.SHARED_ENV: str(tmp_path / "missing")}) is None
    assert digestfilter.load_shared({}) is None


def test_bitmap_sizes_grow_with_the_input_between_bounds(tmp_path):
    sizes = [digestfilter.bitmap_bytes(n) for n in (0, 10 ** 6, 185 * 10 ** 6, 10 ** 9, 10 ** 12)]
    assert sizes == sorted(sizes)
    assert sizes[0] == digestfilter.MIN_BYTES and sizes[-1] == digestfilter.MAX_BYTES
    assert sizes[2] == 2 << 20            # 1M CDX lines: 2 MiB, 8 bits or more a capture
    assert all(s & (s - 1) == 0 for s in sizes)
    path = tmp_path / "a.cdx"
    path.write_bytes(b"x" * 1000)
    assert digestfilter.split_bytes({"path": str(path), "start": 100, "end": 400}) == 300
    assert digestfilter.split_bytes({"path": str(path), "start": 0, "end": None}) == 1000
    assert digestfilter.split_bytes({"path": str(path), "start": 0, "end": None, "compression": "gzip"}) \
        == 1000 * digestfilter.COMPRESSION_FACTOR
    assert digestfilter.bitmap_bytes(digestfilter.split_bytes({"path": "s3://b/k.cdx", "start": 0, "end": None})) \
        == digestfilter.MAX_BYTES


@needs_compiled
def test_a_task_filter_only_for_a_well_formed_request():
    env = digestfilter.FILTER_ENV
    got = digestfilter.task_filter({env: "1024 /tmp/x y"})
    assert got is not None and len(got[0]) == 2048 and got[1] == "/tmp/x y"
    for bad in ("", "1024", "1000 /tmp/x", "32 /tmp/x", "x /tmp/x"):
        assert digestfilter.task_filter({env: bad}) is None
    assert digestfilter.task_filter({}) is None


@needs_compiled
def test_both_map_sides_put_the_records_they_write_into_the_filter():
    """The compiled aggregator and the Python one set the bits of the digests of each record they
    write, a record at a time; a URI-R kept back at a flush is put in when it is written."""
    rng = random.Random(3)
    captures = []
    for u in range(60):
        for _ in range(rng.randint(1, 5)):
            captures.append(Capture(urlkey="com,example)/%02d" % u, timestamp="2010%02d01000000" % rng.randint(1, 12),
                                    mime="text/html", status="200",
                                    digest=rng.choice(["A", "B", "C", "-"] + ["U%d" % u] * 3), length=100,
                                    revisit=rng.random() < 0.1))
    nbytes = 1024
    policy = load_policy("default")
    cell_key = CellKeys(policy, True)
    for limit in (1, 7, 1000):
        fc, fp = bytearray(2 * nbytes), bytearray(2 * nbytes)
        compiled = fast.compiled_aggregator(MODULE, policy, True, limit, "N b a m s k r M S V g")
        compiled.set_digest_filter(fc)
        python = mapside.CaptureAggregator(policy, True, limit, on_record=lambda d, f=fp: MODULE.digest_filter_add(f, d))
        written = []
        for capture in captures:
            if compiled.add_cell(capture.urlkey, capture.timestamp, cell_key(capture), capture.length):
                compiled.flush(True)
            if python.add(capture):
                written.extend(python.flush(keep_last=True))
        compiled.flush()
        written.extend(python.flush())
        assert fc == fp
        one, two = reference_filter([[cell[3] for cell in cells] for _, cells in written], nbytes)
        assert int.from_bytes(fp[:nbytes], "little") == one and int.from_bytes(fp[nbytes:], "little") == two
        compiled.set_digest_filter(None)


@needs_compiled
def test_step_1_writes_digest_records_only_for_digests_the_bitmap_holds(tmp_path):
    lines = [b"com,a)/\t[[\"201001\",\"text/html\",\"200\",\"X\",0,1,10,\"20100101000000\"],"
             b"[\"201002\",\"text/html\",\"200\",\"Y\",0,1,20,\"20100201000000\"]]\n",
             b"com,b)/\t[[\"201001\",\"text/html\",\"200\",\"X\",0,1,10,\"20100101000000\"]]\n"]
    policy = load_policy("default")

    def run(environ):
        out, counts = [], {}
        tasks.run_reducer(0, [b"".join(lines)], policy, 1000, out.append,
                          lambda g, c, n=1: counts.__setitem__(c, counts.get(c, 0) + n), environ)
        return [l for l in b"".join(out).splitlines() if l.startswith(b"D ")], counts

    everything, counts = run({})
    assert sorted(l.split(b"\t")[0] for l in everything) == [b"D X", b"D X", b"D Y"]
    f = bytearray(2 * 1024)
    for record in (["X", "Y"], ["X"]):
        MODULE.digest_filter_add(f, record)
    path = str(tmp_path / "shared")
    digestfilter.write_filter(f, str(tmp_path / "one"))
    assert digestfilter.merge([str(tmp_path / "one")], path) is not None
    kept, counts = run({digestfilter.SHARED_ENV: path})
    assert sorted(l.split(b"\t")[0] for l in kept) == [b"D X", b"D X"]
    assert counts["digest records not written (one map record)"] == 1
    assert set(kept) <= set(everything)


def _held_back(summary):
    return sum(step.get("digest filter", {}).get("digest records not written (one map record)", 0)
               for step in summary["counters"])


@needs_compiled
@pytest.mark.parametrize("path", localpaths.PATHS)
@pytest.mark.parametrize("shuffle", [False, True])
def test_the_local_runner_s_filtered_profile_is_exact(tmp_path, monkeypatch, shuffle, path):
    """Shared digests, revisits and URI-Rs across files and map tasks: the local runner's map tasks
    write filters, its step-1 reducers leave out most digest records, and every line is the
    oracle's; so it is with a bitmap too small to leave any out (with mrjob and without)."""
    lines = generate_lines(seed=11)
    paths = write_files(str(tmp_path), lines, shuffle=shuffle)
    localpaths.choose(monkeypatch, path)
    runners = localpaths.runs(monkeypatch)
    out = str(tmp_path / "local.cdxj")
    summary = run_profile(paths, out, policy="default", runner="local", split_size=4000, cores=2)
    assert runners[-1].digest_filter["tasks"] == summary["splits"] > 3
    assert _held_back(summary) > 100
    check_against_oracle(paths, out, "default")
    inline = str(tmp_path / "inline.cdxj")
    run_profile(paths, inline, policy="default", runner="inline", split_size=4000)
    assert without_created(inline) == without_created(out)

    monkeypatch.setattr(digestfilter, "bitmap_bytes", lambda n: 64)
    small = str(tmp_path / "small.cdxj")
    summary = run_profile(paths, small, policy="default", runner="local", split_size=4000, cores=2)
    assert runners[-1].digest_filter["set"] > 0.9 and _held_back(summary) < 10
    assert without_created(small) == without_created(out)


@needs_compiled
def test_the_runner_s_variables_in_the_client_s_environment_reach_no_task(tmp_path, monkeypatch):
    """A bitmap named in the client's environment (of another run, say) is not read: the local
    runner sets its tasks' variables itself."""
    lines = generate_lines(seed=12)
    paths = write_files(str(tmp_path), lines)
    bogus = tmp_path / "bogus"
    digestfilter.write_filter(bytearray(2 * 1024), str(tmp_path / "empty"))
    digestfilter.merge([str(tmp_path / "empty")], str(bogus))       # a bitmap of no digest at all
    monkeypatch.setenv(digestfilter.SHARED_ENV, str(bogus))
    monkeypatch.setattr(digestfilter, "bitmap_bytes", lambda n: 0)   # and no filters of the run's own
    out = str(tmp_path / "local.cdxj")
    run_profile(paths, out, policy="default", runner="local", split_size=4000, cores=2)
    check_against_oracle(paths, out, "default")


@needs_compiled
def test_digests_of_the_compiled_and_the_python_map_side_meet_in_one_bitmap(tmp_path, monkeypatch):
    """CDX lines go through the compiled aggregator, CDXJ lines through the Python one: a digest
    that URI-Rs in both hold is found in two records all the same (one hash of its UTF-8)."""
    import json
    pairs = []                      # each digest in one URI-R of each side, and nowhere else
    for i in range(40):
        for side in "ab":
            pairs.append("com,pairs)/%s%02d 2012010%d000000 http://pairs.com/ text/html 200 PAIR%02dXXXXXXXXXXXXXXXXXXXXXXXXXX"
                         " - - %d 0 f.warc.gz" % (side, i, 1 + i % 9, i, 1000 + i))
    lines = sorted(generate_lines(seed=13) + pairs)
    standard = "N b a m s k r M S V g".split()
    rng = random.Random(13)
    cdx_part, cdxj_part = [], []
    for line in lines:
        if line.startswith("com,pairs)/a") or not line.startswith("com,pairs)/b") and rng.random() < 0.5:
            cdx_part.append(line)
        else:
            f = dict(zip(standard, line.split()))
            cdxj_part.append("%s %s %s" % (f["N"], f["b"], json.dumps(
                {"url": f["a"], "mime": f["m"], "status": f["s"], "digest": "sha1:" + f["k"].lower(),
                 "length": f["S"]})))
    (tmp_path / "a.cdx").write_text(" CDX N b a m s k r M S V g\n" + "\n".join(cdx_part) + "\n")
    (tmp_path / "b.cdxj").write_text("\n".join(cdxj_part) + "\n")
    (tmp_path / "whole").mkdir()
    whole = write_files(str(tmp_path / "whole"), lines, n_files=1)      # the same captures, for the oracle
    out = str(tmp_path / "local.cdxj")
    summary = run_profile([str(tmp_path / "a.cdx"), str(tmp_path / "b.cdxj")], out, policy="default",
                          runner="local", split_size=6000, cores=2)
    assert _held_back(summary) > 100
    reference = str(tmp_path / "reference.cdxj")
    run_profile(whole, reference, policy="default", runner="inline")
    check_against_oracle(whole, reference, "default")
    data = [l for l in open(out, "rb").read().splitlines() if not l.startswith(b"!")]
    assert len(data) > 100
    assert data == [l for l in open(reference, "rb").read().splitlines() if not l.startswith(b"!")]
