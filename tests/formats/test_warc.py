"""WARC/ARC records -> captures (profiler.formats.warc), sniffing, and broken archives."""

import base64
import collections
import glob
import gzip
import hashlib
import io
import json
import os

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from profiler.formats import inputs, warc
from profiler.formats import registry
from profiler.run.profile import run_profile

from helpers.captures import expected, fields
from helpers.paths import SHARED_DATA, shared_data

DATE = "2020-01-02T03:04:05Z"
TS = "20200102030405"
BODY = b"<html>hello</html>"
BODY_SHA1 = base64.b32encode(hashlib.sha1(BODY).digest()).decode()


def record(rec_type, uri="http://example.com/a", date=DATE, block=b"", headers=(), length=True):
    """Raw bytes of one WARC record (block written as given, no digests unless in headers)."""
    lines = [b"WARC/1.0", b"WARC-Type: " + rec_type.encode(), b"WARC-Record-ID: <urn:uuid:1>"]
    if date:
        lines.append(b"WARC-Date: " + date.encode())
    if uri:
        lines.append(b"WARC-Target-URI: " + (uri if isinstance(uri, bytes) else uri.encode()))
    lines += [h if isinstance(h, bytes) else h.encode() for h in headers]
    if length:
        lines.append(b"Content-Length: %d" % len(block))
    return b"\r\n".join(lines) + b"\r\n\r\n" + block + b"\r\n\r\n"


def http(status=b"200 OK", ctype=b"text/html; charset=utf-8", body=BODY, extra=b""):
    head = b"HTTP/1.1 " + status + b"\r\n"
    if ctype:
        head += b"Content-Type: " + ctype + b"\r\n"
    return head + extra + b"Content-Length: %d\r\n\r\n" % len(body) + body


def write(path, records, gz=True):
    """Write records (bytes) as a per-record gzip or plain file; returns each record's stored size."""
    sizes = []
    with open(path, "wb") as f:
        for r in records:
            data = gzip.compress(r) if gz else r
            f.write(data)
            sizes.append(len(data) if gz else len(r) - 4)   # plain: trailing CRLFs not counted
    return sizes


def captures(path):
    got = list(warc.iter_captures(str(path)))
    return [c for c in got if not isinstance(c, str)], collections.Counter(c for c in got if isinstance(c, str))


RESPONSE = record("response", block=http(), headers=["WARC-Payload-Digest: sha1:" + BODY_SHA1,
                                                    "Content-Type: application/http; msgtype=response"])


@pytest.mark.parametrize("gz", [True, False])
def test_response_fields_and_stored_length(tmp_path, gz):
    path = tmp_path / ("a.warc.gz" if gz else "a.warc")
    sizes = write(path, [record("warcinfo", uri=None, block=b"software: x\r\n"), RESPONSE,
                         record("response", uri="http://Example.com/b?x=1", block=http(b"404 Not Found"))], gz)
    caps, skipped = captures(path)
    assert skipped == {"warcinfo_record": 1}
    assert caps[0] == expected(urlkey="com,example)/a", timestamp=TS, mime="text/html", status="200",
                               digest=BODY_SHA1, length=sizes[1])
    assert fields(caps[1], "urlkey", "timestamp", "mime", "status") == ("com,example)/b?x=1", TS, "text/html", "404")
    assert caps[1].length == sizes[2]


def test_digest_computed_when_absent_is_base32_sha1_of_payload(tmp_path):
    path = tmp_path / "a.warc.gz"
    write(path, [record("response", block=http(body=b"payload bytes"))])
    (cap,), _ = captures(path)
    assert cap.digest == base64.b32encode(hashlib.sha1(b"payload bytes").digest()).decode()


def test_declared_digest_is_taken_as_is_even_when_wrong(tmp_path):
    path = tmp_path / "a.warc.gz"
    write(path, [record("response", block=http(), headers=["WARC-Payload-Digest: sha1:aaaabbbb"])])
    (cap,), _ = captures(path)
    assert cap.digest == "AAAABBBB"


