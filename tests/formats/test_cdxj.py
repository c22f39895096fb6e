"""Tests for profiler.formats.cdxj: pywb- and ipwb-style CDXJ lines -> captures."""

import pytest

from profiler.formats import cdxj

from helpers.captures import expected, fields
from helpers.paths import shared_data

# Real lines, copied from files in ../shared/data.
# pywb/cdxj/iana.cdxj
PYWB = (b'org,iana)/ 20140126200624 {"url": "http://www.iana.org/", "mime": "text/html", "status": "200", '
        b'"digest": "OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB", "length": "2258", "offset": "334", '
        b'"filename": "iana.warc.gz"}')
PYWB_REVISIT = (b'org,iana)/_css/2013.1/fonts/inconsolata.otf 20140126200912 {"url": '
                b'"http://www.iana.org/_css/2013.1/fonts/Inconsolata.otf", "mime": "warc/revisit", '
                b'"digest": "LNMEDYOENSOEI5VPADCKL3CB6N3GWXPR", "length": "546", "offset": "667073", '
                b'"filename": "iana.warc.gz"}')
# pywb/cdxj/example-no-digest.cdxj
PYWB_NO_DIGEST = (b'org,iana)/domains/example 20140128051539 {"url": "http://www.iana.org/domains/example", '
                  b'"length": "577", "offset": "2907", "filename": "example.warc.gz"}')
# pywb/cdx/missing-status-text.cdxj
PYWB_UNK = (b'org,iana)/bads 20140127171238 {"offset":"0","mime":"unk","url":"http://iana.org/bads",'
            b'"digest":"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ","length":"485","status":"302",'
            b'"filename":"missing-status-text.warc"}')
# pywb/cdxj/example2.cdxj (40-hex SHA-1)
PYWB_HEX = (b'com,example)/ 20160225042329 {"url": "http://example.com/", "mime": "text/html", "status": "200", '
            b'"digest": "37cf167c2672a4a64af901d9484e75eee0e2c98a", "length": "1286", "offset": "363", '
            b'"filename": "example2.warc.gz"}')
# ipwb/indexes/salam-home.cdxj
IPWB = (b'com,matkelly)/froggies/frog.png 20170301192639 {"locator": "urn:ipfs/QmUeko8zM7Xanwz6F9GtRH4rLAi4Poj3'
        b'DMECGsci2BRQfs/QmPhMnX74cwqx2xgj9d3N3gTra8CzafXwSbUwU8xagMfqR", "original_uri": '
        b'"http://matkelly.com/froggies/frog.png", "mime_type": "image/png", "status_code": "200"}')
# ipwb/indexes/sample-old.cdxj
IPWB_DIGEST = (b'com,yahoo,search)/mrss 20130411205500 {"status_code": "302", "payload_digest": '
               b'"QmVFeyXN7T3265XMwTrn86tbovTHzJJeHnus2HFCwmbaYh", "encryption_key": "", '
               b'"mime_type": "text/html", "header_digest": "Qmd7gw1C84eaDqEcuGTQRj5CA2jKkiEE7ZVCa9pfkrruRY"}')


def test_pywb_line():
    assert cdxj.parse(PYWB) == expected(urlkey="org,iana)/", timestamp="20140126200624", mime="text/html",
                                        status="200", digest="OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB", length=2258)


def test_pywb_revisit_without_status():
    cap = cdxj.parse(PYWB_REVISIT)
    assert fields(cap, "mime", "status") == ("warc/revisit", "unk")
    assert cap.length == 546
    assert cap.revisit is True


def test_pywb_missing_mime_status_digest():
    assert cdxj.parse(PYWB_NO_DIGEST) == expected(urlkey="org,iana)/domains/example", timestamp="20140128051539",
                                                  length=577)


def test_pywb_mime_unk():
    cap = cdxj.parse(PYWB_UNK)
    assert fields(cap, "mime", "status") == ("unk", "302")


@pytest.mark.parametrize("line, digest", [
    pytest.param(PYWB_HEX, "37CF167C2672A4A64AF901D9484E75EEE0E2C98A", id="hex_upper_cased"),
    pytest.param(b'com,example)/ 20160225042329 {"url": "http://example.com/", '
                 b'"digest": "sha1:b2ltwwpuoyah7uipq7zupq4vmbsvc36a"}', "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A",
                 id="sha1_prefixed"),
])
def test_digest_is_read_as_base32_upper_case(line, digest):
    assert cdxj.parse(line).digest == digest


