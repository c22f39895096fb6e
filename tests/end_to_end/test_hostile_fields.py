"""Random bytes in the fields of an index (MIME, status, digest, URL path, CDXJ values of any
JSON type) always give a profile that validates, with exact capture and byte counts, on the
compiled and the pure Python paths alike."""

import os

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.accel import fast
from profiler.run.profile import run_profile
from profiler.files.profilefile import iter_data
from profiler.files.validate import validate

LEGEND = b" CDX N b a m s k r M S V g\n"
WHITESPACE = set(b" \t\n\r\x0b\x0c")
NON_CAPTURE = (b"warc/request", b"warc/metadata", b"warc/warcinfo", b"arc/filedesc", b"text/dns")

field = st.binary(min_size=1, max_size=12).filter(lambda b: not (set(b) & WHITESPACE))
path_part = st.binary(max_size=10).filter(lambda b: not (set(b) & WHITESPACE) and b"%" not in b)
capture = st.tuples(path_part, st.integers(1990, 2030), field, field, field, st.integers(0, 10 ** 12))


def cdx_line(tail, year, mime, status, digest, length):
    return b"com,example)/%s %d0615120000 http://example.com/x %s %s %s - - %d 0 a.warc.gz\n" % (
        tail, year, mime, status, digest, length)


def check(path, captures, total_bytes):
    report = validate(str(path))
    assert report.count == 0, [(p.lineno, p.message) for p in report.problems]
    root = dict(iter_data(str(path)))[b"* - - -"]
    assert root["urim"]["total"] == captures
    assert root["bytes"] == total_bytes


