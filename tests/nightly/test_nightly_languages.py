"""Nightly with a policy whose keys have lang: nights fold five-field profiles into what a run from
scratch writes, the change report reads them, and a profile of other key fields is never folded
into or compared with one of five."""

import json
import os
import zlib

import pytest

from profiler.files.layout import LayoutError
from profiler.files.profilefile import read_header
from profiler.files.ukvs import breakdowns, read_headers
from profiler.files.validate import validate
from profiler.nightly import changes, fold

from helpers.languages import NO_LANG, TLD_LANG, cc_index, lines_of, profile, write_policy
from helpers.nightly_archive import Archive, assert_same_profile, check_within_bounds

FIVE = ["surt", "datetime", "mime", "status", "lang"]


def split_by_host(index, paths):
    outs = [open(p, "wb") for p in paths]
    with open(index, "rb") as f:
        for line in f:
            host = line.split(b")", 1)[0]
            outs[zlib.crc32(host) % len(outs)].write(line)
    for o in outs:
        o.close()


def published(archive):
    return os.path.join(archive.out, os.readlink(archive.latest))


def test_nights_with_languages(tmp_path, capsys):
    index = cc_index(tmp_path, 1500, seed=8)
    a = Archive(tmp_path / "archive", policy=write_policy(tmp_path, TLD_LANG), mementomap="surt",
                on_overlap="approximate")
    later = tmp_path / "later"
    later.mkdir()
    split_by_host(index, [os.path.join(a.inputs, "0.cdxj")] + [str(later / ("%d.cdxj" % i)) for i in (1, 2)])
    status, line = a.night(capsys)
    assert status == 0 and "published" in line
    os.rename(later / "1.cdxj", os.path.join(a.inputs, "1.cdxj"))
    status, line = a.night(capsys)
    # other hosts; a few payloads (empty pages, redirects) seen before: folded with bounds there
    assert status == 0 and ("(approximate: 0 URI-R(s)" in line or "(fold:" in line), line
    assert dict(read_header(a.latest))["!keys"] == FIVE
    exact, bounded = check_within_bounds(a.latest, a.scratch())
    assert exact > bounded
    assert validate(a.latest).ok
    stem = published(a)[:-len(".cdxj")]
    report = json.load(open(stem + ".changes.json"))
    lines = lines_of(a.latest)
    assert report["totals"]["urim.total"][1] == lines["* - - - -"]["urim"]["total"]
    assert report["by_year"] and sum(r["urim.total"][1] for r in report["by_year"]) == \
        lines["* - - - -"]["urim"]["total"]
    assert report["by_tld"] and "note" not in report
    assert breakdowns(read_headers(os.path.join(a.out, "archive-latest.ukvs"))[0]) == ["lang"]

    # another policy, without lang: a rebuild, and a change report that compares with nothing
    a.configure(policy=write_policy(tmp_path, NO_LANG))
    os.rename(later / "2.cdxj", os.path.join(a.inputs, "2.cdxj"))
    status, line = a.night(capsys)
    assert status == 0 and "(rebuild: policy" in line
    assert dict(read_header(a.latest))["!keys"] == FIVE[:4]
    assert_same_profile(a.latest, a.scratch())
    report = json.load(open(published(a)[:-len(".cdxj")] + ".changes.json"))
    assert report["old"] is None and "cannot compare" in report["note"]
    assert "has keys surt datetime mime status lang, " in report["note"]


def test_fold_and_change_report_refuse_mixed_key_fields(tmp_path):
    index = cc_index(tmp_path, 400, seed=2)
    five = profile(tmp_path, [index], TLD_LANG)
    four = profile(tmp_path, [index], NO_LANG)
    with pytest.raises(LayoutError, match="cannot fold: .* has keys surt datetime mime status lang, .* has "
                                          "surt datetime mime status$"):
        fold.fold(five, four, str(tmp_path / "out.cdxj"), [b"!keys x"])
    assert not (tmp_path / "out.cdxj").exists()
    with pytest.raises(LayoutError, match="cannot compare"):
        changes.compare(four, five)
    counts = fold.fold(five, five, str(tmp_path / "twice.cdxj"), [b"!keys x"])
    assert counts["lines"] == len(lines_of(five)) == counts["merged"]
    r = changes.compare(five, five)
    assert r["keys"]["same"] == len(lines_of(five)) and r["totals"]["urim.total"][2] == 0
    assert r["by_year"] and r["by_mime"] == []
