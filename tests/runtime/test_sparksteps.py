"""The Spark runner's steps over partitions (profiler.runtime.sparksteps), without Spark: the shuffle's
pieces compiled and in Python, and the whole job with an in-process shuffle against the
brute-force oracle, over random archives, policies, partitions, table limits, digest filters,
hot digests (whose records are spread over partitions and their shares added up) and map
records kept where they were mapped (a local master's: each split reduced where it was mapped
when the splits hold URI-Rs apart, some kept records lost)."""

import contextlib
import os
import random
import tempfile
import zlib

import orjson
from hypothesis import given, settings, strategies as st

from profiler import jsonnum
from profiler.accel import fast
from profiler.model.policy import load as load_policy
from profiler.runtime import digestfilter, sparksteps

from helpers.exactness import assert_same_profile, generate_lines, pure_python, write_files
from helpers.oracle import profile as oracle_profile, read_captures, resolve_revisits, stats_tuple
from helpers.random_archives import random_policy
from helpers.streaming import manifest_lines

EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "40"))


def _random_lines(rng):
    out = []
    for _ in range(rng.randint(0, 40)):
        key = bytes(rng.choice(b"abc\x01 \t") for _ in range(rng.randint(0, 5))).split(b"\t")[0]
        out.append(key + (b"\t" + b"v%d" % rng.randrange(9) if rng.random() < 0.9 else b""))
    return out