def test_revisit_resource_and_skipped_types(tmp_path):
    path = tmp_path / "a.warc.gz"
    write(path, [
        record("request", block=b"GET /a HTTP/1.1\r\n\r\n"),
        RESPONSE,
        record("metadata", block=b"via: x\r\n", headers=["Content-Type: application/warc-fields"]),
        record("revisit", block=http(body=b""), headers=["WARC-Payload-Digest: sha1:" + BODY_SHA1]),
        record("revisit", uri="http://example.com/nodigest", block=http(status=b"304 Not Modified", body=b"")),
        record("resource", uri="file:///x.json", block=b'{"a":1}', headers=["Content-Type: Application/JSON"]),
        record("resource", uri="metadata://x", block=b"a: b\r\n", headers=["Content-Type: application/warc-fields"]),
        record("conversion", block=b"x"),
    ])
    caps, skipped = captures(path)
    assert skipped == {"request_record": 1, "metadata_record": 1, "warc_fields_record": 1, "other_record": 1}
    revisit, orphan, resource = caps[1:]
    assert fields(revisit, "mime", "status", "digest") == ("warc/revisit", "200", BODY_SHA1) and revisit.revisit is True
    assert fields(orphan, "mime", "status", "digest") == ("warc/revisit", "304", "-")
    assert fields(resource, "urlkey", "timestamp", "mime", "status", "digest") == ("file:/x.json", TS, "application/json", "unk",
                            base64.b32encode(hashlib.sha1(b'{"a":1}').digest()).decode())


def test_warcio_written_warc_1_1(tmp_path):
    path = tmp_path / "w.warc.gz"
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True, warc_version="1.1")
        headers = StatusAndHeaders("200 OK", [("Content-Type", "image/png")], protocol="HTTP/1.0")
        w.write_record(w.create_warc_record("http://example.org/i.png", "response", payload=io.BytesIO(b"PNG"),
                                            http_headers=headers))
    (cap,), _ = captures(path)
    assert cap.urlkey == "org,example)/i.png" and fields(cap, "mime", "status") == ("image/png", "200")
    assert cap.digest == base64.b32encode(hashlib.sha1(b"PNG").digest()).decode()


ARC_DESC = b"1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n"
ARC_FILEDESC = b"filedesc://test.arc 0.0.0.0 20140216050221 text/plain %d\n%s\n" % (len(ARC_DESC), ARC_DESC)


def arc_record(url=b"http://example.com/", date=b"20140216050221", body=http(ctype=b"text/plain")):
    return b"%s 93.184.216.119 %s text/plain %d\n%s\n" % (url, date, len(body), body)


@pytest.mark.parametrize("gz", [True, False])
def test_arc_timestamp_from_arc_date(tmp_path, gz):
    path = tmp_path / ("a.arc.gz" if gz else "a.arc")
    with open(path, "wb") as f:
        for r in (ARC_FILEDESC, arc_record(), arc_record(date=b"201402160502")):
            f.write(gzip.compress(r) if gz else r)
    assert inputs.sniff(str(path))["format"] == "arc"
    caps, skipped = captures(path)
    assert skipped == {"warcinfo_record": 1}
    # a 12-digit ARC date is padded by warcio (as cdxj-indexer does): to the end of the minute
    assert [fields(c, "urlkey", "timestamp", "mime", "status") for c in caps] == [("com,example)/", "20140216050221", "text/plain", "200"),
                                     ("com,example)/", "20140216050259", "text/plain", "200")]
    assert caps[0].digest == BODY_SHA1


@pytest.mark.parametrize("gz", [True, False])
def test_arc_records_after_the_newline_of_the_arc_grammar(tmp_path, gz):
    """The ARC format's grammar puts a newline before each record (``doc == <nl><URL-record>``):
    a writer that compresses it with the record it precedes starts each member with it."""
    path = tmp_path / ("nl.arc.gz" if gz else "nl.arc")
    first, second = arc_record()[:-1], arc_record(url=b"http://example.com/b")[:-1]
    with open(path, "wb") as f:
        for r in (ARC_FILEDESC[:-1], b"\n" + first, b"\n" + second + b"\n"):
            f.write(gzip.compress(r) if gz else r)
    caps, skipped = captures(path)
    assert skipped == {"warcinfo_record": 1}
    assert [c.urlkey for c in caps] == ["com,example)/", "com,example)/b"]
    assert [fields(c, "timestamp", "mime", "status", "digest") for c in caps] == \
        [("20140216050221", "text/plain", "200", BODY_SHA1)] * 2
    if gz:
        assert [c.length for c in caps] == [len(gzip.compress(b"\n" + first)), len(gzip.compress(b"\n" + second + b"\n"))]


