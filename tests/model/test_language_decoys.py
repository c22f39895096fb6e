"""A language declared where it is not the page's own does not count: inside script, style,
title, textarea, noscript, a comment, a CDATA section, an attribute value or a template.

The oracle is an HTML parser, the standard library's html.parser, told which elements hold
text (it knows script and style; title, textarea, noscript, iframe, xmp, noembed and noframes
are set the same way): the first <html> start tag with a lang (else xml:lang) that names a
language, else the first <meta http-equiv="content-language">, in the page's own markup before
<body> or </head>, outside templates.
"""

import html.parser

from hypothesis import given, settings, strategies as st

from profiler.model.language import html_language, primary_language

TEXT_ELEMENTS = ("script", "style", "title", "textarea", "noscript", "iframe", "xmp", "noembed", "noframes")
CODES = ["en", "fr", "de", "es", "ar-EG", "ja", "pt-BR", "und", "zh-Hant", "xx"]


class Oracle(html.parser.HTMLParser):
    """The declared language as an HTML parser finds it."""

    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.lang = self.meta = None
        self.done = False
        self.inert = 0

    def handle_starttag(self, tag, attrs):
        if self.done:
            return
        if tag in TEXT_ELEMENTS:
            self.set_cdata_mode(tag)
        if tag == "template":
            self.inert += 1
        if self.inert or tag == "template":
            return
        if tag in ("body", "plaintext"):
            self.done = True
        first = {}
        for name, value in attrs:
            first.setdefault(name, (value or "").lower())
        if tag == "html":
            value = first.get("lang") or first.get("xml:lang")
            code = declared(value) if value else None
            if code:
                self.lang, self.done = code, True
        elif tag == "meta" and self.meta is None and first.get("http-equiv", "").strip() == "content-language":
            self.meta = declared(first.get("content", ""))

    def handle_endtag(self, tag):
        if tag == "template" and self.inert:
            self.inert -= 1
        elif tag == "head" and not self.inert:
            self.done = True

    def found(self):
        return self.lang or self.meta


def declared(value):
    code = primary_language(value)
    return None if code == "unk" else code


def oracle(page):
    parser = Oracle()
    parser.feed(page)
    parser.close()
    return parser.found()


code = st.sampled_from(CODES)
html_tag = code.map(lambda c: '<html lang="%s">' % c)
meta_tag = code.map(lambda c: '<meta http-equiv="content-language" content="%s">' % c)
declaration = st.one_of(html_tag, meta_tag, code.map(lambda c: "<html xml:lang='%s'>" % c))
CONTEXTS = [
    "<script>var s = '%s';</script>", '<script type="text/html">%s</script>', "<style>/* %s */</style>",
    "<title>%s</title>", "<textarea>%s</textarea>", "<!-- %s -->", "<![CDATA[ %s ]]>",
    "<noscript>%s</noscript>", "<template>%s</template>", "<template><div>%s</div></template>",
    "<iframe>%s</iframe>", "<div title='%s'>x</div>", "<p data-x='a %s b'>",
    "<template><script>'</template>%s'</script></template>", "<template><template>%s</template></template>",
    "<SCRIPT>%s</SCRIPT>", "<xmp>%s</xmp>", "<noembed>%s</noembed>", "<noframes>%s</noframes>",
    "<!DOCTYPE html %s>", "<?xml %s?>",
]
decoy = st.tuples(st.sampled_from(CONTEXTS), declaration).map(lambda t: t[0] % t[1])
filler = st.sampled_from(["", "<p>text</p>", "<link rel=stylesheet href=a.css>", "<meta charset=utf-8>",
                          "<div class=x>", "</div>", "text &amp; more", "<br/>"])
pieces = st.lists(st.one_of(decoy, filler), max_size=4).map("".join)


@st.composite
def pages(draw):
    real_html = draw(st.one_of(st.just("<html>"), html_tag, st.just('<html class="a" dir="ltr">')))
    real_meta = draw(st.one_of(st.just(""), meta_tag))
    return "".join([
        draw(st.sampled_from(["", "<!DOCTYPE html>"])), draw(pieces), real_html, draw(pieces), "<head>",
        draw(pieces), real_meta, draw(pieces), draw(st.sampled_from(["</head>", ""])), "<body>",
        draw(pieces), draw(declaration), "</body></html>"])


@settings(max_examples=800, deadline=None)
@given(pages())
def test_declarations_outside_the_page_s_own_markup_do_not_count(page):
    assert html_language(page.encode("ascii")) == oracle(page)


def test_each_decoy_context():
    real = '<html lang="de"><head>%s</head><body>'
    for context in CONTEXTS:
        for fake in ('<html lang="fr">', '<meta http-equiv="content-language" content="fr">'):
            page = context % fake
            assert html_language((page + real % "").encode()) == "deu", context
            assert html_language(("<html><head>" + page + "</head>").encode()) is None, context
            assert oracle(page + real % "") == "deu"


def test_a_decoy_before_the_real_declaration():
    assert html_language(b"<script>document.write('<html lang=\"fr\">')</script><html lang=\"ar\">") == "ara"
    assert html_language(b'<template><html lang="fr"></template><html lang="ja">') == "jpn"
    assert html_language(b'<html><head><title><meta http-equiv="content-language" content="fr"></title>'
                         b'<meta http-equiv="content-language" content="es"></head>') == "spa"
