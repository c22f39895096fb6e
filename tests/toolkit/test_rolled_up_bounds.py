"""A key that compaction rolled up answers with bounds from the nearest coarser line that holds
its captures: its own SURT's, else a wildcard parent's (the line it was rolled into), else the
root's; a policy that writes no all-'-' root line must not leave it without bounds."""

import json

import pytest

from profiler.run.profile import run_profile
from profiler.toolkit.compact import compact_file
from profiler.toolkit.query import query

#: status codes at the root only (no '* - - -' line), every combination at hosts and paths
POLICY = {"host_depth": 3, "path_depth": 2, "exact_urls": False, "levels": {"datetime": ["year", "month"],
          "mime": [], "status": ["code"]},
          "emit": {"root": {"status": ["code"]}, "tld": "none", "domain": "none", "host": "all", "path": "all"}}
LINES = [("com,a)/d/e/x.html", "20120304050607", "200", "AAAA", 100),
         ("com,a)/d/e/y.html", "20120305050607", "200", "BBBB", 200),
         ("com,a)/d/f.html", "20130101000000", "404", "CCCC", 300),
         ("com,a)/g/h.html", "20130601000000", "200", "AAAA", 400),
         ("com,b)/", "20110101000000", "200", "DDDD", 500)]


def _profile(tmp_path):
    cdx = tmp_path / "in.cdx"
    cdx.write_text(" CDX N b a m s k r M S V g\n" + "".join(
        "%s %s http://x/ text/html %s %s - - %d 0 f.warc.gz\n" % (u, t, s, d, n) for u, t, s, d, n in LINES))
    policy = tmp_path / "policy.yaml"
    policy.write_text(json.dumps(POLICY))
    out = str(tmp_path / "out.cdxj")
    run_profile([str(cdx)], out, policy=str(policy), runner="inline")
    return out


def test_a_path_rolled_into_its_host_is_bounded_by_the_host_line(tmp_path):
    out = _profile(tmp_path)
    with open(out) as f:
        lines = [line for line in f if not line.startswith("!")]
    assert any(line.startswith("com,a)/d/e/* 201203 - - ") for line in lines)
    compacted = str(tmp_path / "compacted.cdxj")
    compact_file(out, compacted, max_lines=10)     # com,a)'s paths rolled up into com,a)/* - - -, all it keeps
    with open(compacted) as f:
        assert not any(line.startswith("com,a)/d/") for line in f)
    found, note, _ = query(compacted, {"surt": "com,a)/d/e/*", "datetime": "201203"})
    assert found, note
    key, flat = found[0]
    assert key == "com,a)/d/e/* 201203 - -"
    # the true value (2 captures, 300 bytes) lies inside; the bounds come from com,a)/* - - -
    assert flat["bounds"]["urim.total"] == [0, 4] and flat["bounds"]["bytes"] == [0, 1000]
    assert flat["bounds"]["first"][0] <= "20120304050607" and flat["bounds"]["last"][1] >= "20120305050607"


OTHER = [("com,a)/d/e/z.html", "20120306050607", "200", "EEEE", 700),
         ("org,c)/", "20140101000000", "200", "FFFF", 800)]


def test_a_compacted_profile_is_not_merged_as_if_complete(tmp_path):
    """A compacted input's keys without a line may hold captures a coarser line counts: merged with
    another archive's profile of the same key fields, such a key got the other input's count
    alone, written exact. Refused in one line, nothing written."""
    from profiler.errors import UserError
    from profiler.toolkit.merge import merge
    out = _profile(tmp_path)
    compacted = str(tmp_path / "compacted.cdxj")
    compact_file(out, compacted, max_lines=10)
    other = str(tmp_path / "other.cdxj")
    with open(out) as f, open(other, "w") as g:          # another archive's profile of the same captures
        g.write(f.read().replace('"created":"', '"created":"1'))
    with pytest.raises(UserError, match="cannot merge .*compacted.cdxj: a compacted profile"):
        merge([compacted, other], str(tmp_path / "merged.cdxj"))
    assert not (tmp_path / "merged.cdxj").exists()


def test_a_compacted_profile_is_not_merged_with_profiles_of_more_key_fields(tmp_path):
    """Merged on fewer key fields (a language profile), a compacted input's unknown shares left
    lines of urim and urir only, which validate and query then refused as damaged: refused first."""
    from profiler.errors import UserError
    from profiler.toolkit.merge import merge
    out = _profile(tmp_path)
    compacted = str(tmp_path / "compacted.cdxj")
    compact_file(out, compacted, max_lines=10)
    cdxj = tmp_path / "lang.cdxj.in"
    cdxj.write_text('com,z)/ 20120101000000 {"url":"http://z.com/","mime":"text/html","status":"200",'
                    '"digest":"ZZZZ","length":"10","languages":"eng"}\n')
    lang = str(tmp_path / "lang.cdxj")
    run_profile([str(cdxj)], lang, policy="lang", runner="inline")
    with pytest.raises(UserError, match="a compacted profile"):
        merge([compacted, lang], str(tmp_path / "merged.cdxj"))
    assert not (tmp_path / "merged.cdxj").exists()


def test_a_range_of_a_rolled_up_key_is_never_said_to_hold_none(tmp_path, capsys):
    """query --from/--to and --series of a key compact rolled up (2 captures in 2012) said "no
    captures in 2012:2013"; they say it may hold some (exit 1). A key of the complete profile
    with none in the range still says none."""
    from profiler.cli.main import main
    out = _profile(tmp_path)
    compacted = str(tmp_path / "compacted.cdxj")
    compact_file(out, compacted, max_lines=10)
    capsys.readouterr()
    for args in (["--from", "2012", "--to", "2013"], ["--series", "year"]):
        assert main(["query", compacted, "--surt", "com,a)/d/e/*"] + args) == 1
        err = capsys.readouterr().err
        assert "no captures" not in err and "may hold captures" in err and "compacted" in err
    assert main(["query", out, "--surt", "com,a)/d/e/*", "--from", "2014", "--to", "2015"]) == 1
    assert "no captures in 2014:2015" in capsys.readouterr().err


def test_explore_never_says_a_rolled_up_key_holds_none_in_a_range(tmp_path):
    """The explorer's time range of a key compact rolled up said "none: no captures in 2012:2013";
    it is unanswerable, and says the key may hold captures. A key of the complete profile with none
    in the range is still "none"."""
    from helpers.explore import answer, serving
    out = _profile(tmp_path)
    compacted = str(tmp_path / "compacted.cdxj")
    compact_file(out, compacted, max_lines=10)
    with serving(compacted) as (url, server):
        a = answer(url, surt="com,a)/d/e/*", **{"from": "2012", "to": "2013"})
        assert a["status"] == "unanswerable" and "may hold captures" in a["note"] and "compacted" in a["note"], a
        assert "a time range" in a["note"]
    with serving(out) as (url, server):
        a = answer(url, surt="com,a)/d/e/*", **{"from": "2014", "to": "2015"})
        assert a["status"] == "none" and a["note"] == "no captures in 2014:2015", a
