"""A WARC record without Content-Length (a header only) followed by blank lines, then the next
record: the blank lines are no records. warcio read each of them as a record of no type, counted
``other_record`` twice where there are no records, and the fastwarc reader counted none."""

import pytest

from profiler.formats import warc

fastwarc = pytest.importorskip("fastwarc")
from profiler.formats import warc_fast  # noqa: E402

LONELY = (b"WARC/1.0\r\nWARC-Type: warcinfo\r\n\r\n\r\n\r\n"
          b"WARC/1.0\r\nWARC-Type: metadata\r\n\r\n\r\n\r\n")
RESPONSE = (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://example.com/\r\n"
            b"WARC-Date: 2020-01-01T00:00:00Z\r\nContent-Type: application/http; msgtype=response\r\n"
            b"Content-Length: 45\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\nhi\r\n\r\n")


@pytest.mark.parametrize("data, expected", [
    (LONELY, ["warcinfo_record", "metadata_record"]),
    (b"WARC/1.0\r\nWARC-Type: warcinfo\r\n\r\n\r\n\r\n\n\n" + RESPONSE,
     ["warcinfo_record", ("com,example)/", "20200101000000")]),
])
def test_blank_lines_after_a_record_without_content_length_are_no_records(tmp_path, data, expected):
    path = tmp_path / "lonely.warc"
    path.write_bytes(data)
    for reader in (warc.iter_captures, warc_fast.iter_captures):
        found = [c if isinstance(c, str) else (c.urlkey, c.timestamp) for c in reader(str(path))]
        assert found == expected, reader