def test_arc_without_filedesc_is_sniffed(tmp_path):
    path = tmp_path / "noheader.arc"
    path.write_bytes(arc_record())
    assert inputs.sniff(str(path))["format"] == "arc"
    caps, _ = captures(path)
    assert len(caps) == 1


def test_truncated_gzip_member_counts_records_before_it(tmp_path):
    path = tmp_path / "t.warc.gz"
    write(path, [RESPONSE, RESPONSE, record("response", block=http(body=os.urandom(5000)))])
    data = path.read_bytes()
    path.write_bytes(data[:-1500])
    caps, skipped = captures(path)
    assert len(caps) == 2 and skipped == {"truncated_record": 1}


def test_truncated_plain_record(tmp_path):
    path = tmp_path / "t.warc"
    write(path, [RESPONSE, record("response", block=http(body=b"x" * 500))], gz=False)
    path.write_bytes(path.read_bytes()[:-300])
    caps, skipped = captures(path)
    assert len(caps) == 1 and skipped == {"truncated_record": 1}


def test_gzip_members_that_cut_records_apart(tmp_path):
    path = tmp_path / "w.warc.gz"
    raw = RESPONSE + RESPONSE
    path.write_bytes(gzip.compress(raw[:300]) + gzip.compress(raw[300:]))
    caps, skipped = captures(path)
    assert not caps and sum(skipped.values()) >= 1 and set(skipped) <= {"truncated_record", "bad_record"}


def test_damaged_gzip_data_is_counted_not_printed(tmp_path, capfd):
    path = tmp_path / "w.warc.gz"
    write(path, [RESPONSE, record("response", block=http(body=b"y" * 4000))])
    data = bytearray(path.read_bytes())
    first = len(gzip.compress(RESPONSE))
    for i in range(first + 40, first + 60):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    caps, skipped = captures(path)
    assert len(caps) == 1 and sum(skipped.values()) == 1
    assert capfd.readouterr().err == ""


HEADER_ONLY = b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Date: 2020-01-01T00:00:00Z\r\nWARC-Target-URI: http://a/\r\n"


@pytest.mark.parametrize("gz", [True, False])
def test_header_only_records(tmp_path, gz):
    path = tmp_path / "h.warc"
    write(path, [RESPONSE, record("response", block=b"", length=False)], gz)
    caps, skipped = captures(path)
    assert len(caps) == 1 and skipped == {"header_only_record": 1}
    # a last record cut inside its header: warcio ends quietly, the tail is reported
    write(path, [RESPONSE, RESPONSE], gz)
    with open(path, "ab") as f:
        f.write(gzip.compress(HEADER_ONLY) if gz else HEADER_ONLY)
    caps, skipped = captures(path)
    assert len(caps) == 2 and skipped == {"truncated_record": 1}


def test_empty_gzip_members_and_trailing_blank_lines_are_not_a_tail(tmp_path):
    path = tmp_path / "e.warc.gz"
    write(path, [RESPONSE, RESPONSE])
    with open(path, "ab") as f:
        f.write(gzip.compress(b"") + gzip.compress(b""))
    assert captures(path)[1] == {}


def test_non_utf8_header_bytes(tmp_path):
    path = tmp_path / "n.warc"
    block = http(ctype=b"text/html; charset=\xff\xfe", extra=b"X-Odd: \xff\xff\r\n")
    write(path, [record("response", uri=b"http://example.com/caf\xe9", block=block)], gz=False)
    (cap,), skipped = captures(path)
    assert fields(cap, "mime", "status") == ("text/html", "200")
    assert " " not in cap.urlkey and cap.urlkey.startswith("com,example)/caf")


def test_bad_date_and_missing_uri(tmp_path):
    path = tmp_path / "d.warc"
    write(path, [record("response", date="yesterday", block=http()), RESPONSE,
                 record("response", uri=None, block=http()), RESPONSE], gz=False)
    caps, skipped = captures(path)
    # a response without WARC-Target-URI is skipped, the records after it read
    assert len(caps) == 2 and skipped == {"bad_timestamp": 1, "bad_url": 1}


