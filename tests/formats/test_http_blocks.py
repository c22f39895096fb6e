"""A WARC response whose block is an HTTP message (Content-Type ``application/http``) gives the
media type and status of its HTTP head whatever the scheme of its URI: Scoop records its
screenshots as ``file:///screenshot.png`` responses, a browser crawler records extension
scripts as ``chrome-extension://...`` ones, and a scheme may be written in upper case
(``HTTP://``). warcio parsed the head only after a lower-case ``http:`` or ``https:``, so such
records were mime ``unk`` and status ``unk``, and a digest computed for them covered their
HTTP head. A record of another block (``text/dns``) and an ARC record keep their reading."""

import base64
import hashlib
import io

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from helpers.captures import warc_readers

PAYLOAD = b"\x89PNG\r\n\x1a\n not really a picture"
SHA1 = base64.b32encode(hashlib.sha1(PAYLOAD).digest()).decode("ascii")


def _record(writer, uri, rec_type="response", content_type="application/http; msgtype=response", status="200 OK",
            payload=PAYLOAD, digest=True):
    http = StatusAndHeaders(status, [("Content-Type", "image/png")], protocol="HTTP/1.1") \
        if content_type.startswith("application/http") else None
    record = writer.create_warc_record(uri, rec_type, payload=io.BytesIO(payload), http_headers=http,
                                       warc_content_type=content_type,
                                       warc_headers_dict={"WARC-Date": "2023-02-19T00:50:00Z"})
    if not digest:
        record.rec_headers.remove_header("WARC-Payload-Digest")
    writer.write_record(record)


def _warc(path, gzip):
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=gzip)
        _record(writer, "file:///screenshot.png")
        _record(writer, "chrome-extension://react-perf/page.bundle.js", digest=False)
        _record(writer, "HTTP://EXAMPLE.COM/a.png", status="404 Not Found")
        _record(writer, "dns:example.com", content_type="text/dns", payload=b"20230219005000\nexample.com. 1 IN A 1.2.3.4\n")
    return str(path)


@pytest.mark.parametrize("gzip", [False, True])
def test_an_http_message_of_any_uri_scheme_gives_its_head(tmp_path, gzip):
    path = _warc(tmp_path / ("x.warc.gz" if gzip else "x.warc"), gzip)
    for reader in warc_readers():
        found = [(c.urlkey, c.mime, c.status, c.digest) for c in reader(path) if not isinstance(c, str)]
        assert found[0][1:3] == ("image/png", "200"), reader
        assert found[1][1:] == ("image/png", "200", SHA1), reader      # the payload's digest, not the block's
        assert found[2] == ("com,example)/a.png", "image/png", "404", SHA1), reader
        assert found[3][1:3] == ("unk", "unk"), reader                  # no HTTP head: as before


def test_arc_records_are_read_by_their_uri_only():
    """warcio gives every ARC response the Content-Type application/http: a dns: record of an
    ARC file still has no HTTP head."""
    from profiler.formats import warc_records
    assert not warc_records.holds_http("response", "dns:example.com", "application/http", warc=False)
    assert warc_records.holds_http("response", "Https://example.com/", None, warc=False)
    assert warc_records.holds_http("revisit", "urn:x", "Application/HTTP;msgtype=response")
    assert not warc_records.holds_http("resource", "file:///a", "application/http")
    assert not warc_records.holds_http("response", "dns:example.com", "text/dns")


def test_the_profile_counts_them_by_their_head(tmp_path):
    from profiler.cli.main import main
    path = _warc(tmp_path / "x.warc.gz", True)
    out = tmp_path / "p.cdxj"
    assert main(["profile", path, "-o", str(out), "-r", "inline", "-q"]) == 0
    lines = dict(line.split(" {", 1) for line in out.read_text().splitlines() if not line.startswith("!"))
    assert '"total":3,' in lines["* - image/png -"]
    assert '"total":1,' in lines["* - - 404"]
    assert '"total":1,' in lines["* - unk -"]
