"""The routing service asked for a language (lang=CODE): each archive's "language" answer is the
`lookup --lang` answer of its file, archives not holding the language are not routed to, files
without languages answer for any."""

import urllib.parse

import orjson
import pytest

from profiler.files.ukvs import profile_to_map
from profiler.serve.archives import open_archives
from profiler.serve.web import Service
from profiler.toolkit.lookup import Lookup, format_answer

from helpers.languages import NO_LANG, TLD_LANG, cc_index, index_urls, profile


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    d = tmp_path_factory.mktemp("serve-lang")
    index = cc_index(d, 1500, seed=12)
    files = {"A": profile(d, [index], TLD_LANG), "B": profile(d, [index], NO_LANG), "C": str(d / "lang.ukvs")}
    profile_to_map(files["A"], files["C"])
    archives = open_archives(["%s=%s" % kv for kv in files.items()])
    return Service(archives), files, index_urls(index)


def get(service, path, **params):
    status, body = service.handle("GET", path, urllib.parse.urlencode(params).encode("ascii"))
    return status, orjson.loads(body)


def test_language_answers_are_the_lookup_commands(service):
    svc, files, urls = service
    for _, url, ts in urls[::37]:
        for lang in ("eng", "spa", "ara"):
            status, body = get(svc, "/lookup", url=url, lang=lang)
            assert status == 200 and body["lang"] == lang
            for answer in body["archives"]:
                language = answer["language"]
                if answer["archive"] == "B":
                    assert language["lang"] == "-" and language["answer"] is None
                    continue
                with Lookup(files[answer["archive"]]) as index:
                    line = format_answer(url, index.lookup(url, None, lang), True).split("\t")
                assert [language["answer"], language["key"] or "-", language["frequency"] or "-",
                        language["level"] or "-", language["lang"]] == line[1:5] + line[6:], (url, lang)
                assert answer["key"] == index_key(files[answer["archive"]], url)


def index_key(path, url):
    with Lookup(path) as index:
        return index.lookup(url).key.decode()


def test_route_leaves_out_archives_without_the_language(service):
    svc, files, urls = service
    routed = left_out = 0
    for _, url, _ in urls[::29]:
        for lang in ("eng", "ara", "tlh"):
            status, body = get(svc, "/route", url=url, lang=lang)
            assert status == 200
            names = [a["archive"] for a in body["archives"]]
            assert "B" in names                 # no languages: answers for any, routed as without
            for name in ("A", "C"):
                with Lookup(files[name]) as index:
                    held = index.lookup(url, None, lang).status == "held" and index.lookup(url).status == "held"
                assert (name in names) <= held
                left_out += not held
                routed += name in names
            bonus = {a["archive"]: a["score"] for a in body["archives"]}
            if "A" in bonus:
                assert bonus["A"] >= bonus["B"] + 5 - 0.01
    assert routed and left_out


def test_bad_language_is_a_400(service):
    svc, _, urls = service
    status, body = get(svc, "/route", url=urls[0][1], lang="gibberish!")
    assert status == 400 and "not a language" in body["error"]
    status, body = get(svc, "/archives")
    assert [a["languages"] for a in body["archives"]] == [True, False, True]
    assert body["archives"][0]["keys"] == ["surt", "datetime", "mime", "status", "lang"]
