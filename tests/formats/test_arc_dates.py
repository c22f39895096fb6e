"""ARC record dates that warcio turns into another date ('null', a hex string, '9999...',
'2008-04-30'): the record is a counted bad_timestamp, never a capture dated 2999 (or 1900, or
January 31); the ARC dates warcio keeps (14 digits, shorter or longer runs of digits, 14 digits
followed by text) keep the timestamps they had. ARC headers that warcio's split from the end
misreads (ARC v2's ten fields, a MIME with a space, date and IP swapped) are read by their fields."""

import gzip

import pytest

from profiler.files.validate import validate
from profiler.formats import warc
from profiler.nightly import fold
from profiler.run.profile import run_profile

FILEDESC = (b"filedesc://t.arc 0.0.0.0 20080430204825 text/plain 76\n1 0 InternetArchive\n"
            b"URL IP-address Archive-date Content-type Archive-length\n\n")
BODY = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\nhello"


def arc_record(date, url=b"http://www.archive.org/"):
    return b"%s 1.2.3.4 %s text/html %d\n%s\n" % (url, date, len(BODY), BODY)


def write_arc(path, dates, gz=False):
    records = [FILEDESC] + [arc_record(d, b"http://www.archive.org/%d" % i) for i, d in enumerate(dates)]
    if gz:
        path.write_bytes(b"".join(gzip.compress(r) for r in records))
    else:
        path.write_bytes(b"".join(records))
    return path


@pytest.mark.parametrize("date", [b"null", b"a0d1fdddf3165d0447b1f7a285c61c1c9", b"99999999999999",
                                  b"2008-04-30", b"0000", b"63.241.16.130"])
@pytest.mark.parametrize("gz", [False, True])
def test_an_arc_date_warcio_replaces_is_a_bad_timestamp(tmp_path, date, gz):
    path = write_arc(tmp_path / ("t.arc.gz" if gz else "t.arc"), [b"20080430204826", date, b"20080430204827"], gz)
    found = [c if isinstance(c, str) else c.timestamp for c in warc.iter_captures(str(path))]
    assert found == ["warcinfo_record", "20080430204826", "bad_timestamp", "20080430204827"]


@pytest.mark.parametrize("date, timestamp", [(b"20080430204826", "20080430204826"),
                                             (b"2016020900", "20160209005959"),
                                             (b"200009180023002953", "20000918002300"),
                                             (b"20160211000000jpg", "20160211000000"),
                                             (b"201512000000000", "20151201000000")])
def test_arc_dates_warcio_keeps_keep_their_timestamps(tmp_path, date, timestamp):
    path = write_arc(tmp_path / "t.arc", [date])
    found = [c if isinstance(c, str) else c.timestamp for c in warc.iter_captures(str(path))]
    assert found == ["warcinfo_record", timestamp]


def test_a_profile_of_an_arc_with_a_null_date_counts_it_and_holds_no_year_2999(tmp_path):
    path = write_arc(tmp_path / "t.arc", [b"20080430204826", b"null"])
    out = tmp_path / "p.cdxj"
    run_profile([str(path)], str(out), created="2026-01-01T00:00:00Z")
    meta = fold.run_meta(str(out))[0]
    assert meta["captures"] == 1
    assert meta["skipped"] == {"warcinfo_record": 1, "bad_timestamp": 1}
    assert b" 2999" not in out.read_bytes() and b'"2999' not in out.read_bytes()
    assert validate(str(out)).ok


HTTP = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\nhello"


@pytest.mark.parametrize("header", [
    b"http://example.com/a 1.2.3.4 19961104142103 text/html 200 fac069150613fe55599cc7fa88aa089d - 209 x.arc %d",
    b"http://example.com/a 1.2.3.4 19961104142103 text/html; Charset=iso-8859-1 %d",
    b"http://example.com/a 19961104142103 1.2.3.4 text/html %d",
])
def test_arc_headers_warcio_misreads_are_read_by_their_fields(tmp_path, header):
    path = tmp_path / "t.arc"
    path.write_bytes(FILEDESC + header % len(HTTP) + b"\n" + HTTP + b"\n" + arc_record(b"20080430204827"))
    found = [c if isinstance(c, str) else (c.urlkey, c.timestamp, c.mime, c.status)
             for c in warc.iter_captures(str(path))]
    assert found == ["warcinfo_record", ("com,example)/a", "19961104142103", "text/html", "200"),
                     ("org,archive)/", "20080430204827", "text/html", "200")]


def test_an_arc_url_with_spaces_is_still_read_whole(tmp_path):
    path = tmp_path / "t.arc"
    path.write_bytes(FILEDESC + arc_record(b"20080430204826", b"http://example.com/a b c"))
    found = [c if isinstance(c, str) else (c.urlkey, c.timestamp) for c in warc.iter_captures(str(path))]
    assert found == ["warcinfo_record", ("com,example)/a%20b%20c", "20080430204826")]
