"""Tests for profiler.model.language: tags -> ISO 639-3, CDXJ values, declared HTML languages."""

import doctest
import gzip
import io
import logging
import re
import time

import pytest
from hypothesis import given, settings, strategies as st

from helpers.paths import shared_data
from profiler.model import language
from profiler.model.language import (HTML_PREFIX_BYTES, UNKNOWN, html_language, normalise_language,
                                     primary_language, read_prefix)

CODE = re.compile(r"\A(?:[a-z]{3})\Z")


def test_doctests():
    result = doctest.testmod(language)
    assert result.attempted > 0
    assert result.failed == 0


# normalise_language

@pytest.mark.parametrize("tag, code", [
    ("ar-EG", "ara"),                 # the example: the primary subtag
    ("ar", "ara"), ("ara", "ara"),
    ("en", "eng"), ("EN", "eng"), ("en-US", "eng"), ("en_US", "eng"), (" en-gb ", "eng"),
    ("eng", "eng"), ('"en"', "eng"),
    ("zh-Hant", "zho"), ("zh-TW", "zho"), ("zh-Hans-CN", "zho"), ("zh", "zho"), ("chi", "zho"),
    ("cmn", "cmn"), ("arb", "arb"), ("zsm", "zsm"), ("tgl", "tgl"),   # ISO 639-3 codes stay as they are
    ("yue", "yue"), ("zh-yue", "yue"), ("zh-min-nan", "nan"),  # extlang forms
    ("iw", "heb"), ("he", "heb"), ("in", "ind"), ("ji", "yid"), ("jw", "jav"), ("mo", "ron"),
    ("no", "nor"), ("nb", "nob"), ("nn", "nno"), ("nor", "nor"), ("nob", "nob"),
    ("fre", "fra"), ("ger", "deu"), ("dut", "nld"), ("cze", "ces"), ("gre", "ell"), ("per", "fas"),
    ("i-klingon", "tlh"), ("art-lojban", "jbo"),
    ("sr-Latn-RS", "srp"), ("pt-BR", "por"), ("es-419", "spa"),
    ("en-US-!!", "eng"), ("en-", "eng"),   # a well-formed primary subtag, a broken rest
    (b"de-AT", "deu"),
])
def test_normalise_language(tag, code):
    assert normalise_language(tag) == code


@pytest.mark.parametrize("tag", [
    "", "   ", "-", "und", "UND", "zxx", "mul", "mis", "qaa", "qtz", "x-klingon", "sla", "ber",
    "unk", "xyz", "jp", "us", "a", "1234", "-en", "English", "Deutsch", "français",
    "en\u00e9", "e\x00n", "x" * 65, "en-" + "a" * 70, None, 42, ["en"], b"\xff\xfe",
])
def test_normalise_language_unknown(tag):
    assert normalise_language(tag) == UNKNOWN


@pytest.mark.parametrize("code", [      # what Common Crawl's languages field holds (CLD2 as ISO 639-3)
    "eng", "deu", "fra", "spa", "rus", "zho", "jpn", "por", "ita", "pol", "nld", "tur", "ara", "fas",
    "kor", "vie", "ces", "swe", "hun", "ell", "ron", "dan", "fin", "heb", "ukr", "ind", "tha", "msa",
    "hin", "ben", "cat", "slk", "bul", "hrv", "srp", "lit", "slv", "est", "lav", "nor", "isl", "kat",
    "hye", "aze", "kaz", "urd", "tam", "tel", "mar", "swa", "afr", "eus", "glg", "cym", "gle", "lat",
])
def test_iso639_3_codes_are_kept(code):
    assert normalise_language(code) == code


def test_every_output_is_a_fixed_point():
    """Idempotence over every language of the registry (aliases give codes that stay)."""
    codes = language._codes()
    assert len(codes) > 7000 and {"eng", "zho", "ara", "tlh"} <= codes
    outputs = {normalise_language(code) for code in codes}
    assert all(normalise_language(code) == code for code in outputs)
    assert {"cmn", "zho"} <= outputs and normalise_language("tgl") == "tgl" == normalise_language("tl")


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=80), st.from_regex(r"\A[a-zA-Z]{1,8}([-_][a-zA-Z0-9]{1,8}){0,4}\Z")))
def test_normalise_never_raises_and_is_idempotent(tag):
    code = normalise_language(tag)
    assert code == UNKNOWN or CODE.match(code)
    assert normalise_language(code) == code


def test_mapping_version():
    assert re.match(r"\Alangcodes \d+\.\d+\S* \(IANA registry \d{4}-\d{2}-\d{2}\)\Z",
                    language.mapping_version())


def test_normalise_cache_is_bounded():
    for i in range(language._CACHE + 100):
        normalise_language("zz-%d" % i)
    assert language._normalise.cache_info().currsize <= language._CACHE
    language._normalise.cache_clear()
    assert normalise_language("en" + " " * 10 ** 6) == UNKNOWN               # long: not held in the memo
    assert primary_language("eng" + "," * 10 ** 6) == UNKNOWN
    assert language._normalise.cache_info().currsize == 0


