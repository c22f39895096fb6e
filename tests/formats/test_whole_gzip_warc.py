"""A WARC (or ARC) compressed as one gzip stream, not a member per record, is profiled by
reading it as it inflates: lengths are the uncompressed record lengths and `not_chunked` is
counted in !meta. Its profile equals that of the same records uncompressed, and that of the
records gzipped per record but for the byte features (compressed lengths there)."""

import gzip
import io
import os

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from profiler.nightly import fold as nightly_fold
from profiler.run.profile import run_profile
from profiler.files.profilefile import iter_data

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data")


def write_warc(path, gzip_records):
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=gzip_records)
        for i in range(12):
            body = (b"<html>page %d</html>" % (i % 7)) * (i + 1)
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html" if i % 3 else "image/png")],
                                    protocol="HTTP/1.1")
            record = writer.create_warc_record("http://example%d.com/p%d" % (i % 3, i), "response",
                                               payload=io.BytesIO(body), http_headers=http,
                                               warc_headers_dict={"WARC-Date": "2013-0%d-01T00:00:00Z" % (i % 9 + 1)})
            writer.write_record(record)


def profile(tmp_path, path):
    out = tmp_path / (os.path.basename(str(path)) + ".cdxj")
    run_profile([str(path)], str(out), created="2026-01-01T00:00:00Z")
    return dict(iter_data(str(out))), nightly_fold.run_meta(str(out))[0]


def test_whole_file_gzip_equals_uncompressed(tmp_path):
    plain = tmp_path / "plain.warc"
    write_warc(str(plain), gzip_records=False)
    whole = tmp_path / "whole.warc.gz"
    whole.write_bytes(gzip.compress(plain.read_bytes()))
    per_record = tmp_path / "records.warc.gz"
    write_warc(str(per_record), gzip_records=True)
    a, meta_a = profile(tmp_path, plain)
    b, meta_b = profile(tmp_path, whole)
    c, _ = profile(tmp_path, per_record)
    assert a == b and meta_b["captures"] == meta_a["captures"] == 12
    assert meta_b["skipped"].get("not_chunked") == 1
    strip = lambda d: {k: {f: v for f, v in x.items() if f not in ("bytes", "dedup_bytes")} for k, x in d.items()}  # noqa: E731
    assert strip(b) == strip(c)


@pytest.mark.parametrize("name", ["warcio/example-bad-non-chunked.warc.gz", "pywb/warcs/example-bad.warc.gz.bad"])
def test_corpus_whole_file_gzip(tmp_path, name):
    path = os.path.join(SHARED, name)
    if not os.path.exists(path):
        if os.environ.get("CI") == "true":
            pytest.fail("../shared/data is missing: %s" % path)
        pytest.skip("no ../shared/data")
    data, meta = profile(tmp_path, path)
    assert meta["captures"] >= 2 and meta["skipped"]["not_chunked"] == 1
    assert not meta.get("skipped_files")
