"""Odd but fair questions to the toolkit: a URL with a literal space (as WARC-Target-URIs and
CDX lines hold them), a grouping whose lines are of several levels of a field, maps that write
one period two ways."""

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


UKVS_HEADERS = (b'!context ["http://oduwsdl.github.io/contexts/ukvs"]\n'
                b'!fields {"keys":["surt","datetime"],"values":["frequency"]}\n')


@pytest.mark.parametrize("one, other", [(b"2013", b"2013:2013"), (b"-", b":")])
def test_maps_writing_one_period_two_ways_are_not_merged_into_two_lines(tmp_path, one, other):
    """surt,datetime maps that write a period two ways ('2013' and '2013:2013'): merge wrote two
    lines for it, each one input's count, and lookup --datetime 2013 answered one input's 5/2
    (exit 0, validate passed the merged map). Now merge refuses in one line and validate lists
    such a map."""
    from helpers.damage import one_line_error
    from profiler.files.validate import validate
    a, b = tmp_path / "a.ukvs", tmp_path / "b.ukvs"
    a.write_bytes(UKVS_HEADERS + b"* : 5/2\ncom,a)/* %s 5/2\n" % one)
    b.write_bytes(UKVS_HEADERS + b"* : 3/1\ncom,a)/* %s 3/1\n" % other)
    status, out, err = run(["merge", str(a), str(b), "-o", str(tmp_path / "ab.ukvs")])
    assert one_line_error(status, err, "one period, two keys"), err
    assert not (tmp_path / "ab.ukvs").exists()
    both = tmp_path / "both.ukvs"
    both.write_bytes(UKVS_HEADERS + b"* : 8/3\n" + b"".join(sorted(
        [b"com,a)/* %s 5/2\n" % one, b"com,a)/* %s 3/1\n" % other])))
    report = validate(str(both))
    assert not report.ok and "one period, two keys" in str(report.problems), report.problems
    c = tmp_path / "c.ukvs"
    c.write_bytes(a.read_bytes().replace(b"5/2", b"1/1"))
    status, out, err = run(["merge", str(a), str(c), "-o", "-"])
    assert status == 0 and b"com,a)/* %s 6/3" % one in out, err


@pytest.mark.parametrize("one, other", [(b"2013", b"2013:2013"), (b"-", b":")])
def test_lookup_of_a_map_writing_one_period_two_ways_is_refused(tmp_path, one, other):
    """A single surt,datetime map holding one period written two ways: lookup --datetime 2013
    answered the first line's 5/2 (exit 0, the other line's 3/1 unseen). Now the check of the
    whole file refuses it in one line, --skip-bad-lines or not."""
    from helpers.damage import one_line_error
    both = tmp_path / "both.ukvs"
    both.write_bytes(UKVS_HEADERS + b"* : 8/3\n" + b"".join(sorted(
        [b"com,a)/* %s 5/2\n" % one, b"com,a)/* %s 3/1\n" % other])))
    for extra in ([], ["--skip-bad-lines"]):
        status, out, err = run(["lookup", str(both), "http://a.com/", "--datetime", "2013"] + extra)
        assert one_line_error(status, err, "one period, two keys") and out == b"", (out, err)
