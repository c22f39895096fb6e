"""Tests for profiler.formats.inputs: resolving input arguments, sniffing formats, planning splits."""

import bz2
import gzip
import io
import os

import pytest

from profiler.formats.inputs import InputError, plan_splits, resolve, sniff
from profiler.formats import inputs, registry

from helpers.paths import shared_data

LEGEND = b" CDX N b a m s k r M S V g\n"
# pywb/cdx/example.cdx
CDX11 = (b"com,example)/?example=1 20140103030321 http://example.com?example=1 text/html 200 "
         b"B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 1043 333 example.warc.gz\n")
# archive_profiler/index-1.cdx
CDX10 = (b"anon.nasa-global.edgesuite.net/anon.nasa-global/ksc/ksc_042507_chandra_2.ram 20081119011159 "
         b"http://anon.nasa-global.edgesuite.net/anon.nasa-global/ksc/ksc_042507_chandra_2.ram "
         b"audio/x-pn-realaudio 200 B3WF6MRGG7G2AKW4R4JNL2SBEGTMHREA - - 140887 ARCHIVEIT-1.arc.gz\n")
# netarchivesuite/NAS-20100909163324-00000-mette.kb.dk.warc.cdx
CDX9 = (b"netarkivet.dk/ 20100909163328 http://netarkivet.dk/ text/html 302 "
        b"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ http://netarkivet.dk/index-da.php 2438 NAS-1.warc\n")
# edgi-wayback/zew.de-cdx-api-response.txt
CDX7 = (b"de,zew)/ 19970427191925 http://www.zew.de:80/ text/html 200 "
        b"GOE2BMK6YVBA6HNPZJW2N5SHBJPHJBD4 1001\n")
# ipwb/indexes/salam-home.cdxj
CDXJ = (b'!context ["https://tools.ietf.org/html/rfc7089"]\n'
        b'!meta {"created_at": "2018-07-28T14:07:36.044446", "generator": "InterPlanetary Wayback"}\n'
        b'com,matkelly)/froggies/frog.png 20170301192639 {"original_uri": '
        b'"http://matkelly.com/froggies/frog.png", "mime_type": "image/png", "status_code": "200"}\n')
WARC = (b"WARC/1.0\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: <urn:uuid:1>\r\n"
        b"Content-Length: 0\r\n\r\n\r\n\r\n")
PROSE = (b"# Shared test corpus: real web-archive data\n\n"
         b"This folder holds real third-party test data for the archive profiler.\n"
         b"Every file was copied byte for byte from a public repository.\n")


def make(tmp_path, name, data=CDX11):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(path)


# resolve

def test_resolve_files(tmp_path):
    b = make(tmp_path, "b.cdx")
    a = make(tmp_path, "a.cdx")
    assert resolve([b, a]) == [b, a]


def test_resolve_makes_paths_absolute(tmp_path, monkeypatch):
    make(tmp_path, "a.cdx")
    monkeypatch.chdir(tmp_path)
    assert resolve(["a.cdx"]) == [str(tmp_path / "a.cdx")]


def test_resolve_directory_sorted_recursive_without_hidden(tmp_path):
    d = tmp_path / "in"
    for name in ["b.cdx", "a.cdx", "sub/c.cdx", ".hidden.cdx", ".git/x.cdx", "sub/.d.cdx"]:
        make(d, name)
    assert resolve([str(d)]) == [str(d / "a.cdx"), str(d / "b.cdx"), str(d / "sub" / "c.cdx")]


