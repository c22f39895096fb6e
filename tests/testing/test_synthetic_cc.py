"""Tests for the Common Crawl-style index generator (profiler.testing.synthetic_cc)."""

import collections
import gzip
import json
import os
import re

import pytest

from profiler.formats import cdxj
from profiler.model.language import normalise_language
from profiler.testing import synthetic_cc

from helpers.generated import assert_gzip_deterministic_and_plain, written_index
from helpers.paths import ROOT

N = 20000
#: the keys of Common Crawl's index lines, in the order it writes them
KEY_ORDER = ("url", "mime", "mime-detected", "status", "digest", "length", "offset", "filename",
             "charset", "languages", "redirect", "truncated")
FILENAME = re.compile(r"\Acrawl-data/(CC-MAIN-\d{4}-\d{2})/segments/\d{13}\.\d{2}/"
                      r"(warc|crawldiagnostics|robotstxt)/CC-MAIN-(\d{14})-(\d{14})-\d{5}\.warc\.gz\Z")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """(path, lines as bytes without newline) of a 20,000-line index."""
    return written_index(tmp_path_factory.mktemp("cc") / "cdx-00000",
                         lambda path: synthetic_cc.write_cc_index(path, N, seed=11), N)


@pytest.fixture(scope="module")
def records(index):
    """(urlkey, timestamp, fields) of every line."""
    out = []
    for line in index[1]:
        urlkey, timestamp, block = line.decode("ascii").split(" ", 2)
        out.append((urlkey, timestamp, json.loads(block)))
    return out


def test_same_seed_same_bytes(tmp_path, index):
    again = tmp_path / "again"
    synthetic_cc.write_cc_index(str(again), N, seed=11)
    assert again.read_bytes() == index[0].read_bytes()
    assert "".join(synthetic_cc.cc_lines(500, seed=1)) != "".join(synthetic_cc.cc_lines(500, seed=2))


def test_gzip_is_deterministic_and_matches_plain(tmp_path):
    assert_gzip_deterministic_and_plain(lambda path: synthetic_cc.write_cc_index(path, 3000, seed=4),
                                        tmp_path / "a.gz", tmp_path / "b.gz", tmp_path / "p")


def test_line_count_and_small_sizes():
    for n in (0, 1, 2, 7, 100):
        assert len(list(synthetic_cc.cc_lines(n, seed=3))) == n
    assert len(list(synthetic_cc.cc_lines(300, seed=3, hosts=5, urirs=50))) == 300
    assert len({r[0].split(")")[0] for r in synthetic_cc.generate_records(300, 3, hosts=5)}) == 5


def test_sorted_as_common_crawl_sorts(index, records):
    lines = index[1]
    assert all(a < b for a, b in zip(lines, lines[1:]))                  # LC_ALL=C sort order
    keys = [(u.encode(), t.encode()) for u, t, _ in records]
    assert all(a < b for a, b in zip(keys, keys[1:]))


def test_json_as_common_crawl_writes_it(index, records):
    for line, (urlkey, timestamp, fields) in zip(index[1][:2000], records):
        assert b'", "' in line and b'{"url": "' in line                  # ", " and ": " separators
        assert list(fields) == [k for k in KEY_ORDER if k in fields]
        assert all(isinstance(v, str) for v in fields.values())
        assert {"url", "mime", "status", "digest", "length", "offset", "filename"} <= set(fields)
    for urlkey, timestamp, fields in records:
        assert re.match(r"\A\d{14}\Z", timestamp) and ")" in urlkey
        assert re.match(r"\A[A-Z2-7]{32}\Z", fields["digest"])
        assert re.match(r"\A[1-5]\d\d\Z", fields["status"])
        assert fields["url"].startswith(("http://", "https://"))
        assert int(fields["length"]) > 0 and int(fields["offset"]) >= 0


def test_urlkeys_are_surts_of_urls(records):
    surt = pytest.importorskip("surt")
    for urlkey, _, fields in records[::50]:
        assert surt.surt(fields["url"]) == urlkey


def test_filenames_and_crawl_windows(records):
    for urlkey, timestamp, fields in records:
        m = FILENAME.match(fields["filename"])
        assert m, fields["filename"]
        crawl, subset, begin, end = m.groups()
        assert begin <= timestamp < end
        assert crawl in synthetic_cc._CRAWL_START
        if urlkey.endswith(")/robots.txt"):
            assert subset == "robotstxt"
        elif fields["status"] != "200":
            assert subset == "crawldiagnostics"


