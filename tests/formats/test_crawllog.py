"""Heritrix crawl.log input (spec section 1) and the depth field (spec section 2): recognised by
content, its lines read as captures or counted skips, a crawl whose captures per depth are known
profiled to exactly those counts and to the oracle's numbers, whole or cut into byte ranges,
compiled reduce side or pure Python."""

import pytest
import yaml

from profiler.formats import crawllog, registry
from profiler.model.policy import load as load_policy
from profiler.run.profile import run_profile
from profiler.testing.synthetic_crawllog import crawl_log

from helpers.exactness import assert_same_profile, pure_python
from helpers.oracle import profile as oracle_profile, read_crawl_logs, read_profile, resolve_revisits

LINE = (b"2013-04-02T10:11:39.058Z   200      69280 http://www.example.fr/p4.html RLL "
        b"http://www.example.fr/p1.html text/html #049 20130402101138319+739 "
        b"sha1:GZYK6WMPQ4UFAPYXHS2UPD3BFBNHRQMH - 3t {\"contentSize\":69580}")

DEPTH_POLICY = {
    "name": "depth",
    "host_depth": 3,
    "levels": {"datetime": ["year", "hour"], "mime": ["type", "class"], "status": ["class"], "size": ["class"],
               "depth": ["hops"]},
    "emit": {
        "root": "all",
        "tld": [{"depth": ["any", "hops"], "mime": ["any", "class"]}],
        "domain": {"depth": ["any", "hops"], "size": ["any", "class"]},
        "host": {"datetime": ["any"], "depth": ["hops"]},
    },
}


@pytest.mark.parametrize("path, depth", [
    (b"-", "0"), (b"L", "1"), (b"LLE", "3"), (b"RLLXXXREX", "9"), (b"LLLLLLLLLL", "10+"),
    (b"3+" + b"L" * 49, "10+"), (b"0+", "0"), (b"", "unk"), (b"L-L", "unk"), (b"x+L", "unk"),
])
def test_depth_of_a_hop_path(path, depth):
    assert crawllog.depth(path) == depth


def test_a_line_is_a_capture():
    found = crawllog.parse(LINE)
    assert (found.urlkey, found.timestamp, found.mime, found.status, found.digest, found.length, found.revisit,
            found.depth) == ("fr,example)/p4.html", "20130402101138", "text/html", "200",
                             "GZYK6WMPQ4UFAPYXHS2UPD3BFBNHRQMH", 69280, False, "3")
    assert registry.format_of([LINE]) == {"format": "crawllog"}


@pytest.mark.parametrize("change, expected", [
    (lambda f: f.__setitem__(11, b"duplicate:digest,3t"), ("mime", "warc/revisit")),
    (lambda f: f.__setitem__(11, b"warcRevisit:digest"), ("revisit", True)),
    (lambda f: f.__setitem__(8, b"-"), ("timestamp", "20130402101139")),
    (lambda f: f.__setitem__(2, b"-"), ("length", 0)),
    (lambda f: f.__setitem__(1, b"1"), "dns_fetch"),
    (lambda f: f.__setitem__(1, b"-6"), "failed_fetch"),
    (lambda f: f.__setitem__(1, b"0"), "failed_fetch"),
    (lambda f: f.__setitem__(1, b"600"), "other_fetch_status"),
    (lambda f: f.__setitem__(1, b"2x0"), "bad_fetch_status"),
    (lambda f: f.__setitem__(2, b"12x"), "bad_length"),
    (lambda f: (f.__setitem__(8, b"-"), f.__setitem__(0, b"yesterday")), "bad_timestamp"),
    (lambda f: f.__setitem__(8, b"20131302101138319+739"), ("timestamp", "20130402101139")),
    (lambda f: f.__setitem__(8, b"2013040210113+739"), ("timestamp", "20130402101139")),
    (lambda f: f.__setitem__(8, b"+739"), ("timestamp", "20130402101139")),
    (lambda f: (f.__setitem__(8, b"20131302101138319+739"), f.__setitem__(0, b"yesterday")), "bad_timestamp"),
    (lambda f: f.__delitem__(slice(9, None)), "bad_field_count"),
])
def test_what_a_line_gives(change, expected):
    """A fetch start that begins with no datetime (a month 13, too few digits) is read as a missing
    one, '-': the log time stands for it (it was a bad_timestamp skip of a line of a good log time)."""
    fields = LINE.split()
    change(fields)
    found = crawllog.parse(b" ".join(fields))
    if isinstance(expected, str):
        assert found == expected
    else:
        assert getattr(found, expected[0]) == expected[1]


