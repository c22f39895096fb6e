"""Indexes written by the generators of profiler.testing, read back for their tests, and the
profiles and maps made of them."""

import gzip

from profiler.files.ukvs import profile_to_map
from profiler.run.profile import run_profile
from profiler.testing.synthetic import write_cdx


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


def profiled_cdx(folder, seed, policies, n=2000):
    """A generated CDX of n lines (folder/in.cdx) profiled with each policy (folder/POLICY.cdxj):
    ({policy: its profile's path}, the fields of each of the CDX's lines)."""
    cdx = folder / "in.cdx"
    write_cdx(str(cdx), n, seed=seed)
    profiles = {}
    for policy in policies:
        profiles[policy] = str(folder / ("%s.cdxj" % policy))
        run_profile([str(cdx)], profiles[policy], policy=policy)
    return profiles, [line.split() for line in cdx.read_text().splitlines()[1:]]


def map_of(profile, path, keys=("surt",)):
    """The map of a profile written at path, keyed by keys: its path as a str."""
    profile_to_map(profile, str(path), keys)
    return str(path)
