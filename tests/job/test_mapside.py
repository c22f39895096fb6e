"""Tests for profiler.job.mapside: parse one split and aggregate captures per URI-R."""

import bz2
import gzip

import orjson

from profiler.job import cells
from profiler.job.cells import BYTES, COUNT, FIRST, LAST, MAXLEN
from profiler.job.kernels import Kernels
from profiler.job.mapside import CaptureAggregator as _CaptureAggregator, map_split
from profiler.model.capture import Capture

from helpers.policies import by_period


def CaptureAggregator(period_len, **kw):
    return _CaptureAggregator(by_period(period_len), **kw)


def full_cell(cell):
    return cells.full_cell(cell, 3)

LAYOUT = "N b a m s k r M S V g"
A, B = "com,example)/a", "com,example)/b"


def cap(urlkey=A, ts="20100101000000", mime="text/html", status="200", digest="D1", length=100,
        revisit=False):
    return Capture(urlkey=urlkey, timestamp=ts, mime=mime, status=status, digest=digest, length=length,
                   revisit=revisit)


def cells_of(agg):
    """{urlkey: {cell key: [count, bytes, max_length, first, last]}} from a flush (a cell of one
    capture is written in 8 items: expand.full_cell)."""
    return {k.decode(): {tuple(c[:5]): full_cell(c)[5:] for c in cells} for k, cells in agg.flush()}


def test_a_cell_of_one_capture_is_written_in_8_items():
    """[.., 1, bytes, timestamp]: its largest length is its bytes, its last timestamp its first;
    a cell of several captures keeps all 10 items."""
    agg = CaptureAggregator(6)
    agg.add(cap(ts="20100315000000", length=70))
    agg.add(cap(urlkey=B, ts="20100301000000", length=50))
    agg.add(cap(urlkey=B, ts="20100302000000", length=30))
    written = {k: cells for k, cells in agg.flush()}
    assert written[A.encode()] == [["201003", "text/html", "200", "D1", 0, 1, 70, "20100315000000"]]
    assert written[B.encode()] == [["201003", "text/html", "200", "D1", 0, 2, 80, 50, "20100301000000",
                                    "20100302000000"]]
    assert full_cell(written[A.encode()][0]) == ["201003", "text/html", "200", "D1", 0, 1, 70, 70,
                                                 "20100315000000", "20100315000000"]


def cdx_line(urlkey, ts, mime="text/html", status="200", digest="sha1:D1", length="100"):
    return "%s %s http://x/ %s %s %s - - %s 0 f.warc.gz\n" % (urlkey, ts, mime, status, digest, length)


def manifest(path, fmt="cdx", fields=LAYOUT, compression=None, start=0, end=None):
    return orjson.dumps({"path": str(path), "format": fmt, "fields": fields, "start": start, "end": end,
                         "compression": compression})


def run(line, period_len=4, resolve=True):
    """map_split's records (cells JSON-decoded: the compiled path writes them as JSON; each cell
    in its 10 items, expand.full_cell) and meta."""
    policy = by_period(period_len)
    out = list(map_split(line, policy, Kernels(policy), resolve))
    return [(k, [full_cell(c) for c in (orjson.loads(v) if isinstance(v, bytes) else v)]) for k, v in out[:-1]], \
        out[-1]


# CaptureAggregator

def test_cell_key_fields():
    agg = CaptureAggregator(6)
    agg.add(cap(ts="20100315000000"))
    assert cells_of(agg) == {A: {("201003", "text/html", "200", "D1", 0): [1, 100, 100, "20100315000000",
                                                                          "20100315000000"]}}


def test_same_cell_count_bytes_max_first_last():
    agg = CaptureAggregator(4)
    agg.add(cap(ts="20100601000000", length=50))
    agg.add(cap(ts="20100101000000", length=200))
    agg.add(cap(ts="20101231000000", length=30))
    agg.add(cap(ts="20100301000000", length=70))
    c = cells_of(agg)[A][("2010", "text/html", "200", "D1", 0)]
    assert c[COUNT] == 4
    assert c[BYTES] == 350
    assert c[MAXLEN] == 200
    assert (c[FIRST], c[LAST]) == ("20100101000000", "20101231000000")