def test_resolve_empty_directory(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no input files"):
        resolve([str(tmp_path / "empty")])


def test_resolve_glob(tmp_path):
    for name in ["b.cdx", "a.cdx", "c.cdxj", "d/e.cdx"]:
        make(tmp_path, name)
    assert resolve([str(tmp_path / "*.cdx")]) == [str(tmp_path / "a.cdx"), str(tmp_path / "b.cdx")]
    assert resolve([str(tmp_path / "**" / "*.cdx")]) == [
        str(tmp_path / "a.cdx"), str(tmp_path / "b.cdx"), str(tmp_path / "d" / "e.cdx")]


def test_resolve_glob_matching_nothing(tmp_path):
    with pytest.raises(InputError, match=r"no file matches .*\*\.nothing"):
        resolve([str(tmp_path / "*.nothing")])


def test_resolve_existing_name_with_glob_characters(tmp_path):
    odd = make(tmp_path, "odd[1].cdx")
    assert resolve([odd]) == [odd]


def test_resolve_missing_input(tmp_path):
    missing = str(tmp_path / "missing.cdx")
    with pytest.raises(InputError, match="input not found: .*missing.cdx"):
        resolve([missing])


def test_resolve_deduplicates(tmp_path, monkeypatch):
    a = make(tmp_path, "a.cdx")
    b = make(tmp_path, "b.cdx")
    monkeypatch.chdir(tmp_path)
    assert resolve([a, "a.cdx", str(tmp_path), str(tmp_path / "*.cdx"), "./b.cdx"]) == [a, b]


def test_resolve_manifest_argument(tmp_path):
    a = make(tmp_path, "data/a.cdx")
    b = make(tmp_path, "data/sub/b.cdx")
    manifest = make(tmp_path, "data/inputs.txt", b"# the inputs\n\nsub/b.cdx\n  a.cdx  \n# done\n")
    assert resolve([manifest]) == [b, a]


def test_resolve_manifests_option(tmp_path, monkeypatch):
    a = make(tmp_path, "data/a.cdx")
    d = tmp_path / "data" / "dir"
    c = make(d, "c.cdx")
    manifest = make(tmp_path, "lists/m.txt", ("%s\n../data/dir\n" % a).encode())
    monkeypatch.chdir(tmp_path)          # relative paths resolve against the manifest, not cwd
    assert resolve([], manifests=[manifest]) == [a, c]
    assert resolve([a], manifests=[manifest]) == [a, c]


def test_a_manifest_saved_with_a_byte_order_mark_lists_its_first_input(tmp_path):
    """A manifest an editor saved as UTF-8 with a byte order mark (Windows Notepad): its first line
    names its file, given as INPUT or as --manifest (the mark was read as the name's first
    character: ``input not found: a.cdx``, or not a manifest but an unrecognised index)."""
    a = make(tmp_path, "data/a.cdx")
    b = make(tmp_path, "data/b.cdx")
    for text in (b"\xef\xbb\xbfa.cdx\r\nb.cdx\r\n", b"\xef\xbb\xbf# the inputs\na.cdx\nb.cdx\n"):
        manifest = make(tmp_path, "data/inputs.txt", text)
        assert resolve([manifest]) == [a, b]
        assert resolve([], manifests=[manifest]) == [a, b]


def test_manifest_missing_entry_names_file_and_line(tmp_path):
    make(tmp_path, "a.cdx")
    manifest = make(tmp_path, "m.txt", b"# comment\na.cdx\n\nnope.cdx\n")
    with pytest.raises(InputError) as e:
        resolve([], manifests=[manifest])
    message = str(e.value)
    assert "m.txt:4" in message and "nope.cdx" in message
    with pytest.raises(InputError, match=r"m\.txt:4"):
        resolve([manifest])


def test_missing_manifest(tmp_path):
    with pytest.raises(InputError, match="manifest not found: .*m.txt"):
        resolve([], manifests=[str(tmp_path / "m.txt")])


def test_index_file_is_not_taken_for_a_manifest(tmp_path):
    a = make(tmp_path, "a.cdx", LEGEND + CDX11)
    gz = make(tmp_path, "a.cdx.gz", gzip.compress(b"a.cdx\n"))
    assert resolve([a, gz]) == [a, gz]


# sniff

def test_sniff_cdx_with_legend(tmp_path):
    path = make(tmp_path, "a.cdx", LEGEND + CDX11 * 3)
    info = sniff(path)
    st = os.stat(path)
    assert info == {"path": path, "size": st.st_size, "compression": None,
                    "format": "cdx", "fields": "N b a m s k r M S V g", "file": [os.uname().nodename, st.st_dev, st.st_ino]}


def test_sniff_bad_legend(tmp_path):
    info = sniff(make(tmp_path, "a.cdx", b" CDX m s k\n" + CDX11))
    assert info["format"] is None
    assert "legend" in info["reason"]


@pytest.mark.parametrize("line, letters", [
    (CDX11, "N b a m s k r M S V g"),
    (CDX10, "N b a m s k r M V g"),
    (CDX9, "N b a m s k r V g"),
    (CDX7, "N b a m s k S"),
])
def test_sniff_cdx_without_legend(tmp_path, line, letters):
    info = sniff(make(tmp_path, "a.cdx", line * 3))
    assert info["format"] == "cdx"
    assert info["fields"] == letters
    assert info["inferred"] is True


def test_sniff_cdxj_with_header_lines(tmp_path):
    info = sniff(make(tmp_path, "a.cdxj", CDXJ))
    assert info["format"] == "cdxj"
    assert "fields" not in info


def test_sniff_gzip(tmp_path):
    info = sniff(make(tmp_path, "a.cdx.gz", gzip.compress(LEGEND + CDX11)))
    assert (info["compression"], info["format"], info["fields"]) == ("gzip", "cdx", "N b a m s k r M S V g")


def test_sniff_gzip_cdxj_named_cdx():
    info = sniff(shared_data("pywb", "cdxj", "example.cdx.gz"))
    assert (info["compression"], info["format"]) == ("gzip", "cdxj")


@pytest.mark.parametrize("name, data", [("a.warc", WARC), ("a.warc.gz", gzip.compress(WARC))])
def test_sniff_recognises_warc(tmp_path, name, data):
    # WARC/ARC files are profiled directly (profiler.formats.warc; more in tests/formats/test_warc.py)
    info = sniff(make(tmp_path, name, data))
    assert info["format"] == "warc"


def test_sniff_recognises_real_arc():
    info = sniff(shared_data("pywb", "warcs", "example.arc"))
    assert info["format"] == "arc"


def test_sniff_refuses_prose(tmp_path):
    info = sniff(make(tmp_path, "README.md", PROSE))
    assert info["format"] is None
    assert info["reason"] == "not %s (unrecognised layout)" % registry.listing()
    assert "a CDX index" in info["reason"] and "captures" not in info["reason"]


# 'WARC/1.0\r\n' as zstd -c writes it; a .warc.zst that starts with its dictionary's skippable frame; xz
ZSTD_WARC = bytes.fromhex("28b52ffd0458510000574152432f312e300d0a977a4fbb")
ZSTD_DICTIONARY = bytes.fromhex("5d2a4d18") + b"\x08\x00\x00\x00" + b"\x37\xa4\x30\xec\x00\x00\x00\x00"
XZ = bytes.fromhex("fd377a585a000004e6d6b446")


@pytest.mark.parametrize("name, data, compression", [
    ("a.warc.zst", ZSTD_WARC, "zstd"), ("b.warc.zst", ZSTD_DICTIONARY + ZSTD_WARC, "zstd"),
    ("c.cdx.xz", XZ, "xz")])
def test_sniff_names_a_compression_that_is_not_read(tmp_path, name, data, compression):
    info = sniff(make(tmp_path, name, data))
    assert info["format"] is None
    assert info["reason"].startswith("%s-compressed: not read" % compression)
    assert "\n" not in info["reason"]


def _warc_bytes():
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=False)
    http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record("http://example.com/", "response",
                                                  payload=io.BytesIO(b"<html></html>"), http_headers=http))
    return out.getvalue()


