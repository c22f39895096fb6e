"""OpenWayback CDXJ 1.x (profiler.formats.owbcdxj): each field of a line gives the capture its
WARC record gives, or a counted skip; files are recognised by their header or first line, and
another major version is refused; the same entries written as OpenWayback CDXJ and as pywb's
CDXJ give the same profile bytes, whatever the splits and the runner; no input is a traceback."""

import datetime
import json
import random

import pytest
import surt
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.formats import inputs, owbcdxj, registry
from profiler.model import capture
from profiler.run.profile import run_profile

from helpers import fixtures
from helpers.damage import data_lines
from helpers.oracle import read_profile
from helpers.policies import write_policy
from helpers.random_archives import random_captures

URI = "http://example.com/a"
KEY = "com,example)/a"


def line(ts="2015-09-03T13:27:52Z", rec_type="response", key="(com,example,)/a", **block):
    block = dict({"uri": URI}, **block)
    block = {k: v for k, v in block.items() if v is not ...}       # ...: the key left out
    return ("%s %s %s %s" % (key, ts, rec_type, json.dumps(block))).encode()


def cap(**fields):
    return capture.new(**dict({"urlkey": KEY, "timestamp": "20150903132752"}, **fields))


@pytest.mark.parametrize("text, expected", [
    # timestamps: the six granularities, zones, leap seconds, dates out of the calendar
    (line(ts="2015"), cap(timestamp="20150101000000")),
    (line(ts="2015-09"), cap(timestamp="20150901000000")),
    (line(ts="2015-09-03"), cap(timestamp="20150903000000")),
    (line(ts="2015-09-03T13:27Z"), cap(timestamp="20150903132700")),
    (line(ts="2015-09-03T13:27:52Z"), cap()),
    (line(ts="2015-09-03T13:27:52.123456789Z"), cap()),
    (line(ts="20150903132752"), cap()),
    (line(ts="2015-09-03T15:27:52+02:00"), cap()),
    (line(ts="2015-09-03T13:27:52-00:00"), cap()),
    (line(ts="2015-12-31T22:00:00-05:30"), cap(timestamp="20160101033000")),
    (line(ts="2016-03-01T00:30+01:00"), cap(timestamp="20160229233000")),
    (line(ts="2016-12-31T23:59:60Z"), cap(timestamp="20161231235960")),
    (line(ts="2017-01-01T00:59:60.5+01:00"), cap(timestamp="20161231235960")),
    (line(ts="2015-02-29"), "bad_timestamp"),
    (line(ts="2016-02-30T00:00Z"), "bad_timestamp"),
    (line(ts="2015-13"), "bad_timestamp"),
    (line(ts="0000-01-01"), "bad_timestamp"),
    (line(ts="2015-09-03T24:00Z"), "bad_timestamp"),
    (line(ts="2015-09-03T13:61Z"), "bad_timestamp"),
    (line(ts="2015-09-03T13:27:61Z"), "bad_timestamp"),
    (line(ts="2015-09-03T13:27:52"), "bad_timestamp"),        # a time without a zone
    (line(ts="2015-09-03T13:27:52+24:00"), "bad_timestamp"),
    (line(ts="2015-09-03T13:27:52+02:60"), "bad_timestamp"),
    (line(ts="0001-01-01T00:00:00+01:00"), "bad_timestamp"),  # before year 1 in UTC
    (line(ts="9999-12-31T23:00:00-02:00"), "bad_timestamp"),  # after 9999 in UTC
    (line(ts="2015-9-3"), "bad_timestamp"),
    (line(ts="2015-09-03t13:27:52z"), "bad_timestamp"),
    (line(ts="2015-09-03T13:27:52Z\x00"), "bad_timestamp"),
    (line(ts="\u0661\u0660\u0661\u0665"), "bad_timestamp"),   # digits, not ASCII ones
    (line(ts="9" * 400), "bad_timestamp"),
    (line(ts=""), "bad_timestamp"),
    # record types: any case; those that are no capture skipped by the WARC reader's names
    (line(rec_type="RESPONSE"), cap()),
    (line(rec_type="resource", mct="image/png"), cap(mime="image/png")),
    (line(rec_type="resource", mct="application/warc-fields"), "warc_fields_record"),
    (line(rec_type="revisit", hsc="200", mct="text/html"), cap(mime="warc/revisit", status="200", revisit=True)),
    (line(rec_type="Revisit"), cap(mime="warc/revisit", revisit=True)),
    (line(rec_type="request"), "request_record"),
    (line(rec_type="metadata"), "metadata_record"),
    (line(rec_type="warcinfo"), "warcinfo_record"),
    (line(rec_type="conversion"), "other_record"),
    (line(rec_type="continuation"), "other_record"),
    (line(rec_type="snapshot"), "other_record"),
    (line(rec_type="response\x00"), "other_record"),
    (line(rec_type=""), "other_record"),
    # the URL: uri's SURT, else the searchable URI's
    (line(uri="https://www.Example.com/a?b=2&a=1"), cap(urlkey="com,example)/a?a=1&b=2")),
    (line(uri="http://example.com/a\x00b"), cap(urlkey="com,example)/a%00b")),
    (line(key="(org,other,)/", uri="http://example.com/a"), cap()),
    (line(uri=...), cap()),
    (line(uri=None), cap()),
    (line(uri=""), cap()),
    (line(uri=..., key="(com,example,:8080)/a"), cap(urlkey="com,example:8080)/a")),
    (line(uri=..., key="(com,example,www,)/a"), cap()),       # canonicalised as surt() does, as uri's SURT
    (line(uri=..., key="http://(com,example,)/a"), cap()),
    (line(uri=..., key="com,example)/a"), cap()),
    (line(uri=..., key="http://example.com/a"), cap()),
    (line(uri=..., key="-"), "bad_url"),
    (line(uri=5), "bad_url"),
    (line(uri=["http://example.com/a"]), "bad_url"),
    (line(uri={"u": 1}), "bad_url"),
    (line(uri=True), "bad_url"),
    (line(uri="   "), "bad_url"),
    # digest, status, mime, length
    (line(sha="abc"), cap(digest="ABC")),
    (line(dig="sha1:XYZ"), cap(digest="XYZ")),
    (line(sha="ABC", dig="sha1:XYZ"), cap(digest="ABC")),
    (line(sha=None, dig="sha256:Q"), cap(digest="Q")),
    (line(hsc=200), cap(status="200")),
    (line(hsc="404"), cap(status="404")),
    (line(hsc=10 ** 30), cap(status="unk")),
    (line(hsc=-200), cap(status="unk")),
    (line(hsc="2x0"), cap(status="unk")),
    (line(hsc=[200]), cap(status="unk")),
    (line(mct="Text/HTML; charset=UTF-8"), cap(mime="text/html")),
    (line(mct=""), cap()),
    (line(mct="text/html\x00"), cap(mime="text/html%00")),
    (line(rle="1043"), cap(length=1043)),
    (line(rle=1043), cap(length=1043)),
    (line(rle=2 ** 64 - 1), cap(length=2 ** 64 - 1)),
    (line(rle=2 ** 64), "bad_length"),
    (line(rle=10 ** 400), "bad_length"),
    (line(rle=-1), "bad_length"),
    (line(rle=1.5), "bad_length"),
    (line(rle="-"), cap()),
    (line(rle="12 KB"), "bad_length"),
    (line(rle=None, cle=5, ple=4), cap()),
    # lines that are no entry
    (b"(com,example,)/a 2015 response", "bad_field_count"),
    (b"(com,example,)/a 2015 {\"uri\": \"http://example.com/a\"}", "bad_field_count"),
    (b"(com,example,)/a {\"uri\": \"http://example.com/a\"}", "bad_field_count"),
    (b"(com,example,)/a", "bad_field_count"),
    (b"(com,example,)/a 2015 response [1, 2]", "bad_json"),
    (b"(com,example,)/a 2015 response \"uri\"", "bad_json"),
    (b"(com,example,)/a 2015 response {\"uri\": \"http://exa", "bad_json"),
    (b"(com,example,)/a 2015 response {\"rle\": NaN}", "bad_json"),
    (b"(com,example,)/a 2015 response {} trailing", "bad_json"),
    (b"(com,example,)/a 2015 response {\"uri\": \"\xff\"}", "bad_json"),
])
def test_each_field_of_a_line(text, expected):
    assert owbcdxj.parse(text) == expected


