"""What spec section 2 says a generated WARC capture's language is, from what its page declares.

The captures are those of profiler.testing.synthetic_warc.language_pages / write_language_warc.
The language is computed here from what the generator chose to write, never by the profiler's
own extraction: a table of the tags the generator uses, read as the spec and docs/language.md
read them, and the spec's order of the ways of declaring, with its 64 KiB bound.
"""

import surt

from helpers.oracle import profile as oracle_profile, resolve_revisits

#: the spec's bound: decoded payload bytes a declaration is read from
BOUND = 64 * 1024

#: BCP 47 tag (lower case, '_' as '-') -> ISO 639-3: its primary subtag, ISO 639-1 to 639-3,
#: 639-2/B codes (fre, ger, dut), deprecated codes (iw); an ISO 639-3 code stays (cmn)
CODES = {
    "en": "eng", "en-us": "eng", "en-gb": "eng", "eng": "eng",
    "fr": "fra", "fr-fr": "fra", "fr-ca": "fra", "fre": "fra",
    "de": "deu", "de-de": "deu", "de-at": "deu", "ger": "deu",
    "es": "spa", "es-es": "spa", "es-419": "spa", "es-mx": "spa",
    "it": "ita", "it-it": "ita",
    "pt": "por", "pt-br": "por", "pt-pt": "por",
    "nl": "nld", "nl-nl": "nld", "nl-be": "nld", "dut": "nld",
    "pl": "pol", "pl-pl": "pol",
    "ru": "rus", "ru-ru": "rus",
    "tr": "tur", "tr-tr": "tur",
    "sv": "swe", "sv-se": "swe",
    "ar": "ara", "ar-eg": "ara", "ar-sa": "ara",
    "zh": "zho", "zh-cn": "zho", "zh-hans": "zho", "zh-tw": "zho", "zh-hant": "zho", "cmn": "cmn",
    "ja": "jpn", "ja-jp": "jpn",
    "el": "ell", "el-gr": "ell",
    "he": "heb", "iw": "heb", "he-il": "heb",
    "ko": "kor", "ko-kr": "kor",
}
#: values that name no language: undetermined, multiple, no linguistic content, private use, a name
NO_LANGUAGE = {"und", "mul", "zxx", "x-default", "english"}


def tag_language(value):
    """A declared value's language: its first non-empty entry (entries separated by ',', a
    ';q=' weight dropped), or None when that names no language."""
    for entry in value.split(","):
        entry = entry.split(";")[0].strip().lower().replace("_", "-")
        if entry:
            if entry in NO_LANGUAGE:
                return None
            return CODES[entry]          # a KeyError: the generator uses a tag this table lacks
    return None


def declared_language(capture):
    """A response's declared language (ISO 639-3) or None: <html lang> (else xml:lang), then
    <meta http-equiv="content-language">, then the Content-Language header; a declaration that
    names no language falls through; an HTML tag counts only when it ends (its '>') within the
    payload's first BOUND bytes after decoding. Only HTML is read; other media: the header."""
    declared, ends = capture["declared"], capture["ends"]
    if capture["html"]:
        if "html" in declared and ends["html"] <= BOUND:
            lang, xml_lang = declared["html"]
            value = lang or xml_lang
            code = tag_language(value) if value else None
            if code:
                return code
        if "meta" in declared and ends["meta"] <= BOUND:
            code = tag_language(declared["meta"])
            if code:
                return code
    if declared.get("header"):
        return tag_language(declared["header"])
    return None


def expected_language(capture, detect=False):
    """The language field of a capture's CDXJ line (None: none): what it declares; with
    detect, an HTML page that declares nothing has the language of its text when its words
    are within the first BOUND bytes (the generator puts them either within or past it).
    Revisits have none (they take their original's when the profile resolves them)."""
    if capture["type"] == "revisit":
        return None
    code = declared_language(capture)
    if code is None and detect and capture["html"] and capture["ends"]["text"] < BOUND:
        code = capture["text"]
    return code


def oracle_captures(captures, detect=False):
    """The oracle's captures (helpers.oracle): [urlkey, timestamp, mime, status, digest, length,
    revisit, lang], revisits resolved."""
    caps = []
    for c in captures:
        revisit = c["type"] == "revisit"
        caps.append([surt.surt(c["url"]), c["timestamp"], "warc/revisit" if revisit else c["mime"], c["status"],
                     c["digest"].split(":")[-1].upper(), c["length"], revisit,
                     expected_language(c, detect) or "unk"])
    return resolve_revisits(caps)


def oracle(captures, policy, detect=False):
    """{key: features} of the captures' profile, brute force (helpers.oracle.profile)."""
    return oracle_profile(oracle_captures(captures, detect), policy)


def data_lines(path):
    """The data lines of a profile (its '!' lines left out)."""
    with open(path, "rb") as f:
        return [line for line in f if not line.startswith(b"!")]
