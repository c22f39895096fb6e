"""The compiled hot path (profiler/accel/_apfast.c) against the pure-Python code and the oracle,
and which of the two the tasks of each runner ran."""

import os
import random

import orjson
import pytest

from profiler.accel import fast
from profiler.formats import cdx
from profiler.job import lines as job_lines, mapside, steps
from profiler.model import stats
from profiler.job.expand import Expander
from profiler.job.kernels import Kernels
from profiler.job.mapside import CaptureAggregator
from profiler.run.profile import run_profile
from profiler.model.policy import load as load_policy

from helpers.oracle import profile as oracle_profile, resolve_revisits
from helpers.random_archives import (HOSTS, PATHS, cdx_lines, index_lines, oracle_captures, parse_line,
                                     random_captures, random_languages, random_policy)
from helpers.pythons import python_without_profiler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")

compiled = pytest.mark.skipif(fast.load() is None, reason="the C extension is not built (no compiler?)")


def expander(policy, limit):
    """The step-1 expander this process runs: compiled when built (and not disabled)."""
    return Kernels(policy).expander(limit)


def reduce_uri_r_chunks(chunks, expander, write):
    steps.uri_r_step(chunks, expander, write)


def reduce_uri_rs(lines, expander, write):
    steps.uri_r_lines(lines, expander, write)


def _map(lines, policy, rng, resolve):
    parse = parse_line
    agg = CaptureAggregator(policy, resolve_revisits=resolve, limit=rng.randint(1, 20))
    records = []
    for line in lines:
        if agg.add(parse(line)):
            records.extend(agg.flush())
    records.extend(agg.flush())
    groups = {}
    for key, value in records:
        if key != b"!meta":
            groups.setdefault(key, []).append(orjson.loads(orjson.dumps(value)))
    return groups


def _reduce(expander, groups, order, raw=False):
    """Key records summed by key; digest records sorted (their cut into records may differ).
    raw: through add_raw()/close_raw(), whose lines must hold the same records."""
    out = []
    if raw:
        blob = b"".join([expander.add_raw(key.decode(), groups[key]) for key in order] + [expander.close_raw()])
        assert not blob or blob.endswith(b"\n")
        out = [tuple(line.split(b"\t")) for line in blob.splitlines()]
    else:
        for key in order:
            out.extend(expander.add(key.decode(), groups[key]))
        out.extend(expander.close())
    keys, digests = {}, []
    for key, value in out:
        value = orjson.loads(value) if isinstance(value, bytes) else value
        if key.startswith(b"K "):
            stats.add(keys, key, value)
        else:
            assert key.startswith(b"D ")
            digests.append((key, value[0], sorted(map(tuple, value[1]))))
    return keys, sorted(digests)


@compiled
@pytest.mark.parametrize("seed", range(300))
def test_compiled_expander_equals_python(seed):
    rng = random.Random(seed)
    policy = random_policy(rng, compiled=fast.load())
    lines = cdx_lines(random_captures(rng))
    if rng.random() < 0.5:
        lines.sort()
    groups = _map(lines, policy, rng, rng.random() < 0.8)
    order = sorted(groups) if rng.random() < 0.7 else rng.sample(sorted(groups), len(groups))
    limit = rng.randint(1, 50)
    expected = _reduce(Expander(policy, limit), groups, order)
    assert _reduce(expander(policy, limit), groups, order) == expected
    assert _reduce(expander(policy, limit), groups, order, raw=True) == expected


