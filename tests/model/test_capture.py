"""Every input format's reader gives captures of the one type profiler.model.capture names, by name."""

import io

import pytest
import warcio
from warcio.warcwriter import WARCWriter

from profiler.formats import cdx, cdxj, warc
from profiler.job.cells import CellKeys
from profiler.model import capture
from profiler.model.capture import Capture

from helpers import registries
from helpers.policies import by_period


def check(c):
    assert isinstance(c, Capture)
    assert isinstance(c.urlkey, str) and isinstance(c.timestamp, str) and len(c.timestamp) == 14
    assert isinstance(c.mime, str) and isinstance(c.status, str) and isinstance(c.digest, str)
    assert isinstance(c.length, int) and 0 <= c.length < 1 << 64 and isinstance(c.revisit, bool)
    assert isinstance(c.lang, str) and (c.lang == "unk" or len(c.lang) == 3 and c.lang.islower())
    return c


def test_cdx_and_cdxj_captures():
    c = check(cdx.make_parser("N b a m s k r M S V g")(
        b"com,example)/ 20130101000000 http://example.com/ text/html 200 ABC - - 100 0 a.warc.gz"))
    assert c == Capture(urlkey="com,example)/", timestamp="20130101000000", mime="text/html", status="200",
                        digest="ABC", length=100, revisit=False, lang="unk")
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


def test_a_field_a_reader_does_not_give_takes_its_default():
    c = Capture(urlkey="com,example)/", timestamp="20130101000000")
    assert (c.mime, c.status, c.digest, c.length, c.revisit, c.lang) == ("unk", "unk", "-", 0, False, "unk")
    assert Capture._field_defaults == capture.DEFAULTS
    with pytest.raises(TypeError):
        Capture(urlkey="com,example)/")          # a timestamp is never missing


def test_a_new_field_reaches_the_readers_and_the_map_side_by_name(monkeypatch):
    """add_field gives readers made after it captures with the field at its default, which the
    cells read by name: fields before it keep their names and values."""
    registries.keep(monkeypatch)
    line = b"com,example)/ 20130101000000 http://example.com/ text/html 200 ABC - - 100 0 a.warc.gz"
    before = cdx.make_parser("N b a m s k r M S V g")(line)
    capture.add_field("scheme", "unk")
    after = cdx.make_parser("N b a m s k r M S V g")(line)
    assert after._fields == before._fields + ("scheme",) and after.scheme == "unk"
    assert after._replace(scheme=None)[:-1] == before
    assert CellKeys(by_period(4))(after) == CellKeys(by_period(4))(before)
    with pytest.raises(ValueError):
        capture.add_field("lang", "x")
