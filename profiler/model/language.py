"""A capture's primary language as a lower-case ISO 639-3 code (spec section 2, lang).

Language tags come from CDXJ fields (Common Crawl's ``languages``: ISO 639-3 codes, most
prominent first; ``lang``: usually BCP 47) and from HTML responses (``<html lang>``, ``<meta
http-equiv="content-language">``, the HTTP ``Content-Language`` header). All of them go
through ``normalise_language``, so the same language gets the same code whatever its source.

The mapping is langcodes' (IANA subtag registry, ISO 639 and CLDR aliases), not a table of
our own. A tag's primary subtag decides (spec section 2): an ISO 639-3 code in use stays as it
is (``tgl``, ``cmn``), a 2-letter one becomes its ISO 639-3 code (``ar-EG`` -> ``ara``,
``zh-Hant`` -> ``zho``), an extended subtag names its language (``zh-yue`` -> ``yue``), deprecated and grandfathered tags are replaced (``iw`` -> ``heb``,
``in`` -> ``ind``, ``i-klingon`` -> ``tlh``), and ISO 639-2/B codes become 639-3 (``fre`` ->
``fra``). What is not one language is ``unk``: ``und``, ``mul``, ``mis``,
``zxx``, private use (``qaa``-``qtz``, ``x-...``), collective codes (``sla``), unassigned codes,
names (``English``), garbage, and tags over ``MAX_TAG_LENGTH`` or with non-ASCII characters.
"""

import functools
import re

UNKNOWN = "unk"
#: longer tags are garbage (RFC 5646 section 4.4.1 asks for 35 characters at least)
MAX_TAG_LENGTH = 64
#: bytes of an HTML payload that html_language reads (see docs/language.md for the corpus)
HTML_PREFIX_BYTES = 64 * 1024
#: registry scopes that name no single language
_NOT_ONE_LANGUAGE = {"collection", "special", "private-use"}
_CACHE = 4096

_iso639_3 = None


def _registry():
    """The IANA registry's entries, read with importlib.resources (langcodes may be in a zip)."""
    import io
    from importlib.resources import files
    from langcodes.registry_parser import parse_file
    text = files("langcodes").joinpath("data", "language-subtag-registry.txt").read_text("utf-8")
    return parse_file(io.StringIO(text))


def _codes():
    """The ISO 639-3 codes langcodes can return: the registry's languages, as alpha-3."""
    global _iso639_3
    if _iso639_3 is None:
        from langcodes import Language
        codes = set()
        for entry in _registry():
            subtag = entry.get("Subtag", "")
            if entry.get("Type") != "language" or entry.get("Scope") in _NOT_ONE_LANGUAGE:
                continue
            if len(subtag) == 3:
                codes.add(subtag)
            elif len(subtag) == 2:
                try:
                    codes.add(Language.get(subtag).to_alpha3())
                except (LookupError, ValueError):
                    pass
        _iso639_3 = frozenset(codes)
    return _iso639_3


_current = None


def _current_codes():
    """(ISO 639-3 codes in use, kept as they are: Common Crawl's ``tgl`` or ``cmn`` stay
    themselves; {2-letter subtag in use: its ISO 639-3 code}): the registry's 3-letter language
    subtags that are not deprecated, and ISO 639's 3-letter codes of its 2-letter ones."""
    global _current
    if _current is None:
        from langcodes.data_dicts import LANGUAGE_ALPHA3
        entries = [e for e in _registry() if e.get("Type") == "language"
                   and "Deprecated" not in e and e.get("Scope") not in _NOT_ONE_LANGUAGE]
        two = {e["Subtag"]: LANGUAGE_ALPHA3[e["Subtag"]] for e in entries
               if len(e.get("Subtag", "")) == 2 and e["Subtag"] in LANGUAGE_ALPHA3}
        three = {e["Subtag"] for e in entries if len(e.get("Subtag", "")) == 3} | set(two.values())
        _current = (frozenset(three), two)
    return _current


def _alpha3(subtag):
    from langcodes import Language                  # imported on use: tasks without lang need none
    try:
        language = Language.get(subtag)
        if language.language is None:
            return None
        return language.to_alpha3()
    except Exception:                        # LanguageTagError, LookupError: not a language
        return None


@functools.lru_cache(maxsize=_CACHE)
def _normalise(tag):
    text = tag.strip(" \t\r\n\f\v\"'")
    if not text or len(text) > MAX_TAG_LENGTH or not text.isascii():
        return UNKNOWN
    text = text.replace("_", "-").lower()
    parts = text.split("-")
    primary = parts[0]                                # BCP 47's primary subtag
    if len(parts) > 1 and len(parts[1]) == 3 and parts[1].isalpha():    # an extended subtag: zh-yue
        code = _alpha3(text)
        if code in _codes():
            return code
    three, two = _current_codes()
    if primary in three:
        return primary
    if primary in two:
        return two[primary]
    code = _alpha3(text) or _alpha3(primary)   # deprecated, grandfathered, ISO 639-2/B: replaced
    return code if code in _codes() or code in three else UNKNOWN


