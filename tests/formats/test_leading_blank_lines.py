"""Blank lines or a UTF-8 byte order mark before a WARC's or ARC's first record: the records are
read, counted and measured as if they were not there, by warcio's reader and fastwarc's alike, in
a plain file, in the gzip member of the first record, and as a gzip member of their own (before
the first record, or between records). warcio took them for a record of their own: it swallowed
the record after them (a gzip member, an ARC file), counted a skip that is no record, or read
no capture of the file at all (a BOM). A damaged file whose first member starts so is recognised
and read around its damage too."""

import gzip
import io
import random
import zlib

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from profiler.formats import inputs, warc
from profiler.run.profile import run_profile

from helpers.captures import warc_readers

BOM = b"\xef\xbb\xbf"
PREFIXES = [b"\n", b"\r\n", b"\n \n\t\r\n", BOM, BOM + b"\r\n"]


def warc_records(n=3, size=None):
    """n response records, as warcio writes them (plain), each on its own."""
    rng = random.Random(7)
    out = []
    for i in range(n):
        buf = io.BytesIO()
        writer = WARCWriter(buf, gzip=False)
        body = bytes(rng.getrandbits(8) for _ in range(size)) if size else b"<html>page %d</html>" % i
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.0")
        writer.write_record(writer.create_warc_record("http://example.com/%d" % i, "response",
                                                      payload=io.BytesIO(body), http_headers=http))
        out.append(buf.getvalue())
    return out


FILEDESC = (b"filedesc://t.arc 0.0.0.0 20080430204825 text/plain 76\n1 0 InternetArchive\n"
            b"URL IP-address Archive-date Content-type Archive-length\n\n")
BODY = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\nhello"


def arc_records():
    return [FILEDESC] + [b"http://www.archive.org/%d 1.2.3.4 2008043020482%d text/html %d\n%s\n"
                         % (i, i, len(BODY), BODY) for i in range(3)]


def layouts(records, prefix):
    """(name, bytes as they should read, bytes with the prefix): plain; gzip, the prefix in the first
    record's member; gzip, the prefix a member of its own before it, and between two records."""
    members = [gzip.compress(r, mtime=0) for r in records]
    return [
        ("plain", b"".join(records), prefix + b"".join(records)),
        ("in_member", b"".join(members), gzip.compress(prefix + records[0], mtime=0) + b"".join(members[1:])),
        ("own_member", b"".join(members), gzip.compress(prefix, mtime=0) + b"".join(members)),
        ("member_between", b"".join(members),
         members[0] + gzip.compress(prefix, mtime=0) + b"".join(members[1:])),
    ]


def _read(read, path, lengths=True):
    """What a reader gives of a file (lengths=False: captures without their lengths)."""
    return [c if isinstance(c, str) or lengths else c._replace(length=None) for c in read(str(path))]


@pytest.mark.parametrize("kind", ["warc", "arc"])
@pytest.mark.parametrize("prefix", PREFIXES, ids=repr)
def test_records_after_blank_lines_or_a_bom_are_read_as_without_them(tmp_path, kind, prefix):
    records = warc_records() if kind == "warc" else arc_records()
    for name, clean, data in layouts(records, prefix):
        ext = "." + kind + ("" if name == "plain" else ".gz")
        expected_path = tmp_path / ("clean-" + name + ext)
        expected_path.write_bytes(clean)
        path = tmp_path / ("prefixed-" + name + ext)
        path.write_bytes(data)
        assert inputs.sniff(str(path))["format"] == kind, name
        lengths = name != "in_member"    # the first record's member holds the prefix: its length differs
        expected = _read(warc.iter_captures, expected_path, lengths)
        assert sum(not isinstance(c, str) for c in expected) == 3
        for read in warc_readers():
            assert _read(read, path, lengths) == expected, (name, read.__module__)
            if not lengths and kind == "warc":
                first = next(c for c in read(str(path)) if not isinstance(c, str))
                assert first.length == len(gzip.compress(prefix + records[0], mtime=0))


def test_a_damaged_first_member_that_starts_with_a_blank_line_is_recognised_and_read_around(tmp_path):
    records = warc_records(size=50000)
    first = bytearray(gzip.compress(b"\n" + records[0], mtime=0))
    first[len(first) // 2] ^= 0xFF
    path = tmp_path / "damaged.warc.gz"
    path.write_bytes(bytes(first) + gzip.compress(b"\n" + records[1], mtime=0) + gzip.compress(records[2], mtime=0))
    assert inputs.sniff(str(path))["format"] == "warc"
    for read in warc_readers():
        found = _read(read, path)
        assert [c for c in found if isinstance(c, str)] == ["corrupt_gzip"]
        assert [c.urlkey for c in found if not isinstance(c, str)] == ["com,example)/1", "com,example)/2"]


@pytest.mark.parametrize("prefix", [b"\n", BOM], ids=repr)
def test_a_profile_of_a_warc_with_a_leading_blank_line_or_bom_counts_every_capture(tmp_path, prefix):
    from profiler.nightly import fold
    records = warc_records()
    clean, prefixed = tmp_path / "clean.warc.gz", tmp_path / "prefixed.warc.gz"
    clean.write_bytes(b"".join(gzip.compress(r, mtime=0) for r in records))
    prefixed.write_bytes(gzip.compress(prefix + records[0], mtime=0) +
                         b"".join(gzip.compress(r, mtime=0) for r in records[1:]))
    metas = []
    for path in (clean, prefixed):
        out = tmp_path / (path.name + ".cdxj")
        run_profile([str(path)], str(out), created="2026-01-01T00:00:00Z")
        metas.append(fold.run_meta(str(out))[0])
    assert metas[1]["captures"] == metas[0]["captures"] == 3
    assert metas[1].get("skipped", {}) == metas[0].get("skipped", {}) == {}
