"""profiler.job.steps: the job's steps over raw lines, every cut of the input giving the same records."""

import random

import orjson
import pytest

from profiler.runtime.profile_job import ProfileJob
from profiler.formats import inputs
from profiler.job import lines as job_lines, steps
from profiler.run import profile as pipeline
from profiler.job.kernels import Kernels
from profiler import contract
from profiler.runtime import task
from profiler.model import stats
from profiler.model.policy import load
from helpers.exactness import generate_lines


@pytest.mark.parametrize("seed", range(6))
def test_every_cut_of_the_input_gives_the_same_profile_lines(tmp_path, monkeypatch, seed):
    """The job through the inline runner (the steps over raw lines) gives the same records
    whatever the splits, files and table limits: a URI-R's records from several map tasks."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    rng = random.Random(seed)
    lines = generate_lines(seed, n_urirs=rng.randint(50, 400))
    policy = load(rng.choice(["default", "hosts", "full"]))
    results = []
    for cut in (0, 1):
        paths = []
        n_files = rng.randint(2, 3) if cut else 1
        parts = [[] for _ in range(n_files)]
        for line in lines:                      # the same captures, one file or cut into several
            parts[rng.randrange(n_files)].append(line)
        for i, chunk in enumerate(parts):
            path = tmp_path / ("part%d-%d.cdx" % (cut, i))
            path.write_text(" CDX N b a m s k r M S V g\n" + "".join(line + "\n" for line in sorted(chunk)))
            paths.append(str(path))
        splits = inputs.plan_splits([inputs.sniff(p) for p in paths], rng.choice([700, 5000]) if cut else 1 << 26)
        manifests = pipeline.write_manifest(splits, str(tmp_path / ("manifest%d" % cut)))
        extra = ["--table-limit", str(rng.choice([1, 7, 200000]) if cut else 200000)]
        job = ProfileJob(pipeline.job_args(manifests, policy, "inline", extra=extra))
        with job.make_runner() as runner:
            runner.run()
            results.append(sorted(line for part in runner.fs.ls(runner.get_output_dir())
                                  for line in b"".join(runner.fs.cat(part)).splitlines()
                                  if not line.startswith(b"!meta")))
    assert results[0] == results[1]
    assert any(line.startswith(b"* ") for line in results[0])


def _lines(*records):
    return [key + b"\t" + (value if isinstance(value, bytes) else orjson.dumps(value)) + b"\n"
            for key, value in records]


def test_step2_skips_digests_of_one_uri_r_and_copies_lone_key_records():
    record = [2, 1, 1, 2, 30, 2, 30, "20100101000000", "20110101000000"]
    other = [1, 1, 1, 1, 5, 1, 5, "20090101000000", "20090101000000"]
    lines = _lines((b"!meta", {"captures": 3, "skipped": {"bad": 1}}), (b"!meta", {"captures": 2, "skipped": {}}),
                   (b"D AAAA", ["com,a)/", [["2010", "text/html", "200", 10]]]),
                   (b"K * - - -", record), (b"K * - - -", other), (b"K com,a)/ - - -", b"[1,1,1,1,1,1,1,\"1\",\"1\"]"))
    lines[-1] = lines[-1].rstrip(b"\n")     # a last line without its newline
    out = []
    steps.digest_lines(iter(lines), load("default"), 100, out.append, Kernels(load("default")))
    got = b"".join(out).splitlines()
    assert got == [b"!meta\t" + orjson.dumps({"captures": 5, "skipped": {"bad": 1}}),
                   b"K * - - -\t" + orjson.dumps(stats.sum_all([record, other])),
                   b"K com,a)/ - - -\t[1,1,1,1,1,1,1,\"1\",\"1\"]"]


def test_step2_corrects_a_digest_of_two_uri_rs():
    lines = _lines((b"D AAAA", ["com,a)/", [["2010", "text/html", "200", 10]]]),
                   (b"D AAAA", ["com,a)/b", [["2010", "text/html", "200", 7]]]))
    for limit in (1, 100):
        out = []
        steps.digest_lines(iter(lines), load("hosts"), limit, out.append, Kernels(load("hosts")))
        table = {}
        for line in b"".join(out).splitlines():
            key, _, value = line.partition(b"\t")
            stats.add(table, key, orjson.loads(value))
        assert table[b"K com,a)/* - - -"] == stats.correction(1, 7)
        assert all(record == stats.correction(1, 7) for record in table.values())


def test_map_records_batches_and_encodes():
    out = []
    records = iter([(b"a", [1]), (b"b", b"[2]"), (b"c", {"x": 1})])
    job_lines.map_records(records, out.append, batch=2)
    assert out == [b"a\t[1]\nb\t[2]\n", b'c\t{"x":1}\n']


def test_input_chunks_of_a_byte_range_of_stdin(tmp_path):
    """A reduce task of the local runner reads its part of the sorted file in place: the range
    in RANGE_ENV, in buffers of at most size bytes; without it, all of stdin."""
    path = tmp_path / "sorted"
    path.write_bytes(b"".join(b"k%02d\tv\n" % i for i in range(50)))
    data = path.read_bytes()
    for start, end, size in ((0, 0, 4), (0, 12, 5), (12, 60, 7), (60, len(data), 1 << 20)):
        with open(path, "rb") as stdin:
            chunks = list(task.input_chunks([], stdin, size, {contract.RANGE_ENV: "%d %d" % (start, end)}))
        assert b"".join(chunks) == data[start:end] and all(len(c) <= size for c in chunks)
    with open(path, "rb") as stdin:
        assert b"".join(task.input_chunks(["-"], stdin, 3, {})) == data


def _step2(lines, policy, limit, kernels, chunk):
    out = []
    data = b"".join(lines)
    chunks = (data[i:i + chunk] for i in range(0, len(data), chunk))
    steps.digest_step(chunks, policy, limit, out.append, kernels)
    return out


def _summed(out):
    """{key: sum of its records} of step 2's output lines (what step 3 makes of them)."""
    by_key = {}
    for line in b"".join(out).splitlines():
        key, _, value = line.partition(b"\t")
        by_key.setdefault(key, []).append(orjson.loads(value))
    from profiler.job.hotdigests import with_corrections
    out = {}
    for key, records in by_key.items():
        records = records if key == b"!meta" else with_corrections(records)
        if records:                 # a key of shares that correct nothing has none
            out[key] = records if key == b"!meta" else stats.sum_all(records)
    return out