def test_descending_timestamps_update_first_and_last():
    agg = CaptureAggregator(4)
    for ts in ("20100901000000", "20100501000000", "20100101000000"):
        agg.add(cap(ts=ts))
    c = cells_of(agg)[A][("2010", "text/html", "200", "D1", 0)]
    assert (c[FIRST], c[LAST]) == ("20100101000000", "20100901000000")


def test_each_cell_field_splits_cells():
    agg = CaptureAggregator(4)
    agg.add(cap())
    agg.add(cap(ts="20110101000000"))
    agg.add(cap(mime="image/png"))
    agg.add(cap(status="404"))
    agg.add(cap(digest="D2"))
    assert sorted(cells_of(agg)[A]) == sorted([
        ("2010", "text/html", "200", "D1", 0), ("2011", "text/html", "200", "D1", 0),
        ("2010", "image/png", "200", "D1", 0), ("2010", "text/html", "404", "D1", 0),
        ("2010", "text/html", "200", "D2", 0)])


def test_period_len_month():
    agg = CaptureAggregator(6)
    agg.add(cap(ts="20100101000000"))
    agg.add(cap(ts="20100201000000"))
    assert {k[0] for k in cells_of(agg)[A]} == {"201001", "201002"}


def test_urlkeys_kept_apart():
    agg = CaptureAggregator(4)
    agg.add(cap(A))
    agg.add(cap(B, length=7))
    agg.add(cap(A))
    got = cells_of(agg)
    assert got[A][("2010", "text/html", "200", "D1", 0)][COUNT] == 2
    assert got[B][("2010", "text/html", "200", "D1", 0)][:3] == [1, 7, 7]


def test_revisit_resolution_on_uses_placeholders():
    agg = CaptureAggregator(4, resolve_revisits=True)
    agg.add(cap(mime="warc/revisit", status="unk", length=10, revisit=True))
    assert list(cells_of(agg)[A]) == [("2010", "", "", "D1", 1)]


def test_revisits_with_other_mimes_share_the_placeholder_cell():
    agg = CaptureAggregator(4)
    agg.add(cap(mime="warc/revisit", status="unk", length=10, revisit=True))
    agg.add(cap(mime="text/html", status="304", length=20, revisit=True))
    assert cells_of(agg)[A] == {("2010", "", "", "D1", 1): [2, 30, 20, "20100101000000", "20100101000000"]}


def test_revisit_not_merged_with_original():
    agg = CaptureAggregator(4)
    agg.add(cap())
    agg.add(cap(mime="warc/revisit", status="unk", revisit=True))
    assert set(cells_of(agg)[A]) == {("2010", "text/html", "200", "D1", 0), ("2010", "", "", "D1", 1)}


def test_revisit_resolution_off_keeps_own_mime_and_status():
    agg = CaptureAggregator(4, resolve_revisits=False)
    agg.add(cap(mime="warc/revisit", status="unk", revisit=True))
    assert list(cells_of(agg)[A]) == [("2010", "warc/revisit", "unk", "D1", 0)]


def test_skip_reasons_counted():
    agg = CaptureAggregator(4)
    for item in ("bad_timestamp", cap(), "bad_url", "bad_timestamp"):
        assert agg.add(item) is False
    assert agg.meta() == {"captures": 1, "skipped": {"bad_timestamp": 2, "bad_url": 1}}


def test_meta_is_a_copy():
    agg = CaptureAggregator(4)
    agg.add("bad_url")
    meta = agg.meta()
    agg.add("bad_url")
    assert meta["skipped"] == {"bad_url": 1}


def test_add_reports_full_table():
    agg = CaptureAggregator(4, limit=2)
    assert agg.add(cap(A)) is False
    assert agg.add(cap(A)) is False        # same urlkey: no new entry
    assert agg.add(cap(B)) is True