def test_header_lines_and_blank_lines_are_no_captures():
    found = list(owbcdxj.captures_of_lines([b"!OpenWayback-CDXJ 1.0", b"", b"  ", line(), b"!OpenWayback-CDXJ 1.1",
                                            b"@meta x", line(ts="2015")]))
    assert found == [cap(), cap(timestamp="20150101000000")]


@pytest.mark.parametrize("ref, name", [
    ("warcfile:crawl-1.warc.gz#1043", b"crawl-1.warc.gz"),
    ("warcfile:a#b.warc.gz#0", b"a#b.warc.gz"),
    ("warcfile:crawl-1.warc.gz", b"crawl-1.warc.gz"),
    ("warcfile:#0", None),
    ("http://example.com/x.warc.gz#0", None),
    (..., None),
    (12, None),
])
def test_the_collection_reads_the_warc_file_of_ref(ref, name):
    found = owbcdxj.parse(line(ref=ref), collection=lambda raw: repr(raw))
    assert found.collection == repr(name)


def test_the_collection_of_a_profile_comes_from_ref(tmp_path):
    path = tmp_path / "a.cdxj"
    path.write_bytes(b"\n".join([line(ref="warcfile:SITEA-1.warc.gz#0"), line(ts="2014", ref="warcfile:SITEB-2.warc.gz#9"),
                                 line(ts="2016", ref="warcfile:SITEA-3.warc.gz#5"), line(ts="2017")]) + b"\n")
    policy = write_policy(tmp_path / "p.yaml", {
        "name": "collections", "host_depth": 2,
        "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "collection": ["id"]},
        "emit": {"root": "all", "tld": "none", "domain": "none", "host": "none"}})
    out = str(tmp_path / "p.cdxj")
    run_profile([str(path)], out, policy=policy, collections={"pattern": r"^([A-Z]+)-"})
    got = read_profile(out)
    assert got["* - - - SITEA"][0] == 2 and got["* - - - SITEB"][0] == 1 and got["* - - - unk"][0] == 1