def test_other_formats_are_not_taken_for_crawl_logs():
    assert registry.format_of([b"com,example)/ 20130402101138 http://example.com/ text/html 200 X - - 10 0 f"]) \
        ["format"] == "cdx"
    assert registry.format_of([b'com,example)/ 20130402101138 {"url": "http://example.com/"}'])["format"] == "cdxj"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("crawllog")
    lines, expected = crawl_log(seed=3, pages=400)
    path = folder / "crawl.log"
    path.write_text("".join(lines))
    policy = folder / "depth.yaml"
    policy.write_text(yaml.safe_dump(DEPTH_POLICY))
    return str(path), str(policy), expected, folder


@pytest.mark.parametrize("runner, pure, split_size", [("inline", False, None), ("inline", True, None),
                                                      ("local", False, 9000)])
def test_a_crawl_log_of_known_depths(made, runner, pure, split_size):
    path, policy, expected, folder = made
    out = str(folder / ("out-%s-%s.cdxj" % (runner, pure)))
    kw = {"split_size": split_size} if split_size else {}
    if pure:
        with pure_python():
            summary = run_profile([path], out, policy=policy, runner=runner, cores=2, **kw)
    else:
        summary = run_profile([path], out, policy=policy, runner=runner, cores=2, **kw)
    got = read_profile(out)
    by_depth = {k.split()[5]: v[0] for k, v in got.items() if k.split()[:5] == ["*", "-", "-", "-", "-"]
                and k.split()[5] != "-"}
    assert by_depth == expected["by_depth"]
    assert got["* - - - - -"][0] == expected["captures"]
    assert set(expected["by_depth"]) == {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10+"}
    assert_same_profile(got, oracle_profile(resolve_revisits(read_crawl_logs([path])), load_policy(policy)))
    with open(out, encoding="utf-8") as f:
        meta = f.read()
    for reason, n in expected["skipped"].items():
        assert '"%s":%d' % (reason, n) in meta
    assert summary["splits"] >= (2 if split_size else 1)


#: lines as warcprox writes its crawl log (Heritrix's layout; thread '-', hex SHA-1 digests, a
#: JSON object after the annotations)
WARCPROX = [
    b'2026-11-27T16:59:39.685Z   200        135 http://192.0.2.2:8766/ - - text/html - 20261127165934016+007 '
    b'sha1:f2cf95cfad27bbd50b3fb523997b6227030b2bb6 - - {"contentSize":321,"warcFilename":"w.warc","warcFileOffset":0}',
    b'2026-11-27T16:59:39.686Z   200        135 http://192.0.2.2:8766/ - - text/html - 20261127165934101+002 '
    b'sha1:f2cf95cfad27bbd50b3fb523997b6227030b2bb6 - duplicate:digest {"contentSize":321,"warcFilename":"w.warc"}',
    b'2026-11-27T16:59:39.686Z   404        335 http://192.0.2.2:8766/missing.html - - text/html - '
    b'20261127165934135+004 sha1:2616e0e695487e0f4fc5ddc18c57dcf95ce5851a - - {"contentSize":520}',
]


def test_a_warcprox_crawl_log_is_a_crawl_log(tmp_path):
    """warcprox writes '-' for the thread: the log was refused as no format at all."""
    path = tmp_path / "crawl-vm-8767.log"
    path.write_bytes(b"\n".join(WARCPROX) + b"\n")
    assert registry.format_of(WARCPROX)["format"] == "crawllog"
    out = tmp_path / "p.cdxj"
    run_profile([str(path)], str(out), runner="inline")
    profile = read_profile(str(out))
    total, least, most, urir, nbytes = profile["* - - -"][:5]
    assert (total, least, most, urir, nbytes) == (3, 1, 2, 2, 135 + 135 + 335)
    assert profile["* - text/html -"][0] == 3        # the revisit resolved to its original
    assert [crawllog.parse(line).revisit for line in WARCPROX] == [False, True, False]