def test_whole_file_gzip_is_read_sequentially(tmp_path):
    """(profiles of such files: tests/formats/test_whole_gzip_warc.py)"""
    path = tmp_path / "whole.warc.gz"
    path.write_bytes(gzip.compress(RESPONSE + RESPONSE + RESPONSE))
    info = inputs.sniff(str(path))
    assert info["format"] == "warc" and info["whole_gzip"] is True
    caps, skipped = captures(path)      # (warcio alone refuses it) the reader finds it out itself too
    assert len(caps) == 3 and skipped == {"not_chunked": 1}
    assert [c[5] for c in caps] == [len(RESPONSE) - 4] * 3          # uncompressed record lengths


@pytest.mark.parametrize("content", [b"\x00\x01binary" * 100, b"just some text\nnot an index\n",
                                     gzip.compress(b"hello\nworld\n")])
def test_files_that_are_not_warcs(tmp_path, content):
    path = tmp_path / "x.warc.gz"
    path.write_bytes(content)
    assert inputs.sniff(str(path))["format"] is None


def test_plain_warc_is_one_split_whatever_its_size(tmp_path):
    path = tmp_path / "big.warc"
    write(path, [RESPONSE] * 50, gz=False)
    splits = inputs.plan_splits([inputs.sniff(str(path))], split_size=1000)
    assert len(splits) == 1 and splits[0]["format"] == "warc"
    assert len([c for c in registry.captures(splits[0]) if not isinstance(c, str)]) == 50


def test_profile_of_a_warc_reports_skips_in_meta(tmp_path):
    path = tmp_path / "a.warc.gz"
    write(path, [record("warcinfo", uri=None, block=b"x: y\r\n"), record("request", block=b"GET / HTTP/1.1\r\n\r\n"),
                 RESPONSE, record("response", date="bad", block=http())])
    out = tmp_path / "p.cdxj"
    run_profile([str(path)], str(out), policy="full")
    lines = out.read_bytes().splitlines()
    meta = json.loads(next(l for l in lines if l.startswith(b'!meta {"inputs"'))[6:])
    assert meta["captures"] == 1
    assert meta["skipped"] == {"bad_timestamp": 1, "request_record": 1, "warcinfo_record": 1}
    assert any(l.startswith(b"com,example)/a 2020 text/html 200 ") for l in lines)


# ---------------------------------------------------------------- the shared corpus

ARCHIVES = sorted(
    os.path.relpath(p, SHARED_DATA) for p in glob.glob(os.path.join(SHARED_DATA, "**", "*"), recursive=True)
    if os.path.isfile(p) and (".warc" in os.path.basename(p) or ".arc" in os.path.basename(p))
    and not p.endswith((".cdx", ".cdxj")))

#: (captures, skipped) of the broken or unusual corpus files
CORPUS_EXPECTED = {
    # two lines of its damaged part that warcio would take for ARC records are not captures
    "ipwb/warcs/broken.warc": (2, {"warcinfo_record": 1, "request_record": 2, "metadata_record": 1,
                                   "bad_record": 1}),
    "ipwb/warcs/variableSizedDates.warc": (3, {"warcinfo_record": 1, "bad_timestamp": 1}),
    "ipwb/warcs/redirect.warc": (0, {"warcinfo_record": 1, "truncated_record": 1}),
    # a response cut apart by member boundaries; the request record in the member after them
    # (which starts with the blank lines that end the response) is read
    "warcio/example-wrong-chunks.warc.gz": (0, {"truncated_record": 1, "bad_record": 1, "request_record": 1}),
    "warcio/example-space-in-url.arc": (0, {"warcinfo_record": 1, "truncated_record": 1}),
    "cdx-writer/small_warcs/bad_url_with_colon_1.arc.gz": (0, {"bad_url": 1}),
    "warcat/not_utf8_http_header.warc": (1, {}),
    "pywb/warcs/iana.warc.gz": (171, {"warcinfo_record": 1, "request_record": 171}),
    # no newline between its records: its metadata record's header follows the filedesc's block
    # straight (warcio would take it for the separator and read the CDX lines of the block as
    # ARC records); read, and noted
    "netarchivesuite/2-metadata-1.arc": (1, {"warcinfo_record": 1, "unseparated_record": 1}),
    "pywb/warcs/bad.arc": (2, {"warcinfo_record": 1, "bad_record": 1}),       # a length of "abc"
    # a request record 3 bytes short of its Content-Length
    "cdx-writer/small_warcs/date_resolution_microsecond.warc.gz": (0, {"truncated_record": 1}),
}
WHOLE_FILE_GZIP = ("pywb/warcs/example-bad.warc.gz.bad", "warcio/example-bad-non-chunked.warc.gz")


