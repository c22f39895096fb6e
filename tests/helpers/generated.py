"""Indexes written by the generators of profiler.testing, read back for their tests."""

import gzip


def written_index(path, write, n):
    """(path, lines as bytes without newline) of the index write(path) makes: write must say it
    wrote n lines."""
    assert write(str(path)) == n
    return path, path.read_bytes().split(b"\n")[:-1]


def assert_gzip_deterministic_and_plain(write, a, b, plain):
    """write(path) to two gzip paths, a and b, and to a plain one: a and b hold the same bytes,
    which decompress to the plain one's."""
    for path in (a, b, plain):
        write(str(path))
    assert a.read_bytes() == b.read_bytes()
    assert gzip.decompress(a.read_bytes()) == plain.read_bytes()
