"""Tests for the synthetic CDX generator (profiler.testing.synthetic)."""

import gzip
import os
import re
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from profiler.testing import synthetic  # noqa: E402

from helpers.generated import assert_gzip_deterministic_and_plain, written_index  # noqa: E402

N = 20000
DIGEST_RE = re.compile(rb"^([A-Z2-7]{32}|-)$")


@pytest.fixture(scope="module")
def cdx(tmp_path_factory):
    """(path, lines as bytes without newline) of a 20,000-line index."""
    return written_index(tmp_path_factory.mktemp("synthetic") / "index.cdx",
                         lambda path: synthetic.write_cdx(path, N, seed=7), N)


@pytest.fixture(scope="module")
def captures(cdx):
    return [line.split(b" ") for line in cdx[1][1:]]


def test_same_seed_same_bytes(tmp_path, cdx):
    again = tmp_path / "again.cdx"
    synthetic.write_cdx(str(again), N, seed=7)
    assert again.read_bytes() == cdx[0].read_bytes()
    seven, eight = tmp_path / "seven.cdx", tmp_path / "eight.cdx"
    synthetic.write_cdx(str(seven), 2000, seed=7)
    synthetic.write_cdx(str(eight), 2000, seed=8)
    assert seven.read_bytes() != eight.read_bytes()


def test_gzip_is_deterministic_and_matches_plain(tmp_path):
    assert_gzip_deterministic_and_plain(lambda path: synthetic.write_cdx(path, 3000, seed=2),
                                        tmp_path / "a.cdx.gz", tmp_path / "b.cdx.gz", tmp_path / "p.cdx")


def test_legend_and_field_count(cdx):
    lines = cdx[1]
    assert lines[0] == b" CDX N b a m s k r M S V g"
    assert len(lines) == N + 1
    assert all(len(line.split(b" ")) == 11 for line in lines[1:])


def test_sorted_bytewise(cdx, captures):
    lines = cdx[1][1:]
    assert all(a < b for a, b in zip(lines, lines[1:]))          # LC_ALL=C sort order
    keys = [(c[0], c[1]) for c in captures]
    assert all(a < b for a, b in zip(keys, keys[1:]))


def test_field_formats(captures):
    offsets = [int(c[9]) for c in captures]
    assert all(a < b for a, b in zip(offsets, offsets[1:]))
    for c in captures:
        urlkey, timestamp, original, mime, status, digest = c[:6]
        assert urlkey == urlkey.lower() and b")" in urlkey
        assert re.match(rb"^(199[6-9]|20[0-2]\d)\d{10}$", timestamp)
        assert original.startswith((b"http://", b"https://"))
        assert DIGEST_RE.match(digest)
        assert c[6] == c[7] == b"-" and int(c[8]) > 0
        assert re.match(rb"^crawl-\d{4}-\d{5}\.warc\.gz$", c[10])
        assert (mime == b"warc/revisit") == (status == b"-")


def test_urlkeys_are_surts_of_originals(captures):
    surt = pytest.importorskip("surt")
    for c in captures[::40]:
        assert surt.surt(c[2].decode()) == c[0].decode()


def test_revisits_point_at_earlier_capture(captures):
    originals = set()              # (urlkey, digest) of non-revisits seen so far
    revisits = 0
    for c in captures:
        if c[3] == b"warc/revisit":
            revisits += 1
            assert (c[0], c[5]) in originals
        else:
            originals.add((c[0], c[5]))
    assert 0.08 * N < revisits < 0.18 * N


def test_digests_shared_across_urirs(captures):
    urlkeys_by_digest = {}
    for c in captures:
        if c[5] != b"-":
            urlkeys_by_digest.setdefault(c[5], set()).add(c[0])
    shared = [d for d, keys in urlkeys_by_digest.items() if len(keys) >= 2]
    assert shared
    assert synthetic.EMPTY_DIGEST.encode() in shared
    dashes = sum(c[5] == b"-" for c in captures)
    assert 0.002 * N < dashes < 0.03 * N


def test_scale(captures):
    urirs = {c[0] for c in captures}
    hosts = {c[0].split(b")")[0] for c in captures}
    assert 0.9 * 0.375 * N < len(urirs) < 1.1 * 0.375 * N
    assert 0.8 * 0.019 * N < len(hosts) < 1.2 * 0.019 * N
    mimes = [c[3] for c in captures]
    assert mimes.count(b"text/html") > 0.4 * N
    assert mimes.count(b"image/jpeg") > 0.03 * N


def test_generate_captures_overrides():
    caps = list(synthetic.generate_captures(500, seed=3, hosts=5, urirs=50))
    assert len(caps) == 500
    assert len({c[0] for c in caps}) == 50
    assert len({c[0].split(")")[0] for c in caps}) == 5
    assert all(isinstance(c[6], int) for c in caps)
    assert list(synthetic.generate_captures(0)) == []


def test_parts_split_urirs_across_files(tmp_path, cdx):
    paths = [str(tmp_path / ("part%d.cdx" % i)) for i in range(3)]
    counts = synthetic.write_cdx_parts(paths, N, seed=7)
    assert sum(counts) == N and all(counts)
    files_by_urlkey = {}
    all_lines = []
    for i, path in enumerate(paths):
        lines = open(path, "rb").read().split(b"\n")[:-1]
        assert lines[0] == cdx[1][0]
        body = lines[1:]
        assert body == sorted(body)
        all_lines += body
        for line in body:
            files_by_urlkey.setdefault(line.split(b" ", 1)[0], set()).add(i)
    assert sorted(all_lines) == cdx[1][1:]
    assert any(len(files) > 1 for files in files_by_urlkey.values())


def test_parts_shuffled(tmp_path):
    path = str(tmp_path / "shuffled.cdx.gz")
    assert synthetic.write_cdx_parts([path], 2000, seed=1, shuffle=True) == [2000]
    lines = gzip.open(path, "rb").read().split(b"\n")[:-1]
    body = lines[1:]
    assert lines[0].startswith(b" CDX") and len(body) == 2000
    assert body != sorted(body)
