import io
import os
import random

import pytest
from hypothesis import given, settings, strategies as st

from profiler.cli.main import main
from profiler.toolkit.lookup import HELD, INVALID, NO_MATCH, NOT_HELD, Lookup, canonical, surt_candidates
from profiler.run.profile import run_profile
from profiler.files.sortedfile import SortedLines
from profiler.files.ukvs import Frequency

from helpers.generated import map_of, profiled_cdx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Real profiles (full, default) of a generated CDX and their maps; the CDX's urlkeys,
    URLs and (urlkey, timestamp) pairs."""
    d = tmp_path_factory.mktemp("lookup")
    out, rows = profiled_cdx(d, 11, ("full", "default"))
    out["map"] = map_of(out["full"], d / "full.ukvs")
    out["map2"] = map_of(out["full"], d / "full2.ukvs", ("surt", "datetime"))
    out["hostmap"] = map_of(out["default"], d / "default.ukvs")
    out["urlkeys"] = sorted({r[0] for r in rows})
    out["urls"] = sorted({r[2] for r in rows})
    out["captures"] = sorted({(r[0], r[1]) for r in rows})
    return out


def test_surt_candidates_most_specific_first():
    assert list(surt_candidates("com,cnn,edition)/world/asia/index.html?x=a/b")) == [
        "com,cnn,edition)/world/asia/index.html?x=a/b", "com,cnn,edition)/world/asia/*",
        "com,cnn,edition)/world/*", "com,cnn,edition)/*", "com,cnn,*", "com,*", "*"]
    assert list(surt_candidates("com,cnn)/")) == ["com,cnn)/", "com,cnn)/*", "com,*", "*"]
    assert list(surt_candidates("urn:x:y")) == ["urn:x:y", "*"]
    assert list(surt_candidates("com,x)/a*")) == ["com,x)/a%2A", "com,x)/*", "com,*", "*"]


def test_canonical():
    assert canonical("http://www.CNN.com/World?b=2&a=1") == "com,cnn)/world?a=1&b=2"
    assert canonical(b"com,cnn)/world") == "com,cnn)/world"
    assert canonical("  ") is None


@pytest.mark.parametrize("name", ["full", "map", "map2", "default", "hostmap"])
def test_no_false_negatives(files, name):
    """Every urlkey and every URL of the input captures is found held (single and batch)."""
    queries = files["urlkeys"] + files["urls"]
    with Lookup(files[name]) as index:
        batch = [a for _, a in index.batch(queries)]
        assert [a.status for a in batch] == [HELD] * len(queries)
        assert all(a.frequency.urim > 0 for a in batch)
        sample = random.Random(1).sample(range(len(queries)), 150)
        for i in sample:
            assert index.lookup(queries[i]) == batch[i]


@pytest.mark.parametrize("name", ["full", "map"])
def test_exact_keys_win(files, name):
    suffix = b" - - -" if name == "full" else b""
    urlkeys = set(files["urlkeys"])
    with Lookup(files[name]) as index:
        for _, a in index.batch(files["urlkeys"] + files["urls"]):
            assert a.urlkey in urlkeys        # URLs canonicalise to the index's urlkeys
            assert a.key == a.urlkey.encode() + suffix
            assert a.frequency.urir == 1


@pytest.mark.parametrize("name", ["full", "map2", "default"])
def test_no_false_negatives_with_datetime(files, name):
    """Every capture is found held at its own timestamp (and month, and year)."""
    picks = random.Random(2).sample(files["captures"], 200)
    with Lookup(files[name]) as index:
        for urlkey, ts in picks:
            for dt in (ts, ts[:6], ts[:4]):
                a = index.lookup(urlkey, dt)
                assert a.status == HELD, (urlkey, dt, a)
        if name == "map2":       # found by the month line of the exact URL
            urlkey, ts = picks[0]
            assert index.lookup(urlkey, ts).key == ("%s %s" % (urlkey, ts[:6])).encode()


def test_datetime_prefers_month_then_year(files):
    urlkey, ts = files["captures"][0]
    with Lookup(files["full"]) as index:
        assert index.lookup(urlkey, ts).key == (urlkey + " " + ts[:6] + " - -").encode()
        assert index.lookup(urlkey, ts[:4]).key == (urlkey + " " + ts[:4] + " - -").encode()
        # a year without captures of this URL falls back to its all-time line
        assert index.lookup(urlkey, "1900").key == (urlkey + " - - -").encode()
    with Lookup(files["map2"]) as index:
        assert index.lookup(urlkey, ts).key == (urlkey + " " + ts[:6]).encode()
        assert index.lookup(urlkey).key == (urlkey + " :").encode()


def test_most_specific_order_and_zero(tmp_path):
    path = tmp_path / "m.ukvs"
    path.write_bytes(b'!fields {keys: ["surt"], values: ["frequency"]}\n'
                     b"* 1000/500\n"
                     b"com,* 500/200\n"
                     b"com,cnn)/* 400\n"
                     b"com,cnn)/profiles/* 0\n"
                     b"com,cnn)/world 0\n"
                     b"com,cnn)/world/asia/* 30/3\n"
                     b"com,yahoo)/* 0/20\n"
                     b"org,* /7\n")
    with Lookup(str(path)) as index:
        def q(uri):
            a = index.lookup(uri)
            return a.status, a.key
        assert q("http://cnn.com/world/asia/x.html") == (HELD, b"com,cnn)/world/asia/*")
        assert q("http://cnn.com/world") == (NOT_HELD, b"com,cnn)/world")
        assert q("http://cnn.com/world/europe/") == (HELD, b"com,cnn)/*")
        assert q("http://cnn.com/profiles/a/b") == (NOT_HELD, b"com,cnn)/profiles/*")
        assert q("http://news.cnn.com/") == (HELD, b"com,*")
        assert q("http://yahoo.com/") == (NOT_HELD, b"com,yahoo)/*")
        assert q("http://example.org/") == (HELD, b"org,*")
        assert q("http://example.net/") == (HELD, b"*")
        assert index.lookup("http://cnn.com/").frequency == Frequency(400, "", None, "")
    path.write_bytes(b"com,cnn)/* 400\n")
    with Lookup(str(path)) as index:
        assert index.lookup("http://example.net/").status == NO_MATCH


def test_datetime_ranges(tmp_path):
    path = tmp_path / "m.ukvs"
    path.write_bytes(b'!fields {keys: ["surt", "datetime"], values: ["frequency"]}\n'
                     b"com,twitter)/* 2010:2012 7\n"
                     b"com,twitter)/* 2014 20~/10\n"
                     b"com,twitter)/* 201603: 5\n"
                     b"com,twitter)/* : 100/35\n"
                     b"com,twitter)/* :2009 0\n")
    with Lookup(str(path)) as index:
        def q(dt):
            a = index.lookup("http://twitter.com/x", dt)
            return a.status, a.key.split()[1].decode()
        assert q("2011") == (HELD, "2010:2012")
        assert q("20140101") == (HELD, "2014")
        assert q("2016") == (HELD, ":")                # 201603: does not hold all of 2016
        assert q("20160401") == (HELD, "201603:")
        assert q("2005") == (NOT_HELD, ":2009")
        assert q(None) == (HELD, ":")


def test_binary_search_reads_little(files):
    """A lookup seeks: far fewer bytes read than the file holds, and few seeks."""
    size = os.path.getsize(files["full"])
    assert size > 5_000_000
    with Lookup(files["full"]) as index:
        reads = []
        real_read = index.lines.f.read

        def read(n=-1):
            data = real_read(n)
            reads.append(len(data))
            return data
        index.lines.f.read = read
        a = index.lookup(files["urlkeys"][len(files["urlkeys"]) // 2])
        assert a.status == HELD
        assert index.lines.seeks < 80
        assert sum(reads) < size / 20


def test_sorted_lines_groups_match_a_scan(tmp_path):
    rng = random.Random(5)
    keys = sorted({"".join(rng.choice("ab,)/*") for _ in range(rng.randint(1, 6))) for _ in range(3000)})
    lines = sorted(k + " " + str(i) for k in keys for i in range(rng.randint(1, 3)))
    path = tmp_path / "s.txt"
    path.write_text("!h x\n" + "\n".join(lines) + "\n")
    start = len("!h x\n")
    probes = sorted({rng.choice(keys)[: rng.randint(1, 6)] for _ in range(400)})
    with SortedLines(str(path), start, block=256) as sl:
        for p in probes:
            assert sl.group(p.encode()) == [line.encode() for line in lines if line.startswith(p)]
    with SortedLines(str(path), start, block=256) as sl:
        for p in probes:
            assert sl.group(p.encode(), forward=True) == [line.encode() for line in lines if line.startswith(p)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.from_regex(r"\A[a-c]{1,3}(,[a-c]{1,3}){0,2}\)/[a-c/]{0,5}\*?\Z"), unique=True, min_size=1,
                max_size=40),
       st.lists(st.from_regex(r"\A[a-c]{1,3}(,[a-c]{1,3}){0,2}\)/[a-c/]{0,5}\Z"), min_size=1, max_size=20))
def test_lookup_equals_brute_force(tmp_path_factory, keys, queries):
    """Against a brute force over the candidate list: same answer, single and batch."""
    path = tmp_path_factory.mktemp("bf") / "m.ukvs"
    counts = {k: (len(k) * 7) % 5 for k in keys}
    path.write_bytes(b"".join(b"%s %d\n" % (k.encode(), counts[k]) for k in sorted(keys, key=str.encode)))
    with Lookup(str(path)) as index:
        batch = [a for _, a in index.batch(queries)]
        for q, a in zip(queries, batch):
            expected = next((c for c in surt_candidates(q) if c in counts), None)
            assert index.lookup(q) == a
            if expected is None:
                assert a.status == NO_MATCH
            else:
                assert a.key == expected.encode()
                assert a.status == (HELD if counts[expected] else NOT_HELD)


def test_lookup_command_single_and_batch(files, capsys, monkeypatch):
    assert main(["lookup", files["map"], files["urls"][0]]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].split("\t")[:2] == [files["urls"][0], HELD]
    queries = files["urls"][:50] + ["", "http://absent.example.invalid/"] + files["urlkeys"][:50]
    stdin = io.TextIOWrapper(io.BytesIO("\n".join(queries).encode() + b"\n"))
    monkeypatch.setattr("sys.stdin", stdin)
    assert main(["lookup", files["hostmap"], "--datetime", "2013"]) == 0
    out = capsys.readouterr().out.splitlines()
    expected = [q for q in queries if q]
    assert [line.split("\t")[0] for line in out] == expected
    statuses = [line.split("\t")[1] for line in out]
    assert statuses.count(HELD) == len(expected)     # the absent one is held by '*' in this map


def test_an_invalid_uri_of_one_lookup_says_what_is_looked_up(files, capsys):
    """A host pattern given as the URI ('*.cnn.com') is answered invalid, with a note saying what a
    lookup takes and where a domain is asked (it was the answer alone)."""
    assert main(["lookup", files["map"], "*.example.com"]) == 0
    captured = capsys.readouterr()
    assert captured.out.split("\t")[:2] == ["*.example.com", INVALID]
    assert "'*.example.com' is not a URI or SURT to look up" in captured.err
    assert "query's --surt 'com,cnn,*'" in captured.err and len(captured.err.splitlines()) == 1
    assert main(["lookup", files["map"], "*.example.com", "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_lookup_command_errors(files, tmp_path, capsys):
    assert main(["lookup", str(tmp_path / "missing"), "x"]) == 2
    assert main(["lookup", files["map"], "x", "--datetime", "20x"]) == 2
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"a b c d e f\n")
    assert main(["lookup", str(bad), "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("archive-profiler: error:") == 3 and "Traceback" not in err


def test_a_query_line_too_long_is_never_held(files):
    """A batch query line of hundreds of MB was held whole and echoed back (the memory grew with
    the line). Under an address-space limit smaller than the line, it is read through without
    being held, answered invalid with its first bytes shown, counted on stderr; the lines around
    it are answered as ever."""
    import resource
    import subprocess
    import sys
    import threading
    line_mib, limit_mib = 320, 256

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_mib << 20, limit_mib << 20))
    p = subprocess.Popen([sys.executable, "-m", "profiler.cli", "lookup", files["map"]], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit,
                         env=dict(os.environ, PYTHONPATH=ROOT))

    def feed():
        try:
            p.stdin.write(files["urls"][0].encode() + b"\n")
            chunk = b"a" * (1 << 20)
            for _ in range(line_mib):
                p.stdin.write(chunk)
            p.stdin.write(b"\n" + files["urls"][1].encode() + b"\n")
        except BrokenPipeError:
            pass
        finally:
            p.stdin.close()
    writer = threading.Thread(target=feed)
    writer.start()
    out, err = p.stdout.read(), p.stderr.read()
    writer.join()
    assert p.wait() == 0 and b"Traceback" not in err, err[-500:]
    rows = [line.split(b"\t") for line in out.splitlines()]
    assert [r[1] for r in rows] == [HELD.encode(), INVALID.encode(), HELD.encode()], out[:300]
    assert rows[0][0] == files["urls"][0].encode() and rows[2][0] == files["urls"][1].encode()
    assert rows[1][0].startswith(b"aaaa") and len(rows[1][0]) < 1000
    assert b"1 query line(s) longer than" in err and err.count(b"\n") == 1, err


def test_invalid_query(files):
    with Lookup(files["map"]) as index:
        assert [a.status for _, a in index.batch([" ", "http://cnn.com/"])] == [INVALID, HELD]


def test_sample_profile(tmp_path):
    """The bundled sample, with the hosts policy: every URL found, at host level or above."""
    prof = tmp_path / "s.cdxj"
    run_profile([SAMPLE], str(prof), policy="hosts")
    import gzip
    with gzip.open(SAMPLE, "rt") as f:
        urls = sorted({line.split()[2] for line in f if not line.startswith(" CDX")})
    with Lookup(str(prof)) as index:
        answers = [a for _, a in index.batch(urls)]
    assert {a.status for a in answers} == {HELD}
    assert sum(a.key.endswith(b")/* - - -") for a in answers) > len(urls) / 2


def test_simple_surt_equals_surt_on_generated_urls():
    from profiler.formats import cdx
    from profiler.testing import synthetic
    from profiler.toolkit.lookup import _simple_surt
    fast = 0
    for line in synthetic.cdx_lines(4000, seed=21):
        url = line.split(" ", 3)[2].encode()
        got = _simple_surt(url)
        if got is not None:
            fast += 1
            assert got == cdx.urlkey(url, url), url
    assert fast > 1000


_label = st.sampled_from(["www", "www2", "WWW", "cnn", "a-b", "x1", "9", "0x", "com", "co", "uk", ""])
_segment = st.sampled_from(["", ".", "..", "a", "B", "index.html", "x~y", "a-b_c", "%7E", "a.b.", "q?x=1"])


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["http", "https", "HTTP", "ftp"]), st.lists(_label, min_size=1, max_size=4),
       st.sampled_from(["", ":80", ":443", ":8080", ":0", ":99999", ":080", ":"]),
       st.lists(_segment, max_size=4), st.booleans())
def test_simple_surt_equals_surt(scheme, labels, port, segments, slash):
    from profiler.formats import cdx
    from profiler.toolkit.lookup import _simple_surt
    url = ("%s://%s%s" % (scheme, ".".join(labels), port) + "".join("/" + s for s in segments)
           + ("/" if slash else "")).encode()
    got = _simple_surt(url)
    if got is not None:
        assert got == cdx.urlkey(url, url)


def test_empty_and_crlf_maps(tmp_path):
    empty = tmp_path / "e.ukvs"
    empty.write_bytes(b'!fields {"keys":["surt"],"values":["frequency"]}\n')
    with Lookup(str(empty)) as index:
        assert index.lookup("http://cnn.com/").status == NO_MATCH
        assert [a.status for _, a in index.batch(["http://cnn.com/"])] == [NO_MATCH]
    crlf = tmp_path / "c.ukvs"
    crlf.write_bytes(b"* 10/5\r\ncom,cnn)/* 4/2\r\ncom,cnn)/a 0\r\n")
    with Lookup(str(crlf)) as index:
        assert index.lookup("http://cnn.com/b").frequency == Frequency(4, "", 2, "")
        assert index.lookup("http://cnn.com/a").status == NOT_HELD


@pytest.mark.parametrize("bound, written, mark", [
    (None, 5, ""), ([5, 5], 5, ""), ([5, 9], 5, "+"), ([2, 5], 5, "-"), ([2, 9], 5, "~")])
def test_a_bounded_count_is_marked_by_where_it_lies_in_its_bounds(bound, written, mark):
    """A merged count is marked '+' at its low, '-' at its high, '~' inside: never a bare number
    that is not the truth."""
    from profiler.toolkit.lookup import _mark
    assert _mark(bound, written) == mark


@pytest.mark.parametrize("given, digits", [("2013", "2013"), ("201305", "201305"), ("2013-05", "201305"),
                                           ("2013-05-12", "20130512"), ("2013-05-12T08:30:00Z", "20130512083000"),
                                           ("2013-05-12T08:30Z", "201305120830"),
                                           ("2013-05-12T08:30:00.25Z", "20130512083000")])
def test_a_datetime_asked_in_digits_or_as_a_w3c_date(given, digits):
    from profiler.toolkit.lookup import datetime_query
    assert datetime_query(given) == digits


@pytest.mark.parametrize("given", ["201313", "20130230", "2013-13", "0000", "2013-05-12T25:00Z", "2013/05",
                                   "2013-05-12T08:30:00+02:00", "x2013", "２０１３"])
def test_a_datetime_of_no_date_is_one_line(given, capsys):
    """A month 13 or 30 February answered 'held ... range' as if it were a date."""
    from profiler.errors import UserError
    from profiler.toolkit.lookup import datetime_query
    with pytest.raises(UserError) as e:
        datetime_query(given)
    assert "\n" not in str(e.value) and repr(given) in str(e.value)
