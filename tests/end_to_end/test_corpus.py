"""Every CDX/CDXJ file of the shared corpus (../shared/data) profiles without a crash."""

import glob
import json
import os
import re

import pytest

from profiler.formats import registry
from profiler.formats.inputs import InputError
from profiler.run.profile import run_profile

from helpers.paths import SHARED_DATA, shared_data

INDEXES = sorted(
    os.path.relpath(p, SHARED_DATA)
    for pattern in ("*/*.cdx", "*/*.cdxj", "*/*/*.cdx", "*/*/*.cdxj", "*/*/*.cdx.gz", "edgi-wayback/*.txt")
    for p in glob.glob(os.path.join(SHARED_DATA, pattern)))

#: (captures, skipped-by-reason) expected of the malformed or unusual files
EXPECTED = {
    "archive_profiler/index-1.cdx": (66, {"not_a_capture": 1}),
    "archive_profiler/index-2.cdx": (662, {"not_a_capture": 3}),
    "edgi-wayback/bad_timestamp_cdx.txt": (3, {"bad_timestamp": 2}),
    "edgi-wayback/zew.de-cdx-api-response.txt": (1000, {"bad_field_count": 1}),
    "pywb/zipcdx/zipnum-sample.cdx.gz": (188, {}),
    "netarchivesuite/fyensdk.cdx": (189, {}),
    "netarchivesuite/NAS-20100909163324-00000-mette.kb.dk.warc.cdx": (41, {}),
}


def read(path):
    with open(path, "rb") as f:
        lines = f.read().splitlines()
    meta = [json.loads(l[6:]) for l in lines if l.startswith(b"!meta ")]
    data = {l.split(b" {", 1)[0].decode(): json.loads(l[l.index(b" {") + 1:]) for l in lines
            if not l.startswith(b"!")}
    return lines, meta, data


def test_corpus_is_listed():
    shared_data()
    assert len(INDEXES) >= 30


@pytest.mark.parametrize("name", INDEXES or ["(corpus missing)"])
def test_each_index_profiles(name, tmp_path):
    path = shared_data(name)
    out = str(tmp_path / "p.cdxj")
    if name == "ipwb/indexes/5mementos.cdxj":      # a TimeMap, not a capture index
        with pytest.raises(InputError, match=re.escape("5mementos.cdxj: not %s (unrecognised layout)" %
                                                        registry.listing()) + "$"):
            run_profile([path], out, policy="full")
        return
    run_profile([path], out, policy="full", split_size=1000)
    lines, meta, data = read(out)
    assert lines == sorted(lines)
    run_meta = next(m for m in meta if "inputs" in m)
    if name in EXPECTED:
        assert (run_meta["captures"], run_meta["skipped"]) == EXPECTED[name]
    assert data["* - - -"]["urim"]["total"] == run_meta["captures"] > 0


def test_whole_corpus_in_one_run_reports_unusable_files(tmp_path):
    out = str(tmp_path / "all.cdxj")
    # inline: the local runner would start a task process for each of the ~230 files (minutes);
    # the local runner and shipping are covered by test_exactness and test_shipping
    run_profile([shared_data()], out, policy="default", runner="inline")
    lines, meta, data = read(out)
    run_meta = next(m for m in meta if "inputs" in m)
    reasons = {os.path.relpath(s["path"], SHARED_DATA): s["reason"] for s in run_meta["skipped_files"]}
    assert reasons["ipwb/indexes/5mementos.cdxj"].startswith("not ACHE crawl output, a WACZ package, a WARC file, an ARC file")
    assert "pywb/warcs/example-bad.warc.gz.bad" not in reasons       # read as it inflates
    assert run_meta["skipped"]["not_chunked"] == 2
    assert run_meta["skipped"]["unusable_file"] == len(reasons)
    # 2 CDX lines, 1 WARC-Date "2014-01", 1 ARC date that is a hex string (cdx-writer hex_instead_of_date)
    assert run_meta["skipped"]["bad_timestamp"] == 4
    assert data["* - - -"]["urim"]["total"] == run_meta["captures"]


def test_orphan_revisits_keep_warc_revisit(tmp_path):
    out = str(tmp_path / "bad.cdxj")
    run_profile([shared_data("pywb", "cdx", "bad.cdx")], out, policy="full")
    _, _, data = read(out)
    assert data["* - warc/revisit unk"]["urim"]["total"] == 2
    assert data["* - text/html 200"]["urim"]["total"] == 2


def test_cdx_and_cdxj_of_the_same_warc_agree(tmp_path):
    for name in ("iana", "dupes"):
        a, b = str(tmp_path / "a.cdxj"), str(tmp_path / "b.cdxj")
        run_profile([shared_data("pywb", "cdx", name + ".cdx")], a, policy="full")
        run_profile([shared_data("pywb", "cdxj", name + ".cdxj")], b, policy="full")
        da, db = read(a)[2], read(b)[2]
        assert da["* - - -"]["urim"]["total"] > 10
        # same keys and counts; byte lengths may differ between the two indexers
        assert {k: v["urim"] for k, v in da.items()} == {k: v["urim"] for k, v in db.items()}