def test_works_from_zips(tmp_path):
    """Tasks import the package and its dependencies from zips (--py-files): data files are
    read with importlib.resources, not from paths."""
    from helpers.zips import run_from_zips
    out = run_from_zips(str(tmp_path), "langcodes",
                        "from profiler.model import language as L; assert '.zip' in L.__file__; "
                        "print(L.normalise_language('ar-EG'), L.html_language(b'<html lang=fr>'), L.mapping_version())")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ara fra langcodes ")


# primary_language

@pytest.mark.parametrize("value, code", [
    ("eng", "eng"), ("spa", "spa"), ("eng,fra", "eng"), ("fra,eng", "fra"), ("zho,eng,jpn", "zho"),
    (",eng", "eng"), (" deu , eng", "deu"), ("de-DE, en;q=0.5", "deu"), ("en;q=0.8", "eng"),
    (["fra", "eng"], "fra"), (b"ita", "ita"),
    ("", UNKNOWN), (",", UNKNOWN), ("xx,eng", UNKNOWN), (None, UNKNOWN), ([], UNKNOWN), (3, UNKNOWN),
    ("eng," * 200, UNKNOWN),          # over-long
])
def test_primary_language(value, code):
    assert primary_language(value) == code


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_primary_language_never_raises(value):
    code = primary_language(value)
    assert code == UNKNOWN or CODE.match(code)


# html_language

@pytest.mark.parametrize("html, code", [
    (b'<html lang="ar-EG">', "ara"),
    (b"<html lang='fr'>", "fra"),
    (b"<html lang=de>", "deu"),
    (b"<HTML LANG = \"ES\" >", "spa"),
    (b'<html\n\tclass="no-js"\n\tlang="pt-BR"\n\tdir="ltr">', "por"),
    (b'<html dir="rtl" lang="he" class="x">', "heb"),
    (b'<html data-x="a>b" lang="it">', "ita"),                 # '>' inside a quoted value
    (b'<html xml:lang="nl" xmlns="http://www.w3.org/1999/xhtml">', "nld"),
    (b'<html lang="en" xml:lang="fr">', "eng"),                # lang first, as browsers do for text/html
    (b'<html lang="" xml:lang="sv">', "swe"),
    (b'<!DOCTYPE html>\n<html lang="ja"><head>', "jpn"),
    (b"\xef\xbb\xbf<!doctype html><html lang=ko>", "kor"),     # UTF-8 BOM
    (b'<!-- <html lang="fr"> --><html lang="de">', "deu"),     # a comment before <html>
    (b'<!--[if IE 8]><html class="ie8" lang="ru"><![endif]--><!--[if gt IE 8]><!--><html lang="ru"><!--<![endif]-->', "rus"),
    (b'<html data-lang="fr" lang="pl">', "pol"),               # data-lang is not lang
    (b'<html data-lang="fr">', None),
    (b'<html lang="en-US', "eng"),                             # cut inside the tag
    (b'<html lang="zz"><head><meta http-equiv="content-language" content="cs">', "ces"),  # invalid: next source
    (b'<html lang="und"><meta http-equiv="Content-Language" content="da">', "dan"),
    (b'<html><head><meta content="fi" http-equiv="content-language">', "fin"),            # attribute order
    (b"<html><head><meta HTTP-EQUIV='Content-Language' CONTENT='tr, en'>", "tur"),       # first tag
    (b'<html><head><meta http-equiv=content-language content=uk>', "ukr"),
    (b'<html><head><meta name="language" content="fr">', None),                          # not http-equiv
    (b'<html><head><meta http-equiv="refresh" content="0"><meta http-equiv="content-language" content="el">', "ell"),
    (b'<html><head></head><body><meta http-equiv="content-language" content="fr">', None),  # the head has ended
    (b'<htmlx lang="fr">', None),
    (b'<p lang="fr">', None),
    (b"", None), (b"\x00\x01\x02garbage\xff", None), (b"<<<>>>", None),
])
def test_html_language(html, code):
    assert html_language(html) == code


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_html_language_utf16(encoding):
    html = '<!DOCTYPE html><html lang="vi"><head><title>Tiếng Việt</title>'.encode(encoding)
    assert html_language(html) == "vie"


def test_header_is_the_last_source():
    assert html_language(b"<html><head>", "de-DE, en-CA") == "deu"
    assert html_language(b"<html><head>", b"fr") == "fra"
    assert html_language(b'<html lang="es">', "de") == "spa"
    assert html_language(b'<meta http-equiv="content-language" content="it">', "de") == "ita"
    assert html_language(b"<html>", "*") is None
    assert html_language(b"<html>", "") is None
    assert html_language(None, "en") == "eng"


