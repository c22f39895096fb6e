"""Odd but fair questions to the toolkit: a URL with a literal space (as WARC-Target-URIs and
CDX lines hold them), a grouping whose lines are of several levels of a field."""

import pytest

from profiler.run.profile import run_profile

from helpers.damage import run


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    d = tmp_path_factory.mktemp("odd-questions")
    cdx = d / "in.cdx"
    cdx.write_text(" CDX N b a m s k r M S V g\n"
                   "com,example)/a%20b.html 20130101000000 http://example.com/a%20b.html text/html 200 "
                   "AAAA - - 100 0 x.warc.gz\n"
                   "com,example)/c 20130201000000 http://example.com/c image/png 404 BBBB - - 50 100 x.warc.gz\n")
    out = {}
    for policy in ("urls", "default"):
        out[policy] = str(d / ("%s.cdxj" % policy))
        run_profile([str(cdx)], out[policy], created="2026-01-01T00:00:00Z", policy=policy)
    return out


def test_a_url_with_a_literal_space_is_looked_up(profile, monkeypatch):
    """It was `invalid`: the profile keys it with %20, as the space is written in its index."""
    status, out, err = run(["lookup", profile["urls"], "http://example.com/a b.html"])
    assert status == 0 and out.split(b"\t")[1:3] == [b"held", b"com,example)/a%20b.html - - -"], (out, err)
    import io
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"http://example.com/a b.html\nnot a uri\n")))
    status, out, err = run(["lookup", profile["urls"]])
    assert [x.split(b"\t")[1] for x in out.splitlines()] == [b"held", b"invalid"], out


@pytest.mark.parametrize("field, levels", [("mime", "category image/*"), ("status", "class 2xx"),
                                           ("datetime", "year 2013")])
def test_a_grouping_of_several_levels_says_not_to_sum_across_them(profile, field, levels):
    """`query --group mime` lists text/* and text/html: summing the listing counted captures
    twice without a word; now a note says each level counts the same captures."""
    status, out, err = run(["query", profile["default"], "--surt", "*", "--group", field, "--feature", "urim.total"])
    assert status == 0 and out, err
    assert "lines listed are of 2 levels" in err and levels in err, err
