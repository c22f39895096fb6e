"""Hostile requests to the routing service's handler: parameters of any text (non-ASCII digits
among them) get 200 or a JSON 400, never a 500; a query's work is bounded whatever its URL (the
file probes and reads of a request counted, never timed)."""

import os
import urllib.parse

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.serve import answers
from profiler.serve.archives import open_archives
from profiler.serve.web import Service
from profiler.toolkit.lookup import Lookup

from helpers.serving import write_map


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    folder = tmp_path_factory.mktemp("requests")
    specs = ["A=%s" % write_map(folder / "a.ukvs", 5000), "B=%s" % write_map(folder / "b.ukvs", 3000, seed=3)]
    return Service(open_archives(specs))


def get(service, path, params):
    query = urllib.parse.urlencode(params).encode("ascii") if isinstance(params, dict) else params
    status, body = service.handle("GET", path, query)
    return status, orjson.loads(body)


NON_ASCII_DIGITS = ["²", "٢٠١٣", "２０１３", "१२", "2013²", "¹", "߂߀߁߃"]


@pytest.mark.parametrize("digits", NON_ASCII_DIGITS)
def test_non_ascii_digits_are_a_400(service, digits):
    for path, params in (("/route", {"url": "http://h00001.com/", "limit": digits}),
                         ("/lookup", {"url": "http://h00001.com/", "datetime": digits}),
                         ("/route", {"url": "http://h00001.com/", "datetime": digits})):
        status, body = get(service, path, params)
        assert status == 400 and isinstance(body["error"], str), (params, body)


TEXT = st.one_of(st.text(max_size=30), st.sampled_from(NON_ASCII_DIGITS + ["2013", "1", "eng", "ara", "0", "-1"]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(["/lookup", "/route", "/archives", "/health"]),
       params=st.dictionaries(st.sampled_from(["url", "datetime", "limit", "lang", "x"]), TEXT, max_size=5),
       url=st.one_of(st.none(), st.sampled_from(["http://h00001.com/a", "com,h00002)/", "*"]), st.text(max_size=60)))
def test_any_parameters_get_200_or_a_json_400(service, path, params, url):
    if url is not None:
        params = dict(params, url=url)
    status, body = get(service, path, params)
    assert status in (200, 400), (params, body)
    if status == 400:
        assert isinstance(body["error"], str)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=400))
def test_any_query_string_gets_200_or_a_json_400(service, raw):
    status, body = get(service, "/route", raw)
    assert status in (200, 400) and (status == 200 or isinstance(body["error"], str))


@pytest.mark.parametrize("path, extra", [("/lookup", {"dateime": "2013"}), ("/route", {"date": "2013"}),
                                         ("/lookup", {"mime": "text/html"}), ("/route", {"status": "200"}),
                                         ("/lookup", {"limit": "1"}), ("/route", {"Url": "http://h00002.com/"})])
def test_an_unknown_parameter_is_a_400(service, path, extra):
    """A parameter the endpoint does not take (a misspelt datetime, a criterion not asked by
    value) is a 400 naming it: it was ignored, and the answer given as if it had not been asked."""
    status, body = get(service, path, dict({"url": "http://h00001.com/"}, **extra))
    assert status == 400 and repr(next(iter(extra))) in body["error"], body
    status, body = get(service, path, {"url": "http://h00001.com/", "datetime": "2013", "lang": "eng"})
    assert status == 200, body


def test_many_parameters_are_a_400(service):
    status, body = get(service, "/lookup", "&".join("p%d=1" % i for i in range(1000)).encode())
    assert status == 400 and "error" in body


# ---------------------------------------------------------------- bounded work per request

class Counted:
    """Counts a lookup's probes (searches of the file by prefix) and reads (probe lines and
    blocks read from the file)."""

    def __init__(self, lookup):
        self.probes = 0
        self.lines = lookup.lines
        search = self.lines.group

        def group(prefix, forward=False):
            self.probes += 1
            return search(prefix, forward)
        self.lines.group = group

    @property
    def reads(self):
        return self.lines.seeks


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    """A service over a profile-like map with path lines under a few hosts (the deep candidates
    of a URL under them do get probed), and its archives' lookups counted."""
    folder = tmp_path_factory.mktemp("bounded")
    path = folder / "deep.ukvs"
    lines = ['!fields {"keys":["surt"],"values":["frequency"]}\n', "* 900/300\n", "com,* 900/300\n"]
    for h in range(200):
        host = "com,h%05d)" % h
        lines.append("%s/* 9/3\n" % host)
        lines += sorted("%s/%s/* 2/1\n" % (host, "/".join(["a"] * depth)) for depth in range(1, 40))
    lines = lines[:3] + sorted(lines[3:])
    path.write_text("".join(lines))
    service = Service(open_archives(["DEEP=%s" % path]))
    return service, Counted(service.archives[0].current())


#: a plain lookup that probes every candidate: a URL no file holds, of two directories
PLAIN = "http://www.nowhere.example.org/a/b/page.html"