def test_numbers_as_json_numbers():
    line = b'com,example)/ 20160225042329 {"url": "http://example.com/", "status": 404, "length": 12}'
    cap = cdxj.parse(line)
    assert cap.status == "404"
    assert cap.length == 12


def test_ipwb_line():
    assert cdxj.parse(IPWB) == expected(urlkey="com,matkelly)/froggies/frog.png", timestamp="20170301192639",
                                        mime="image/png", status="200")


def test_ipwb_payload_digest():
    cap = cdxj.parse(IPWB_DIGEST)
    assert fields(cap, "mime", "status", "digest") == ("text/html", "302", "QMVFEYXN7T3265XMWTRN86TBOVTHZJJEHNUS2HFCWMBAYH")


@pytest.mark.parametrize("line, urlkey", [
    pytest.param(b'matkelly.com/froggies/frog.png 20170301192639 '
                 b'{"original_uri": "http://matkelly.com/froggies/frog.png"}',
                 "com,matkelly)/froggies/frog.png", id="non_surt_key_recomputed_from_original_uri"),
    pytest.param(b'example.com/?example=1 20140103030321 {"url": "http://example.com?example=1"}',
                 "com,example)/?example=1", id="non_surt_key_recomputed_from_url"),
    pytest.param(b'!com,example)/ 20140103030321 {"url": "http://example.com/"}', "%21com,example)/",
                 id="bang_urlkey_is_encoded"),
])
def test_urlkey_is_a_surt_recomputed_or_encoded(line, urlkey):
    assert cdxj.parse(line).urlkey == urlkey


@pytest.mark.parametrize("line", [
    b'com,example)/ 20140103030321 {"url": "http://example.com/"',
    b'com,example)/ 20140103030321 {url: "http://example.com/"}',
    b"com,example)/ 20140103030321 not json",
])
def test_bad_json(line):
    assert cdxj.parse(line) == "bad_json"


@pytest.mark.parametrize("block", [b"[1, 2]", b'"text"', b"42", b"null"])
def test_non_object_json(block):
    assert cdxj.parse(b"com,example)/ 20140103030321 " + block) == "bad_json"


@pytest.mark.parametrize("line", [b"com,example)/ 20140103030321", b"com,example)/", b""])
def test_too_few_fields(line):
    assert cdxj.parse(line) == "bad_field_count"


def test_bad_timestamp():
    assert cdxj.parse(PYWB.replace(b"20140126200624", b"20141326200624")) == "bad_timestamp"


def test_bad_length():
    assert cdxj.parse(PYWB.replace(b'"length": "2258"', b'"length": "-5"')) == "bad_length"


@pytest.mark.parametrize("mime", [b"warc/warcinfo", b"warc/request", b"warc/metadata"])
def test_not_a_capture(mime):
    assert cdxj.parse(PYWB.replace(b"text/html", mime)) == "not_a_capture"


def test_timestamp_padded():
    line = b'com,example)/ 2014 {"url": "http://example.com/"}'
    assert cdxj.parse(line).timestamp == "20140101000000"


def test_real_pywb_cdxj():
    path = shared_data("pywb", "cdxj", "iana.cdxj")
    with open(path, "rb") as f:
        caps = [cdxj.parse(line) for line in f.read().splitlines()]
    assert len(caps) == 171
    assert all(isinstance(c, tuple) for c in caps)
    assert any(c.revisit for c in caps)


def test_real_ipwb_cdxj():
    path = shared_data("ipwb", "indexes", "sample-1.cdxj")
    with open(path, "rb") as f:
        lines = [line for line in f.read().splitlines() if not line.startswith(b"!")]
    caps = [cdxj.parse(line) for line in lines]
    assert caps and all(isinstance(c, tuple) and c.status != "unk" for c in caps)


