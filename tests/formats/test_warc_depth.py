"""Depth of WARC captures from Heritrix metadata records (spec section 2): a WARC written with
warcio as Heritrix writes one (response, request, then a metadata record of the same target URI,
WARC-Concurrent-To the response, whose warc-fields hold hopsFromSeed), read with warcio and with
fastwarc alike; a capture without such a record has depth unk."""

import io

import pytest
import yaml
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from profiler.formats import registry, warc, warc_fast
from profiler.run.profile import run_profile

from helpers.oracle import read_profile

#: (url, hop path or None: no metadata record, depth)
PAGES = [("http://example.fr/", "", "0"), ("http://example.fr/a", "L", "1"), ("http://example.fr/b.css", "LE", "2"),
         ("http://example.fr/c", "LLRLLXLLL", "9"), ("http://example.fr/d", "3+" + "L" * 49, "10+"),
         ("http://example.fr/e", None, "unk"), ("http://example.fr/f", "LLLLLLLLLLLL", "10+")]


def heritrix_warc(gzip=True, other_url_metadata=False):
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=gzip)
    for n, (url, path, _) in enumerate(PAGES):
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        response = writer.create_warc_record(url, "response", payload=io.BytesIO(b"<html>%d</html>" % n),
                                             http_headers=http)
        writer.write_record(response)
        rid = response.rec_headers.get_header("WARC-Record-ID")
        request = writer.create_warc_record(url, "request", payload=io.BytesIO(b"GET / HTTP/1.1\r\n\r\n"),
                                            warc_headers_dict={"WARC-Concurrent-To": rid})
        writer.write_record(request)
        if path is None:
            continue
        body = ("via: http://example.fr/\r\nhopsFromSeed: %s\r\nsourceTag: http://example.fr/\r\n"
                "fetchTimeMs: 12\r\noutlink: http://example.fr/x L a/@href\r\n" % path).encode()
        target = "http://example.fr/elsewhere" if other_url_metadata and n == 1 else url
        meta = writer.create_warc_record(target, "metadata", payload=io.BytesIO(body),
                                         warc_content_type="application/warc-fields",
                                         warc_headers_dict={"WARC-Concurrent-To": rid})
        writer.write_record(meta)
    return out.getvalue()


@pytest.mark.parametrize("gzip", [True, False])
@pytest.mark.parametrize("read", [warc.iter_captures, warc_fast.iter_captures])
def test_each_capture_takes_its_metadata_record_s_hops(tmp_path, gzip, read):
    path = tmp_path / ("h.warc" + (".gz" if gzip else ""))
    path.write_bytes(heritrix_warc(gzip))
    found = list(read(str(path), depths=True))
    captures = [c for c in found if not isinstance(c, str)]
    assert [c.depth for c in captures] == [depth for _, _, depth in PAGES]
    assert found.count("metadata_record") == 6 and all(type(c) is str for c in found if isinstance(c, str))
    assert {c.depth for c in read(str(path)) if not isinstance(c, str)} == {"unk"}     # not asked: unk
    without = [c for c in read(str(path)) if not isinstance(c, str)]
    assert [c._replace(depth="unk") for c in captures] == without


def test_a_metadata_record_of_another_url_gives_nothing(tmp_path):
    path = tmp_path / "h.warc.gz"
    path.write_bytes(heritrix_warc(other_url_metadata=True))
    captures = [c for c in warc.iter_captures(str(path), depths=True) if not isinstance(c, str)]
    assert captures[1].depth == "unk" and captures[2].depth == "2"


def test_a_profile_with_depth_counts_each_depth(tmp_path):
    path = tmp_path / "h.warc.gz"
    path.write_bytes(heritrix_warc())
    policy = tmp_path / "depth.yaml"
    policy.write_text(yaml.safe_dump({"name": "depth", "host_depth": 2,
                                      "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"],
                                                 "depth": ["hops"]},
                                      "emit": {"root": {"depth": ["any", "hops"]}, "tld": "none",
                                               "domain": "none", "host": "none"}}))
    for reader in ("warcio", "fastwarc"):
        out = str(tmp_path / ("%s.cdxj" % reader))
        run_profile([str(path)], out, policy=str(policy), warc_reader=reader)
        got = {k.split()[4]: v[0] for k, v in read_profile(out).items()}
        assert got == {"-": 7, "0": 1, "1": 1, "2": 1, "9": 1, "10+": 2, "unk": 1}
    assert registry.FORMATS["warc"].payloads


@pytest.mark.parametrize("read", [warc.iter_captures, warc_fast.iter_captures])
def test_a_seed_s_metadata_record_as_heritrix_writes_it_is_depth_0(tmp_path, read):
    """Heritrix (1.x and 3, MetadataRecordBuilder) writes the label 'seed:' for a seed and no
    hopsFromSeed (it writes hopsFromSeed only when the path is not blank): the seed is depth 0,
    as the crawl.log's '-' hop path says; its depth was unk."""
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    for url, body in (("http://example.fr/", b"seed:\r\nfetchTimeMs: 3184\r\noutlink: http://example.fr/a E img/@src\r\n"),
                      ("http://example.fr/a", b"via: http://example.fr/\r\nhopsFromSeed: E\r\nfetchTimeMs: 3\r\n"),
                      ("http://example.fr/b", b"via: http://example.fr/\r\nfetchTimeMs: 3\r\nseeds: 2\r\n")):
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        response = writer.create_warc_record(url, "response", payload=io.BytesIO(b"<html></html>"), http_headers=http)
        writer.write_record(response)
        writer.write_record(writer.create_warc_record(
            url, "metadata", payload=io.BytesIO(body), warc_content_type="application/warc-fields",
            warc_headers_dict={"WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID")}))
    path = tmp_path / "seed.warc.gz"
    path.write_bytes(out.getvalue())
    captures = [c for c in read(str(path), depths=True) if not isinstance(c, str)]
    assert [c.depth for c in captures] == ["0", "1", "unk"]
