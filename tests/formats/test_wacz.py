"""WACZ packages (profiler.formats.wacz): recognised by content, their captures those of the WARC
and ARC files under archive/ (a package profiles as its WARC files given directly, whatever the
runner), and a hostile or damaged package is counted skips or a one-line error, never a
traceback, never a write."""

import glob
import io
import os
import struct
import subprocess
import sys
import tracemalloc
import zipfile

import pytest

from profiler.formats import inputs, wacz
from profiler.nightly.fold import run_meta
from profiler.run.profile import run_profile

from helpers import fixtures
from helpers.damage import data_lines
from helpers.paths import shared_data

WARC = fixtures.path("warc-commoncrawl.warc.gz")
ARC = fixtures.path("arc-generated.arc.gz")
WHEN = (1980, 1, 1, 0, 0, 0)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def package(path, members, compression=zipfile.ZIP_STORED, datapackage=True):
    """Write a ZIP of members ({name: bytes}), with a datapackage.json unless told not to."""
    with zipfile.ZipFile(str(path), "w", compression) as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name, WHEN), data, compress_type=compression)
        if datapackage:
            z.writestr(zipfile.ZipInfo("datapackage.json", WHEN), b'{"profile": "data-package", "resources": []}')
    return str(path)


def profile(tmp_path, paths, name="p.cdxj", **options):
    out = str(tmp_path / name)
    run_profile([str(p) for p in paths], out, created="2026-01-01T00:00:00Z", **options)
    return out


def skipped(out):
    return {k: v for k, v in run_meta(out)[0].get("skipped", {}).items() if v}


def captures_of(path):
    return [c for c in wacz.iter_captures(path) if not isinstance(c, str)]


def reasons_of(path):
    return [c for c in wacz.iter_captures(path) if isinstance(c, str)]


# --- recognition ---

def test_the_fixture_is_a_wacz_and_a_plain_zip_is_refused_with_the_reason(tmp_path):
    assert inputs.sniff(fixtures.path("wacz-generated.wacz"))["format"] == "wacz"
    assert inputs.sniff(fixtures.path("broken-cut.wacz"))["format"] == "wacz"      # no directory: local headers
    texts = package(tmp_path / "texts.zip", {"a.txt": b"hello\n", "b/c.txt": b"world\n"}, datapackage=False)
    index = package(tmp_path / "index.zip", {"indexes/index.cdxj": read(fixtures.path("cdxj-pywb.cdxj"))},
                    datapackage=False)
    for path in (texts, index):
        found = inputs.sniff(path)
        assert found["format"] is None and found["reason"] == wacz.NOT_WACZ


def test_recognised_by_content_not_by_name(tmp_path):
    only_warc = package(tmp_path / "x.bin", {"archive/a.warc.gz": read(WARC)}, datapackage=False)
    only_datapackage = package(tmp_path / "y.zip", {})
    assert inputs.sniff(only_warc)["format"] == "wacz"
    assert inputs.sniff(only_datapackage)["format"] == "wacz"


def test_a_package_whose_first_member_is_a_plain_arc_is_a_wacz(tmp_path):
    """Its first line holds the ARC header after the ZIP's local header: WACZ is asked first."""
    arc = read(shared_data("pywb", "warcs", "example.arc"))
    path = package(tmp_path / "arc.wacz", {"archive/example.arc": arc})
    assert inputs.sniff(path)["format"] == "wacz"


def test_a_plain_zip_given_is_one_line_exit_2(tmp_path):
    texts = package(tmp_path / "texts.zip", {"a.txt": b"hello\n"}, datapackage=False)
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", texts, "-o", str(tmp_path / "p.cdxj")],
                       capture_output=True)
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("archive-profiler: error: cannot profile ")    # the one input's
    assert err.rstrip().endswith("texts.zip: " + wacz.NOT_WACZ)                                 # reason, as others'


# --- the same profile as its WARC files ---

def test_the_fixture_profiles_as_its_warc_files_given_directly(tmp_path):
    direct = profile(tmp_path, [WARC, ARC], "direct.cdxj")
    for runner in ("inline", "local"):
        packed = profile(tmp_path, [fixtures.path("wacz-generated.wacz")], runner + ".cdxj", runner=runner)
        assert data_lines(packed) == data_lines(direct)
        assert skipped(packed) == skipped(direct)
        assert run_meta(packed)[0]["inputs"] == [fixtures.path("wacz-generated.wacz")]


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_package_of_corpus_warcs_profiles_as_they_do(tmp_path, compression):
    """Real WARCs and ARCs (plain, gzip per record, one gzip stream), stored or deflated in the
    package, with languages read: the profile of the files given directly."""
    folder = shared_data("warcio")
    files = sorted(p for p in glob.glob(os.path.join(folder, "*")) if p.endswith(wacz.ARCHIVE_ENDINGS))
    assert files
    path = package(tmp_path / "corpus.wacz", {"archive/" + os.path.basename(p): read(p) for p in files}, compression)
    direct = profile(tmp_path, files, "direct.cdxj", policy="lang")
    packed = profile(tmp_path, [path], "packed.cdxj", policy="lang")
    assert data_lines(packed) == data_lines(direct)
    assert skipped(packed) == skipped(direct)