ARC_FILE = (b"filedesc://a.arc 0.0.0.0 20130522081727 text/plain 77\n1 0 InternetArchive\n"
            b"URL IP-address Archive-date Content-type Archive-length\n\n"
            b"http://example.com/ 1.2.3.4 20130522081728 text/html 5\nhello\n")


@pytest.mark.parametrize("name, kind", [("a.warc.bz2", "warc"), ("a.arc.bz2", "arc")])
def test_sniff_refuses_a_bz2_warc_or_arc_by_name(tmp_path, name, kind):
    """A WARC or ARC file compressed with bzip2 (its lines look like a WARC's once inflated) is
    refused with its reason: the WARC reader reads plain and gzip files, and took the bz2 bytes
    for one damaged record (exit 0, every capture lost as one bad_record)."""
    data = _warc_bytes() if kind == "warc" else ARC_FILE
    info = sniff(make(tmp_path, name, bz2.compress(data)))
    assert info["format"] is None
    assert info["reason"].startswith("bz2-compressed %s file: not read" % kind.upper())
    assert "bzip2 -d" in info["reason"] and "\n" not in info["reason"]
    assert sniff(make(tmp_path, "plain." + kind, data))["format"] == kind


@pytest.mark.parametrize("data", [b"", b"\n\n", b'!context ["x"]\n'])
def test_sniff_no_index_lines(tmp_path, data):
    info = sniff(make(tmp_path, "a.cdx", data))
    assert info["format"] is None
    assert info["reason"] == "no index lines"


