"""Tests for profiler.io.readers: line reading of plain, gzip and bz2 files, by byte range."""

import bz2
import gzip
import random
import zlib

import pytest

from profiler.io.readers import compression_of, iter_gzip_members, iter_lines

from helpers.paths import shared_data

LINES = [b"com,example)/%d 2014010%d text/html 200" % (i, i % 10) for i in range(40)]
LINES[7] = b""                       # an empty line
LINES[8] = b"x"                      # a one-byte line
LINES[20] = b"a much longer line " * 20


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def read_ranges(path, size, total):
    out = []
    for start in range(0, total, size):
        out.extend(iter_lines(path, start, min(total, start + size)))
    return out


def member(data, level=6):
    """One gzip member (raw zlib, no timestamp) holding data."""
    c = zlib.compressobj(level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


# compression_of

@pytest.mark.parametrize("head, expected", [
    (b"\x1f\x8b\x08\x00", "gzip"),
    (b"BZh91AY", "bz2"),
    (b" CDX N b a", None),
    (b"", None),
    (b"\x1f", None),
])
def test_compression_of(head, expected):
    assert compression_of(head) == expected


def test_compression_of_real_compressors():
    assert compression_of(gzip.compress(b"x")) == "gzip"
    assert compression_of(bz2.compress(b"x")) == "bz2"


# plain files and byte ranges

def test_whole_file(tmp_path):
    path = write(tmp_path, "a.cdx", b"\n".join(LINES) + b"\n")
    assert list(iter_lines(path)) == LINES


def test_last_line_without_newline(tmp_path):
    path = write(tmp_path, "a.cdx", b"one\ntwo")
    assert list(iter_lines(path)) == [b"one", b"two"]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
@pytest.mark.parametrize("final", [True, False])
def test_every_split_size_gives_every_line_once(tmp_path, eol, final):
    data = eol.join(LINES) + (eol if final else b"")
    path = write(tmp_path, "a.cdx", data)
    for size in list(range(1, 60)) + [100, 511, 512, len(data) - 1, len(data), len(data) + 5]:
        assert read_ranges(path, size, len(data)) == LINES, "split size %d" % size


def test_random_cut_points(tmp_path):
    data = b"\n".join(LINES) + b"\n"
    path = write(tmp_path, "a.cdx", data)
    rng = random.Random(3)
    for _ in range(50):
        cuts = sorted(set(rng.sample(range(1, len(data)), rng.randint(1, 12))))
        bounds = [0] + cuts + [len(data)]
        got = []
        for start, end in zip(bounds, bounds[1:]):
            got.extend(iter_lines(path, start, end))
        assert got == LINES


def test_range_starting_on_a_line_start(tmp_path):
    path = write(tmp_path, "a.cdx", b"aaa\nbbb\nccc\nddd\n")
    assert list(iter_lines(path, 4, 8)) == [b"bbb"]
    assert list(iter_lines(path, 4, 9)) == [b"bbb", b"ccc"]   # ccc starts at 8 < 9
    assert list(iter_lines(path, 5, 8)) == []                 # bbb started before 5
    assert list(iter_lines(path, 0, 1)) == [b"aaa"]
    assert list(iter_lines(path, 12, None)) == [b"ddd"]
    assert list(iter_lines(path, 16, None)) == []


def test_crlf_range_starting_between_cr_and_lf(tmp_path):
    path = write(tmp_path, "a.cdx", b"aaa\r\nbbb\r\nccc\r\n")
    assert list(iter_lines(path, 0, 4)) == [b"aaa"]
    assert list(iter_lines(path, 4, 5)) == []
    assert list(iter_lines(path, 4, 15)) == [b"bbb", b"ccc"]
    assert list(iter_lines(path, 5, 6)) == [b"bbb"]


def test_opener_is_used(tmp_path):
    path = write(tmp_path, "a.cdx", b"one\n")
    opened = []

    def opener(p, mode):
        opened.append((p, mode))
        return open(p, mode)
    assert list(iter_lines(path, opener=opener)) == [b"one"]
    assert opened == [(path, "rb")]


@pytest.mark.parametrize("data", [b"one\ntwo", b"\xef\xbb\xbfone\ntwo", b"o", b"", b"\xef\xbb\xbf"])
def test_a_stream_that_cannot_seek_is_read_from_its_start(data):
    """A whole file read through an opener whose stream has no seek (hadoop fs -cat): its lines,
    a byte order mark at its start passed over."""
    import io

    class Stream:
        def __init__(self):
            self.read = io.BytesIO(data).read

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False
    lines = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    assert list(iter_lines("remote", opener=lambda p, m: Stream())) == (lines.split(b"\n") if lines else [])


# gzip

def test_gzip_single_member(tmp_path):
    path = write(tmp_path, "a.cdx.gz", gzip.compress(b"\n".join(LINES) + b"\n"))
    assert list(iter_lines(path, compression="gzip")) == LINES


def test_gzip_members_without_final_newline_are_not_joined(tmp_path):
    # ZipNum style: each block ends without a newline
    blocks = [b"a 1\nb 2", b"c 3\nd 4", b"e 5"]
    path = write(tmp_path, "zipnum.cdx.gz", b"".join(member(b) for b in blocks))
    assert list(iter_lines(path, compression="gzip")) == [b"a 1", b"b 2", b"c 3", b"d 4", b"e 5"]


def test_gzip_members_with_newline_get_no_extra_line(tmp_path):
    blocks = [b"a 1\nb 2\n", b"c 3\n", b"d 4\n"]
    path = write(tmp_path, "a.cdx.gz", b"".join(member(b) for b in blocks))
    assert list(iter_lines(path, compression="gzip")) == [b"a 1", b"b 2", b"c 3", b"d 4"]


def test_gzip_member_split_across_read_chunks(tmp_path, monkeypatch):
    import profiler.io.readers as readers
    monkeypatch.setattr(readers, "_CHUNK", 7)
    blocks = [b"\n".join(LINES[:20]), b"\n".join(LINES[20:])]
    path = write(tmp_path, "a.cdx.gz", b"".join(member(b) for b in blocks))
    assert list(iter_lines(path, compression="gzip")) == LINES


def test_gzip_empty_members(tmp_path):
    data = member(b"") + member(b"a 1\nb 2") + member(b"") + member(b"") + member(b"c 3\n") + member(b"")
    path = write(tmp_path, "a.cdx.gz", data)
    assert list(iter_lines(path, compression="gzip")) == [b"a 1", b"b 2", b"c 3"]


def test_gzip_only_empty_members(tmp_path):
    path = write(tmp_path, "a.cdx.gz", member(b"") + member(b""))
    assert list(iter_lines(path, compression="gzip")) == []


def test_gzip_crlf_lines(tmp_path):
    path = write(tmp_path, "a.cdx.gz", member(b"a 1\r\nb 2\r\n"))
    assert list(iter_lines(path, compression="gzip")) == [b"a 1", b"b 2"]


def test_gzip_ignores_range(tmp_path):
    path = write(tmp_path, "a.cdx.gz", member(b"a 1\nb 2\n"))
    assert list(iter_lines(path, 5, 6, compression="gzip")) == [b"a 1", b"b 2"]


def test_truncated_gzip_yields_complete_lines_then_raises(tmp_path):
    rng = random.Random(5)
    lines = [b"com,example)/%08x 20140101000000 %032x" % (i, rng.getrandbits(128)) for i in range(3000)]
    data = member(b"\n".join(lines) + b"\n", level=1)
    path = write(tmp_path, "trunc.cdx.gz", data[:len(data) // 2])
    got = []
    with pytest.raises(EOFError):
        for line in iter_lines(path, compression="gzip"):
            got.append(line)
    assert 0 < len(got) < len(lines)
    assert got == lines[:len(got)]


def test_truncated_second_member(tmp_path):
    second = member(b"c 3\nd 4\n")
    path = write(tmp_path, "trunc.cdx.gz", member(b"a 1\nb 2") + second[:len(second) - 4])
    got = []
    with pytest.raises(EOFError):
        for line in iter_lines(path, compression="gzip"):
            got.append(line)
    assert got[:2] == [b"a 1", b"b 2"]
    assert set(got) <= {b"a 1", b"b 2", b"c 3", b"d 4"}


def test_iter_gzip_members_keeps_members_apart(tmp_path):
    path = write(tmp_path, "a.gz", member(b"ab") + member(b"cd\n"))
    with open(path, "rb") as f:
        assert b"".join(iter_gzip_members(f)) == b"ab\ncd\n"


def test_real_zipnum_file():
    path = shared_data("pywb", "zipcdx", "zipnum-sample.cdx.gz")
    lines = list(iter_lines(path, compression="gzip"))
    assert len(lines) == 188
    assert all(len(line.split(b" ")) == 11 for line in lines)


# bz2

def test_bz2(tmp_path):
    path = write(tmp_path, "a.cdx.bz2", bz2.compress(b"\n".join(LINES) + b"\n"))
    assert list(iter_lines(path, compression="bz2")) == LINES


def test_bz2_multi_stream(tmp_path):
    path = write(tmp_path, "a.cdx.bz2", bz2.compress(b"a 1\nb 2\n") + bz2.compress(b"c 3\r\n"))
    assert list(iter_lines(path, compression="bz2")) == [b"a 1", b"b 2", b"c 3"]


def test_iter_chunks_gives_the_lines_of_iter_lines(tmp_path):
    """Any byte range, plain or compressed: the chunks hold exactly iter_lines' lines."""
    import gzip
    import random
    from profiler.io.readers import iter_chunks
    rng = random.Random(7)
    for case in range(200):
        lines = [b"x" * rng.randint(0, 30) for _ in range(rng.randint(0, 40))]
        data = b"\n".join(lines) + (b"\n" if rng.random() < 0.7 else b"")
        gz = rng.random() < 0.2
        path = tmp_path / ("c%d.gz" % case if gz else "c%d" % case)
        path.write_bytes(gzip.compress(data) if gz else data)
        start = 0 if gz else rng.randint(0, len(data) + 2)
        end = None if gz or rng.random() < 0.2 else rng.randint(start, len(data) + 3)
        compression = "gzip" if gz else None
        want = list(iter_lines(str(path), start, end, compression))
        got = [line for chunk in iter_chunks(str(path), start, end, compression)
               for line in (chunk[:-1] if chunk.endswith(b"\n") else chunk).split(b"\n")]
        assert got == want, (case, start, end)
