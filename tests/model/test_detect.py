"""Tests for profiler.model.detect: content language detection (the detect extra)."""

import doctest
import re

import pytest
from hypothesis import given, settings, strategies as st

from profiler.model import detect
from profiler.model.language import HTML_PREFIX_BYTES

CODE = re.compile(r"\A[a-z]{3}\Z")

PAGES = {
    "fra": "Ceci est une phrase en français, avec beaucoup de mots pour que la détection soit fiable.",
    "deu": "Dies ist ein deutscher Satz, der lang genug ist, um die Sprache sicher zu erkennen.",
    "spa": "Esta es una frase en español, lo bastante larga para reconocer el idioma sin dudas.",
    "rus": "Это предложение на русском языке, достаточно длинное для надёжного определения языка.",
    "ara": "هذه جملة باللغة العربية طويلة بما يكفي لتحديد اللغة بشكل موثوق من قبل الكاشف.",
    "zho": "这是一个中文句子，用于测试语言检测，需要足够长的文本才能可靠地识别出它的语言。",
    "jpn": "これは日本語の文章です。言語を確実に判定するために、十分な長さの文章を用意しました。",
    "heb": "זהו משפט בעברית לבדיקה של זיהוי שפה, עם מספיק מילים כדי שהזיהוי יהיה אמין.",
    "ell": "Αυτή είναι μια ελληνική πρόταση, αρκετά μεγάλη για να αναγνωριστεί η γλώσσα με βεβαιότητα.",
    "eng": "This is an English sentence that is long enough for the language to be recognised reliably.",
}


def _page(text, head=""):
    return ("<!DOCTYPE html><html><head><title>Site</title>%s<script>var english = 'this is not the "
            "page text at all, only a script';</script><style>p { color: red }</style></head><body>"
            "<!-- a comment in English that is not shown on the page --><p>%s</p></body></html>" % (head, text))


def test_available():
    assert detect.available()


def test_doctests():
    result = doctest.testmod(detect)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("code", sorted(PAGES))
def test_content_language(code):
    assert detect.content_language(_page(PAGES[code]).encode("utf-8")) == code


@pytest.mark.parametrize("code, encoding", [("rus", "windows-1251"), ("zho", "gb18030"), ("jpn", "shift_jis"),
                                            ("ell", "iso-8859-7"), ("fra", "iso-8859-1")])
def test_charsets(code, encoding):
    page = _page(PAGES[code]).encode(encoding)
    assert detect.content_language(page, "text/html; charset=%s" % encoding) == code
    declared = _page(PAGES[code], '<meta charset="%s">' % encoding).encode(encoding)
    assert detect.content_language(declared) == code              # the meta charset, no header


def test_extract_text_leaves_out_script_style_comments():
    text = detect.extract_text(_page(PAGES["deu"]).encode("utf-8"))
    assert PAGES["deu"] in text
    assert "script" not in text and "color" not in text and "comment" not in text


def test_only_the_bounded_prefix_is_read():
    filler = "<p>" + "x " * (HTML_PREFIX_BYTES // 2) + "</p>"
    page = _page(filler + PAGES["fra"] * 5).encode("utf-8")
    assert len(page) > HTML_PREFIX_BYTES
    assert PAGES["fra"] not in detect.extract_text(page)
    assert detect.content_language(_page(PAGES["fra"] * 5 + filler).encode("utf-8")) == "fra"


@pytest.mark.parametrize("prefix, content_type", [
    (b"", None), (b"<p>Home | Login</p>", None), (b"<p>12345 67890</p>", None),
    (b"\x00\x01\x02" * 1000, None), (b"\xff\xfe\x00<\x00", None), (_page("").encode(), None),
    (_page(PAGES["eng"]).encode(), "text/html; charset=no-such-charset"),
])
def test_no_answer_or_a_code(prefix, content_type):
    found = detect.content_language(prefix, content_type)
    assert found is None or CODE.match(found)
    if prefix.startswith(b"<!DOCTYPE") and "no-such" in (content_type or ""):
        assert found == "eng"                     # an unknown charset name: detected instead
    elif prefix != _page(PAGES["eng"]).encode():
        assert found is None


def test_long_and_short_texts():
    assert detect.detect_language("Questa è una frase italiana abbastanza lunga per riconoscerla. " * 2000) == "ita"
    assert detect.detect_language("Hola " * 3) is None                       # too few letters
    assert detect.detect_language("x" * 10 + "\x00" * 100) is None


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3000), st.one_of(st.none(), st.text(max_size=40)))
def test_never_raises_on_bytes(prefix, content_type):
    found = detect.content_language(prefix, content_type)
    assert found is None or CODE.match(found)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_never_raises_on_text(text):
    found = detect.detect_language(text)
    assert found is None or CODE.match(found)