def _many_tuples(rng, n):
    """One URI-R's cells of n distinct tuples (period, mime, status), and some more cells of them
    with other digests; digests shared among the tuples."""
    space = [("%04d%02d" % (y, m), mime, status) for y in range(2010, 2014) for m in range(1, 13)
             for mime in ["text/html", "image/png", "image/jpeg", "application/pdf", "unk", "text/css", "video/mp4"]
             for status in ["200", "301", "404", "unk", "500", "302"]]
    tuples = rng.sample(space, n)
    digests = ["D%d" % i for i in range(max(1, n // 3))] + ["-"]
    cells = []
    for period, mime, status in tuples + rng.choices(tuples, k=n // 4):
        first = period + "%02d000000" % rng.randint(1, 28)
        size = rng.randint(0, 5000)
        cells.append([period, mime, status, rng.choice(digests), 0, 1, size, size, first, first])
    return [cells]


def _distinct_tuple_sets(policy, cells):
    """The distinct sets of several tuples that some suffix of some set of policy groups."""
    from profiler.model.keys import SuffixTable
    suffixes = SuffixTable(policy)
    tuples = sorted({tuple(c[:3]) for c in cells})
    found = set()
    for t in range(len(suffixes(tuples[0]))):
        groups = {}
        for i, tup in enumerate(tuples):
            for suffix in suffixes(tup)[t]:
                groups.setdefault(suffix, set()).add(i)
        found.update(frozenset(g) for g in groups.values() if len(g) > 1)
    return len(tuples), len(found)


@compiled
@pytest.mark.parametrize("seed", range(12))
def test_uri_rs_of_many_tuples_equal_python(seed):
    """URI-Rs of up to 150 tuples: the compiled expander's records of groups of tuples (kept by
    their tuples' bits up to 64 tuples, 128 sets of them a URI-R) are the Python expander's."""
    rng = random.Random(seed)
    policy = load_policy(rng.choice(["default", "full"]))
    groups = {("com,example%d)/p%d" % (i % 3, i)).encode(): _many_tuples(rng, rng.choice([2, 5, 30, 64, 80, 150]))
              for i in range(8)}
    order = sorted(groups)
    expected = _reduce(Expander(policy, 1000), groups, order)
    assert _reduce(expander(policy, 1000), groups, order) == expected
    assert _reduce(expander(policy, 1000), groups, order, raw=True) == expected


@compiled
def test_the_tuple_sets_of_the_many_tuples_test_pass_the_bounds_of_the_compiled_cache():
    rng = random.Random(1)
    sizes = [_distinct_tuple_sets(load_policy("full"), _many_tuples(rng, n)[0]) for n in (64, 150)]
    assert sizes[0][0] <= 64 < sizes[1][0]          # up to 64 tuples by their bits, and more
    assert sizes[0][1] > 128                        # more sets of tuples than the cache holds


@compiled
def test_compiled_expander_type():
    from profiler.model.policy import load
    assert type(expander(load("default"), 10)).__module__ == "profiler.accel._apfast"


def test_pure_python_when_disabled(monkeypatch):
    from profiler.model.policy import load
    monkeypatch.setenv(fast.PURE_ENV, "1")
    assert fast.load() is None and fast.kind() == "pure Python"
    assert isinstance(expander(load("default"), 10), Expander)


def _lines(path):
    with open(path, "rb") as f:
        return [line for line in f if b'"created"' not in line]


def _task_kinds(summary):
    return {name: n for step in summary["counters"] for name, n in step.get("tasks", {}).items()}


@compiled
def test_local_tasks_load_the_shipped_extension_and_match_pure_python(tmp_path, monkeypatch):
    """Tasks import profiler from profiler.zip only: the .so comes as a shipped file (--files)."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.delenv(fast.PURE_ENV, raising=False)
    python = python_without_profiler(tmp_path)
    out_c, out_py = str(tmp_path / "c.cdxj"), str(tmp_path / "py.cdxj")
    summary = run_profile([SAMPLE], out_c, runner="local", cores=1, extra_args=["--python-bin", python])
    assert _task_kinds(summary) == {"step-1 reducers (compiled)": summary["counters"][0]["tasks"][
        "step-1 reducers (compiled)"]}
    monkeypatch.setenv(fast.PURE_ENV, "1")
    summary = run_profile([SAMPLE], out_py, runner="local", cores=1, extra_args=["--python-bin", python])
    assert set(_task_kinds(summary)) == {"step-1 reducers (pure Python)"}
    assert _lines(out_c) == _lines(out_py)


@compiled
def test_tasks_without_the_shipped_file_fall_back_to_python(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.setattr(fast, "shipped_files", lambda: [])
    python = python_without_profiler(tmp_path)
    out = str(tmp_path / "p.cdxj")
    summary = run_profile([SAMPLE], out, runner="local", cores=1, extra_args=["--python-bin", python])
    assert set(_task_kinds(summary)) == {"step-1 reducers (pure Python)"}
    assert summary["lines"] > 1000


@pytest.mark.parametrize("seed", range(40))
def test_both_paths_equal_the_oracle(seed, monkeypatch):
    """The inline runner's whole job (both paths) against the brute-force oracle."""
    rng = random.Random(seed)
    policy = random_policy(rng, compiled=fast.load())
    caps = random_captures(rng)
    langs = random_languages(rng, caps) if "lang" in policy.names else None
    lines = index_lines(caps, langs)
    oracle_caps = oracle_captures(caps, langs)
    expected = oracle_profile(resolve_revisits(oracle_caps), policy)
    for pure in ("", "1"):
        monkeypatch.setenv(fast.PURE_ENV, pure)
        groups = _map(lines, policy, rng, True)
        keys, _ = _reduce(expander(policy, rng.randint(1, 50)), groups, sorted(groups))
        # step 1 only: shared digests are corrected in step 2, so compare the digest-free fields
        got = {k[2:].decode(): (v[0], v[1], v[2], v[3], v[4], v[7], v[8]) for k, v in keys.items()}
        want = {k: (v[0], v[1], v[2], v[3], v[4], v[7], v[8]) for k, v in expected.items()}
        assert got == want


# the map side: compiled CDX parser and aggregator against profiler.formats.cdx + CaptureAggregator

KEYS = ["com,a)/x", "com,a)/y?q=1", "org,b,c)/", "com,a)/%7E", "!odd)/", "@odd)/", "com,a)/caf\xe9",
        "http://www.example.com/page", "dns:example.com", "-", "uk,co,z)/p\"q", "com,a)/back\\slash",
        # past 16 bytes (the compiled field and JSON scans take 16 at a time): control bytes, quotes
        "com,example,longhost)/path/\x01ctl\x1f/x\x7f", "com,example,longhost)/a-long-path/q\"uote/b\\s"]
MIMES = ["text/html", "Text/HTML; charset=UTF-8", "image/png", "-", "unk", "warc/revisit", "application/pdf",
         "warc/warcinfo", "none", "UNKNOWN", "x;y", "NO-TYPE", "t\xe9xt/html", "application/x-a-long-type\x1b\"name"]
STATUSES = ["200", "404", "-", "30x", "301", "2000"]
DIGESTS = ["sha1:abc", "ABC", "-", "sha1:", "md5:Xyz", "q:r:s", "d\"q", "sha1:ABCDEFGHIJKLMNOPQRSTU\x02VW\"XY\\Z",
           "{abc", "sha1:{abc", "%7BABC"]
TIMESTAMPS = ["20100101000000", "2010", "201013", "20101301", "20100132", "2010010124", "20100101236100",
              "2010010123595961", "abcd", "201001011200", "20100230", "2012022912", "19000229", "20000229",
              "20100431000000", "0000", "00000101000000", "20101231235960"]


def _random_cdx_line(rng):
    r = rng.random()
    if r < 0.05:
        return rng.choice([b" CDX N b a m s k r M S V g", b" CDX N b m s k S", b"CDX bogus", b"", b"!comment",
                           b"only three fields", b"@comment"])
    encoding = "utf-8" if rng.random() < 0.9 else "latin-1"
    fields = [rng.choice(KEYS).encode(encoding), rng.choice(TIMESTAMPS).encode(),
              rng.choice([b"http://www.example.com/x", b"filedesc://a", b"-", b"warcinfo:x"]),
              rng.choice(MIMES).encode(encoding), rng.choice(STATUSES).encode(), rng.choice(DIGESTS).encode(),
              b"-", b"-", rng.choice([b"100", b"-", b"x1", b"0", b"123456789"]), b"0", b"f.warc.gz"]
    if rng.random() < 0.05:
        fields = fields[:10]
    line = (b" " if rng.random() < 0.95 else b"\t").join(fields)
    return line + b"\r" if rng.random() < 0.05 else line


def _map_records(path, period_len, resolve, split_size, lines=False):
    from profiler.formats.inputs import plan_splits, sniff
    from profiler.job.mapside import map_split
    from helpers.policies import by_period
    policy = by_period(period_len)
    info = sniff(path)
    if info["format"] != "cdx":
        return None
    cells, captures, skipped = {}, 0, {}
    for split in plan_splits([info], split_size):
        records = []
        for key, value in map_split(orjson.dumps(split), policy, Kernels(policy), resolve, lines=lines):
            if key is None:     # lines of records (the compiled aggregator's flush_raw)
                assert value.endswith(b"\n") or not value
                records.extend(tuple(line.split(b"\t")) for line in job_lines.split_lines(value))
            else:
                records.append((key, value))
        for key, value in records:
            if key == b"!meta":
                captures += value["captures"]
                stats.merge_counts(skipped, value["skipped"])
            else:
                cells.setdefault(key, []).extend(map(tuple, orjson.loads(value) if isinstance(value, bytes) else value))
    return {k: sorted(v) for k, v in cells.items()}, captures, skipped


@compiled
@pytest.mark.parametrize("seed", range(150))
def test_compiled_map_side_equals_python(seed, tmp_path, monkeypatch):
    import gzip
    rng = random.Random(seed)
    lines = [_random_cdx_line(rng) for _ in range(rng.randint(1, 300))]
    if rng.random() < 0.3:
        lines.insert(0, b" CDX N b a m s k r M S V g")
    data = b"\n".join(lines) + (b"\n" if rng.random() < 0.8 else b"")
    path = str(tmp_path / ("a.cdx.gz" if rng.random() < 0.2 else "a.cdx"))
    with (gzip.open if path.endswith(".gz") else open)(path, "wb") as f:
        f.write(data)
    args = (path, rng.choice([4, 6]), rng.random() < 0.8, rng.choice([50, 200, 1000, 1 << 20]))
    used = []
    real = mapside._map_lines_compiled
    monkeypatch.setattr(mapside, "_map_lines_compiled", lambda *a: used.append(1) or real(*a))
    monkeypatch.setenv(fast.PURE_ENV, "1")
    python = _map_records(*args)
    assert not used
    monkeypatch.setenv(fast.PURE_ENV, "")
    compiled_ = _map_records(*args)
    assert compiled_ == python
    assert python is None or used
    assert _map_records(*args, lines=True) == python      # flush_raw's lines: the same records


@compiled
def test_compiled_map_side_flushes_at_the_limit(tmp_path, monkeypatch):
    path = tmp_path / "a.cdx"
    path.write_bytes(b"".join(b"com,a)/%d 20100101000000 http://a/ text/html 200 sha1:X - - 10 0 f\n" % i
                              for i in range(25)))
    monkeypatch.setattr(mapside, "TABLE_LIMIT", 10)
    split = {"path": str(path), "format": "cdx", "fields": "N b a m s k r M S V g", "start": 0, "end": None,
             "compression": None}
    policy = load_policy("hosts")
    records = list(mapside.map_split(orjson.dumps(split), policy, Kernels(policy)))
    assert len(records) == 26 and records[-1] == (b"!meta", {"captures": 25, "skipped": {}})
    assert all(isinstance(value, bytes) for _, value in records[:-1])


@pytest.mark.parametrize("limit", [1, 2, 3, 10])
@pytest.mark.parametrize("path_kind", ["python", "compiled", "compiled lines"])
def test_a_sorted_index_gives_each_uri_r_once_and_in_order(tmp_path, monkeypatch, limit, path_kind):
    """A full table keeps the URI-R of its last capture (its next captures follow in a sorted
    index): each URI-R is one record, the records in the index's order, and the map output is
    sorted but for its !meta line (what the local runner merges instead of sorting)."""
    if path_kind != "python" and fast.load() is None:
        pytest.skip("the C extension is not built (no compiler?)")
    rng = random.Random(limit)
    counts = [rng.choice([1, 1, 2, 5]) for _ in range(40)]
    lines = [b"com,a)/%02d 201001%02d000000 http://a/ text/html 200 sha1:D%d - - 10 0 f\n" % (i, j + 1, j)
             for i, n in enumerate(counts) for j in range(n)]
    path = tmp_path / "a.cdx"
    path.write_bytes(b"".join(lines))
    monkeypatch.setattr(mapside, "TABLE_LIMIT", limit)
    monkeypatch.setenv(fast.PURE_ENV, "1" if path_kind == "python" else "")
    split = {"path": str(path), "format": "cdx", "fields": "N b a m s k r M S V g", "start": 0, "end": None,
             "compression": None}
    policy = load_policy("default")
    records = list(mapside.map_split(orjson.dumps(split), policy, Kernels(policy), lines=path_kind == "compiled lines"))
    if path_kind == "compiled lines":
        records = [tuple(line.split(b"\t")) for key, blob in records[:-1] for line in blob.splitlines()] + records[-1:]
    keys = [key for key, _ in records[:-1]]
    assert keys == [b"com,a)/%02d" % i for i in range(40)]
    cells = [orjson.loads(value) if isinstance(value, bytes) else value for _, value in records[:-1]]
    assert [sum(cell[5] for cell in c) for c in cells] == counts
    assert records[-1] == (b"!meta", {"captures": sum(counts), "skipped": {}})


@compiled
def test_the_allocator_thresholds_are_set_in_tasks(monkeypatch):
    import platform
    module = fast.load()
    with pytest.raises(ValueError):
        module.tune_allocator(0, 1 << 20)
    set_ = fast.tune_allocator()
    assert set_ is (platform.system() == "Linux" and platform.libc_ver()[0] == "glibc")


def _digest_groups(rng, policy):
    """Random step-2 digest groups: [[urlkey, [[values..., max_len], ...]], ...] each."""
    urlkeys = [h + p for h in HOSTS for p in PATHS] + ["dns:z.example", "com,a)/*", "com,é)/ü/x?q=/a/"]
    values = {"datetime": ["2010", "201101", "2011", "20", "", "20110203", "2011020309"],
              "mime": ["text/html", "image/png", "unk", "text", "/x", "", "html", "application/x-shockwave-flash"],
              "status": ["200", "404", "unk", "-", "9", ""], "lang": ["eng", "ara", "unk", ""],
              "size": ["0-1k", "1g+", "10k-100k"], "collection": ["unk", "a", "WEB%20X"],
              "depth": ["0", "9", "10+", "unk"]}
    groups = []
    for _ in range(rng.randint(1, 6)):
        group = []
        for urlkey in rng.sample(urlkeys, rng.randint(2, 9)):
            group.append([urlkey, [[rng.choice(values[name]) for name in policy.names] + [rng.randint(0, 999)]
                                   for _ in range(rng.randint(1, 4))]])
        groups.append(group)
    return groups


def _corrections_by_key(lines):
    table = {}
    for line in lines.splitlines():
        key, _, value = line.partition(b"\t")
        assert key.startswith(b"K ")
        stats.add(table, key[2:].decode("utf-8"), orjson.loads(value))
    return table


@compiled
@pytest.mark.parametrize("seed", range(200))
def test_compiled_corrections_equal_python(seed):
    """Step 2's corrections of shared digests by the compiled Expander, summed per key, are the
    pure-Python corrections' (table limits that flush and spill within a digest included)."""
    from profiler.job import digests
    from profiler.model.keys import SuffixTable
    rng = random.Random(seed)
    policy = random_policy(rng, compiled=fast.load())
    groups = _digest_groups(rng, policy)
    expected = {}
    for group in groups:
        for key, record in digests.corrections(group, policy, SuffixTable(policy)):
            stats.add(expected, key, record)
    limit = rng.choice([1, 2, 7, 200000])
    expander = fast.compiled_expander(fast.load(), policy, limit)
    written, spilled = [], {}
    for group in groups:
        for key, record in digests.compiled_corrections(iter(group), expander, limit, written.append):
            stats.add(spilled, key, record)
    out = b"".join(written) + steps.table_lines(spilled)
    assert _corrections_by_key(out + expander.close_raw()) == expected


def _reduce_input(rng, policy):
    """Sorted step-1 reduce input lines (key<TAB>cells JSON), most in the map side's plain JSON;
    some in forms feed() leaves to Python: !meta, escapes, non-ASCII, spaces, booleans, big numbers."""
    caps = random_captures(rng)
    langs = random_languages(rng, caps) if "lang" in policy.names else None
    groups = _map(index_lines(caps, langs), policy, rng, rng.random() < 0.8)
    k = len(policy.names)
    lines = []
    for key, cell_lists in groups.items():
        for cells in cell_lists:
            r = rng.random()
            if r < 0.04:
                cells = [[c[0], 'te"xt/\\h', *c[2:]] for c in cells]
            elif r < 0.08:
                key = key.replace(b"com", "cöm".encode())
            elif r < 0.11:
                cells = [c[:k + 1] + [bool(c[k + 1])] + c[k + 2:] for c in cells]   # the revisit flag
            elif r < 0.14:
                cells = [c[:k + 3] + [c[k + 3] + 10 ** 18] + c[k + 4:] for c in cells]   # bytes
            value = orjson.dumps(cells)
            if rng.random() < 0.03:
                value = value.replace(b",", b", ")
            lines.append(key + b"\t" + value)
    lines += [b'!meta\t{"captures":%d,"skipped":{}}' % rng.randint(0, 9) for _ in range(rng.randint(0, 3))]
    return sorted(lines)


def _cut(data, rng):
    """data in random pieces (sizes 1 to all of it)"""
    pieces, pos = [], 0
    while pos < len(data):
        n = rng.choice([1, 2, 7, 64, 4096, len(data)])
        pieces.append(data[pos:pos + n])
        pos += n
    return pieces


@compiled
@pytest.mark.parametrize("seed", range(200))
def test_feed_equals_add_raw(seed):
    """Expander.feed() reads reduce input lines in C, in buffers cut anywhere: the same bytes as the
    lines handed to add_raw() one URI-R at a time (profiler.job.steps.uri_r_lines)."""
    rng = random.Random(seed)
    policy = random_policy(rng, compiled=fast.load())
    limit = rng.randint(1, 50)
    lines = _reduce_input(rng, policy)
    data = b"\n".join(lines) + (b"\n" if lines and rng.random() < 0.8 else b"")
    expected, got = [], []
    reduce_uri_rs([line + b"\n" for line in lines], expander(policy, limit), expected.append)
    reduce_uri_r_chunks(_cut(data, rng), expander(policy, limit), got.append)
    assert b"".join(got) == b"".join(expected)


@pytest.mark.parametrize("seed", range(20))
def test_chunks_through_the_python_expander(seed):
    """Without feed() (pure Python), reduce_uri_r_chunks cuts the buffers into lines itself."""
    rng = random.Random(seed)
    policy = random_policy(rng)
    lines = _reduce_input(rng, policy)
    expected, got = [], []
    reduce_uri_rs(lines, Expander(policy, 30), expected.append)
    reduce_uri_r_chunks(_cut(b"\n".join(lines), rng), Expander(policy, 30), got.append)
    assert b"".join(got) == b"".join(expected)


@compiled
def test_feed_leaves_the_last_uri_r_for_the_next_buffer():
    ex = expander(load_policy("default"), 100)
    cell = b'[["201001","text/html","200","X",0,1,10,10,"20100101000000","20100101000000"]]'
    buf = b"com,a)/\t" + cell + b"\ncom,b)/\t" + cell + b"\ncom,b)/\t" + cell[:20]
    state, pos, end, out = ex.feed(buf, 0, False)
    assert (state, pos, out) == (0, buf.index(b"com,b)/"), b"")     # com,a)/'s digest record: held back
    assert ex.feed(buf, pos, False)[:2] == (0, pos)           # nothing more without more input
    state, at, end, out = ex.feed(buf, pos, True)
    assert (state, at, end, out) == (1, pos, len(buf), b"")     # the cut line: Python's, which raises
    assert b"\nD X\t" in b"\n" + ex.close_raw()
    with pytest.raises(ValueError):
        ex.feed(buf, len(buf) + 1, True)


def _step2_input(rng):
    """Sorted step-2 lines: lone and shared digest records, salted ones (lone or several under
    their key) and markers (alone, or with one record or several), lone and repeated key
    records, !meta, and a line without a TAB."""
    lines = [b'!meta\t{"captures":%d,"skipped":{}}' % rng.randint(0, 9) for _ in range(rng.randint(0, 2))]
    for group in _digest_groups(rng, load_policy("default")):
        digest = b"%d" % rng.randint(0, 10 ** 6)
        kept = group[:rng.choice([0, 1, 1, 1, len(group)])]
        salted = group[len(kept):] if rng.random() < 0.4 else []
        lines += [b"D " + digest + b"\t" + orjson.dumps(entry) for entry in kept]
        lines += [b"S %d %s\t%s" % (rng.randint(0, 2), digest, orjson.dumps(entry)) for entry in salted]
        if salted or not kept:
            lines += [b'D %s\t"S"' % digest] * rng.randint(1, 2)
    for _ in range(rng.randint(0, 30)):
        key = b"K %s - - %d" % (rng.choice([b"*", b"com,*", b"com,a)/*"]), rng.randint(0, 5))
        lines.append(key + b"\t" + orjson.dumps([1, 1, 1, 1, 5, 1, 5, "2009", "2010"]))
    if rng.random() < 0.1:
        lines.append(b"D no tab")
    return sorted(lines)


@pytest.mark.parametrize("seed", range(100))
def test_skim_equals_the_line_path(seed, monkeypatch):
    """Step 2 over buffers cut anywhere (compiled skim() of the lone records, or the lines cut
    in Python when it is not there), long runs in parts or whole: the same records as over the
    lines."""
    rng = random.Random(seed)
    policy = load_policy(rng.choice(["default", "hosts"]))
    lines = _step2_input(rng)
    data = b"\n".join(lines) + (b"\n" if rng.random() < 0.8 else b"")
    expected, got = [], []
    steps.digest_lines([line + b"\n" for line in lines], policy, 7, expected.append, Kernels(policy))
    if rng.random() < 0.2:
        monkeypatch.setenv(fast.PURE_ENV, "1")
    if seed % 2:        # long runs (a digest's lines past 40 bytes) go to Python in parts
        monkeypatch.setattr(steps, "LONG_RUN", 40)
    steps.digest_step(_cut(data, rng), policy, 7, got.append, Kernels(policy))
    assert sorted(b"".join(got).splitlines()) == sorted(b"".join(expected).splitlines())


@compiled
def test_skim_drops_lone_digests_and_copies_lone_keys():
    buf = b'!meta\t{}\nD A\t["x"]\nD B\t["y"]\nD B\t["z"]\nK k\t[1]\nK m\t[2]'
    at = {key: buf.index(key) for key in (b"D A", b"D B", b"K k", b"K m")}
    module = fast.load()
    assert module.skim(buf, 0, False) == (1, 0, at[b"D A"], b"")               # !meta: Python's
    assert module.skim(buf, at[b"D A"], False) == (1, at[b"D B"], at[b"K k"], b"")   # D A dropped; D B: Python's
    # K k's run reaches the last whole line: more of it may come in the next buffer
    assert module.skim(buf, at[b"K k"], False) == (0, at[b"K k"], at[b"K k"], b"")
    assert module.skim(buf, at[b"K k"], True) == (0, len(buf), len(buf), b"K k\t[1]\nK m\t[2]\n")


@compiled
@pytest.mark.parametrize("limit", [3, 1000])
@pytest.mark.parametrize("kind, least", [(b"D ", 10), (b"K ", 20)])
def test_raw_records_come_in_sorted_runs(limit, kind, least):
    """In raw mode the digest records are held back and written in byte order, a run of limit
    lines or more (a URI-R's records stay in one run) at a time, and a flushed table's key
    records in byte order: step 1's output is a few sorted runs, which the local runner merges
    instead of sorting (profiler.runtime.presorted)."""
    rng = random.Random(limit)
    policy = load_policy("default")
    lines = [line for line in _reduce_input(rng, policy) if not line.startswith(b"!")]
    out = []
    reduce_uri_r_chunks([b"\n".join(lines) + b"\n"], expander(policy, limit), out.append)
    records = [line for line in b"".join(out).splitlines() if line.startswith(kind)]
    descents = sum(a > b for a, b in zip(records, records[1:]))
    assert len(records) > least and descents <= len(records) // limit
    if limit == 1000:
        assert len(records) < 1000 and descents == 0


def _step3_input(rng):
    """Step-3 lines sorted by key (a key's lines in any order, as Hadoop's sort leaves them): key
    records alone or several under a key, shares of salted digests among them, !meta,
    timestamps with escapes or non-ASCII text, numbers of 19 digits."""
    lines = [b'!meta\t{"captures":%d,"skipped":{}}' % rng.randint(0, 9) for _ in range(rng.randint(0, 2))]
    for i in range(rng.randint(1, 40)):
        key = b"K %s - - %d" % (rng.choice([b"*", b"com,*", b"com,a)/*", "é,*".encode()]), i)
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            record = [rng.randint(-3, rng.choice([10 ** 3, 10 ** 12, 3 * 10 ** 18])) for _ in range(7)] + [
                rng.choice(["2009", "20090101000000", 'a"b', "é", ""]), rng.choice(["2010", "20101231235959"])]
            lines.append(key + b"\t" + orjson.dumps(record))
        for _ in range(rng.choice([0, 0, 0, 1, 2, 4])):
            n, largest = rng.randint(1, 3), rng.randint(0, 999)
            share = [rng.choice(["X", "Y", "é"]), n, largest * n - rng.randint(0, largest) * (n - 1), largest]
            lines.append(key + b"\t" + orjson.dumps(share))
    rng.shuffle(lines)
    return sorted(lines, key=job_lines.key_of)


@pytest.mark.parametrize("seed", range(100))
def test_profile_lines_equal_the_line_path(seed, monkeypatch):
    """Step 3 over buffers cut anywhere (compiled profile_lines() of the lone key records, or the
    lines cut in Python when it is not there): the profile lines of the line path, byte for byte
    and in the same order."""
    rng = random.Random(seed)
    lines = _step3_input(rng)
    data = b"\n".join(lines) + (b"\n" if rng.random() < 0.8 else b"")
    expected, got = [], []
    steps.profile_lines([line + b"\n" for line in lines], expected.append)
    if rng.random() < 0.2:
        monkeypatch.setenv(fast.PURE_ENV, "1")
    steps.profile_step(_cut(data, rng), got.append, Kernels(load_policy("default")))
    assert b"".join(got) == b"".join(expected)      # in key order too: the client's parts stay ordered


@pytest.mark.parametrize("step", [2, 3])
def test_sums_past_int64_are_left_to_python(step, monkeypatch):
    """A key's records whose sum leaves int64 (and a 19-digit min, as corrections carry): the
    compiled readers leave the run to Python, whose sums have no bound (profiler.jsonnum writes
    them as plain JSON integers); the pure-Python path writes the same bytes."""
    def run(total, n):
        record = [total, 1 << 62, 1, 1, 1, 1, 1, "2009", "2010"]
        data = b"".join(b"K * - - -\t" + orjson.dumps(record) + b"\n" for _ in range(n))
        out = []
        if step == 2:
            steps.digest_step([data], load_policy("default"), 7, out.append, Kernels(load_policy("default")))
        else:
            steps.profile_step([data], out.append, Kernels(load_policy("default")))
        return b"".join(out)
    compiled_ = [run(5, 2), run(5 * 10 ** 18, 2)]
    monkeypatch.setenv(fast.PURE_ENV, "1")
    assert [run(5, 2), run(5 * 10 ** 18, 2)] == compiled_
    assert b"4611686018427387904" in compiled_[0] and b"10000000000000000000" in compiled_[1]
    monkeypatch.setenv(fast.PURE_ENV, "")
    assert b"27000000000000000000" in run(9 * 10 ** 18, 3)


@pytest.mark.parametrize("seed", range(20))
def test_first_and_last_of_any_string_order_as_bytes(seed, monkeypatch):
    """The compiled steps hold a first or last of up to 17 digits as a number that orders as its
    bytes do; one of any other form (more digits, not digits, "~" or "") leaves its run to Python.
    Step 3 over a key's records whose timestamps share prefixes and differ in length: the same
    first and last, byte for byte, as the pure-Python path."""
    rng = random.Random(seed)
    stem = "".join(rng.choice("0123456789") for _ in range(20))
    shapes = [stem[:n] for n in range(0, 20)] + ["~", "2013-01", "20130101000000x", "9" * 17, "0" * 17]

    def timestamp():
        s = rng.choice(shapes) if rng.random() < 0.7 else str(rng.randint(0, 10 ** rng.randint(0, 18)))
        return s

    lines = []
    for key in sorted(b"K %d - - -" % k for k in range(rng.randint(1, 8))):
        for _ in range(rng.randint(1, 4)):
            record = [1, 1, 1, 1, 1, 1, 1, timestamp(), timestamp()]
            lines.append(key + b"\t" + orjson.dumps(record) + b"\n")
    data = b"".join(lines)

    def run():
        out = []
        steps.profile_step([data], out.append, Kernels(load_policy("default")))
        return b"".join(out)
    compiled_ = run()
    monkeypatch.setenv(fast.PURE_ENV, "1")
    assert run() == compiled_
    assert compiled_.count(b"\n") == len({line.split(b"\t")[0] for line in lines})


def test_the_extension_is_built_where_ci_runs():
    """The extension is optional (pip only warns when it does not compile): in CI, which has a
    compiler, a build that failed would leave the compiled tests skipped and measure nothing."""
    if os.environ.get("CI") != "true":
        pytest.skip("outside CI a machine may have no C compiler")
    assert fast.load() is not None, "profiler/accel/_apfast.c did not build (pip install -v shows why)"


@compiled
def test_the_built_extension_is_not_older_than_its_source():
    """An editable install whose rebuild failed keeps the old module beside the new source."""
    import glob
    built = getattr(fast.load(), "__file__", "")
    folder = os.path.join(ROOT, "profiler", "accel")
    if os.path.dirname(os.path.abspath(built)) != folder:
        pytest.skip("installed elsewhere (not an editable install)")
    sources = glob.glob(os.path.join(folder, "*.c")) + glob.glob(os.path.join(folder, "*.h"))
    newer = [os.path.basename(p) for p in sources if os.path.getmtime(p) > os.path.getmtime(built)]
    assert not newer, "%s newer than the built module: rebuild (pip install -v -e .) and read its errors" % newer
