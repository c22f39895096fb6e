"""Content language detection for ``--detect-language`` (the optional ``detect`` extra).

The visible text of an HTML payload's first ``HTML_PREFIX_BYTES`` (script, style and comments
left out; decoded with the declared charset, else the detected one) is extracted with
resiliparse and classified by CLD2 (pycld2), the detector Common Crawl's ``languages`` come
from, so profiles of WARCs and of Common Crawl's index count languages alike. Its top
language is mapped to ISO 639-3 with normalise_language; a text with few letters, or one
CLD2 cannot place, gives None. Why CLD2: the comparison in docs/language.md.
"""

import re

from profiler.model.language import HTML_PREFIX_BYTES, UNKNOWN, normalise_language

#: characters of extracted text given to the detector (its first ones)
MAX_TEXT_CHARS = 5000
#: fewer letters than this: no answer (a word or a menu says little)
MIN_LETTERS = 20

_LETTER = re.compile(r"[^\W\d_]")
# CLD2 refuses control characters and lone surrogates as invalid UTF-8
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", re.I)


def available():
    """Whether the detect extra is installed (profiler.extras.install_command says how)."""
    try:
        import pycld2  # noqa: F401
        import resiliparse.extract.html2text  # noqa: F401
    except ImportError:
        return False
    return True


def charset_of(content_type):
    """The charset parameter of a Content-Type header value, or None.

    >>> charset_of("text/html; charset=ISO-8859-1"), charset_of("text/html")
    ('ISO-8859-1', None)
    """
    m = _CHARSET.search(content_type or "")
    return m.group(1) if m else None


def extract_text(prefix, charset=None):
    """The visible text of the first HTML_PREFIX_BYTES of an HTML payload ('' when none)."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding
    from resiliparse.parse.html import HTMLTree
    data = bytes(prefix[:HTML_PREFIX_BYTES])
    try:
        try:
            html = bytes_to_str(data, charset or detect_encoding(data, from_html_meta=True), errors="replace")
        except LookupError:                            # a charset name no codec has: detect it
            html = bytes_to_str(data, detect_encoding(data, from_html_meta=True), errors="replace")
        text = extract_plain_text(HTMLTree.parse(html), alt_texts=False, list_bullets=False)
    except Exception:                                  # the parser's errors on hostile bytes
        return ""
    return _CONTROL.sub(" ", text)


def _enough_letters(text):
    for n, _ in enumerate(_LETTER.finditer(text), 1):
        if n >= MIN_LETTERS:
            return True
    return False


def detect_language(text):
    """The language of a text as ISO 639-3 (CLD2's top language), or None."""
    import pycld2
    text = _CONTROL.sub(" ", text[:MAX_TEXT_CHARS])
    if not _enough_letters(text):
        return None
    try:
        _, _, details = pycld2.detect(text)
    except pycld2.error:
        return None
    code = normalise_language(details[0][1]) if details and details[0][1] != "un" else UNKNOWN
    return None if code == UNKNOWN else code


def content_language(prefix, content_type=None):
    """The detected language of an HTML payload's start as ISO 639-3, or None.

    prefix: the payload's first bytes, after content decoding; content_type: the HTTP
    Content-Type value (its charset decodes the bytes).
    """
    return detect_language(extract_text(prefix, charset_of(content_type)))


def _version(package):
    import sys
    from profiler.model.versions import installed_version
    return "%s %s" % (package, installed_version(package, sys.modules.get(package.lower())) or "?")   # '?': no metadata


def meta():
    """What a profile's ``!meta`` records of the detection: the detector, the text extractor
    (packages and versions) and the limits that decide an answer."""
    return {"detector": "CLD2", "package": _version("pycld2"), "text": _version("Resiliparse"),
            "prefix_bytes": HTML_PREFIX_BYTES, "max_chars": MAX_TEXT_CHARS, "min_letters": MIN_LETTERS}