def test_only_the_bounded_prefix_is_read():
    pad = b"<html><head><title>x</title>" + b"<script>var a = 1;</script>\n" * (HTML_PREFIX_BYTES // 28)
    assert html_language(pad + b'<meta http-equiv="content-language" content="fr">') is None
    assert html_language(b'<meta http-equiv="content-language" content="fr">' + pad) == "fra"
    assert html_language(b" " * (HTML_PREFIX_BYTES - 4) + b'<html lang="fr">') is None


@pytest.mark.parametrize("cut", range(1, 20))
def test_a_tag_cut_by_the_bound_is_not_read(cut):
    """lang="fil" cut to "fi" would be Finnish: a tag the bound cuts short does not count."""
    tags = [b'<html lang="fil">', b'<meta http-equiv="content-language" content="fil">']
    for tag in tags:
        html = b" " * (HTML_PREFIX_BYTES - len(tag) + cut) + tag
        assert html_language(html) is None
        assert html_language(html[:HTML_PREFIX_BYTES]) is None          # as read_prefix gives it
        assert html_language(html[cut:]) == "fil"                       # whole within the bound
    assert html_language(b'<html lang="fi') == "fin"                   # a short payload ends there


@pytest.mark.parametrize("hostile", [
    b'<html lang="' + b"a" * 200000,
    b"<html " + b'"' * 200000,
    b"<!--" + b"-" * 200000,
    b"<meta " * 40000,
    b"<html " + b"x=" * 100000,
])
def test_hostile_prefixes_are_fast(hostile):
    start = time.perf_counter()
    html_language(hostile, "en")
    assert time.perf_counter() - start < 0.5


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000), st.one_of(st.none(), st.text(max_size=40)))
def test_html_language_never_raises(prefix, header):
    code = html_language(prefix, header)
    assert code is None or CODE.match(code)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["en", "fr-CA", "zh-Hant", "ar-EG", "pt_BR"]),
       st.sampled_from(['"%s"', "'%s'", "%s"]), st.sampled_from(["", ' class="a"', " dir=ltr"]),
       st.sampled_from(["", ' id="b"', " data-lang=xx"]), st.sampled_from(["lang", "LANG", "Lang"]),
       st.sampled_from(["", "\xef\xbb\xbf", "<!-- x -->\n", "<!DOCTYPE html>\r\n"]))
def test_html_lang_attribute_forms(tag, quote, before, after, name, lead):
    html = ("%s<html%s %s=%s%s>" % (lead, before, name, quote % tag, after)).encode("latin-1")
    assert html_language(html) == normalise_language(tag) != UNKNOWN


# on WARC records written with warcio, as a reader gets them

def _warc(records):
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    for uri, headers, body in records:
        http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(uri, "response", payload=io.BytesIO(body),
                                                      http_headers=http))
    out.seek(0)
    return out


def test_html_language_of_warc_records():
    from warcio.archiveiterator import ArchiveIterator
    page = b'<!DOCTYPE html><html lang="ar-EG"><head><title>x</title></head><body>' + b"x" * 200000
    records = [
        ("http://example.eg/", [("Content-Type", "text/html")], page),
        ("http://example.de/", [("Content-Type", "text/html"), ("Content-Language", "de-DE")],
         b"<html><head></head><body>Hallo</body></html>"),
        ("http://example.fr/", [("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
         gzip.compress(b"<html><head><meta http-equiv='content-language' content='fr'></head>")),
        ("http://example.com/", [("Content-Type", "text/html")], b"<html><body>no language</body>"),
    ]
    found = []
    for record in ArchiveIterator(_warc(records)):
        prefix = read_prefix(record.content_stream())
        assert len(prefix) <= HTML_PREFIX_BYTES
        found.append(html_language(prefix, record.http_headers.get_header("Content-Language")))
    assert found == ["ara", "deu", "fra", None]


def test_read_prefix_reads_short_reads_up_to_the_limit():
    class Trickle(io.RawIOBase):
        def __init__(self, data):
            self.data = data

        def read(self, n=-1):
            chunk, self.data = self.data[:min(n, 7)], self.data[min(n, 7):]
            return chunk

    assert read_prefix(Trickle(b"a" * 100), 50) == b"a" * 50
    assert read_prefix(Trickle(b"abc"), 50) == b"abc"
    assert read_prefix(io.BytesIO(b"x" * (HTML_PREFIX_BYTES + 10))) == b"x" * HTML_PREFIX_BYTES


# the shared corpus: its few pages that declare a language

@pytest.mark.parametrize("name, code", [
    ("cdx-writer/small_warcs/bad_url_with_colon_2.arc.gz", "jpn"),
    ("cdx-writer/small_warcs/uncompressed.arc", "deu"),
    ("jwarc/cc.warc.gz", "eng"),
    ("ipwb/warcs/2mementos_htmlXhtml.warc", "eng"),
])
def test_declared_languages_in_the_corpus(name, code):
    from warcio.archiveiterator import ArchiveIterator
    logging.getLogger("warcio").setLevel(logging.ERROR)
    found = []
    with open(shared_data(name), "rb") as f:
        for record in ArchiveIterator(f, arc2warc=True):
            if record.rec_type == "response" and record.http_headers and "html" in (
                    record.http_headers.get_header("Content-Type") or "").lower():
                found.append(html_language(read_prefix(record.content_stream()),
                                           record.http_headers.get_header("Content-Language")))
    assert code in found
    assert set(found) <= {code, None}
