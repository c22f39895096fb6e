"""A plugin's capture field read from a WARC record's HTTP response headers
(profiler.formats.registry.http_header), by both WARC readers: the header's value, None without
it or without an HTTP head (a resource record); other fields and formats keep their default."""

import io

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from profiler.formats import registry, warc, warc_fast
from profiler.model import capture, criteria, normalise

from helpers.registries import keep

SERVER = criteria.Criterion(
    "server", "server", (criteria.Level("version", criteria.IDENTITY), criteria.Level("product", criteria.CATEGORY)),
    ("product",), lambda f: ("product",) if f.endswith("/*") else ("version",), ("nginx/1.18.0", "nginx/*"),
    r"-|unk|none|[a-z0-9.-]+/([a-z0-9.-]+|\*)", "'-', unk, none, PRODUCT/VERSION or PRODUCT/*", optional=True)


def server_of(value):
    return "none" if value is None else value.strip().lower()


def _warc(path):
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        for uri, server in (("http://a.example/", "nginx/1.18.0"), ("http://b.example/", None),
                            ("http://c.example/", " Apache/2.4 ")):
            headers = [("Content-Type", "text/html")] + ([("Server", server)] if server else [])
            http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(uri, "response", payload=io.BytesIO(b"<p>hi</p>"),
                                                http_headers=http))
        w.write_record(w.create_warc_record("http://d.example/", "resource", payload=io.BytesIO(b"text"),
                                            warc_content_type="text/plain"))


@pytest.mark.parametrize("reader", [warc.iter_captures, warc_fast.iter_captures])
def test_a_field_from_an_http_response_header(tmp_path, monkeypatch, reader):
    keep(monkeypatch)
    capture.add_field("server", normalise.UNKNOWN)
    criteria.register(SERVER)
    registry.http_header("server", "Server", server_of)
    _warc(tmp_path / "s.warc.gz")
    caps = [c for c in reader(str(tmp_path / "s.warc.gz")) if not isinstance(c, str)]
    assert [c.server for c in caps] == ["nginx/1.18.0", "none", "apache/2.4", "none"]
    assert [c.mime for c in caps] == ["text/html"] * 3 + ["text/plain"]


def test_an_http_header_is_read_only_into_a_plugin_s_new_field(monkeypatch):
    keep(monkeypatch)
    capture.add_field("server", normalise.UNKNOWN)
    with pytest.raises(ValueError):
        registry.http_header("mime", "Content-Type", str)        # a field of the package
    with pytest.raises(ValueError):
        registry.http_header("nothing", "Server", str)           # no such field
    with pytest.raises(ValueError):
        registry.http_header("server", "", str)                  # no header name
    registry.http_header("server", "Server", server_of)
    with pytest.raises(ValueError):
        registry.warc_header("server", "WARC-IP-Address", str)   # already read, from the HTTP head