def test_sniff_unreadable_gzip(tmp_path):
    data = gzip.compress(LEGEND + CDX11 * 100)
    info = sniff(make(tmp_path, "a.cdx.gz", data[:12]))
    assert info["format"] is None
    assert info["reason"].startswith("unreadable")


def test_sniff_corrupt_gzip(tmp_path):
    info = sniff(make(tmp_path, "a.cdx.gz", b"\x1f\x8b" + b"\x63" * 40))
    assert info["format"] is None
    assert info["reason"].startswith("unreadable")


def test_sniff_gzip_with_trailing_garbage_keeps_its_lines(tmp_path):
    info = sniff(make(tmp_path, "a.cdx.gz", gzip.compress(LEGEND + CDX11) + b"\0" * 8))
    assert (info["format"], info["fields"]) == ("cdx", "N b a m s k r M S V g")


def test_sniff_real_netarchivesuite_cdx():
    info = sniff(shared_data("netarchivesuite", "fyensdk.cdx"))
    assert (info["format"], info["fields"]) == ("cdx", "a e b m S g V k")


# plan_splits

def info(path, size, compression=None, fmt="cdx", fields="N b a m s k S"):
    out = {"path": path, "size": size, "compression": compression, "format": fmt}
    if fields:
        out["fields"] = fields
    return out


