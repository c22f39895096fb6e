"""Profiling WARCs directly equals indexing them with cdxj-indexer and profiling the index.

Intended differences (README, "WARC, ARC and ACHE input"):
- metadata records: cdxj-indexer indexes those whose Content-Type is not
  application/warc-fields; the profiler never counts metadata records. The reference
  index below is cdxj-indexer with metadata records left out.
- a record that ends before its Content-Length (the file or its gzip member is cut) is
  skipped and counted as ``truncated_record``; cdxj-indexer indexes what it could read.
- where cdxj-indexer stops with an error, the profiler counts the readable records and
  reports the rest (a WARC-Date of "2014-01" is one ``bad_timestamp``, not a crash).
- an ARC date that is no date (hex): cdxj-indexer dates the record 2999-12-31, the profiler
  counts it ``bad_timestamp``; an ARC header with date and IP swapped, or a MIME with a space:
  cdxj-indexer dates it 2999-12-31, the profiler reads its fields (warc_records.arc_fields).
"""

import collections
import glob
import io
import json
import os

import pytest

cdxj_indexer = pytest.importorskip("cdxj_indexer.main")

from helpers.paths import SHARED_DATA, shared_data   # noqa: E402
from profiler.formats import cdxj, warc  # noqa: E402
from profiler.testing import synthetic_warc
from profiler.run.profile import run_profile        # noqa: E402


class ReferenceIndexer(cdxj_indexer.CDXJIndexer):
    """cdxj-indexer's default CDXJ, without metadata records."""

    def filter_record(self, record):
        return record.rec_type != "metadata" and super().filter_record(record)


def index(path):
    """CDXJ lines cdxj-indexer writes for one file, and its error (it stops at the first one)."""
    out = io.StringIO()
    indexer = ReferenceIndexer(out, [path])
    indexer.output = out
    error = None
    try:
        with open(path, "rb") as f:
            indexer.process_one(f, out, path)
    except Exception as e:
        error = type(e).__name__
    return out.getvalue().encode("utf-8").splitlines(), error


def multiset(captures):
    """The captures but their language (cdxj-indexer's CDXJ has none)."""
    return collections.Counter(c._replace(lang="unk") for c in captures if not isinstance(c, str))


ARCHIVES = sorted(
    os.path.relpath(p, SHARED_DATA) for p in glob.glob(os.path.join(SHARED_DATA, "**", "*"), recursive=True)
    if os.path.isfile(p) and (".warc" in os.path.basename(p) or ".arc" in os.path.basename(p))
    and not p.endswith((".cdx", ".cdxj")))

#: file -> (captures only cdxj-indexer has, captures only the profiler has, cdxj-indexer's error)
INTENDED = {
    "ipwb/warcs/redirect.warc": (1, 0, None),                   # record cut at end of file
    "warcio/example-space-in-url.arc": (1, 0, None),            # record 12 bytes short
    "warcio/example-wrong-chunks.warc.gz": (1, 0, "ArchiveLoadFailed"),   # member ends mid-record
    "ipwb/warcs/variableSizedDates.warc": (0, 3, "TypeError"),  # indexer dies on "2014-01"
    # lines of a damaged WARC, of a CDX inside a metadata record, and an ARC header whose length
    # is "abc": warcio takes them for ARC records, the reader does not
    "ipwb/warcs/broken.warc": (2, 0, "ArchiveLoadFailed"),
    # no newline between records: warcio takes the metadata record's header for the filedesc's
    # separator and reads the CDX lines of its block as 43 records; the reader reads the record
    "netarchivesuite/2-metadata-1.arc": (43, 1, None),
    "pywb/warcs/bad.arc": (1, 0, None),
    # whole-file gzip: the indexer refuses it, the reader reads it as it inflates
    "pywb/warcs/example-bad.warc.gz.bad": (0, 3, "ArchiveLoadFailed"),
    "warcio/example-bad-non-chunked.warc.gz": (0, 2, "ArchiveLoadFailed"),
    # an ARC date that is no date (hex): the indexer dates the record 2999, the reader counts
    # bad_timestamp; a header with date and IP swapped, or a MIME with a space: the indexer dates
    # it 2999 (and takes the URL with the IP and date for the URL), the reader reads its fields
    "cdx-writer/small_warcs/hex_instead_of_date.arc.gz": (1, 0, None),
    "cdx-writer/small_warcs/transposed_header.arc.gz": (1, 1, None),
    "cdx-writer/small_warcs/alexa_charset_in_header.arc.gz": (1, 1, None),
}


def test_every_corpus_archive_gives_the_captures_of_its_cdxj():
    shared_data()
    differences = {}
    for name in ARCHIVES:
        path = os.path.join(SHARED_DATA, name)
        lines, error = index(path)
        theirs = multiset(map(cdxj.parse, lines))
        mine = multiset(warc.iter_captures(path))
        if mine != theirs or error:
            differences[name] = (sum((theirs - mine).values()), sum((mine - theirs).values()), error)
    assert differences == INTENDED


def profile_data(path):
    data = {}
    meta = None
    for line in open(path, "rb").read().splitlines():
        if line.startswith(b'!meta {"inputs"'):
            meta = json.loads(line[6:])
        elif not line.startswith(b"!"):
            key, _, value = line.partition(b" {")
            data[key.decode()] = json.loads(b"{" + value)
    return data, meta


def assert_same_profile(a, b):
    """Feature by feature, key by key."""
    (da, ma), (db, mb) = profile_data(a), profile_data(b)
    assert sorted(da) == sorted(db)
    for key in da:
        assert da[key] == db[key], key
    assert ma["captures"] == mb["captures"] > 0


def write_reference_cdxj(paths, out):
    with open(out, "wb") as f:
        for path in paths:
            lines, _ = index(path)
            f.write(b"".join(line + b"\n" for line in lines))


def test_corpus_profile_equals_profile_of_its_cdxj(tmp_path):
    shared_data()
    names = [n for n in ARCHIVES if n not in INTENDED]
    paths = [os.path.join(SHARED_DATA, n) for n in names]
    write_reference_cdxj(paths, tmp_path / "ref.cdxj")
    run_profile(paths, str(tmp_path / "warc.cdxj"), policy="full")
    run_profile([str(tmp_path / "ref.cdxj")], str(tmp_path / "cdxj.cdxj"), policy="full")
    assert_same_profile(tmp_path / "warc.cdxj", tmp_path / "cdxj.cdxj")


@pytest.mark.parametrize("runner, policy", [("inline", "full"), ("local", "default")])
def test_generated_warcs_profile_equals_profile_of_their_cdxj(tmp_path, runner, policy):
    paths = [str(tmp_path / "g1.warc.gz"), str(tmp_path / "g2.warc")]
    synthetic_warc.write_warc(paths[0], 600, seed=3)
    synthetic_warc.write_warc(paths[1], 300, seed=4, gzip=False)
    write_reference_cdxj(paths, tmp_path / "ref.cdxj")
    run_profile(paths, str(tmp_path / "warc.cdxj"), policy=policy, runner=runner, cores=2)
    run_profile([str(tmp_path / "ref.cdxj")], str(tmp_path / "cdxj.cdxj"), policy=policy)
    assert_same_profile(tmp_path / "warc.cdxj", tmp_path / "cdxj.cdxj")
    data, meta = profile_data(tmp_path / "warc.cdxj")
    assert meta["captures"] == 900 and meta["skipped"]["request_record"] > 100
    assert "* - warc/revisit unk" not in data          # every generated revisit found its original