def load():
    """Read the mapping now (a process that forks tasks reads it once for all of them)."""
    normalise_language("en")


def normalise_language(tag):
    """A language tag (BCP 47, ISO 639-1/2/3, a CC ``languages`` entry) -> ISO 639-3 or 'unk'.

    Never raises; bytes are read as ASCII.

    >>> normalise_language("ar-EG"), normalise_language("zh-Hant"), normalise_language("fre")
    ('ara', 'zho', 'fra')
    >>> normalise_language("en_US"), normalise_language("und"), normalise_language("English")
    ('eng', 'unk', 'unk')
    """
    if isinstance(tag, (bytes, bytearray)):
        tag = bytes(tag).decode("ascii", "replace")
    if not isinstance(tag, str) or len(tag) > 2 * MAX_TAG_LENGTH:   # long ones never reach the memo
        return UNKNOWN
    return _normalise(tag)


@functools.lru_cache(maxsize=_CACHE)
def _primary(value):
    for entry in value.split(","):
        entry = entry.split(";", 1)[0].strip()
        if entry:
            return normalise_language(entry)
    return UNKNOWN


def primary_language(value):
    """The primary language of a CDXJ ``languages`` or ``lang`` value: its first entry.

    Entries are separated by ``,``; a ``;q=`` weight is ignored; a JSON list gives its first item.

    >>> primary_language("eng,fra"), primary_language("de-DE, en;q=0.5"), primary_language("")
    ('eng', 'deu', 'unk')
    """
    if isinstance(value, (list, tuple)):
        value = value[0] if value else ""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("ascii", "replace")
    if not isinstance(value, str) or len(value) > 4 * MAX_TAG_LENGTH:
        return UNKNOWN
    return _primary(value)


# The markup of a page's start, as an HTML parser reads it: comments, CDATA sections and
# bogus comments (<!...>, <?...>, </ not followed by a letter) are skipped whole; a start or end
# tag's attributes are read with their quoted values (which may hold '>' or '<'; the prefix may
# end inside one); the text of script, style, title, textarea, noscript, iframe, xmp, noembed
# and noframes runs to their end tag; what a template holds is inert. So a declaration in any
# of those is not the page's own. _SKIP passes over text and the markup that declares nothing
# in one match (possessive, so hostile prefixes stay linear); the scan sees only the tags that
# matter.
_TEXT_ELEMENTS = (b"script", b"style", b"title", b"textarea", b"noscript", b"iframe", b"xmp", b"noembed",
                  b"noframes")
_NAME_END = rb"(?=[\s/>]|\Z)"
_TAG_REST = rb"""(?:[^>"']++|"[^"]*+(?:"|\Z)|'[^']*+(?:'|\Z))*+(?:>|\Z)"""
_STARTS = rb"(?:html|meta|body|template|plaintext|" + b"|".join(_TEXT_ELEMENTS) + rb")" + _NAME_END
_SKIP = re.compile(
    rb"(?:[^<]++"
    rb"|<(?!" + _STARTS + rb")[a-zA-Z][^\s/>]*+" + _TAG_REST +
    rb"|</(?!(?:head|template)" + _NAME_END + rb")[a-zA-Z][^\s/>]*+" + _TAG_REST +
    rb"|<!--(?:>|->|(?:[^-]++|-(?!->))*+-->)"                                # comments (<!-->, <!--->)
    rb"|<!\[CDATA\[(?:[^\]]++|\](?!\]>))*+\]\]>"
    rb"|<!(?!--|\[CDATA\[)[^>]*+>|<\?[^>]*+>|</(?![a-zA-Z])[^>]*+>"         # bogus comments
    rb"|<(?![!?/a-zA-Z]))*+", re.I)
_TAG = re.compile(rb"<(/?)([a-zA-Z][^\s/>]*+)(" + _TAG_REST + rb")")
_TEXT_ENDS = {name: re.compile(rb"</" + name + _NAME_END, re.I) for name in _TEXT_ELEMENTS}
_ATTRS = re.compile(rb"""([^\s"'>/=]+)\s*(?:=\s*(?:"([^"]*)(?:"|\Z)|'([^']*)(?:'|\Z)|([^\s>]+)))?""")
_UTF16_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}


def _attributes(raw):
    """Attribute names -> values (bytes) of a lower-cased start tag; the first one wins."""
    found = {}
    for m in _ATTRS.finditer(raw):
        name = m.group(1)
        if name not in found:
            value = m.group(2)
            if value is None:
                value = m.group(3) if m.group(3) is not None else m.group(4) or b""
            found[name] = value
    return found


def _declared(value):
    """A declared tag (bytes) -> ISO 639-3, or None when it names no language."""
    code = primary_language(value.decode("ascii", "replace"))
    return None if code == UNKNOWN else code