def _file_of(tmp_path, size):
    path = tmp_path / "a.cdx"
    path.write_bytes((b"x" * 9 + b"\n") * (size // 10))
    return str(path)


def test_plan_splits_cuts_uncompressed_files(tmp_path):
    path = _file_of(tmp_path, 250)
    splits = plan_splits([info(path, 250)], split_size=100)
    assert [(s["start"], s["end"]) for s in splits] == [(0, 100), (100, 200), (200, 250)]
    assert all(s["path"] == path and s["format"] == "cdx" and s["fields"] == "N b a m s k S"
               for s in splits)
    assert all("compression" not in s for s in splits)


def test_plan_splits_exact_multiple(tmp_path):
    splits = plan_splits([info(_file_of(tmp_path, 200), 200)], split_size=100)
    assert [(s["start"], s["end"]) for s in splits] == [(0, 100), (100, 200)]


def test_plan_splits_small_file_whole():
    assert plan_splits([info("/a.cdx", 100)], split_size=100) == [
        {"path": "/a.cdx", "format": "cdx", "fields": "N b a m s k S", "start": 0, "end": None}]


def test_plan_splits_keeps_compressed_files_whole():
    splits = plan_splits([info("/a.cdxj.gz", 10 ** 6, "gzip", "cdxj", None)], split_size=100)
    assert splits == [{"path": "/a.cdxj.gz", "compression": "gzip", "format": "cdxj", "start": 0, "end": None}]


def test_plan_splits_skips_refused_files():
    refused = {"path": "/a.warc", "size": 500, "compression": None, "format": None, "reason": "a WARC"}
    splits = plan_splits([refused, info("/b.cdx", 50)], split_size=100)
    assert [s["path"] for s in splits] == ["/b.cdx"]


def test_plan_splits_then_read_covers_every_line(tmp_path):
    from profiler.io.readers import iter_lines
    lines = [CDX7.rstrip(b"\n").replace(b"19970427191925", b"199704271919%02d" % i) for i in range(50)]
    path = make(tmp_path, "a.cdx", b"\n".join(lines) + b"\n")
    splits = plan_splits([sniff(path)], split_size=333)
    assert len(splits) > 5
    got = [line for s in splits for line in iter_lines(s["path"], s["start"], s["end"], s.get("compression"))]
    assert got == lines


def test_splits_after_a_mid_file_legend_use_that_legend(tmp_path):
    """Concatenated CDX files: a split starting after a second legend must parse with it."""
    from profiler.formats import inputs
    first = [" CDX N b a m s k r M S V g"] + [
        "com,a)/%d 20130101000000 http://a/ text/html 200 D%d - - 10 0 f" % (i, i) for i in range(50)]
    second = [" CDX a b N s m k r M V S g"] + [
        "http://b/ 20140101000000 com,b)/%d 404 image/png E%d - - 0 20 f" % (i, i) for i in range(50)]
    path = tmp_path / "concat.cdx"
    path.write_text("\n".join(first + second) + "\n")
    info = inputs.sniff(str(path))
    splits = inputs.plan_splits([info], split_size=500)
    assert {s["fields"] for s in splits} == {"N b a m s k r M S V g", "a b N s m k r M V S g"}
    from profiler.formats.registry import captures as iter_parsed
    parsed = [p for s in splits for p in iter_parsed(s)]
    assert len(parsed) == 100 and all(not isinstance(p, str) for p in parsed)
    assert sorted({(p.urlkey[:7], p.mime, p.status, p.length) for p in parsed}) == [
        ("com,a)/", "text/html", "200", 10), ("com,b)/", "image/png", "404", 20)]


def test_legend_found_across_chunk_boundaries(tmp_path):
    from profiler.formats.inputs import legend_segments
    head = b" CDX N b a m s k S\n" + b"x" * 95 + b"\n"
    data = head + b" CDX a b N m s k S\n" + b"y" * 50 + b"\n"
    path = tmp_path / "c.cdx"
    path.write_bytes(data)
    for chunk in (3, 5, 7, 64, 1 << 20):
        segments = legend_segments(str(path), len(data), "N b a m s k S", chunk=chunk)
        assert segments == [(0, len(head), "N b a m s k S"), (len(head), len(data), "a b N m s k S")], chunk


@pytest.mark.parametrize("pure", [False, True])
def test_legend_segments_find_every_legend_line_at_any_chunk_size(tmp_path, monkeypatch, pure):
    """Random files of data lines, legends (with and without the leading space or tab, tab-separated) and lookalikes
    ('CDX ' inside a line): the segments start exactly at the legend lines a line scan finds,
    at any chunk size, scanned by the compiled scan (in 1 to 5 threads over parts of the file)
    or by find() in Python."""
    import random
    from profiler.accel import fast
    if pure:
        monkeypatch.setenv(fast.PURE_ENV, "1")
    from profiler.formats import cdx
    from profiler.formats.inputs import legend_segments
    rng = random.Random(7)
    for trial in range(60):
        lines, expected = [], []
        offset = 0
        for _ in range(rng.randint(1, 40 if trial % 3 else 600)):   # some files of several pages
            r = rng.random()
            if r < 0.15 and lines:
                line = rng.choice([b" CDX a b N m s k S", b"CDX N b a m s k S", b" CDX N b a m s k r M S V g",
                                   b"\tCDX\ta\tb\tN\tm\ts\tk\tS", b"CDX\tN b a m s k S", b" CDX\tN\tb a m s k S"])
                expected.append((offset, cdx.legend_letters(line)))
            elif r < 0.3:
                line = rng.choice([b"com,x)/CDX a 2013 x", b"xCDX a b", b" xCDX N b", b"  CDX a b", b"\t\tCDX a b",
                                   b" \tCDX a b", b"CDXa b", b"\tCDXN b"])
            else:
                line = b"com,a)/%d 20130101000000 x" % rng.randrange(1000)
            lines.append(line)
            offset += len(line) + 1
        path = tmp_path / ("f%d.cdx" % trial)
        path.write_bytes(b"\n".join(lines) + b"\n")
        for chunk, workers in ((rng.randint(1, 64), rng.randint(1, 5)), (4096, 2), (1 << 23, 1), (1 << 23, 3)):
            got = legend_segments(str(path), offset, "N b a m s k S", chunk=chunk, workers=workers)
            assert [(start, letters) for start, _, letters in got] == \
                sorted(set([(0, "N b a m s k S")] + expected)), (trial, chunk, workers)


@pytest.mark.parametrize("form", [b"CDX a b N m s k S", b" CDX a b N m s k S"])
def test_a_legend_at_a_chunk_edge_is_found(tmp_path, form):
    """The legend scan reads a chunk (here 4096 bytes) at a time: a legend line that starts, or
    whose 'CDX ' starts, a few bytes before or after a chunk's edge is found."""
    from profiler.formats.inputs import legend_segments
    page = 4096
    head = b" CDX N b a m s k S\n"
    for at in range(page - 8, page + 4):
        data = head + b"x" * (at - len(head) - 1) + b"\n" + form + b"\n" + b"y" * page + b"\n"
        path = tmp_path / "edge.cdx"
        path.write_bytes(data)
        segments = legend_segments(str(path), len(data), "N b a m s k S", chunk=page)
        assert [(start, letters) for start, _, letters in segments] == \
            [(0, "N b a m s k S"), (at, "a b N m s k S")], at


def _first_fields(path, split):
    """The first field of every line of a split (lines whose first byte is in [start, end))."""
    with open(path, "rb") as f:
        data = f.read()
    start, end = split["start"], split["end"] if split["end"] is not None else len(data)
    if start:
        start = data.index(b"\n", start - 1) + 1
    out, pos = [], start
    while pos < end and pos < len(data):
        nl = data.find(b"\n", pos)
        nl = len(data) if nl < 0 else nl
        out.append(data[pos:nl].split(b" ", 1)[0])
        pos = nl + 1
    return out


def test_splits_of_a_sorted_index_end_between_urirs(tmp_path):
    """Splits of 1 MiB or more end where a line's first field (its URI-R) changes, so that a URI-R's
    lines are in one split; every line is in exactly one split; smaller splits (tests' cuts of
    URI-Rs apart) keep their byte bounds."""
    from profiler.formats.inputs import MIN_SPLIT_SIZE
    path = tmp_path / "sorted.cdx"
    lines = [b"com,example)/p%05d 2010%010d http://example.com/ text/html 200 D%05d - - 100 0 a.warc.gz\n"
             % (i // 40, i, i) for i in range(60000)]                  # 40 captures a URI-R
    path.write_bytes(b" CDX N b a m s k r M S V g\n" + b"".join(lines))
    for size, apart in ((MIN_SPLIT_SIZE, True), (MIN_SPLIT_SIZE + 12345, True), (100000, False)):
        splits = plan_splits([sniff(str(path))], size)
        assert len(splits) > 2
        fields = [_first_fields(str(path), s) for s in splits]
        assert sum(len(f) for f in fields) == len(lines) + 1           # the legend too, each line once
        straddling = [a[-1] == b[0] for a, b in zip(fields, fields[1:])]
        assert (not any(straddling)) if apart else any(straddling), size


@pytest.mark.parametrize("pure", ["", "1"])
@pytest.mark.parametrize("spelling", [" CDX%s", "CDX%s", "\tCDX%s", "\ufeff CDX%s", "\ufeffCDX%s"])
@pytest.mark.parametrize("sep", [" ", "\t"])
def test_legends_spelt_with_tabs_or_after_a_byte_order_mark(tmp_path, monkeypatch, pure, spelling, sep):
    """A legend separated by tabs, after a tab, or (first line) after a UTF-8 byte order mark is a
    legend, at the start and mid-file, in every split, compiled and Python alike: it was a
    bad_field_count line and the layout was guessed from the field count (an 11-field legend
    in another order gave the offsets for lengths, silently)."""
    from profiler.accel import fast
    from profiler.formats import inputs
    from profiler.formats.registry import captures as iter_parsed
    from profiler.run.profile import run_profile
    monkeypatch.setenv(fast.PURE_ENV, pure)
    legend = spelling.replace("%s", sep)
    first = [legend + sep.join("N b a m s k r M V S g".split())] + [
        "com,a)/%03d 20130101000000 http://a/ text/html 200 D%d - - 7 10 f" % (i, i) for i in range(300)]
    second = [legend.lstrip("\ufeff") + sep.join("a b N s m k r M V S g".split())] + [
        "http://b/ 20140101000000 com,b)/%03d 404 image/png E%d - - 9 20 f" % (i, i) for i in range(300)]
    path = tmp_path / "concat.cdx"
    path.write_text("\n".join(first + second) + "\n", encoding="utf-8")
    info = inputs.sniff(str(path))
    assert info["format"] == "cdx" and info["fields"] == "N b a m s k r M V S g"
    splits = inputs.plan_splits([info], split_size=4000)
    assert len(splits) > 4 and {s["fields"] for s in splits} == {"N b a m s k r M V S g", "a b N s m k r M V S g"}
    parsed = [p for s in splits for p in iter_parsed(s)]
    assert len(parsed) == 600 and all(not isinstance(p, str) for p in parsed)
    out = tmp_path / "out.cdxj"
    summary = run_profile([str(path)], str(out), split_size=1 << 20)["summary"]
    assert summary["run"]["captures"] == 600 and summary["run"]["skipped"] == {}
    assert summary["root"]["bytes"] == 300 * 10 + 300 * 20


def test_a_byte_order_mark_starts_no_key(tmp_path):
    """A UTF-8 byte order mark at the start of an index (plain or compressed) is no part of its
    first line: the first capture's SURT was '\\ufeffcom,...', a TLD of its own."""
    import gzip
    from profiler.formats import inputs
    from profiler.formats.registry import captures as iter_parsed
    lines = b"".join(b'com,example)/p%d 20130101000000 {"url":"http://example.com/p%d"}\n' % (i, i) for i in range(3))
    for name, data in (("a.cdxj", b"\xef\xbb\xbf" + lines), ("a.cdxj.gz", gzip.compress(b"\xef\xbb\xbf" + lines))):
        path = tmp_path / name
        path.write_bytes(data)
        parsed = [p for s in inputs.plan_splits([inputs.sniff(str(path))]) for p in iter_parsed(s)]
        assert [p.urlkey for p in parsed] == ["com,example)/p0", "com,example)/p1", "com,example)/p2"]


def test_the_kernel_s_filesystems_are_told_from_data(tmp_path):
    """Files and folders of /proc and /sys are the kernel's (never read or walked); a file of
    data, and a mountinfo that cannot be read, are not."""
    from profiler.io import pseudofs
    assert pseudofs.pseudo_filesystem(os.stat("/proc/self/status")) == "proc"
    assert pseudofs.pseudo_filesystem(os.stat("/sys/kernel")) == "sysfs"
    data = tmp_path / "a.cdx"
    data.write_bytes(b"")
    assert pseudofs.pseudo_filesystem(os.stat(str(data))) is None
    assert inputs.not_regular("/proc/self/status") == "on the kernel's proc filesystem, not a file of data"
    assert inputs.resolve(["/proc"]) == ["/proc"]          # not walked: one input, refused by sniff


def test_an_index_naming_its_archive_with_spaces_is_found_with_it(tmp_path):
    """A CDX whose last field is a WARC file name with spaces (cdxj-indexer's index of
    ``my  crawl.warc.gz``) given with that file: named as indexing it (the name was cut at its
    first space, so the captures were counted twice without the warning)."""
    warc = make(tmp_path, "my  crawl.warc.gz", open(shared_data("pywb", "warcs", "example.warc.gz"), "rb").read())
    line = (b"com,example)/ 20140103030321 http://example.com/ text/html 200 "
            b"B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 1043 333 my  crawl.warc.gz\n")
    cdx = make(tmp_path, "i.cdx", LEGEND + line)
    assert inputs.indexed_archives([sniff(cdx), sniff(warc)]) == [(cdx, warc)]
    nine = make(tmp_path, "i9.cdx", b" CDX N b a m s k r V g u\n" + line.replace(b" - - 1043 ", b" - ").rstrip() + b" x\n")
    assert inputs.indexed_archives([sniff(nine), sniff(warc)]) == []     # g not last: its first word only


def test_an_index_and_the_archive_it_indexes_given_together_are_named(tmp_path):
    """An archive's WARC files beside their CDX or CDXJ, profiled as one folder, counted every
    capture twice without a word (342 captures of iana.warc.gz's 171): one warning naming them."""
    import subprocess
    import sys
    from helpers.paths import ROOT
    warc = shared_data("pywb", "warcs", "iana.warc.gz")
    cdx, cdxj = shared_data("pywb", "cdx", "iana.cdx"), shared_data("pywb", "cdxj", "iana.cdxj")
    other = shared_data("pywb", "cdx", "example.cdx")
    infos = [sniff(p) for p in (cdx, cdxj, other, warc)]
    assert inputs.indexed_archives(infos) == [(cdx, warc), (cdxj, warc)]
    assert inputs.indexed_archives([sniff(p) for p in (cdx, other)]) == []        # indexes alone
    gz = tmp_path / "iana.cdx.gz"
    gz.write_bytes(gzip.compress(open(cdx, "rb").read()))
    assert inputs.indexed_archives([sniff(str(gz)), sniff(warc)]) == [(str(gz), warc)]
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", cdx, warc, "-o", str(tmp_path / "p.cdxj")],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == ("archive-profiler: %s indexes %s, which is an input too: their captures "
                                        "are counted twice (give the indexes or the WARC/ARC files, not both)"
                                        % (cdx, warc)), r.stderr