DATA_LINE = line()


@pytest.mark.parametrize("lines, found", [
    ([b"!OpenWayback-CDXJ 1.0", DATA_LINE], {"format": "owbcdxj"}),
    ([b"!OpenWayback-CDXJ 1.3", DATA_LINE], {"format": "owbcdxj"}),
    ([b"!OpenWayback-CDXJ 1.0", b"!OpenWayback-CDXJ 1.2 ", DATA_LINE], {"format": "owbcdxj"}),
    ([b"!OpenWayback-CDXJ 1.0"], {"format": "owbcdxj"}),
    ([DATA_LINE], {"format": "owbcdxj"}),
    ([line(ts="2015", rec_type="Revisit")], {"format": "owbcdxj"}),
    ([line(ts="20150903132752", rec_type="metadata")], {"format": "owbcdxj"}),
    ([b"!OpenWayback-CDXJ 2.0", DATA_LINE],
     {"format": None, "reason": "OpenWayback CDXJ 2.0: only major version 1 is read"}),
    ([b"!OpenWayback-CDXJ 1.0", b"!OpenWayback-CDXJ 2.1", DATA_LINE],
     {"format": None, "reason": "OpenWayback CDXJ 2.1: only major version 1 is read"}),
    ([b"!meta {}", b"!OpenWayback-CDXJ 2.0", DATA_LINE],
     {"format": None, "reason": "OpenWayback CDXJ 2.0: only major version 1 is read"}),
    ([b"!OpenWayback-CDXJ 0.9", DATA_LINE],
     {"format": None, "reason": "OpenWayback CDXJ 0.9: only major version 1 is read"}),
    ([b"!OpenWayback-CDXJ", DATA_LINE], {"format": None}),
    ([b"!OpenWayback-CDXJ one", DATA_LINE], {"format": None}),
    # not this format: pywb's CDXJ, a fourth field that is no JSON, a second that is no date
    ([b'com,example)/a 20150903132752 {"url": "http://example.com/a"}'], {"format": "cdxj"}),
    ([b'com,example)/a 20150903132752 {"url": "http://example.com/a", "mime": "text/html"}'], {"format": "cdxj"}),
    ([b"(com,example,)/a 2015-09-03T13:27:52Z response x"], {"format": None}),
    ([b'(com,example,)/a yesterday response {"uri": "x"}'], {"format": None}),
    ([b'(com,example,)/a 2015-09-03T13:27:52Z answer {"uri": "x"}'], {"format": None}),
])
def test_the_sniff(lines, found):
    got = registry.format_of(lines)
    assert {k: got[k] for k in found} == found, got
    if found["format"] is None and "reason" not in found:
        assert got["reason"]


def test_the_fixture_profiles_as_the_pywb_fixture_it_was_made_from():
    """Byte for byte but for the input's name: the urlkeys from the SURT of uri are the keys pywb
    wrote, the W3C dates its timestamps, rle its lengths."""
    owb = fixtures.profile_text("owb-cdxj.cdxj").replace('"inputs":["owb-cdxj.cdxj"]', '"inputs":["X"]')
    pywb = fixtures.profile_text("cdxj-pywb.cdxj").replace('"inputs":["cdxj-pywb.cdxj"]', '"inputs":["X"]')
    assert owb == pywb
    assert inputs.sniff(fixtures.path("owb-cdxj.cdxj"))["format"] == "owbcdxj"
    assert inputs.sniff(fixtures.path("broken-owb.cdxj"))["format"] == "owbcdxj"


# random entries, written both ways

def _url(urlkey):
    """A URL of a SURT of helpers.random_archives (its key as it is when it is none)."""
    if ")" not in urlkey:
        return urlkey
    host, path = urlkey.split(")", 1)
    host, _, port = host.partition(":")
    return "http://%s%s%s" % (".".join(reversed(host.split(","))), ":" + port if port else "", path)