def test_compiled_buckets_and_sort_equal_python():
    module = fast.load()
    if module is None:
        return
    rng = random.Random(7)
    for _ in range(300):
        lines = _random_lines(rng)
        data = b"".join(line + b"\n" for line in lines)
        parts = rng.randint(1, 6)
        got = sparksteps.bucketed([data], parts)
        with pure_python():
            assert sparksteps.bucketed([data], parts) == got
            assert sparksteps._sorted_blob([data, data[:len(data) // 2]]) == \
                module.sort_lines([data, data[:len(data) // 2]])
        for part, blob in got:          # a key's lines in one part, in their order, the part its crc32's
            for line in blob.split(b"\n")[:-1]:
                assert zlib.crc32(line.partition(b"\t")[0]) % parts == part
        assert sorted(l for _, b in got for l in b.split(b"\n")[:-1]) == sorted(lines)


def test_sorted_chunks_spill_runs_and_merge():
    rng = random.Random(3)
    for pure in (False, True):
        with pure_python() if pure else contextlib.nullcontext():
            blobs = [b"".join(line + b"\n" for line in _random_lines(rng)) for _ in range(30)]
            expected = sorted(line for blob in blobs for line in blob.split(b"\n")[:-1])
            for run_bytes in (1, 50, 1 << 20):
                got = b"".join(sparksteps.sorted_chunks(iter(blobs), run_bytes))
                assert got.split(b"\n")[:-1] == expected


def test_a_task_run_again_is_counted_once():
    by_task = {("map", 0, 0): sparksteps.MapReport({"profile": {"captures": 5}}, None, {}, 0, 0, []),
               ("reduce", 0, 1): {"tasks": {"step-1 reducers (compiled)": 1}}}
    by_task[("map", 0, 0)] = by_task[("map", 0, 0)]     # Spark's second report of the task replaces the first
    assert sparksteps.step_counters(by_task) == [
        {"profile": {"captures": 5}, "tasks": {"step-1 reducers (compiled)": 1}}, {}, {}]


def test_filter_merge_equals_digestfilter_merge_each_task_once(tmp_path):
    if fast.load() is None:
        return
    rng = random.Random(5)
    size = 64
    filters = [bytes(rng.randrange(256) if rng.random() < 0.2 else 0 for _ in range(2 * size)) for _ in range(3)]
    paths = []
    for i, f in enumerate(filters):
        paths.append(str(tmp_path / ("map-%d" % i)))
        digestfilter.write_filter(f, paths[-1])
    digestfilter.merge(paths, str(tmp_path / "shared"))
    expected = (tmp_path / "shared").read_bytes()[len(digestfilter.SHARED_MAGIC):]
    merged = sparksteps.FilterMerge(size)
    for i, f in enumerate(filters + filters[:1]):       # the first task reported twice
        merged.add(i % 3, (zlib.compress(f[:size]), zlib.compress(f[size:])))
    assert merged.shared(3) == expected
    assert merged.shared(4) is None                      # a map task without a filter: none


def test_hot_digests_from_samples():
    data = b"".join(b"u%d\t%s\n" % (i, orjson.dumps([["2013", "text/html", "200", "HOT" if i % 3 else "D%d" % i,
                                                          0, 1, 5, "20130101000000"]]))
                    for i in range(3000)) + b"!meta\t{}\n"
    found, lines, sampled, keys = sparksteps.sample_digests(data, samples=300, keys=30)
    assert lines == 3001 and 250 <= sampled <= 310 and set(found) == {b"HOT"}
    assert 25 <= len(keys) <= 32 and keys == sorted(keys, key=lambda k: int(k[1:]))
    report = sparksteps.MapReport({}, None, found, lines, sampled, keys)
    assert sparksteps.hot_digests([report], 1000) == {b"HOT"}
    assert sparksteps.hot_digests([report], 10 ** 6) == set()


def _profile_of(parts, ranged=False):
    """{key: oracle tuple} of the job's output parts, each checked to be sorted by key (and to
    follow the one before when ranged)."""
    out = {}
    previous = None
    for part in parts:
        keys = []
        for chunk in part:
            for line in chunk.split(b"\n"):
                key, _, value = line.partition(b"\t")
                keys.append(key)
                if key == b"!meta":
                    continue
                out[key.decode()] = stats_tuple(jsonnum.loads(value))
        assert keys == sorted(keys)
        if ranged and keys and keys != [b""]:
            assert previous is None or previous < keys[0]
            previous = keys[-1]
    return out


def check_in_process(seed):
    rng = random.Random(seed)
    lines = generate_lines(seed, n_urirs=rng.randint(3, 120))
    policy = random_policy(rng) if rng.random() < 0.6 else load_policy("default")
    with tempfile.TemporaryDirectory() as folder:
        paths = write_files(folder, lines, n_files=rng.randint(1, 3), seed=seed, shuffle=rng.random() < 0.3)
        manifest = manifest_lines(paths, rng.choice([300, 2000, 1 << 20]))
        digests = sorted({line.split()[5].encode() for line in lines} - {b"-"})
        hot = set(rng.sample(digests, rng.randint(0, len(digests)))) if rng.random() < 0.7 else None
        job = sparksteps.JobOptions(orjson.dumps(policy.to_dict()).decode(), True, rng.choice([1, 2, 7, 200000]))
        ranged = rng.random() < 0.7
        keep = os.path.join(folder, "kept") if rng.random() < 0.5 else None
        if keep:
            os.mkdir(keep)
            if rng.random() < 0.5:          # splits of whole URI-Rs: each reduced where it was mapped
                manifest = _apart(folder, lines, rng)
        lose = [i for i in range(len(manifest)) if rng.random() < 0.2]
        parts, counters, _ = sparksteps.run_in_process(
            manifest, job, parts=rng.randint(1, 5), digest_filter=rng.random() < 0.7, hot=hot,
            hot_threshold=rng.choice([1, 5, 10 ** 9]), out_parts=rng.choice([None, 1, 2]), ranged=ranged,
            keep=keep, lose=lose)
        expected = oracle_profile(resolve_revisits(read_captures(paths)), policy)
    assert_same_profile(_profile_of(parts, ranged), expected)
    assert counters[0]["profile"]["captures"] == len(lines)


def _apart(folder, lines, rng):
    """Manifest lines of files that each hold whole URI-Rs, in order (a sorted index cut between
    URI-Rs), some of them empty or of one URI-R."""
    by_urir = {}
    for line in lines:
        by_urir.setdefault(line.split()[0], []).append(line)
    urirs = sorted(by_urir)
    cuts = sorted(rng.sample(range(len(urirs) + 1), min(len(urirs) + 1, rng.randint(1, 5))))
    paths = []
    for k, (a, b) in enumerate(zip([0] + cuts, cuts + [len(urirs)])):
        path = os.path.join(folder, "apart%d.cdx" % k)
        with open(path, "w") as f:
            f.writelines(line + "\n" for u in urirs[a:b] for line in by_urir[u])
        paths.append(path)
    return manifest_lines(paths, 1 << 20)


def test_splits_of_urirs_apart_are_reduced_where_they_were_mapped(tmp_path):
    """A sorted index cut between URI-Rs: every split's span is apart from the others', step 1
    reduces each split's own records (no shuffle to it), and the profile is the oracle's; one
    whose URI-Rs two splits share, or whose records are out of order, is shuffled as before."""
    lines = generate_lines(5, n_urirs=150)
    policy = load_policy("default")
    job = sparksteps.JobOptions(orjson.dumps(policy.to_dict()).decode(), True, 200000)
    expected = oracle_profile(resolve_revisits(read_captures(write_files(str(tmp_path), lines, 1))), policy)
    rng = random.Random(5)
    for kind in ("apart", "shared", "shuffled"):
        folder = tmp_path / kind
        (folder / "kept").mkdir(parents=True)
        if kind == "apart":
            manifest = _apart(str(folder), lines, rng)
        else:
            manifest = manifest_lines(write_files(str(folder), lines, 3, seed=5, shuffle=kind == "shuffled"), 1 << 20)
        spans = []
        real = sparksteps.reduce_kept
        calls = []
        sparksteps.reduce_kept = lambda *a, **k: calls.append(a[0]) or real(*a, **k)
        try:
            parts, counters, _ = sparksteps.run_in_process(manifest, job, parts=3, keep=str(folder / "kept"))
        finally:
            sparksteps.reduce_kept = real
        assert_same_profile(_profile_of(parts, True), expected)
        assert (sorted(calls) == list(range(len(manifest)))) == (kind == "apart"), kind
        assert os.listdir(folder / "kept") == []            # every kept file taken
        assert counters[0]["profile"]["captures"] == len(lines)


def test_spans_of_records():
    assert sparksteps.record_span(b"a\t1\nb\t2\n!meta\t{}\n") == (b"a", b"b")
    assert sparksteps.record_span(b"a\t1\na\t3\nc\t2\n!meta\t{}") == (b"a", b"c")
    assert sparksteps.record_span(b"!meta\t{}\n") == (None, None)
    assert sparksteps.record_span(b"b\t1\na\t2\n!meta\t{}\n") is None              # out of order
    assert sparksteps.record_span(b"a\t1\n!meta\t{}\nb\t2\n!meta\t{}\n") is None  # two splits' records
    assert sparksteps.spans_apart([(b"a", b"b"), (None, None), (b"c", b"d")])
    assert not sparksteps.spans_apart([(b"a", b"c"), (b"c", b"d")])                    # c in both
    assert not sparksteps.spans_apart([(b"a", b"b"), None])


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(0, 2 ** 32))
def test_spark_steps_equal_oracle(seed):
    check_in_process(seed)


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(st.integers(0, 2 ** 32))
def test_spark_steps_equal_oracle_pure_python(seed):
    with pure_python():
        check_in_process(seed)


def test_every_digest_hot_one_partition_each():
    """The heaviest case: every digest salted, many partitions, tiny tables."""
    lines = generate_lines(11, n_urirs=200)
    with tempfile.TemporaryDirectory() as folder:
        paths = write_files(folder, lines, n_files=2, seed=11)
        manifest = manifest_lines(paths, 1000)
        digests = {line.split()[5].encode() for line in lines} - {b"-"}
        policy = load_policy("default")
        job = sparksteps.JobOptions(orjson.dumps(policy.to_dict()).decode(), True, 3)
        parts, counters, hot = sparksteps.run_in_process(manifest, job, parts=7, hot=digests)
        expected = oracle_profile(resolve_revisits(read_captures(paths)), policy)
    assert hot == digests and counters[1]["hot digests"]["share records written"] > 0
    assert "hot digests" not in counters[0]          # chosen by the driver, not by the tasks
    assert _profile_of(parts) == expected


def _peak_of(call):
    """(call()'s result, the most memory Python allocated meanwhile, bytes)."""
    import tracemalloc
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_map_task_over_a_large_split_holds_a_bounded_part_of_its_records(tmp_path, monkeypatch):
    """One whole compressed index is one map task: it held every record of it three times over
    (its output, joined, bucketed), so a Python worker grew with the index. Its records now go to
    a file past HOLD_BYTES; the pairs it hands Spark are read back one at a time."""
    import gzip as gzip_
    from profiler.testing import synthetic
    plain = tmp_path / "big.cdx"
    synthetic.write_cdx(str(plain), 60000, seed=4)
    with open(plain, "rb") as f, gzip_.open(str(plain) + ".gz", "wb", 1) as g:
        g.write(f.read())
    [line] = manifest_lines([str(plain) + ".gz"], 1 << 20)            # compressed: one split
    policy = load_policy("default")
    job = sparksteps.JobOptions(orjson.dumps(policy.to_dict()).decode(), True, 0)
    reports = {}
    from profiler.runtime import task
    _, mapper = _peak_of(lambda: task.run_mapper([line], policy, True, len, sparksteps.Counts(), {}))
    whole, before = _peak_of(lambda: list(sparksteps.map_partition(0, [line], job, 4, reports.__setitem__)))
    records = sum(len(blob) for _, blob in whole)
    assert records > 5 << 20
    monkeypatch.setattr(sparksteps, "HOLD_BYTES", 256 << 10)

    def spilled():
        held = 0
        for _, blob in sparksteps.map_partition(0, [line], job, 4, reports.__setitem__):
            held = max(held, len(blob))
        return held
    largest, peak = _peak_of(spilled)
    # every blob a hold's worth at most (they were a quarter of the records each), and the
    # records held whole no more
    assert largest <= 256 << 10 and peak < mapper + records // 2, (peak, before, mapper, records)
    # the same records, and the same profile through the steps, with every task's output spilled
    again = [(p, blob) for p, blob in sparksteps.map_partition(0, [line], job, 4, reports.__setitem__)]
    assert len(again) > len(whole)

    def lines_of(pairs):
        return sorted((p, l) for p, b in pairs for l in b.split(b"\n") if l)
    assert lines_of(again) == lines_of(whole)
    report = reports[("map", 0, 0)]
    assert report.lines > 0 and report.samples > sparksteps.SAMPLES      # each hold's worth sampled
    parts, counters, hot = sparksteps.run_in_process([line], job, parts=3, hot_threshold=50)
    expected = oracle_profile(resolve_revisits(read_captures([str(plain)])), policy)
    assert _profile_of(parts) == expected
    assert counters[0]["profile"]["captures"] == 60000