def test_a_content_type_with_white_space_within_gives_the_mime_of_its_warc_record(tmp_path):
    """A CDXJ whose mime is the record's Content-Type as sent (`text/html charset=UTF-8`, `text/
    html`) is cut at white space as the WARC reader cuts the header: the index and the WARC file
    it indexes give one profile."""
    import io
    import json
    import subprocess
    import sys
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter
    types = ["text/html charset=UTF-8", "text/ html", " Text /HTML", "image/png\tx"]
    lines = []
    with open(tmp_path / "a.warc.gz", "wb") as f:
        writer = WARCWriter(f, gzip=True)
        for i, content_type in enumerate(types):
            url = "http://example.com/%d" % i
            headers = StatusAndHeaders("200 OK", [("Content-Type", content_type)], protocol="HTTP/1.0")
            writer.write_record(writer.create_warc_record(
                url, "response", payload=io.BytesIO(b"hello"), http_headers=headers,
                warc_headers_dict={"WARC-Date": "2013-01-01T00:00:00Z"}))
            lines.append('com,example)/%d 20130101000000 {"url":"%s","mime":%s,"status":"200"}'
                         % (i, url, json.dumps(content_type)))
    (tmp_path / "a.cdxj").write_text("\n".join(lines) + "\n")
    keys = {}
    for name in ["a.warc.gz", "a.cdxj"]:
        out = tmp_path / (name + ".profile")
        subprocess.run([sys.executable, "-m", "profiler.cli", "profile", str(tmp_path / name), "-o", str(out),
                        "-r", "inline", "--quiet"], check=True, capture_output=True)
        keys[name] = sorted({line.split("\t")[0].split(" ")[2] for line in out.read_text().splitlines()
                             if line.startswith("* - ")})
    assert keys["a.cdxj"] == keys["a.warc.gz"]
    assert keys["a.cdxj"] == ["-", "image/*", "image/png", "text", "text/", "text/*", "text/html"]


# ArchiveWeb.page (wabac.js) index.cdx of replayweb.page's docs/examples/example.wacz: a timestamp
# in milliseconds, a hex SHA-256 digest with a 'sha-256:' prefix, numbers as JSON numbers
AWP = (b'com,googleapis,fonts)/css2?display=swap&family=source+sans+pro%3Awght%40700%3B900 20220916191507333 '
       b'{"url":"https://fonts.googleapis.com/css2?family=Source+Sans+Pro:wght@700;900&display=swap",'
       b'"digest":"sha-256:8c36095b6f2c87c399f6f798579e57739e36f6b803a4ede86760039cee13888a","mime":"text/css",'
       b'"offset":278,"length":1309,"recordDigest":"sha256:b89fd5bd553ba3e359ad7a60e078757540436c899087d222dc4'
       b'ef7c18fe4e8f0","status":200,"filename":"data.warc.gz"}')


@pytest.mark.parametrize("fraction", [b"333", b"3", b"333333", b"333333333"])
def test_a_timestamp_with_a_fraction_of_a_second_is_a_capture_of_that_second(fraction):
    c = cdxj.parse(AWP.replace(b"20220916191507333", b"20220916191507" + fraction))
    assert (c.timestamp, c.mime, c.status, c.length) == ("20220916191507", "text/css", "200", 1309)
    assert c.digest == "8C36095B6F2C87C399F6F798579E57739E36F6B803A4EDE86760039CEE13888A"


@pytest.mark.parametrize("ts", [b"20221316191507333", b"20220916191507" + b"3" * 10, b"2022091619150733x"])
def test_a_long_timestamp_is_still_checked(ts):
    assert cdxj.parse(AWP.replace(b"20220916191507333", ts)) == "bad_timestamp"


@pytest.mark.parametrize("pure", [False, True])
@pytest.mark.parametrize("runner", ["inline", "local"])
def test_an_archiveweb_page_index_profiles_every_capture(tmp_path, runner, pure):
    """Every line of a millisecond index is a capture, with the compiled readers and without."""
    import os
    import subprocess
    import sys
    from profiler import contract
    second = AWP.replace(b"20220916191507333", b"20230101000000001").replace(b"css2?", b"css3?")
    (tmp_path / "index.cdxj").write_bytes(AWP + b"\n" + second + b"\n")
    env = dict(os.environ)
    env.pop(contract.PURE_ENV, None)
    if pure:
        env[contract.PURE_ENV] = "1"
    out = tmp_path / "p.cdxj"
    subprocess.run([sys.executable, "-m", "profiler.cli", "profile", str(tmp_path / "index.cdxj"), "-o", str(out),
                    "-r", runner, "--quiet"], check=True, capture_output=True, env=env)
    lines = out.read_text().splitlines()
    assert '"captures":2,"skipped":{}' in next(line for line in lines if line.startswith('!meta {"inputs"'))
    top = next(line for line in lines if line.startswith("* - - - "))
    assert '"urim":{"total":2,' in top and '"first":"20220916191507","last":"20230101000000"' in top