def test_corpus_archives_are_listed():
    shared_data()
    assert len(ARCHIVES) >= 110


@pytest.mark.parametrize("name", sorted(CORPUS_EXPECTED) + list(WHOLE_FILE_GZIP))
def test_corpus_archive_captures_and_skips(name):
    path = shared_data(name)
    info = inputs.sniff(path)
    kind = "arc" if name.endswith((".arc", ".arc.gz")) else "warc"
    if name in WHOLE_FILE_GZIP:                 # profiled: tests/formats/test_whole_gzip_warc.py
        assert info["format"] == kind and info["whole_gzip"] is True
        return
    assert info["format"] == kind
    caps, skipped = captures(path)
    assert (len(caps), dict(skipped)) == CORPUS_EXPECTED[name]


def test_every_corpus_archive_profiles_in_one_run(tmp_path):
    shared_data()                      # without the corpus: skip (fail under CI=true)
    paths = [shared_data(n) for n in ARCHIVES]
    out = tmp_path / "all.cdxj"
    run_profile(paths, str(out), policy="default")
    lines = out.read_bytes().splitlines()
    assert lines == sorted(lines)
    meta = json.loads(next(l for l in lines if l.startswith(b'!meta {"inputs"'))[6:])
    assert not meta.get("skipped_files")          # whole-file gzip ones too are read
    assert len(meta["inputs"]) == len(ARCHIVES)
    total = json.loads(next(l for l in lines if l.startswith(b"* - - - "))[8:])
    assert total["urim"]["total"] == meta["captures"] > 1000
    # 2 in each whole-file gzip WARC; 2 request records short of their Content-Length are truncated_record;
    # example-wrong-chunks' third member: a request record after blank lines
    assert meta["skipped"]["request_record"] == 648 + 4 - 2 + 1
    assert meta["skipped"]["not_chunked"] == len(WHOLE_FILE_GZIP)
    assert "unusable_file" not in meta["skipped"]


def test_warc_timestamp_agrees_with_warcio():
    import random
    from warcio.timeutils import iso_date_to_timestamp
    rng = random.Random(1)
    dates = ["2013-12-26T10:11:12Z", "2012-02-29T00:00:00Z", "2013-02-29T00:00:00Z", "2013-02-30T10:11:12Z",
             "2013-12-26T10:11:60Z", "2013-12-26T10:11:12.123Z", "2013-12-26T10:11:12", "2014-01", "", None]
    dates += ["%04d-%02d-%02dT%02d:%02d:%02dZ" % (rng.randint(1990, 2030), rng.randint(0, 13), rng.randint(0, 32),
                                               rng.randint(0, 25), rng.randint(0, 61), rng.randint(0, 61))
              for _ in range(3000)]
    for date in dates:
        try:
            expected = iso_date_to_timestamp(date)
        except Exception:
            expected = None
        assert warc.warc_timestamp(date) == expected, date


@pytest.mark.parametrize("date, ts", [
    ("2020-01-02T23:04:05-05:00", "20200103040405"),          # a zone of W3C-DTF
    ("2020-01-02T03:04:05.123456+00:00", "20200102030405"),    # Python's datetime.isoformat()
    ("2020-01-02T03:04:05+0200", "20200102010405"),            # Java's 'Z' pattern; warcio read it as UTC
    ("2020-01-02 03:04:05+00:00", "20200102030405"),           # Python's str(datetime)
    ("2020-01-02T03:04:05+24:00", None)])
def test_a_warc_date_with_a_numeric_zone_is_converted_to_utc(tmp_path, date, ts):
    from profiler.formats import warc_fast
    assert warc.warc_timestamp(date) == ts
    path = tmp_path / "z.warc.gz"
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True, warc_version="1.1")
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        w.write_record(w.create_warc_record("http://example.org/", "response", payload=io.BytesIO(BODY),
                                            http_headers=headers, warc_headers_dict={"WARC-Date": date}))
    for read in (warc.iter_captures, warc_fast.iter_captures):
        got = list(read(str(path)))
        if ts is None:
            assert got == ["bad_timestamp"], read
        else:
            assert [c.timestamp for c in got] == [ts], read