@pytest.mark.parametrize("pure", ["", "1"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(captures=st.lists(capture, min_size=1, max_size=20))
def test_random_cdx_fields(tmp_path_factory, monkeypatch, pure, captures):
    monkeypatch.setenv(fast.PURE_ENV, pure)
    captures = [c for c in captures if not c[2].lower().startswith(NON_CAPTURE)]
    folder = tmp_path_factory.mktemp("f")
    data = folder / "in.cdx"
    data.write_bytes(LEGEND + b"".join(cdx_line(*c) for c in captures))
    out = folder / "out.cdxj"
    run_profile([str(data)], str(out))
    if captures:
        check(out, len(captures), sum(c[5] for c in captures))


json_value = st.recursive(st.none() | st.booleans() | st.integers(-10, 10) | st.text(max_size=8),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                          max_leaves=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.tuples(json_value, json_value, json_value), min_size=1, max_size=10))
def test_random_cdxj_values(tmp_path_factory, values):
    folder = tmp_path_factory.mktemp("j")
    lines = []
    for i, (mime, status, digest) in enumerate(values):
        record = {"url": "http://example.com/%d" % i, "mime": mime, "status": status, "digest": digest,
                  "length": "100"}
        lines.append(b"com,example)/%d 20130615120000 %s\n" % (i, orjson.dumps(record)))
    data = folder / "in.cdxj"
    data.write_bytes(b"".join(lines))
    out = folder / "out.cdxj"
    run_profile([str(data)], str(out))
    kept = [v for v in values if not (isinstance(v[0], str) and v[0].lower().startswith(
        tuple(m.decode() for m in NON_CAPTURE)))]
    if kept:
        check(out, len(kept), 100 * len(kept))


def test_the_reported_cases(tmp_path):
    data = tmp_path / "w.cdx"
    data.write_bytes(LEGEND + cdx_line(b"a", 2013, b"{weird}", b"200", b"X", 5)
                     + cdx_line(b"b", 2013, b"text/html", b"{x}", b"{", 7))
    out = tmp_path / "w.cdxj"
    run_profile([str(data)], str(out))
    check(out, 2, 12)
    assert any(b"%7Bweird}" in k for k in dict(iter_data(str(out))))
    j = tmp_path / "w.cdxj.in"
    j.write_bytes(b'com,example)/ 20130101000000 {"url":"http://example.com/","mime":{"x":1},"length":"5"}\n')
    out2 = tmp_path / "j.cdxj"
    run_profile([str(j)], str(out2))
    check(out2, 1, 5)


@pytest.mark.parametrize("pure", ["", "1"])
def test_lengths_of_2_to_the_64_or_more_are_bad_length(tmp_path, monkeypatch, pure):
    monkeypatch.setenv(fast.PURE_ENV, pure)
    data = tmp_path / "big.cdx"
    data.write_bytes(LEGEND + cdx_line(b"a", 2013, b"text/html", b"200", b"A", 100)
                     + cdx_line(b"b", 2013, b"text/html", b"200", b"B", 2 ** 64)
                     + cdx_line(b"c", 2013, b"text/html", b"200", b"C", 10 ** 30)
                     + cdx_line(b"d", 2013, b"text/html", b"200", b"D", 2 ** 62))
    out = tmp_path / "big.cdxj"
    run_profile([str(data)], str(out))
    check(out, 2, 100 + 2 ** 62)
    from profiler.nightly import fold as nightly_fold
    assert nightly_fold.run_meta(str(out))[0]["skipped"] == {"bad_length": 2}


@pytest.mark.parametrize("pure", ["", "1"])
def test_a_length_of_thousands_of_digits_is_bad_length_and_the_lines_after_it_are_read(tmp_path, monkeypatch, pure):
    """A length of 5,000 digits (more than Python reads an int of) in a CDX, a CDXJ's string or a
    crawl log's size: that line is bad_length, the lines after it counted (the split ended there,
    every capture after it lost as one unreadable_file); leading zeros are no digits of a length."""
    monkeypatch.setenv(fast.PURE_ENV, pure)
    huge = b"9" * 5000
    cdx = tmp_path / "huge.cdx"
    cdx.write_bytes(LEGEND + cdx_line(b"a", 2013, b"text/html", b"200", b"A", 100)
                    + cdx_line(b"b", 2013, b"text/html", b"200", b"B", 7).replace(b" 7 0 ", b" %s 0 " % huge)
                    + cdx_line(b"c", 2013, b"text/html", b"200", b"C", 7).replace(b" 7 0 ", b" %s12 0 " % (b"0" * 5000))
                    + cdx_line(b"d", 2013, b"text/html", b"200", b"D", 3))
    cdxj = tmp_path / "huge.cdxj"
    cdxj.write_bytes(b"".join(b'com,example)/%s 20130615120000 {"mime":"text/html","length":"%s"}\n' % (k, n)
                              for k, n in ((b"a", b"100"), (b"b", huge), (b"c", b"0" * 5000 + b"12"), (b"d", b"3"))))
    log = tmp_path / "crawl.log"
    log.write_bytes(b"".join(b"2013-06-15T12:00:00.000Z   200 %s http://example.com/%s - - text/html #042 "
                             b"20130615120000000+5 sha1:%s - -\n" % (n, k, k.upper())
                             for k, n in ((b"a", b"100"), (b"b", huge), (b"c", b"0" * 5000 + b"12"), (b"d", b"3"))))
    from profiler.nightly import fold as nightly_fold
    for path in (cdx, cdxj, log):
        out = tmp_path / (path.name + ".out.cdxj")
        run_profile([str(path)], str(out))
        check(out, 3, 115)
        assert nightly_fold.run_meta(str(out))[0]["skipped"] == {"bad_length": 1}, path.name


NOT_CAPTURES_ANY_CASE = [b"WARC/REQUEST", b"Warc/Metadata;x=1", b"ARC/FILEDESC", b"warc/WarcInfo", b"WARC/request"]


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("pure", ["", "1"])
def test_non_capture_media_types_in_any_case_are_not_captures(tmp_path, monkeypatch, runner, pure):
    """warc/request, warc/metadata, warc/warcinfo and arc/filedesc are no captures in any case and
    with white space around (normalise.mime reads them lower case, as it reads warc/revisit): an
    index saying WARC/REQUEST counted the request as a capture of type warc/request."""
    monkeypatch.setenv(fast.PURE_ENV, pure)
    cdx = tmp_path / "in.cdx"
    cdx.write_bytes(LEGEND + cdx_line(b"ok", 2013, b"text/html", b"200", b"D1", 10)
                    + b"".join(cdx_line(b"r%d" % i, 2013, m, b"200", b"D2", 1000) for i, m in enumerate(NOT_CAPTURES_ANY_CASE)))
    cdxj = tmp_path / "in.cdxj"
    cdxj.write_bytes(b"com,example)/ok 20130615120000 {\"mime\":\"text/html\",\"length\":\"10\"}\n" + b"".join(
        b"com,example)/r%d 20130615120000 %s\n" % (i, orjson.dumps({"mime": m.decode(), "length": "1000"}))
        for i, m in enumerate(NOT_CAPTURES_ANY_CASE + [b" warc/request", b"\twarc/metadata "])))
    for path, lines in ((cdx, len(NOT_CAPTURES_ANY_CASE)), (cdxj, len(NOT_CAPTURES_ANY_CASE) + 2)):
        out = tmp_path / (path.name + ".cdxj")
        summary = run_profile([str(path)], str(out), runner=runner)["summary"]
        check(out, 1, 10)
        assert summary["run"]["skipped"] == {"not_a_capture": lines}


@pytest.mark.parametrize("pure", ["", "1"])
def test_urlkeys_ending_in_a_star_or_its_escape_never_share_an_exact_key(tmp_path, monkeypatch, pure):
    """'a*' is written 'a%2A': an index's urlkey 'a%2A' (not canonicalised) shared that exact key,
    which counted 2 URI-Rs for one URL, and lookup answered it with both URLs' captures. Each
    urlkey has its own key, on both kernels, and lookup finds it."""
    from helpers.policies import write_policy
    from profiler.toolkit.lookup import Lookup
    monkeypatch.setenv(fast.PURE_ENV, pure)
    tails = [b"a*", b"a%2A", b"a%252A", b"a%25%2A"]
    data = tmp_path / "in.cdx"
    data.write_bytes(LEGEND + b"".join(cdx_line(t, 2013, b"text/html", b"200", b"D%d" % i, 10 << i)
                                       for i, t in enumerate(tails)))
    policy = write_policy(tmp_path / "p.yaml", {"name": "urls", "exact_urls": True,
                                                 "emit": {"url": {"datetime": ["any"]}}})
    out = tmp_path / "out.cdxj"
    run_profile([str(data)], str(out), policy=policy)
    check(out, 4, sum(10 << i for i in range(4)))
    lines = dict(iter_data(str(out)))
    exact = {k.split(b" ")[0]: v for k, v in lines.items() if k.startswith(b"com,example)/a")}
    assert sorted(exact) == [b"com,example)/a%25%252A", b"com,example)/a%25252A", b"com,example)/a%252A",
                             b"com,example)/a%2A"]
    assert all(v["urir"] == 1 and v["urim"]["total"] == 1 for v in exact.values())
    with Lookup(str(out)) as index:
        for i, tail in enumerate(tails):
            answer = index.lookup("com,example)/" + tail.decode())
            assert answer.frequency.urim == 1 and answer.frequency.urir == 1, (tail, answer)
            assert exact[answer.key.split(b" ")[0]]["bytes"] == 10 << i
