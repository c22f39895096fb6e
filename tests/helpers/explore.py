"""The explorer served from a thread of the test (a real socket, a real HTTP client), and
profiles written from captures by the brute-force oracle."""

import contextlib
import http.client
import threading
import urllib.parse

import orjson

from profiler.explore.server import make_server
from profiler.files.output import header_lines, write_atomic
from profiler.model import stats

from helpers.oracle import profile as oracle_profile

CREATED = "2026-01-01T00:00:00Z"

#: another producer's profile: the CDXJ blog's example (its key names, some criteria, its value styles)
BLOG = b"""@context ["http://oduwsdl.github.io/contexts/archiveprofiles"]
@id {"uri": "http://archive.example.org/"}
@keys ["surt_uri", "year"]
@meta {"name": "Example Archive", "year": 1996}
* - {"urim": {"min": 1, "max": 400, "total": 3060}, "urir": 350}
* 2013 {"urim": {"min": 1, "max": 1, "total": 10}, "urir": 10}
com,* - {"urim": {"min": 1, "max": 310, "total": 3050}, "urir": 345}
com,cnn)/world - {"urim": {"min": 1, "max": 310, "total": 3046}, "urir": 340}
com,cnn)/world 2013 {"urim": {"min": 1, "max": 1, "total": 1}, "urir": 1}
com,nyt)/ - {"frequency": 5, "spread": 2}
"""


@contextlib.contextmanager
def serving(*specs):
    """The explorer over profile specs ('NAME=FILE' or 'FILE'), listening on a free port: yields
    (its base URL, the Server)."""
    server, url = make_server(list(specs), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield url, server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
        for p in server.service.profiles:
            p.explorer.close()


def get(url, path, params=None, method="GET", headers=None):
    """(status, headers dict, body bytes) of one request on a new connection."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        target = path + ("?" + urllib.parse.urlencode(params) if params else "")
        conn.request(method, target, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def answer(url, **params):
    status, _, body = get(url, "/api/answer", params)
    assert status == 200, body
    return orjson.loads(body)


def write_profile(path, caps, policy, archive_uri=None):
    """The oracle's profile of captures ([urlkey, timestamp, mime, status, digest, length,
    revisit, lang]), written as the profile command writes one."""
    table = oracle_profile(caps, policy)
    heads = header_lines(archive_uri, policy.to_dict(), ["x.cdx"], {"captures": len(caps)}, [], True, CREATED)
    lines = sorted((k.encode(), stats.to_json(list(v))) for k, v in table.items())
    write_atomic(str(path), heads + [k + b" " + v for k, v in lines])
    return str(path)


def random_caps(rng, languages=False):
    """Captures over three years, some in one month, some on one day, with shared digests."""
    hosts = ["com,a)", "com,a,b)", "org,x)", "uk,co,y)", "com,c)", "com,a,d,e)"]
    caps = []
    for _ in range(rng.randint(1, 60)):
        year, month, day = rng.choice([2010, 2011, 2012]), rng.choice([1, 2, 6, 12]), rng.choice([1, 15, 28, 29])
        if month == 2 and day > 28:
            day = 28
        ts = "%d%02d%02d%02d%02d00" % (year, month, day, rng.choice([0, 13, 23]), rng.randrange(60))
        caps.append([rng.choice(hosts) + rng.choice(["/", "/d/p", "/e", "/d/q/r"]),
                     ts, rng.choice(["text/html", "image/png", "text/css"]), rng.choice(["200", "404", "301"]),
                     rng.choice(["D1", "D2", "D3", "-"]), rng.randint(0, 999), False,
                     rng.choice(["eng", "ara", "unk"]) if languages else "unk"])
    return caps


def everything(policy):
    """A policy with the same SURT levels as ``policy`` that writes every combination of every
    level of its criteria: the oracle's truth for any key, written by ``policy`` or not."""
    from profiler.model.policy import CHOICES, LEVEL_TYPES, REGISTERED_ONLY, Policy
    names = [c.name for c in policy.criteria]
    return Policy({"host_depth": policy.host_depth, "path_depth": policy.path_depth, "exact_urls": policy.exact_urls,
                   "registered_domains": policy.registered_domains,
                   "levels": {n: list(CHOICES[n]) for n in names},
                   "emit": {lt: "all" for lt in LEVEL_TYPES if lt not in REGISTERED_ONLY or policy.registered_domains}})