def test_flush_empties_table():
    agg = CaptureAggregator(4, limit=2)
    agg.add(cap(A))
    agg.add(cap(B))
    assert len(list(agg.flush())) == 2
    assert list(agg.flush()) == []
    assert agg.add(cap(A)) is False
    assert [k for k, _ in agg.flush()] == [A.encode()]


def test_flush_after_full_then_more_captures_keeps_totals():
    agg = CaptureAggregator(4, limit=1)
    records = []
    for c in (cap(A, length=1), cap(A, length=2), cap(B, length=4), cap(A, length=8)):
        if agg.add(c):
            records.extend(agg.flush())
    records.extend(agg.flush())
    total = {}
    for k, cells in records:
        total[k] = total.get(k, 0) + sum(c[5 + BYTES] for c in cells)
    assert total == {A.encode(): 11, B.encode(): 4}
    assert agg.meta()["captures"] == 4


def test_flush_yields_bytes_keys_and_plain_lists():
    agg = CaptureAggregator(4)
    agg.add(cap("com,bücher)/"))
    (key, cells), = agg.flush()
    assert key == "com,bücher)/".encode("utf-8")
    assert cells == [["2010", "text/html", "200", "D1", 0, 1, 100, "20100101000000"]]      # one capture: 8 items
    assert orjson.loads(orjson.dumps(cells)) == cells


# map_split

def write(path, text, mode="w"):
    if mode == "gz":
        with gzip.open(path, "wb") as f:
            f.write(text.encode())
    else:
        path.write_text(text)
    return path


SMALL = (" CDX N b a m s k r M S V g\n"
         + cdx_line(A, "20100101000000", length="100")
         + cdx_line(A, "20100201000000", length="150")
         + cdx_line(A, "20110101000000", "warc/revisit", "-", length="10")
         + cdx_line(B, "2010", "image/png", "404", "sha1:d2", "50")
         + cdx_line(B, "201013", length="1")           # bad month
         + "too few fields\n")


def test_map_split_one_record_per_urlkey_then_meta(tmp_path):
    records, meta = run(manifest(write(tmp_path / "a.cdx", SMALL)))
    assert [k for k, _ in records] == [A.encode(), B.encode()]
    assert meta == (b"!meta", {"captures": 4, "skipped": {"bad_timestamp": 1, "bad_field_count": 1}})


def test_map_split_cells(tmp_path):
    records, _ = run(manifest(write(tmp_path / "a.cdx", SMALL)))
    got = {k: sorted(v) for k, v in records}
    assert got == {
        A.encode(): [["2010", "text/html", "200", "D1", 0, 2, 250, 150, "20100101000000", "20100201000000"],
                     ["2011", "", "", "D1", 1, 1, 10, 10, "20110101000000", "20110101000000"]],
        B.encode(): [["2010", "image/png", "404", "D2", 0, 1, 50, 50, "20100101000000", "20100101000000"]],
    }


def test_map_split_no_resolve(tmp_path):
    records, _ = run(manifest(write(tmp_path / "a.cdx", SMALL)), resolve=False)
    cells = dict(records)[A.encode()]
    assert ["2011", "warc/revisit", "unk", "D1", 0] in [c[:5] for c in cells]


def test_map_split_without_legend_uses_manifest_fields(tmp_path):
    path = write(tmp_path / "a.cdx", cdx_line(A, "20100101000000") + cdx_line(A, "20100101000001"))
    records, meta = run(manifest(path))
    assert [k for k, _ in records] == [A.encode()]
    assert records[0][1][0][5] == 2
    assert meta[1] == {"captures": 2, "skipped": {}}


def test_map_split_byte_range(tmp_path):
    text = cdx_line(A, "20100101000000") + cdx_line(B, "20100101000000")
    path = write(tmp_path / "a.cdx", text)
    cut = len(cdx_line(A, "20100101000000")) + 3      # inside the second line
    first, _ = run(manifest(path, end=cut))
    second, meta = run(manifest(path, start=cut))
    assert [k for k, _ in first] == [A.encode(), B.encode()]    # the line crossing 'end' is ours
    assert second == [] and meta[1]["captures"] == 0


