"""Every input format's reader gives captures in the one layout profiler.model.capture names."""

import io

import warcio
from warcio.warcwriter import WARCWriter

from profiler.formats import cdx, cdxj, warc
from profiler.model.capture import Capture, LENGTH, REVISIT, TIMESTAMP, URLKEY


def check(capture):
    assert isinstance(capture, tuple) and len(capture) == len(Capture._fields)
    c = Capture(*capture)
    assert isinstance(c.urlkey, str) and isinstance(c.timestamp, str) and len(c.timestamp) == 14
    assert isinstance(c.mime, str) and isinstance(c.status, str) and isinstance(c.digest, str)
    assert isinstance(c.length, int) and 0 <= c.length < 1 << 64 and isinstance(c.revisit, bool)
    assert isinstance(c.lang, str) and (c.lang == "unk" or len(c.lang) == 3 and c.lang.islower())
    assert (capture[URLKEY], capture[TIMESTAMP], capture[LENGTH], capture[REVISIT]) == \
        (c.urlkey, c.timestamp, c.length, c.revisit)
    return c


def test_cdx_and_cdxj_captures():
    c = check(cdx.make_parser("N b a m s k r M S V g")(
        b"com,example)/ 20130101000000 http://example.com/ text/html 200 ABC - - 100 0 a.warc.gz"))
    assert c == ("com,example)/", "20130101000000", "text/html", "200", "ABC", 100, False, "unk")
    c = check(cdxj.parse(b'com,example)/ 2013 {"url":"http://example.com/","mime":"warc/revisit",'
                         b'"status":"-","digest":"sha1:abc","length":"7"}'))
    assert c.revisit and c.digest == "ABC" and c.timestamp == "20130101000000" and c.length == 7
    assert c.lang == "unk"
    c = check(cdxj.parse(b'com,example)/ 2013 {"url":"http://example.com/","mime":"text/html",'
                         b'"status":"200","languages":"spa,eng","lang":"fr"}'))
    assert c.lang == "spa"
    assert check(cdxj.parse(b'com,example)/ 2013 {"url":"http://example.com/","lang":"ar-EG"}')).lang == "ara"


def test_warc_captures(tmp_path):
    path = tmp_path / "a.warc.gz"
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        http = warcio.StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record("http://example.com/", "response",
                                                      payload=io.BytesIO(b"<html>hi</html>"),
                                                      http_headers=http))
    found = [c for c in warc.iter_captures(str(path), open) if not isinstance(c, str)]
    assert len(found) == 1
    c = check(found[0])
    assert c.urlkey == "com,example)/" and c.mime == "text/html" and c.status == "200" and c.length > 0