def _ascii_compatible(prefix):
    """UTF-16 text (by its BOM, or '<' in its first code unit) re-encoded as UTF-8."""
    encoding = _UTF16_BOMS.get(prefix[:2])
    if encoding is None and len(prefix) > 1 and b"\x00" in prefix[:2]:
        encoding = "utf-16-le" if prefix[1] == 0 else "utf-16-be"
    if encoding is None:
        return prefix
    return prefix[:HTML_PREFIX_BYTES].decode(encoding, "replace").encode("utf-8", "replace")


def _scan(prefix, cut):
    """(<html lang> code, else meta content-language code) of a prefix, from the page's own
    markup until its head ends (<body, </head>); cut: it is the start of a longer payload, so a
    tag that runs to its end may be cut short (lang="fil" read as "fi")."""
    found = None
    inert = 0                                        # templates open around this point
    pos, size = 0, len(prefix)
    while True:
        pos = _SKIP.match(prefix, pos).end()
        m = _TAG.match(prefix, pos)
        if m is None:                                # the end, or a comment or CDATA not closed
            return found
        attrs, end = m.group(3), m.end()
        if cut and not attrs.endswith(b">"):
            return found                             # a tag the prefix may cut short
        name = m.group(2).lower()
        if m.group(1):                               # </head>, </template>
            if name == b"template":
                inert = max(0, inert - 1)
            elif not inert:
                return found
        elif name == b"template":
            inert += 1
        elif name in _TEXT_ENDS:                     # its text runs to its end tag
            close = _TEXT_ENDS[name].search(prefix, end)
            if close is None:
                return found
            end = close.start()
        elif name == b"plaintext" or (name == b"body" and not inert):
            return found
        elif inert or name == b"body":
            pass
        elif name == b"html":
            attrs = attrs.lower()
            if b"lang" in attrs:
                values = _attributes(attrs)
                value = values.get(b"lang") or values.get(b"xml:lang")
                code = _declared(value) if value else None
                if code is not None:
                    return code
        elif found is None:                          # a meta
            attrs = attrs.lower()
            if b"content-language" in attrs:
                values = _attributes(attrs)
                if values.get(b"http-equiv", b"").strip() == b"content-language":
                    found = _declared(values.get(b"content", b""))
        if end >= size:
            return found
        pos = end


def html_language(prefix, content_language_header=None, cut=None):
    """The declared language of an HTML response as ISO 639-3, or None when none is declared.

    First that names a language: ``<html lang>`` (else ``xml:lang``), ``<meta
    http-equiv="content-language" content>`` (first tag), the ``Content-Language`` header
    (first tag). Reads at most HTML_PREFIX_BYTES of prefix (the payload's start, after
    content decoding), and stops at ``<body`` or ``</head>``; comments are skipped. Bytes in
    any ASCII-compatible charset, or UTF-16 with a BOM or starting with '<'. cut: whether
    the payload goes on past prefix, so that a tag at its end may be cut short (None: when
    prefix is HTML_PREFIX_BYTES long or longer).

    >>> html_language(b'<!DOCTYPE html><html class="x" lang="ar-EG"><head>')
    'ara'
    >>> html_language(b"<html><head><meta http-equiv=Content-Language content='fr, en'>")
    'fra'
    >>> html_language(b"<html><body>", "de-DE, en") , html_language(b"<p>hi</p>")
    ('deu', None)
    """
    found = None
    if isinstance(prefix, (bytes, bytearray, memoryview)):
        if cut is None or len(prefix) > HTML_PREFIX_BYTES:
            cut = len(prefix) >= HTML_PREFIX_BYTES
        found = _scan(_ascii_compatible(bytes(prefix[:HTML_PREFIX_BYTES])), cut)
    if found is None and content_language_header:
        if isinstance(content_language_header, (bytes, bytearray)):
            content_language_header = bytes(content_language_header).decode("ascii", "replace")
        if isinstance(content_language_header, str):
            code = primary_language(content_language_header)
            found = None if code == UNKNOWN else code
    return found


def mapping_version():
    """What a profile's ``!meta`` records of the mapping: langcodes' version and its registry's date."""
    import sys
    from profiler.model.versions import installed_version
    package = installed_version("langcodes", sys.modules.get("langcodes")) or "?"   # '?': shipped without metadata
    dates = [entry["File-Date"] for entry in _registry_header()]
    return "langcodes %s (IANA registry %s)" % (package, dates[0] if dates else "?")


def _registry_header():
    from importlib.resources import files
    with files("langcodes").joinpath("data", "language-subtag-registry.txt").open("r", encoding="utf-8") as f:
        first = f.readline()
    if first.startswith("File-Date:"):
        yield {"File-Date": first.split(":", 1)[1].strip()}


def read_prefix(stream, limit=HTML_PREFIX_BYTES):
    """Up to limit bytes from the start of a binary stream (a record's decoded payload)."""
    chunks, left = [], limit
    while left > 0:
        chunk = stream.read(left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