def test_languages(records):
    primaries = collections.Counter()
    html_pages = multi = without = 0
    for urlkey, timestamp, fields in records:
        crawl = fields["filename"].split("/")[1]
        languages = fields.get("languages")
        if languages is not None:
            codes = languages.split(",")
            assert 1 <= len(codes) <= 3 and len(set(codes)) == len(codes)
            assert all(normalise_language(code) == code for code in codes)     # ISO 639-3 as they are
            primaries[codes[0]] += 1
            multi += len(codes) > 1
            assert fields["status"] == "200" and fields["mime"] != "warc/revisit"
            assert "html" in fields["mime-detected"] and "charset" in fields
        if fields["status"] == "200" and fields.get("mime-detected") == "text/html" and \
                crawl >= synthetic_cc.LANGUAGES_SINCE and not urlkey.endswith("robots.txt"):
            html_pages += 1
            without += languages is None
        if crawl < synthetic_cc.LANGUAGES_SINCE:
            assert "languages" not in fields and "charset" not in fields
    total = sum(primaries.values())
    assert len(primaries) >= 25                                      # many languages
    assert 0.3 < primaries["eng"] / total < 0.7                      # skewed to English
    assert sum(n for _, n in primaries.most_common(10)) / total > 0.8
    assert 0.03 < multi / total < 0.2                                 # multi-language values
    assert 0.01 < without / html_pages < 0.1                         # CLD2 found none


def test_hosts_speak_their_suffix(records):
    by_suffix = collections.defaultdict(collections.Counter)
    for urlkey, _, fields in records:
        if "languages" in fields:
            by_suffix[urlkey.split(",")[0]][fields["languages"].split(",")[0]] += 1
    for tld, language in (("de", "deu"), ("ru", "rus"), ("fr", "fra"), ("jp", "jpn")):
        if sum(by_suffix[tld].values()) > 50:
            assert by_suffix[tld].most_common(1)[0][0] == language


def test_statuses_redirects_revisits(records):
    last_digest = {}
    revisits = redirects = 0
    for urlkey, timestamp, fields in records:
        crawl = fields["filename"].split("/")[1]
        if fields["mime"] == "warc/revisit":
            revisits += 1
            assert fields["digest"] == last_digest[urlkey]            # a payload this URI-R had
            assert "languages" not in fields and "mime-detected" not in fields
        elif fields["status"] == "200":
            last_digest[urlkey] = fields["digest"]
        if "redirect" in fields:
            redirects += 1
            assert fields["status"] in ("301", "302") and crawl >= synthetic_cc.REDIRECT_SINCE
            assert fields["redirect"].startswith(("http://", "https://"))
        if "truncated" in fields:
            assert fields["truncated"] == "length" and int(fields["length"]) > synthetic_cc.MAX_PAYLOAD
    statuses = collections.Counter(f["status"] for _, _, f in records)
    assert 0.7 < statuses["200"] / N < 0.95 and statuses["404"] and statuses["301"]
    assert 0.002 < revisits / N < 0.05 and redirects
    assert sum(u.endswith(")/robots.txt") for u, _, _ in records) > 100
    assert sum(f["mime"] == "text/html" for _, _, f in records) / N > 0.8


def test_capture_counts_are_skewed(records):
    per_urir = collections.Counter(u for u, _, _ in records)
    per_host = collections.Counter(u.split(")")[0] for u, _, _ in records)
    assert 1.05 < N / len(per_urir) < 1.6
    assert max(per_host.values()) > 20 * N / len(per_host)
    assert any(":" in host for host in per_host)                      # a port
    assert "uk,co,bbc,news" in per_host                              # synthetic.py's famous hosts


def test_the_cdxj_reader_takes_every_line(index):
    captures = [cdxj.parse(line) for line in index[1]]
    assert all(isinstance(c, tuple) for c in captures)
    assert sum(c[6] for c in captures) == sum(b'"warc/revisit"' in line for line in index[1])
    assert {c[3] for c in captures} >= {"200", "301", "404"}


def test_the_shipped_sample_is_seed_1():
    """samples/cc-sample-5k.cdxj.gz (the docs' language examples) is write_cc_index(5000, seed=1)."""
    with gzip.open(os.path.join(ROOT, "samples", "cc-sample-5k.cdxj.gz"), "rt", encoding="utf-8") as f:
        shipped = f.read()
    assert shipped == "".join(synthetic_cc.cc_lines(5000, seed=1))
