"""Lengths near and past 2^63 and 2^64: sums are exact at any size, never wrap, never fail.

A length of 2^64 or more is bad_length. The compiled kernels hold sums in 64 bits, so a run
gives each split a share of 2^63 - 1; a split past it makes the run go again with the Python
kernels, whose integers have no bound (profiler.job.bigsums). Profiles hold such sums as plain JSON
integers, and every tool reads and writes them exactly (profiler.jsonnum)."""

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from profiler import jsonnum
from profiler.testing import synthetic

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
U64 = (1 << 64) - 1
LENGTHS = [(1 << 62) + i for i in range(40)] + [(1 << 63) - 1, 1 << 63, U64, 1 << 64, 10 ** 30, 17]
VALID = [n for n in LENGTHS if n <= U64]


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=ROOT, **(env or {})))


def write_index(path, lengths):
    with open(path, "w") as f:
        f.write(synthetic.LEGEND + "\n")
        for i, n in enumerate(lengths):
            f.write("com,example)/p%05d 2013010100%04d http://example.com/p%05d text/html 200 D%d - - %d 0 a.warc.gz\n"
                    % (i // 3, i % 3600, i // 3, i, n))


def profile_lines(path):
    """{key: value} of a profile's data lines, numbers exact (the standard library's json)."""
    out, meta = {}, None
    for line in open(path, "rb"):
        if line.startswith(b"!meta") and b'"captures"' in line:
            meta = json.loads(line[6:])
        elif not line.startswith(b"!"):
            i = line.index(b" {")
            out[line[:i].decode()] = json.loads(line[i + 1:])
    return meta, out


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("pure", [False, True])
def test_sums_past_2_64_are_exact(tmp_path, runner, pure):
    index = tmp_path / "big.cdx"
    write_index(index, LENGTHS)
    out = tmp_path / "p.cdxj"
    r = cli("profile", str(index), "-o", str(out), "-r", runner,
            env={"ARCHIVE_PROFILER_PURE_PYTHON": "1"} if pure else {})
    assert r.returncode == 0, r.stderr
    assert b"Traceback" not in r.stderr and b"Error while" not in r.stderr, r.stderr
    assert (b"running the job again with the Python kernels" in r.stderr) == (not pure)
    assert cli("validate", str(out)).returncode == 0
    meta, lines = profile_lines(out)
    assert meta["skipped"] == {"bad_length": 2}                   # 2^64 and 10^30
    assert meta["captures"] == len(VALID)
    root = lines["* - - -"]
    assert root["urim"]["total"] == len(VALID)
    assert root["bytes"] == sum(VALID) and root["bytes"] > (1 << 64) * 6
    assert root["dedup_bytes"] == sum(VALID)                      # every digest is different
    # every key's bytes: the sum of its captures' lengths (one host, one year, one mime)
    assert lines["com,example)/* - - -"]["bytes"] == sum(VALID)
    assert lines["com,* 2013 text/html 2xx"]["bytes"] == sum(VALID)


def test_sums_within_63_bits_stay_compiled(tmp_path):
    index = tmp_path / "fits.cdx"
    write_index(index, [(1 << 61)] * 3 + [5])
    out = tmp_path / "p.cdxj"
    r = cli("profile", str(index), "-o", str(out), "-r", "local")
    assert r.returncode == 0 and b"again" not in r.stderr, r.stderr
    assert profile_lines(out)[1]["* - - -"]["bytes"] == 3 * (1 << 61) + 5


def test_many_splits_share_the_budget(tmp_path):
    """Each split's share is 2^63 - 1 over the splits: several files that each fit alone but
    together pass it are still exact."""
    paths = []
    for i in range(4):
        path = tmp_path / ("part%d.cdx" % i)
        write_index(path, [(1 << 62) - i, 3 * i])
        paths.append(str(path))
    out = tmp_path / "p.cdxj"
    r = cli("profile", *paths, "-o", str(out), "-r", "local")
    assert r.returncode == 0, r.stderr
    expected = sum((1 << 62) - i + 3 * i for i in range(4))
    assert expected > 1 << 63
    assert profile_lines(out)[1]["* - - -"]["bytes"] == expected


@pytest.fixture(scope="module")
def big_profile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("big")
    index = folder / "big.cdx"
    write_index(index, LENGTHS)
    out = folder / "p.cdxj"
    assert cli("profile", str(index), "-o", str(out), "-q").returncode == 0
    return out


def test_merge_of_big_profiles_is_exact(tmp_path, big_profile):
    copies = []
    for i in range(5):
        copy = tmp_path / ("c%d.cdxj" % i)
        copy.write_bytes(big_profile.read_bytes().replace(b"p000", b"q%03d" % i))
        copies.append(str(copy))
    merged = tmp_path / "m.cdxj"
    r = cli("merge", *copies, "-o", str(merged))
    assert r.returncode == 0, r.stderr
    assert cli("validate", str(merged)).returncode == 0
    assert profile_lines(merged)[1]["* - - -"]["bytes"] == 5 * sum(VALID)


def test_tools_print_big_numbers_exactly(tmp_path, big_profile):
    text = str(sum(VALID)).encode()
    r = cli("query", str(big_profile), "--surt", "*")
    assert r.returncode == 0 and text in r.stdout, r.stderr
    r = cli("lookup", str(big_profile), "http://example.com/p00001")
    assert r.returncode == 0 and b"\theld\t" in r.stdout, r.stderr
    ukvs = tmp_path / "m.ukvs"
    r = cli("ukvs", str(big_profile), "-o", str(ukvs))
    assert r.returncode == 0, r.stderr
    assert cli("validate", str(ukvs)).returncode == 0
    report = tmp_path / "r.html"
    r = cli("report", str(big_profile), "-o", str(report))
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr
    r = cli("diff", str(big_profile), str(big_profile))
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=-(1 << 200), max_value=1 << 200)
    | st.text(max_size=30) | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_jsonnum_round_trips_any_integer(value):
    text = jsonnum.dumps(value)
    assert jsonnum.loads(text) == value
    assert jsonnum.loads(text.decode("utf-8")) == value
    assert json.loads(text) == value


@pytest.mark.parametrize("text", [b"[123456789012345678901234, NaN]", b"[123456789012345678901234, \xff]",
                                  b"[" * 100000 + b"123456789012345678901234", b"123456789012345678901234 x"])
def test_jsonnum_errors_are_json_errors(text):
    with pytest.raises(jsonnum.JSONDecodeError):
        jsonnum.loads(text)
