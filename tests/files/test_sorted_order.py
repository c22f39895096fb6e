"""query and lookup refuse a profile or map that is out of byte order, or holds a key twice,
on the lines their search reads (exit 2, one line), instead of answering from it."""

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from profiler.run.profile import run_profile
from profiler.files.sortedfile import SortedLines, UnsortedFile, profile_key

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    path = tmp_path_factory.mktemp("p") / "p.cdxj"
    run_profile([SAMPLE], str(path), created="2026-01-01T00:00:00Z")
    lines = path.read_bytes().splitlines(keepends=True)
    headers = [x for x in lines if x.startswith(b"!")]
    data = [x for x in lines if not x.startswith(b"!")]
    return headers, data


def cli(*args):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))


def damaged(tmp_path, profile, how, at):
    headers, data = profile
    data = list(data)
    if how == "swap":
        data[at], data[at + 1] = data[at + 1], data[at]
    elif how == "duplicate":
        key = profile_key(data[at].rstrip(b"\n"))
        data.insert(at + 1, key + b' {"urim":{"total":1,"min":1,"max":1},"urir":1}\n')
    path = tmp_path / ("%s.cdxj" % how)
    path.write_bytes(b"".join(headers + data))
    return str(path), data[at].split(b" ")[0].decode()


@pytest.mark.parametrize("how", ["swap", "duplicate"])
def test_query_and_lookup_refuse(tmp_path, profile, how):
    at = len(profile[1]) // 2
    while not (profile[1][at].split(b" ")[1:4] == [b"-", b"-", b"-"] and b"/" in profile[1][at].split(b" ")[0]):
        at += 1                                 # an URL's all-time line: what both commands read
    path, surt = damaged(tmp_path, profile, how, at)
    for args in (["query", path, "--surt", surt], ["lookup", path, surt]):
        r = cli(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert ("twice" if how == "duplicate" else "not in byte order") in r.stderr


def test_sorted_profile_answers(profile, tmp_path):
    path = tmp_path / "ok.cdxj"
    path.write_bytes(b"".join(profile[0] + profile[1]))
    surt = profile[1][len(profile[1]) // 2].split(b" ")[0].decode()
    assert cli("query", str(path), "--surt", surt).returncode == 0
    assert cli("lookup", str(path), surt).returncode == 0


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.binary(min_size=1, max_size=6).filter(lambda b: b"\n" not in b and b" {" not in b),
                     min_size=2, max_size=60),
       probe=st.binary(max_size=6), block=st.integers(8, 64))
def test_every_search_over_an_unsorted_file_raises_or_reads_sorted_lines(tmp_path_factory, keys, probe, block):
    """Whatever the file, a search either raises UnsortedFile or reads only lines in strict key
    order (so an answer never rests on a misplaced line)."""
    path = tmp_path_factory.mktemp("s") / "f"
    path.write_bytes(b"".join(k + b" {}\n" for k in keys))
    with SortedLines(str(path), block=block, forward_block=block, key=profile_key) as f:
        try:
            seen = list(f.iter_from(probe))
            group = f.group(probe)
        except UnsortedFile:
            return
    want = sorted(set(keys)) == keys
    got = [profile_key(x) for x in seen]
    assert got == sorted(set(got))
    if want:
        assert got == [k for k in keys if k.startswith(probe)]
        assert [profile_key(x) for x in group] == got