@pytest.mark.parametrize("seed", range(16))
def test_step2_reads_shared_digests_in_c_as_python_does(seed, monkeypatch):
    """The compiled step 2 reads the groups of digests several URI-Rs hold itself (skim_digests);
    its records add up per key to the pure-Python step's, whatever the buffers, the table limit
    (a group touching that many keys goes to Python whole), markers of salted digests, records
    that are not plain JSON (Python's, read while the compiled reader reads on) and long runs
    handed to Python in parts."""
    from profiler.accel import fast
    if fast.load() is None:
        pytest.skip("the C extension is not built")
    rng = random.Random(seed)
    if seed % 2:
        monkeypatch.setattr(steps, "LONG_RUN", 300)
    policy = load(rng.choice(["default", "hosts", "full"]))
    hosts = ["com,a", "com,b,www", "uk,co,bbc,news", "org,c", "de,d", "1,0,0,127"]
    records = []
    for d in range(rng.randint(5, 60)):
        digest = b"D DIG%03d" % d
        for _ in range(rng.choice([1, 1, 2, 3, 9])):
            entries = [[rng.choice(["2010", "2011", "2012"]), rng.choice(["text/html", "image/png", "unk"]),
                        rng.choice(["200", "404", "unk"]), rng.randint(1, 10 ** 6)]
                       for _ in range(rng.randint(1, 3))]
            urlkey = "%s)/%s" % (rng.choice(hosts), rng.choice(["", "a", "b/c", "caf\u00e9"]))
            records.append((digest, [urlkey, entries]))
        if rng.random() < 0.1:
            records.append((digest, b'"S"'))                      # a marker: the group's shares
    for k in range(rng.randint(0, 20)):
        records.append((b"K %s)/* - - -" % rng.choice(hosts).encode(), [1, 1, 1, 1, 5, 1, 5, "2010", "2010"]))
    records.append((b"!meta", {"captures": 3, "skipped": {}}))
    lines = sorted(_lines(*records))
    limit = rng.choice([1, 3, 50, 200000])
    compiled = _step2(lines, policy, limit, Kernels(policy), rng.choice([64, 1000, 1 << 20]))
    python = _step2(lines, policy, limit, Kernels(policy, pure=True), 1 << 20)
    assert _summed(compiled) == _summed(python)