def test_a_package_given_twice_or_beside_its_warc_counts_each(tmp_path):
    first = fixtures.path("wacz-generated.wacz")
    second = str(tmp_path / "copy.wacz")
    with open(second, "wb") as f:
        f.write(read(first))
    once = run_meta(profile(tmp_path, [first], "once.cdxj"))[0]["captures"]
    assert run_meta(profile(tmp_path, [first, second], "twice.cdxj"))[0]["captures"] == 2 * once
    beside = run_meta(profile(tmp_path, [first, WARC], "beside.cdxj"))[0]["captures"]
    assert beside == once + run_meta(profile(tmp_path, [WARC], "warc.cdxj"))[0]["captures"]


# --- hostile and damaged packages ---

def test_a_name_that_escapes_is_read_and_nothing_is_written(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    path = package(work / "escape.wacz", {"archive/../../escaped.warc.gz": read(WARC),
                                          "/absolute/escaped.warc.gz": read(WARC),
                                          "../outside.arc.gz": read(ARC)})
    before = sorted(os.listdir(str(tmp_path))), sorted(os.listdir(str(work)))
    found = list(wacz.iter_captures(path))
    assert len([c for c in found if not isinstance(c, str)]) == len(captures_of(package(
        tmp_path / "plain.wacz", {"archive/a.warc.gz": read(WARC)})))
    assert [c for c in found if c in (wacz.OUTSIDE_MEMBER,)] == [wacz.OUTSIDE_MEMBER] * 2
    assert (sorted(os.listdir(str(tmp_path))), sorted(os.listdir(str(work)))) == \
        (sorted(before[0] + ["plain.wacz"]), before[1])
    assert not os.path.exists(os.path.join(os.path.dirname(str(tmp_path)), "escaped.warc.gz"))


def test_a_package_cut_short_reads_its_members_up_to_the_cut(tmp_path):
    whole = read(fixtures.path("wacz-generated.wacz"))
    cut = tmp_path / "cut.wacz"
    cut.write_bytes(whole[:whole.index(b"archive/arc-generated.arc.gz") + 100])   # inside the ARC member
    found = list(wacz.iter_captures(str(cut)))
    assert found[0] == wacz.NO_DIRECTORY and found[-1] == wacz.CORRUPT_MEMBER
    assert len([c for c in found if not isinstance(c, str)]) == len(captures_of(package(
        tmp_path / "warc.wacz", {"archive/a.warc.gz": read(WARC)})))
    assert reasons_of(fixtures.path("broken-cut.wacz")) == \
        [wacz.NO_DIRECTORY, "request_record", "truncated_record", wacz.CORRUPT_MEMBER]


def _corrupt(data, name, at, byte=b"\x00"):
    """data with the byte at offset `at` of member name's stored bytes replaced."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo(name)
    nlen, xlen = struct.unpack_from("<HH", data, info.header_offset + 26)
    pos = info.header_offset + 30 + nlen + xlen + at
    return data[:pos] + (byte if data[pos:pos + 1] != byte else b"\xff") + data[pos + 1:]


def _set_crc(data, name, crc):
    """data with member name's CRC in its local header and its directory entry set to crc."""
    data = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info, directory = z.getinfo(name), z.start_dir
    struct.pack_into("<L", data, info.header_offset + 14, crc)
    central = directory
    while not bytes(data[central + 46:]).startswith(name.encode()):
        central = bytes(data).index(b"PK\x01\x02", central + 1)
    struct.pack_into("<L", data, central + 16, crc)
    return bytes(data), info.CRC


def test_a_member_that_fails_its_crc_is_counted_after_its_records(tmp_path):
    members = {"archive/a.warc.gz": read(WARC), "archive/b.arc.gz": read(ARC)}
    good = package(tmp_path / "good.wacz", members)
    data, crc = _set_crc(read(good), "archive/a.warc.gz", 0)
    bad = tmp_path / "bad.wacz"
    bad.write_bytes(_set_crc(data, "archive/a.warc.gz", crc ^ 1)[0])
    found = list(wacz.iter_captures(str(bad)))
    assert found.count(wacz.CORRUPT_MEMBER) == 1
    assert found.index(wacz.CORRUPT_MEMBER) > found.index("metadata_record")     # after the member's records
    assert captures_of(str(bad)) == captures_of(good)


def test_a_member_that_does_not_inflate_is_counted(tmp_path):
    data = read(package(tmp_path / "d.wacz", {"archive/a.warc": b"WARC/1.0\r\n" + b"x" * 5000,
                                              "archive/b.arc.gz": read(ARC)}, zipfile.ZIP_DEFLATED))
    bad = tmp_path / "bad.wacz"
    bad.write_bytes(_corrupt(data, "archive/a.warc", 0, b"\xff"))        # a reserved deflate block type
    arc = package(tmp_path / "arc.wacz", {"archive/b.arc.gz": read(ARC)})
    assert reasons_of(str(bad)) == [wacz.CORRUPT_MEMBER] + reasons_of(arc)
    assert captures_of(str(bad)) == captures_of(arc)


def test_an_encrypted_member_is_counted_not_read(tmp_path):
    data = bytearray(read(package(tmp_path / "e.wacz", {"archive/a.warc.gz": read(WARC), "archive/b.arc.gz": read(ARC)})))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.getinfo("archive/a.warc.gz")
        directory = z.start_dir
    struct.pack_into("<H", data, info.header_offset + 6, info.flag_bits | 1)          # local header
    central = bytes(data).index(b"PK\x01\x02", directory)                               # its directory entry
    struct.pack_into("<H", data, central + 8, info.flag_bits | 1)
    path = tmp_path / "enc.wacz"
    path.write_bytes(bytes(data))
    found = list(wacz.iter_captures(str(path)))
    assert found.count(wacz.ENCRYPTED_MEMBER) == 1
    assert len(captures_of(str(path))) == len(captures_of(package(tmp_path / "arc.wacz", {"archive/b.arc.gz": read(ARC)})))


def test_a_zip64_package_is_read(tmp_path):
    path = str(tmp_path / "z64.wacz")
    with zipfile.ZipFile(path, "w") as z:
        for name, data in (("archive/a.warc.gz", read(WARC)), ("archive/b.arc.gz", read(ARC))):
            with z.open(zipfile.ZipInfo(name, WHEN), "w", force_zip64=True) as f:
                f.write(data)
    assert inputs.sniff(path)["format"] == "wacz"
    direct = profile(tmp_path, [WARC, ARC], "direct.cdxj")
    assert data_lines(profile(tmp_path, [path], "z64.cdxj")) == data_lines(direct)
    cut = tmp_path / "z64-cut.wacz"                 # no directory: the zip64 sizes of its local headers
    cut.write_bytes(read(path)[:os.path.getsize(path) - 30])
    assert inputs.sniff(str(cut))["format"] == "wacz"
    assert len(captures_of(str(cut))) == len(captures_of(path))


def test_a_member_that_is_no_warc_is_counted(tmp_path):
    path = package(tmp_path / "n.wacz", {"archive/a.warc.gz": b"\x1f\x8b\x08" + os.urandom(200),
                                         "archive/b.warc": b"not a warc\n" * 10, "archive/c.warc": b"",
                                         "archive/notes.txt": b"hello", "archive/d.arc.gz": read(ARC)})
    found = reasons_of(path)
    assert found.count(wacz.NOT_WARC_MEMBER) == 2
    assert len(captures_of(path)) == len(captures_of(package(tmp_path / "arc.wacz", {"archive/d.arc.gz": read(ARC)})))


def test_a_package_without_warc_files_is_a_counted_skip_not_an_empty_archive(tmp_path):
    """A WACZ of its index and pages only (its WARC files kept apart) gave 0 captures, exit 0 and
    no word: as if the archive were empty. It is one counted skip per package; a package holding
    a WARC file has none."""
    index = (b'com,example)/ 20200101000000 {"url": "http://example.com/", "status": "200", '
             b'"mime": "text/html", "length": "10", "offset": "0", "filename": "data.warc.gz"}\n')
    bare = package(tmp_path / "bare.wacz", {"indexes/index.cdx": index, "pages/pages.jsonl": b"{}\n"})
    outside = package(tmp_path / "outside.wacz", {"data.warc.gz": read(WARC)})
    assert reasons_of(bare) == [wacz.NO_ARCHIVE_MEMBER] and not captures_of(bare)
    assert reasons_of(outside) == [wacz.OUTSIDE_MEMBER, wacz.NO_ARCHIVE_MEMBER]
    assert skipped(profile(tmp_path, [bare], "bare.cdxj")) == {wacz.NO_ARCHIVE_MEMBER: 1}
    held = package(tmp_path / "held.wacz", {"archive/a.warc.gz": read(WARC), "indexes/index.cdx": index})
    assert wacz.NO_ARCHIVE_MEMBER not in reasons_of(held) and captures_of(held)


def test_a_member_that_lies_about_its_size_reads_only_its_own_bytes(tmp_path):
    data = bytearray(read(package(tmp_path / "l.wacz", {"archive/a.warc.gz": read(WARC), "archive/b.arc.gz": read(ARC)})))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.getinfo("archive/a.warc.gz")
        directory = z.start_dir
    central = bytes(data).index(b"PK\x01\x02", directory)
    struct.pack_into("<LL", data, central + 20, 0xFFFFFFF0, 0xFFFFFFF0)       # sizes of ~4 GiB declared
    struct.pack_into("<LL", data, info.header_offset + 18, 0xFFFFFFF0, 0xFFFFFFF0)
    path = tmp_path / "lies.wacz"
    path.write_bytes(bytes(data))
    found = list(wacz.iter_captures(str(path)))
    assert wacz.CORRUPT_MEMBER in found
    assert len([c for c in found if not isinstance(c, str)]) == len(captures_of(package(
        tmp_path / "ok.wacz", {"archive/a.warc.gz": read(WARC), "archive/b.arc.gz": read(ARC)})))


def test_a_zip_bomb_member_streams_in_bounded_memory(tmp_path):
    """64 MiB of one record's block, deflated to a few dozen KiB: read as it inflates."""
    size = 64 << 20
    head = ("WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: http://bomb.example/\r\n"
            "WARC-Date: 2020-01-01T00:00:00Z\r\nContent-Type: application/octet-stream\r\n"
            "Content-Length: %d\r\n\r\n" % size).encode()
    path = str(tmp_path / "bomb.wacz")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        info = zipfile.ZipInfo("archive/bomb.warc", WHEN)
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w") as f:
            f.write(head)
            block = b"\0" * (1 << 20)
            for _ in range(size >> 20):
                f.write(block)
            f.write(b"\r\n\r\n")
    assert os.path.getsize(path) < size // 100
    tracemalloc.start()
    try:
        found = list(wacz.iter_captures(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [c.length for c in found if not isinstance(c, str)] == [len(head) + size]      # a plain record: without its blank lines
    assert peak < 8 << 20


def test_overlapping_members_are_read_once(tmp_path):
    data = bytearray(read(package(tmp_path / "o.wacz", {"archive/a.warc.gz": read(WARC)}, datapackage=False)))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        directory, (info,) = z.start_dir, z.infolist()
    entry = bytes(data[directory:directory + 46 + len(info.filename)])
    twin = entry[:46] + b"archive/b.warc.gz"[:len(info.filename)]
    end = bytearray(data[directory + len(entry):])
    struct.pack_into("<HHLL", end, 8, 2, 2, 2 * len(entry), directory)           # two entries
    path = tmp_path / "overlap.wacz"
    path.write_bytes(bytes(data[:directory]) + entry + twin + bytes(end))
    found = list(wacz.iter_captures(str(path)))
    assert found.count(wacz.OVERLAPPING_MEMBER) == 1
    assert captures_of(str(path)) == captures_of(package(tmp_path / "one.wacz", {"archive/a.warc.gz": read(WARC)}))


@pytest.mark.parametrize("damage", ["cut", "crc", "encrypted", "no_warc"])
def test_damaged_packages_end_in_counted_skips_with_the_cli(tmp_path, damage):
    whole = read(fixtures.path("wacz-generated.wacz"))
    if damage == "cut":
        data = whole[:len(whole) // 3]
    elif damage == "crc":
        data = _set_crc(whole, "archive/arc-generated.arc.gz", 1)[0]
    elif damage == "encrypted":
        data = bytearray(whole)
        struct.pack_into("<H", data, 6, 1)
        data[bytes(data).index(b"PK\x01\x02") + 8] |= 1
        data = bytes(data)
    else:
        data = read(package(tmp_path / "x.zip", {"archive/a.warc.gz": b"hello"}))
    path = tmp_path / "damaged.wacz"
    path.write_bytes(data)
    out = str(tmp_path / "p.cdxj")
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", str(path), "-o", out], capture_output=True)
    assert r.returncode == 0 and b"Traceback" not in r.stderr
    assert skipped(out)
