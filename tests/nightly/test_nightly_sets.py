import gzip
import random

from profiler.model import capture
from profiler.nightly import sets
from profiler.testing import synthetic, synthetic_warc
from profiler.formats.registry import captures as iter_parsed
from profiler.formats.inputs import plan_splits, sniff

from helpers import registries


def test_sorted_set_spills_and_merges_to_the_same_items(tmp_path):
    rng = random.Random(3)
    items = [b"%d" % rng.randrange(500) for _ in range(3000)]
    s = sets.SortedSet(str(tmp_path), limit=100)
    for item in items:
        s.add(item)
    assert len(s.runs) > 3
    assert list(s.sorted_items()) == sorted(set(items))


def test_union_and_its_common_items_are_byte_ordered_set_operations(tmp_path):
    a = tmp_path / "a.gz"
    sets.write_set(str(a), [b"com,a)/", b"com,b)/", b"org,z)/%C3%A9"])
    out = tmp_path / "u.gz"
    assert sets.union(str(a), iter([b"com,b)/", b"net,c)/"]), str(out)) == 4
    assert list(sets.read_set(str(out))) == [b"com,a)/", b"com,b)/", b"net,c)/", b"org,z)/%C3%A9"]
    common = set()
    assert sets.union(str(out), iter([b"aa", b"com,b)/", b"org,z)/%C3%A9", b"zz"]), str(tmp_path / "v.gz"),
                      common) == 6
    assert common == {b"com,b)/", b"org,z)/%C3%A9"}         # the new items the file held
    common = set()
    assert sets.union(str(out), iter([]), str(tmp_path / "v.gz"), common) == 4 and common == set()
    assert sets.union(None, iter([b"x"]), str(out)) == 1
    assert gzip.open(str(out)).read() == b"x\n"


def _captures(path):
    return [c for split in plan_splits([sniff(str(path))]) for c in iter_parsed(split) if not isinstance(c, str)]


def test_scan_collects_the_urirs_and_digests_the_job_sees(tmp_path):
    cdx, warc = tmp_path / "a.cdx", tmp_path / "b.warc.gz"
    synthetic.write_cdx(str(cdx), 500, seed=2)
    synthetic_warc.write_warc(str(warc), 40, seed=2)
    captures = _captures(cdx) + _captures(warc)
    scan = sets.Scan(str(tmp_path), str(tmp_path / "caps.cdxj"), pairs=True).run([str(cdx), str(warc)])
    assert scan.captures == len(captures)
    assert list(scan.urirs.sorted_items()) == sorted({c.urlkey.encode() for c in captures})
    assert list(scan.digests.sorted_items()) == sorted({c.digest.encode() for c in captures if c.digest != "-"})
    assert scan.pairs == {(c.urlkey.encode(), c.digest.encode()) for c in captures if c.digest != "-"}
    # the captures read back as the same captures
    assert sniff(str(tmp_path / "caps.cdxj"))["format"] == "captures"
    again = _captures(tmp_path / "caps.cdxj")
    assert sorted(again) == sorted(captures)
    some = {c.urlkey.encode() for c in captures[::3]}
    n = sets.write_subset(str(tmp_path / "caps.cdxj"), str(tmp_path / "sub.cdxj"), lambda u, d: u in some)
    assert n == sum(1 for c in captures if c.urlkey.encode() in some) == len(_captures(tmp_path / "sub.cdxj"))
    assert sorted(_captures(tmp_path / "sub.cdxj")) == sorted(c for c in captures if c.urlkey.encode() in some)


def test_a_capture_field_added_survives_the_captures_file(tmp_path, monkeypatch):
    """Every field a capture has goes into the night's captures file and comes back from it, one
    added after these lines were written too (it was read back as a CDXJ line: every capture's
    new field came back at its default)."""
    registries.keep(monkeypatch)
    capture.add_field("scheme", "unk")
    made = [capture.Capture(urlkey="com,example)/%d" % i, timestamp="2020010100000%d" % i, mime="text/html",
                            status="200", digest="D%d" % (i % 3), length=10 * i, revisit=i == 4,
                            lang="fra", scheme=("https", "http")[i % 2]) for i in range(6)]
    monkeypatch.setattr(sets.registry, "captures", lambda split, opener=open: iter(made))
    cdx = tmp_path / "a.cdx"
    cdx.write_text("com,example)/ 20200101000000 http://example.com/ text/html 200 D - - 1 0 f\n")
    sets.Scan(str(tmp_path), str(tmp_path / "caps.cdxj")).run([str(cdx)])
    again = list(iter_parsed({"path": str(tmp_path / "caps.cdxj"), "format": "captures"}))    # the registry's reader
    assert again == made and [c.scheme for c in again] == ["https", "http"] * 3


def test_chunked_union_and_common_equal_set_algebra(tmp_path, monkeypatch):
    monkeypatch.setattr(sets, "CHUNK_BYTES", 64)            # many chunks, items on their edges
    rng = random.Random(7)
    for _ in range(30):
        old = sorted({b"k%04d" % rng.randrange(3000) for _ in range(rng.randrange(0, 400))})
        new = sorted({b"k%04d" % rng.randrange(3000) for _ in range(rng.randrange(0, 200))})
        path, out = str(tmp_path / "old.gz"), str(tmp_path / "out.gz")
        sets.write_set(path, old)
        assert sum(1 for _ in sets.read_chunks(path)) >= len(old) * 6 // 64     # 64-byte chunks
        common = set()
        assert sets.union(path, iter(new), out, common) == len(set(old) | set(new))
        assert common == set(old) & set(new)
        assert list(sets.read_set(out)) == sorted(set(old) | set(new))