ZONES = [(0, "Z"), (0, "+00:00"), (330, "+05:30"), (-480, "-08:00"), (840, "+14:00"), (-59, "-00:59")]


def _w3c(ts, rng):
    """A 14-digit UTC timestamp as a W3C date, in a random zone, maybe with a fraction."""
    minutes, zone = rng.choice(ZONES)
    local = datetime.datetime.strptime(ts, "%Y%m%d%H%M%S") + datetime.timedelta(minutes=minutes)
    fraction = rng.choice(["", ".5", ".123456789"])
    return local.strftime("%Y-%m-%dT%H:%M:%S") + fraction + zone


def pywb_lines(caps):
    out = []
    for u, t, m, s, d, n in caps:
        url = _url(u)
        out.append(("%s %s %s" % (surt.surt(url), t, json.dumps(
            {"url": url, "mime": m, "status": s, "digest": d if d == "-" else "sha1:" + d, "length": str(n),
             "offset": "0", "filename": "a.warc.gz"}))).encode())
    return out


def owb_lines(caps, rng):
    out = [b"!OpenWayback-CDXJ 1.0"] if rng.random() < 0.5 else []
    for u, t, m, s, d, n in caps:
        url = _url(u)
        key = surt.surt(url)
        if ")" in key:
            host, path = key.split(")", 1)
            host, _, port = host.partition(":")
            key = "(%s,%s)%s" % (host, ":" + port if port else "", path)
        revisit = m == "warc/revisit"
        block = {"uri": url, "rle": n if rng.random() < 0.5 else str(n), "ref": "warcfile:a.warc.gz#0"}
        if d != "-":
            block.update({"sha": d} if rng.random() < 0.5 else {"dig": "sha1:" + d})
        if s != "-":
            block["hsc"] = int(s) if rng.random() < 0.5 else s
        if not revisit:
            block["mct"] = m
        rec_type = "revisit" if revisit else "response"
        out.append(("%s %s %s %s" % (key, _w3c(t, rng), rng.choice([rec_type, rec_type.upper()]),
                                     json.dumps(block))).encode())
    return out


def profile(tmp_path, name, lines, **options):
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / (name + ".cdxj")
    run_profile([str(path)], str(out), created="2026-01-01T00:00:00Z", **options)
    return out


def _same_profiles(tmp, seed, **options):
    rng = random.Random(seed)
    caps = sorted(random_captures(rng))
    owb = profile(tmp, "owb.cdxj", owb_lines(caps, rng), **options)
    pywb = profile(tmp, "pywb.cdxj", pywb_lines(caps), **options)
    assert inputs.sniff(str(tmp / "owb.cdxj"))["format"] == "owbcdxj"
    assert data_lines(owb) == data_lines(pywb)
    owb_meta = owb.read_bytes().replace(b"owb.cdxj", b"X")
    assert owb_meta == pywb.read_bytes().replace(b"pywb.cdxj", b"X")


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2 ** 32 - 1), split_size=st.sampled_from([None, 300, 1000]))
def test_random_entries_profile_as_pywb_cdxj(tmp_path_factory, seed, split_size):
    """Random entries (revisits, '-' statuses and digests, dns: URLs, ports, IP hosts) in random
    zones with fractions, as OpenWayback CDXJ and as pywb's CDXJ: the same profile bytes."""
    _same_profiles(tmp_path_factory.mktemp("s"), seed, **({"split_size": split_size} if split_size else {}))


def test_random_entries_in_splits_with_the_local_runner(tmp_path):
    _same_profiles(tmp_path, 7, runner="local", split_size=300)


_PIECES = [b"!OpenWayback-CDXJ 1.0", b"!OpenWayback-CDXJ 9.9", b"(com,example,)/", b"(", b")", b",)", b" ",
           b"2015-09-03T13:27:52Z", b"2016-12-31T23:59:60+14:00", b"9999", b"response", b"revisit", b"request",
           b"{", b"}", b'"uri"', b'"rle"', b'"hsc"', b'"sha"', b'"ref"', b":", b",", b'"warcfile:a#1"', b"[]",
           b"1" * 25, b"-1", b"1e999", b"null", b'"http://a.b/"', b"\x00", b"\xff", b"\n", b"\r", b"\t"]


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.lists(st.sampled_from(_PIECES) | st.binary(max_size=6), max_size=14), max_size=6))
def test_no_line_is_a_traceback(pieces):
    lines = [b"".join(p) for p in pieces]
    registry.format_of(lines)
    for found in owbcdxj.captures_of_lines(lines):
        assert isinstance(found, (str, capture.Capture))
    for text in lines:
        for ts in text.split(b" "):
            assert owbcdxj.timestamp(ts) is None or len(owbcdxj.timestamp(ts)) == 14