def test_map_split_gzip(tmp_path):
    records, meta = run(manifest(write(tmp_path / "a.cdx.gz", SMALL, "gz"), compression="gzip"))
    assert [k for k, _ in records] == [A.encode(), B.encode()]
    assert meta[1]["captures"] == 4


def test_map_split_truncated_gzip(tmp_path):
    text = "".join(cdx_line("com,example)/%d" % i, "20100101000000") for i in range(200))
    data = gzip.compress(text.encode())
    path = tmp_path / "t.cdx.gz"
    path.write_bytes(data[:len(data) // 2])
    records, meta = run(manifest(path, compression="gzip"))
    assert meta[1]["skipped"] == {"truncated_file": 1}
    assert 0 < meta[1]["captures"] < 200
    assert len(records) == meta[1]["captures"]       # complete lines before the cut still count


def test_map_split_gzip_missing_trailer_is_truncated(tmp_path):
    path = tmp_path / "t.cdx.gz"
    path.write_bytes(gzip.compress(SMALL.encode())[:-4])
    _, meta = run(manifest(path, compression="gzip"))
    assert meta[1]["skipped"].get("truncated_file") == 1


def test_map_split_truncated_bz2(tmp_path):
    path = tmp_path / "t.cdx.bz2"
    path.write_bytes(bz2.compress(SMALL.encode())[:-10])
    _, meta = run(manifest(path, compression="bz2"))
    assert meta[1]["skipped"].get("truncated_file") == 1


def test_map_split_not_really_gzip(tmp_path):
    path = write(tmp_path / "a.cdx.gz", SMALL)
    records, meta = run(manifest(path, compression="gzip"))
    assert records == []
    assert meta[1] == {"captures": 0, "skipped": {"unreadable_file": 1}}


def test_map_split_missing_file(tmp_path):
    records, meta = run(manifest(tmp_path / "nope.cdx"))
    assert records == []
    assert meta == (b"!meta", {"captures": 0, "skipped": {"unreadable_file": 1}})


def test_map_split_later_legend_switches_layout(tmp_path):
    seven = "%s %s http://x/ %s %s %s %s\n"
    text = (" CDX N b a m s k r M S V g\n"
            + cdx_line(A, "20100101000000")
            + " CDX N b a m s k S\n"
            + seven % (B, "20110101000000", "image/gif", "200", "sha1:d9", "77")
            + cdx_line(A, "20100101000000"))                      # 11 fields: no longer the layout
    records, meta = run(manifest(write(tmp_path / "a.cdx", text)))
    got = dict(records)
    assert got[B.encode()] == [["2011", "image/gif", "200", "D9", 0, 1, 77, 77, "20110101000000",
                                "20110101000000"]]
    assert got[A.encode()][0][5] == 1
    assert meta[1] == {"captures": 2, "skipped": {"bad_field_count": 1}}


def test_map_split_bad_legend_keeps_layout(tmp_path):
    text = " CDX N a m\n" + cdx_line(A, "20100101000000")
    records, meta = run(manifest(write(tmp_path / "a.cdx", text)))
    assert [k for k, _ in records] == [A.encode()]
    assert meta[1]["skipped"] == {"bad_legend": 1}


def test_map_split_ignores_special_and_empty_lines(tmp_path):
    text = "!meta x\n@context y\n\n" + cdx_line(A, "20100101000000")
    records, meta = run(manifest(write(tmp_path / "a.cdx", text)))
    assert len(records) == 1 and meta[1] == {"captures": 1, "skipped": {}}


def test_map_split_cdxj(tmp_path):
    text = ('%s 20100101000000 {"url":"http://example.com/a","mime":"text/html","status":"200",'
            '"digest":"sha1:AAA","length":"42"}\n' % A)
    records, meta = run(manifest(write(tmp_path / "a.cdxj", text), fmt="cdxj", fields=None))
    assert records == [(A.encode(), [["2010", "text/html", "200", "AAA", 0, 1, 42, 42, "20100101000000",
                                      "20100101000000"]])]
    assert meta[1]["captures"] == 1
