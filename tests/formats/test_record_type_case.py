"""A WARC-Type in another case (``RESPONSE``, ``Revisit``: the WARC standard's grammar reads its
names in any case, and JWAT's test suite holds such a file as valid) is that type. warcio
compared it as written: such a response was an ``other_record``, and a revisit or response
in another case lost its HTTP head; fastwarc read it in lower case, so the readers parted."""

import pytest

from helpers.captures import warc_readers


def _record(rec_type, uri, block, digest="sha1:AAAA"):
    head = ("WARC/1.0\r\nWARC-Type: %s\r\nWARC-Target-URI: %s\r\nWARC-Date: 2008-04-30T20:48:25Z\r\n"
            "WARC-Payload-Digest: %s\r\nContent-Type: application/http; msgtype=response\r\n"
            "Content-Length: %d\r\n\r\n" % (rec_type, uri, digest, len(block))).encode()
    return head + block + b"\r\n\r\n"


HTTP = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\nhello"


@pytest.mark.parametrize("response, revisit", [("RESPONSE", "REVISIT"), ("Response", "Revisit"), ("response", "revisit")])
def test_a_record_type_in_any_case_is_that_type(tmp_path, response, revisit):
    path = tmp_path / "case.warc"
    path.write_bytes(_record(response, "http://example.com/", HTTP) +
                     _record(revisit, "http://example.com/", b"HTTP/1.1 304 Not Modified\r\n\r\n") +
                     _record("REQUEST", "http://example.com/", b"GET / HTTP/1.1\r\n\r\n"))
    for reader in warc_readers():
        found = [c if isinstance(c, str) else (c.mime, c.status, c.revisit) for c in reader(str(path))]
        assert found == [("text/html", "200", False), ("warc/revisit", "304", True), "request_record"], reader
