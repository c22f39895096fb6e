"""Quirks of real third-party WARC and ARC files that warcio and pywb read: each is read as they
read it (or skipped, counted), by every WARC reader and by the whole profile run."""

import gzip
import io
import subprocess
import sys

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from helpers.captures import warc_readers


def _warc(uris=("http://example.com/", "http://example.com/a"), date="2009-01-13T19:13:58Z"):
    """warcio's records (plain), one bytes object each."""
    records = []
    for uri in uris:
        buf = io.BytesIO()
        writer = WARCWriter(buf, gzip=False)
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(uri, "response", payload=io.BytesIO(b"<html>hi</html>"),
                                                      http_headers=http, warc_headers_dict={"WARC-Date": date}))
        records.append(buf.getvalue())
    return records


def _profile(tmp_path, path):
    out = tmp_path / (path.name + ".cdxj")
    run = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", str(path), "-o", str(out), "-r", "inline",
                          "--quiet"], capture_output=True)
    assert run.returncode == 0, run.stderr
    lines = out.read_text().splitlines()
    meta = next(line for line in lines if line.startswith('!meta {"inputs"'))
    return meta[meta.index('"captures"'):], next(line for line in lines if line.startswith("* - - - "))


@pytest.mark.parametrize("gz", [False, True])
def test_a_lower_case_warc_version_line_is_a_warc_record(tmp_path, gz):
    """``warc/1.0`` (warcio reads the version line in any case): a WARC file of such records is a
    WARC file (it was 'unrecognised layout'), each such record a record of it."""
    records = _warc()
    lower = [r.replace(b"WARC/1.0\r\n", b"warc/1.0\r\n", 1) for r in records]
    for name, recs in (("upper", records), ("lower", lower), ("mixed", [records[0], lower[1]])):
        path = tmp_path / (name + ".warc" + (".gz" if gz else ""))
        path.write_bytes(b"".join(gzip.compress(r) if gz else r for r in recs))
        for reader in warc_readers():
            found = [c if isinstance(c, str) else (c.urlkey, c.timestamp, c.status) for c in reader(str(path))]
            assert found == [("com,example)/", "20090113191358", "200"),
                             ("com,example)/a", "20090113191358", "200")], (name, reader)
        meta, top = _profile(tmp_path, path)
        assert meta.startswith('"captures":2,"skipped":{}'), name
        assert '"urim":{"total":2,' in top and '"first":"20090113191358"' in top


@pytest.mark.parametrize("date, ts", [
    ("2009-01-13T19:13:58-0800", "20090114031358"),          # ClueWeb09
    ("2009-01-13T19:13:58-08:00", "20090114031358"),
    ("2009-01-13T19:13:58-08", "20090114031358"),            # ISO 8601: a zone of hours only
    ("2009-01-13T19:13:58,5-0800", "20090114031358"),        # ISO 8601's decimal comma
    ("2009-01-13T19:13:58.123456Z", "20090113191358"),       # WARC/1.1's microseconds
    ("2009-01-13T19:13:58.123456789+01:00", "20090113181358"),
    ("2009-03-65T08:43:19-0800", "bad_timestamp"),           # ClueWeb09's impossible days
    ("2009-02-29T08:43:19Z", "bad_timestamp"),
])
def test_warc_dates_of_other_tools_are_read_in_utc(tmp_path, date, ts):
    """A WARC-Date with a numeric zone is converted to UTC, a fraction of a second dropped (warcio
    read an hours-only zone as microseconds, the capture 8 hours off); an impossible date is a
    counted bad_timestamp."""
    path = tmp_path / "dates.warc"
    path.write_bytes(b"".join(_warc(uris=("http://example.com/",), date=date)))
    for reader in warc_readers():
        found = [c if isinstance(c, str) else c.timestamp for c in reader(str(path))]
        assert found == [ts], reader


@pytest.mark.parametrize("name, value", [("WARC-Target-URI", b"http://example.com/a"),
                                         ("WARC-Date", b"2009-01-13T19:13:58Z"),
                                         ("WARC-Type", b"response")])
def test_a_folded_warc_header_is_read_as_its_value(tmp_path, name, value):
    """A WARC header folded onto the next line (the grammar's LWS: ``WARC-Target-URI:`` CRLF, then
    blanks and the URI): its value without those blanks. warcio kept them, percent-encoded
    (``%20%20http)/example.com``) and fastwarc one (``%20http)/...``): a wrong key, and the
    readers parted."""
    record = _warc(uris=("http://example.com/a",))[0]
    head = name.encode() + b": " + value + b"\r\n"
    assert head in record
    path = tmp_path / "folded.warc"
    path.write_bytes(record.replace(head, name.encode() + b":\r\n  " + value + b"\r\n"))
    for reader in warc_readers():
        found = [c if isinstance(c, str) else (c.urlkey, c.timestamp, c.status) for c in reader(str(path))]
        assert found == [("com,example)/a", "20090113191358", "200")], reader


