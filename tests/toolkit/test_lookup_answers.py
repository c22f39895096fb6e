"""lookup's answers say what they rest on: the matched key's level (exact, path, host, domain,
tld, root), 'invalid' for what is neither a URI nor a SURT, and for a datetime query whether a
month or year line answered ('period'), only the key's first/last ('range': cannot tell the
date), or first/last rule the date out ('outside': not-held)."""

import os
import subprocess
import sys

import pytest

from profiler.toolkit.lookup import Lookup, match_level
from profiler.run.profile import run_profile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LEGEND = " CDX N b a m s k r M S V g"


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("l")
    lines = [LEGEND]
    for i, ts in enumerate(["20120301000000", "20130615000000", "20140101000000"]):
        lines.append("com,example)/page%d %s http://example.com/page%d text/html 200 D%d - - 100 0 a.warc.gz"
                     % (i, ts, i, i))
    lines.append("org,other)/ 20130101000000 http://other.org/ text/html 200 E - - 100 0 a.warc.gz")
    (folder / "in.cdx").write_text("\n".join(lines) + "\n")
    out = folder / "p.cdxj"
    run_profile([str(folder / "in.cdx")], str(out))
    return str(out)


def lookup(profile, uri, dt=None):
    with Lookup(profile) as index:
        return index.lookup(uri, dt)


@pytest.mark.parametrize("key, level", [
    (b"com,example)/page1 - - -", "exact"), (b"com,example)/a/* - - -", "path"),
    (b"com,example)/* - - -", "host"), (b"uk,co,example,* - - -", "domain"),
    (b"com,* - - -", "tld"), (b"* - - -", "root"), (b"com,example)/ 1", "exact"),
])
def test_match_level(key, level):
    assert match_level(key) == level


@pytest.mark.parametrize("text", ["not a uri", "", "hello", "a b", "http:/x"])
def test_free_text_is_invalid(profile, text):
    assert lookup(profile, text).status == "invalid"


@pytest.mark.parametrize("text", ["http://example.com/page1", "example.com/page1", "com,example)/page1",
                                  "com,*", "*"])
def test_uris_and_surts_are_looked_up(profile, text):
    assert lookup(profile, text).status == "held"


@pytest.mark.parametrize("text", ["file:///screenshot.png", "file:/screenshot.png", "about:blank",
                                  "dns:example.com"])
def test_uris_of_schemes_without_a_host_key_are_looked_up_at_the_root(profile, text):
    """Archives hold them (a WARC's file:///screenshot.png response, a browser's about:blank):
    their urlkey has no ')' and only '*' holds them. file: and about: URIs were 'invalid'."""
    a = lookup(profile, text)
    assert a.status == "held" and match_level(a.key) == "root"


def test_host_match_reports_its_level(profile):
    a = lookup(profile, "http://example.com/never-crawled")
    assert a.status == "held" and match_level(a.key) == "host"
    a = lookup(profile, "http://unknown.com/")
    assert match_level(a.key) in ("tld", "root")


def test_datetime_outside_first_last_is_not_held(profile):
    a = lookup(profile, "http://example.com/x", "1990")
    assert a.status == "not-held" and a.date == "outside"
    a = lookup(profile, "http://example.com/x", "2030")
    assert a.status == "not-held" and a.date == "outside"


def test_datetime_inside_first_last_cannot_be_told(profile):
    a = lookup(profile, "http://example.com/x", "2013")
    assert a.status == "held" and a.date in ("range", "period")


def test_cli_columns(profile):
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "lookup", profile, "http://example.com/x",
                        "--datetime", "1990"], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    query, status, key, freq, level, date = r.stdout.rstrip("\n").split("\t")
    assert (status, level, date) == ("not-held", "host", "outside")
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "lookup", profile, "not a uri"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.stdout.split("\t")[1] == "invalid"


def test_query_group_the_policy_cannot_answer_is_exit_2(profile):
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "query", profile, "--surt", "com,example)/*",
                        "--group", "mime"], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and r.stdout == "" and "cannot answer" in r.stderr
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "query", profile, "--surt", "com,*",
                        "--group", "datetime"], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0 and r.stdout.count("\n") >= 3


def test_a_dated_lookup_answered_by_a_map_s_all_time_line_has_an_unknown_date(profile, tmp_path):
    """A surt,datetime map whose SURT has only its all-time line (':'): a date it holds nothing
    in (2099) was answered held with date 'period', as if the map told that date; it is held at
    some time, date 'unknown'. A line of the date's period still answers 'period'."""
    from profiler.files.ukvs import profile_to_map
    path = str(tmp_path / "m.ukvs")
    profile_to_map(profile, path, ("surt", "datetime"))
    with Lookup(path) as index:
        late = index.lookup("http://example.com/page1", "2099")
        assert (late.status, late.key, late.date) == ("held", b"com,example)/* :", "unknown")
        batch = dict(index.batch(["http://example.com/page1"], "2099"))["http://example.com/page1"]
        assert batch.date == "unknown"
        dated = index.lookup("com,*", "2013")                     # the TLD has lines by year
        assert (dated.status, dated.key, dated.date) == ("held", b"com,* 2013", "period")


MAP_HEAD = '!context ["http://oduwsdl.github.io/contexts/ukvs"]\n!fields {"keys":["surt"],"values":["frequency"]}\n'


@pytest.mark.parametrize("frequency, status", [
    ("0/0", "not-held"), ("0-/0-", "not-held"), ("0", "not-held"), ("/0", "not-held"), ("0/0+", "not-held"),
    ("0+/0", "not-held"), ("0+/0+", "held"), ("0~/0~", "held"), ("/0+", "held"), ("0+/5-", "held"), ("/", "held")])
def test_only_a_sure_zero_is_not_held(tmp_path, frequency, status):
    """A map's zero count is "not held" only when it is exact or an upper bound: '0+' (at least
    none) and '0~' are counts not known (it answered not-held)."""
    path = tmp_path / "m.ukvs"
    path.write_text(MAP_HEAD + "* 10/5\ncom,cnn)/* %s\n" % frequency)
    assert lookup(str(path), "http://cnn.com/").status == status


def test_a_merge_of_a_blacklist_line_and_a_line_of_unknown_captures_is_held(tmp_path):
    """One map's '0/0' (not held) merged with another's '/5' (5 URI-Rs, URI-Ms not known) is
    '0+/5-': the second archive holds the URI (lookup answered not-held of the merged map)."""
    from profiler.toolkit.merge import merge
    (tmp_path / "a.ukvs").write_text(MAP_HEAD + "* 10/5\ncom,cnn)/* 0/0\n")
    (tmp_path / "b.ukvs").write_text(MAP_HEAD + "* /9\ncom,cnn)/* /5\n")
    merged = str(tmp_path / "ab.ukvs")
    merge([str(tmp_path / "a.ukvs"), str(tmp_path / "b.ukvs")], merged)
    answer = lookup(merged, "http://cnn.com/")
    assert answer.frequency.urim == 0 and answer.frequency.urim_mark == "+" and answer.status == "held"
