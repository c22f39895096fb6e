"""A ZipNum secondary index in CDXJ form (the ``.idx`` cdxj-indexer --compress, pywb and
py-wacz write: a line per gzip block of the ``.cdx.gz``) is refused by name, with or without its
``!meta`` line: read as a CDXJ index it gave one capture per block, with the block's gzip length
as bytes. Its ``.cdx.gz`` is profiled as it was."""

import io
import subprocess
import sys

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from profiler.formats import cdxj, inputs
from profiler.nightly import fold
from profiler.run.profile import run_profile


def write_warc(path, n=5):
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        for i in range(n):
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record("http://example.com/%d" % i, "response",
                                                          payload=io.BytesIO(b"page %d" % i), http_headers=http))


@pytest.fixture
def compressed_index(tmp_path):
    """cdxj-indexer's compressed index of a five-record WARC: (.cdx.gz, .idx), two lines a block."""
    warc = tmp_path / "five.warc.gz"
    write_warc(warc)
    cdx_gz, idx = tmp_path / "five.cdx.gz", tmp_path / "five.idx"
    subprocess.run([sys.executable, "-m", "cdxj_indexer.main", "-s", "-c", str(cdx_gz), "-l", "2",
                    "-o", str(idx), str(warc)], check=True, cwd=tmp_path)
    assert idx.read_bytes().startswith(b"!meta 0 {") and idx.read_bytes().count(b"\n") == 4
    return cdx_gz, idx


def test_a_zipnum_cdxj_index_is_refused_by_name(compressed_index):
    found = inputs.sniff(str(compressed_index[1]))
    assert found["format"] is None and found["reason"] == cdxj.ZIPNUM_INDEX


def test_a_zipnum_cdxj_index_without_its_meta_line_is_refused_too(compressed_index, tmp_path):
    bare = tmp_path / "bare.idx"
    bare.write_bytes(b"".join(l for l in compressed_index[1].read_bytes().splitlines(True) if not l.startswith(b"!")))
    assert inputs.sniff(str(bare))["format"] is None


@pytest.mark.parametrize("meta", [True, False])
def test_a_zipnum_index_of_lines_without_a_timestamp_is_refused_too(tmp_path, meta):
    """js-wacz (Scoop's WACZ files) writes 'KEY {JSON}' block lines: it was no format at all."""
    idx = tmp_path / "index.idx"
    idx.write_bytes((b'!meta 0 {"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"}\n' if meta else b"") +
                    b'edu,harvard,law,lil)/assets/main.css {"offset":0,"length":2580,"digest":"sha256:00"}\n'
                    b'edu,harvard,law,lil)/projects {"offset":2580,"length":2411,"digest":"sha256:01"}\n')
    found = inputs.sniff(str(idx))
    assert found["format"] is None and found["reason"] == cdxj.ZIPNUM_INDEX


def test_the_cdx_gz_beside_it_is_profiled_and_the_idx_is_skipped(compressed_index, tmp_path):
    cdx_gz, idx = compressed_index
    out = tmp_path / "p.cdxj"
    run_profile([str(cdx_gz), str(idx)], str(out), created="2026-01-01T00:00:00Z")
    meta = fold.run_meta(str(out))[0]
    assert meta["captures"] == 5 and meta["inputs"] == [str(cdx_gz)]


def test_the_profile_command_names_the_reason_in_one_line(compressed_index):
    code = "import sys; from profiler.cli.main import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, "profile", str(compressed_index[1]), "-o", "-"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "ZipNum secondary index" in done.stderr and "Traceback" not in done.stderr


def test_cdxj_lines_that_locate_records_are_captures():
    lines = [b'com,example)/ 20200101000000 {"url": "http://example.com/", "offset": "0", "length": "10", '
             b'"filename": "a.warc.gz"}']
    assert not cdxj.zipnum_index(lines)
    assert not cdxj.zipnum_index([b'com,example)/ 20200101000000 {"length": "10", "digest": "X"}'])


def test_cdxj_lines_that_name_their_warc_file_are_captures_even_without_a_url():
    assert not cdxj.zipnum_index([b'com,example)/ 20200101000000 {"offset": "0", "length": "10", "filename": "a.warc.gz"}'])