def test_an_upper_case_scheme_is_the_same_uri(tmp_path):
    """``DNS:example.com`` (a scheme is case-insensitive) has the key of ``dns:example.com``, as
    Heritrix writes it: surt() kept the case of a scheme it does not know, two URI-Rs for one."""
    from profiler.formats import cdx
    path = tmp_path / "dns.warc"
    path.write_bytes(b"".join(_warc(uris=("DNS:example.com", "dns:example.com", "Dns:Example.com", "HTTP://Example.com/"))))
    for reader in warc_readers():
        found = [c if isinstance(c, str) else c.urlkey for c in reader(str(path))]
        assert found == ["dns:example.com"] * 3 + ["com,example)/"], reader
    parse = cdx.make_parser("N b a m s k r M S V g")
    line = b"DNS:example.com 20090113191358 DNS:example.com text/dns 200 AAAA - - 52 0 a.warc.gz"
    assert parse(line).urlkey == "dns:example.com"


def _arc(version, sep, eol, filedesc, gz):
    """An ARC file of version 1 or 2 of two responses, its header fields parted by sep, its lines
    ended by eol (the HTTP heads by CRLF), with or without its filedesc record."""
    if version == 1:
        names = b"1 0 InternetArchive" + eol + b"URL IP-address Archive-date Content-type Archive-length" + eol
    else:
        names = (b"2 0 Alexa" + eol + b"URL IP-address Archive-date Content-type Result-code Checksum Location "
                 b"Offset Filename Archive-length" + eol)
    v2 = [b"200", b"-", b"-", b"0", b"test.arc"] if version == 2 else []
    records = []
    if filedesc:
        fields = [b"filedesc://test.arc", b"0.0.0.0", b"20090113191358", b"text/plain"] + v2
        records.append(sep.join(fields + [b"%d" % len(names)]) + eol + names + eol)
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nhi"
    for url in (b"http://example.com/", b"DNS:example.com"):
        fields = [url, b"93.184.216.34", b"20090113191358", b"text/html"] + v2
        records.append(sep.join(fields + [b"%d" % len(block)]) + eol + block + eol)
    return b"".join(gzip.compress(r) if gz else r for r in records)


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("sep", [b" ", b"\t"])
@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
@pytest.mark.parametrize("filedesc", [True, False])
def test_arc_files_of_other_tools_are_read(tmp_path, version, sep, eol, filedesc):
    """ARC v1 and v2, header fields parted by spaces or tabs, lines ended by LF or CRLF, with or
    without a filedesc record: every response is read (tabs: a bad_record each, and without a
    filedesc record the file was of no known format)."""
    from profiler.formats import warc
    for gz in (False, True):
        path = tmp_path / ("test.arc" + (".gz" if gz else ""))
        path.write_bytes(_arc(version, sep, eol, filedesc, gz))
        found = [c if isinstance(c, str) else (c.urlkey, c.timestamp) for c in warc.iter_captures(str(path))]
        assert found == ["warcinfo_record"] * filedesc + [("com,example)/", "20090113191358"),
                                                          ("dns:example.com", "20090113191358")], gz
    if version == 2 and eol == b"\r\n":
        meta, top = _profile(tmp_path, path)
        assert meta.startswith('"captures":2,"skipped":{%s}' % ('"warcinfo_record":1' if filedesc else "")), meta
        assert '"urim":{"total":2,' in top


CDX_LINES = (b" CDX N b a m s k r M S V g\n"
             b"com,example)/ 20130101120000 http://example.com/ text/html 200 AAAA - - 1043 333 a.warc.gz\n")
CRAWL_LOG = (b"2009-01-13T19:13:58.123Z   200       1234 http://example.com/ - - text/html #001 "
             b"20090113191357890+120 sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567 - -\n")


@pytest.mark.parametrize("pure", [False, True])
@pytest.mark.parametrize("name, data", [("i.cdx", CDX_LINES), ("crawl.log", CRAWL_LOG)])
def test_a_byte_order_mark_starts_no_line(tmp_path, monkeypatch, name, data, pure):
    """A UTF-8 byte order mark before a CDX legend or a crawl.log's first line (a file saved by a
    Windows editor) is no part of the line: the legend is read, the line a capture, compiled and
    Python alike."""
    from profiler import contract
    monkeypatch.delenv(contract.PURE_ENV, raising=False)
    if pure:
        monkeypatch.setenv(contract.PURE_ENV, "1")
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + data)
    meta, top = _profile(tmp_path, path)
    assert meta.startswith('"captures":1,"skipped":{}'), meta