def cost(counted, url, **params):
    service, counter = counted
    before = counter.probes, counter.reads
    status, body = get(service, "/lookup", dict(params, url=url))
    return status, counter.probes - before[0], counter.reads - before[1]


SEGMENT = st.text(st.sampled_from("ab1-_."), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(depth=st.integers(0, 3000), segments=st.lists(SEGMENT, max_size=8), more_labels=st.integers(0, 1000),
       labels=st.lists(st.text(st.sampled_from("abc0"), min_size=1, max_size=4), max_size=8),
       host=st.integers(0, 250), query=st.booleans(), dt=st.sampled_from([None, "2013", "20130512"]))
def test_a_request_costs_a_bounded_multiple_of_a_plain_lookup(counted, depth, segments, more_labels, labels, host,
                                                               query, dt):
    """Whatever the URL (thousands of path segments or host labels), a request makes at most a
    small constant times the probes and reads of a plain lookup, or is refused (400, or 414 past
    the longest request target)."""
    segments = ["a"] * depth + segments
    labels = ["x"] * more_labels + labels
    params = {"datetime": dt} if dt else {}
    status, plain_probes, _ = cost(counted, PLAIN, **params)
    assert status == 200
    name = ".".join(labels + ["h%05d" % host, "com"])
    url = "http://%s/%s%s" % (name, "/".join(segments), "?q=1" if query else "")
    status, probes, reads = cost(counted, url, **params)
    assert status in (200, 400, 414)
    assert probes <= 8 * plain_probes and reads <= 3 * 8 * plain_probes, (probes, reads, plain_probes)


def test_a_deep_url_within_the_bounds_is_answered_as_lookup_answers(counted, tmp_path):
    service, _ = counted
    url = "http://h00003.com/" + "a/" * answers.MAX_SEGMENTS + "x"
    status, body = get(service, "/lookup", {"url": url})
    with Lookup(service.archives[0].path) as lookup:
        want = lookup.lookup(url)
    assert status == 200 and body["archives"][0]["key"] == want.key.decode()
    status, body = get(service, "/lookup", {"url": url.replace("/x", "/a/x")})
    assert status == 400 and "directories" in body["error"]


def test_long_queries_leave_little_behind(service):
    """The candidate keys kept between requests are those of a few queries, however many long
    ones are asked (a long URI's candidates are dozens of long prefixes of it)."""
    from profiler.toolkit.lookup import surt_candidates
    for n in range(600):
        url = "http://h%05d.com/%s/" % (n, "/".join(["d%d" % n + "x" * 200] * answers.MAX_SEGMENTS))
        assert get(service, "/lookup", {"url": url})[0] == 200
    kept = surt_candidates.cache_info().currsize
    assert kept <= 100


def test_distinct_long_urls_leave_a_bounded_surt_cache(service, monkeypatch):
    """The SURTs of URLs kept between requests are bounded in bytes, not only in number:
    distinct URLs of 4 KB each (the service answers URLs of up to 8 KB) kept 100,000 of them,
    their URLs and keys (a worker grew by 100 MB every 12,000 requests, to 1.6 GB)."""
    from profiler.formats import cdx
    monkeypatch.setattr(cdx, "CACHE_BYTES", 1 << 20, raising=False)
    cdx._surt_cache.clear()
    for n in range(300):
        url = "http://h%05d.com/p?q=%d%s" % (n, n, "a" * 4000)      # a query: surt's own reading
        assert get(service, "/lookup", {"url": url})[0] == 200
    kept = sum(len(url) + len(key) for url, key in cdx._surt_cache.items())
    assert kept <= (1 << 20) + 20000


def test_split_pages_are_served_as_their_file(tmp_path):
    """An archive given as one of its split pages, or their folder, answers as the whole map."""
    from profiler.toolkit.split import split
    whole = write_map(tmp_path / "whole.ukvs", 3000)
    folder = tmp_path / "pages"
    folder.mkdir()
    split(whole, 700, str(folder / "p"))
    page = sorted(p for p in os.listdir(folder))[1]
    service = Service(open_archives(["WHOLE=%s" % whole, "FOLDER=%s" % folder, "PAGE=%s" % (folder / page)]))
    for i in range(0, 3000, 41):
        status, body = get(service, "/lookup", {"url": "http://h%05d.com/" % i})
        assert status == 200
        assert len({(a["answer"], a["key"], a["frequency"]) for a in body["archives"]}) == 1, body
    health = get(service, "/health", {})[1]
    assert health == {"status": "ok", "archives": 3}


def test_threads_answer_as_the_main_thread(service, tmp_path):
    """A threaded server's threads read the version served with lookups of their own (a lookup
    keeps its place in the file), and answer as the main thread does."""
    import concurrent.futures
    urls = ["http://h%05d.com/x" % i for i in range(0, 6000, 7)]
    want = [get(service, "/lookup", {"url": u}) for u in urls]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(lambda u: get(service, "/lookup", {"url": u}), urls)) == want
