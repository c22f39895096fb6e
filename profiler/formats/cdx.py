"""CDX lines -> captures. Field letters follow the IA CDX legend (N b a m s k r M S V g); a letter
not read here (c, d, v, ...) holds its field's place, and a letter given twice is read at its first."""

import re

from profiler.model import capture, collection as collections, normalise

#: Layouts assumed for CDX files without a legend line, by field count.
LAYOUTS_BY_FIELD_COUNT = {
    11: "N b a m s k r M S V g",
    10: "N b a m s k r M V g",   # Archive-It
    9: "N b a m s k r V g",
    7: "N b a m s k S",          # Wayback CDX server API default output
}
#: NetarchiveSuite's own 8-field CDX: url ip date mime length file offset md5.
NETARCHIVESUITE_LAYOUT = "a e b m S g V k"
#: nine fields whose seventh is a number where the redirect (``-`` or a URL) goes: the length, as
#: a CDX server answers fl=urlkey,timestamp,original,mimetype,statuscode,digest,length,offset,filename
NINE_WITH_LENGTH = "N b a m s k S V g"

NON_CAPTURE_PREFIXES = (b"filedesc:", b"warcinfo:")
#: media types (normalised: lower case, stripped) of index entries of WARC records that are no mementos
NON_CAPTURE_MIMES = ("warc/warcinfo", "arc/filedesc", "warc/metadata", "warc/request")

#: URLs' SURTs kept for URLs read again (revisits, repeated captures): at most CACHE_ENTRIES of them
#: and CACHE_BYTES of URL and key together (a service asked for distinct long URLs, up to 8 KB each,
#: would keep 100,000 of them), then forgotten all at once
_surt_cache = {}
_surt_cache_bytes = 0
CACHE_ENTRIES = 100000
CACHE_BYTES = 32 << 20


#: how a legend line starts: 'CDX', maybe after one space or tab, then a space or tab
LEGEND_STARTS = (b" CDX ", b"CDX ", b" CDX\t", b"CDX\t", b"\tCDX ", b"\tCDX\t")


def is_legend(line):
    """True for a ' CDX N b a ...' legend line (its letters after spaces or tabs)."""
    return line.startswith(LEGEND_STARTS)


def legend_letters(line):
    """' CDX N b a m s k' -> 'N b a m s k' (raises ValueError when unusable)."""
    letters = line.split()[1:]
    if b"b" not in letters or not (b"N" in letters or b"a" in letters):
        raise ValueError("CDX legend without timestamp (b) or URL (N/a) field: %r" % line[:80])
    return b" ".join(letters).decode("ascii", "replace")


#: a URI's scheme and its colon (RFC 3986), in a case surt() reads only in lower case
_UPPER_SCHEME = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]*:")


def lower_scheme(url):
    """A URL with its scheme in lower case (a scheme is case-insensitive, RFC 3986): surt() keeps
    ``DNS:example.com`` apart from ``dns:example.com``, which Heritrix writes for the same lookup.

    >>> lower_scheme(b"DNS:example.com"), lower_scheme(b"Http://Example.com/A")
    (b'dns:example.com', b'http://Example.com/A')
    """
    m = _UPPER_SCHEME.match(url)
    return url if m is None or m.group().islower() else m.group().lower() + url[m.end():]


def surt_of(url):
    """SURT of a URL (bytes) as a key-safe str; None when surt cannot parse it."""
    key = _surt_cache.get(url)
    if key is None:
        import surt    # here, not at the top: its import (tldextract, requests) is slow, and most tasks never need it
        try:
            text = surt.surt(lower_scheme(url).decode("utf-8", "surrogateescape"))
        except Exception:
            return None
        if not text:
            return None
        key = normalise.key_field(text.encode("utf-8", "surrogateescape"))
        global _surt_cache_bytes
        if len(_surt_cache) > CACHE_ENTRIES or _surt_cache_bytes > CACHE_BYTES:
            _surt_cache.clear()
            _surt_cache_bytes = 0
        _surt_cache[url] = key
        _surt_cache_bytes += len(url) + len(key)
    return key


def is_surt(key):
    """A SURT in the form indexes write it has ')' after its host part, and no '/' before it:
    'com,example)/a' (Heritrix's form, '(com,example,)/a', is not it)."""
    i = key.find(b")")
    return i > 0 and b"/" not in key[:i] and not key.startswith(b"(")


def heritrix_surt_url(key):
    """The URL a SURT in Heritrix's form stands for ('http://(com,example,www,:8080)/a' or,
    without its scheme, '(com,example,)/a' -> 'http://www.example.com:8080/a'), or None."""
    scheme, at = b"http", key.find(b"://(")
    if at > 0:
        scheme, key = key[:at], key[at + 3:]
    end = key.find(b")")
    if not key.startswith(b"(") or end < 0:
        return None
    labels = [label for label in key[1:end].split(b",") if label]
    port = labels.pop() if labels and labels[-1].startswith(b":") else b""
    if not labels:
        return None
    return scheme + b"://" + b".".join(reversed(labels)) + port + key[end + 1:]


def urlkey(key_raw, url_raw):
    """The SURT urlkey: taken from the index when it is one (contains ')'), else from surt() of
    the URL (or of the URL a SURT in Heritrix's form stands for, canonicalised as surt() does)."""
    if key_raw is not None and is_surt(key_raw):
        key = normalise.key_field(key_raw)
    else:
        source = url_raw if url_raw not in (None, b"-", b"") else key_raw
        if source in (None, b"-", b""):
            return None
        if source is key_raw and (key_raw.startswith(b"(") or b"://(" in key_raw):
            source = heritrix_surt_url(key_raw)
            if source is None:
                return None
        key = surt_of(source)
        if key is None:
            return None
    if key[0] in "!@":
        key = "%%%02X" % ord(key[0]) + key[1:]   # '!' and '@' start special lines
    return key


_FIELD = re.compile(rb"\S+")


def url_with_spaces(line, fields, count, i_key, i_url):
    """The fields of a CDX line with more fields than its layout because its original URL (``a``)
    holds spaces (indexes of ARC files, whose URLs may have them, write it as it is), or None.
    The surplus fields are the URL's only when the line's key is a SURT and the SURT of that URL
    (spaces as ``%20``): any other surplus stays a ``bad_field_count``."""
    extra = len(fields) - count
    if extra <= 0 or i_key is None or i_url is None or i_key > i_url or not is_surt(fields[i_key]):
        return None
    spans = [m.span() for m in _FIELD.finditer(line)]
    url = line[spans[i_url][0]:spans[i_url + extra][1]]
    if surt_of(url.replace(b" ", b"%20").replace(b"\t", b"%09")) != normalise.key_field(fields[i_key]):
        return None
    return fields[:i_url] + [url] + fields[i_url + extra + 1:]


def mime_with_parameters(fields, count, i_mime, i_status):
    """The fields of a CDX line with more fields than its layout because its media type (``m``,
    followed by the status ``s``) has parameters after spaces rather than ``;`` (wget's
    ``--warc-cdx`` writes ``text/html charset=UTF-8`` as a server sent it), or None. The surplus
    fields are the media type's only when it has a ``/`` and each of them an ``=``."""
    extra = len(fields) - count
    if extra <= 0 or i_mime is None or i_status != i_mime + 1 or b"/" not in fields[i_mime]:
        return None
    params = fields[i_mime + 1:i_mime + 1 + extra]
    if not all(b"=" in param for param in params):
        return None
    return fields[:i_mime] + [b" ".join([fields[i_mime]] + params)] + fields[i_mime + 1 + extra:]


#: how the name of a WARC or ARC file ends (an index's ``g`` field)
_ARCHIVE_NAME_END = re.compile(rb"\.w?arc(?:\.gz)?(?:\.open)?\Z", re.IGNORECASE)


def _number_or_dash(field):
    return field == b"-" or field.isdigit()


def file_name_with_spaces(line, fields, count, pos):
    """The fields of a CDX line with more fields than its layout because its last field, the WARC or
    ARC file name (``g``), holds spaces (cdxj-indexer writes ``my crawl.warc.gz`` as it is), or None.
    The surplus fields are the name's only when it ends as a WARC or ARC file's name does, its first
    word is no number (a field shifted into its place), and the fields before it are what their
    letters hold: a timestamp, a media type, a status, lengths and offsets (``S``, ``V``, ``n``)."""
    if len(fields) <= count or pos.get("g") != count - 1 or fields[count - 1].isdigit():
        return None
    spans = [m.span() for m in _FIELD.finditer(line)]
    name = line[spans[count - 1][0]:spans[-1][1]]
    if not _ARCHIVE_NAME_END.search(name) or not fields[pos["b"]].isdigit():
        return None
    if "m" in pos and not (b"/" in fields[pos["m"]] or fields[pos["m"]] == b"-"):
        return None
    if "s" in pos and not (fields[pos["s"]] == b"-" or (len(fields[pos["s"]]) == 3 and fields[pos["s"]].isdigit())):
        return None
    if not all(_number_or_dash(fields[pos[letter]]) for letter in "SVn" if letter in pos):
        return None
    return fields[:count - 1] + [name]


def _cut_at_single_spaces(line):
    """A space-separated CDX line's fields with its empty ones (two spaces in a row) kept as b"",
    or None for a tab-separated line or one with a blank at either end (no field is there: a line
    short of one stays short)."""
    if b"\t" in line:
        return None
    fields = line.rstrip(b"\r\n").split(b" ")
    return fields if fields[0] and fields[-1] else None


def empty_fields(line, count):
    """The fields of a CDX line some of whose fields are empty (two spaces in a row: wget's
    ``--warc-cdx`` writes an empty digest for a crawl with ``--no-warc-digests``), each empty one
    read as ``-``; None unless the line, cut at single spaces, has the layout's count, the first and
    last fields not empty."""
    fields = _cut_at_single_spaces(line)
    if fields is None or len(fields) != count:
        return None
    return [field or b"-" for field in fields]


def mime_parameters_and_empty_fields(line, count, i_mime, i_status):
    """The fields of a CDX line whose media type has parameters after a space and which has an
    empty field too (wget's index of a ``--no-warc-digests`` crawl of a server that sends
    ``text/html charset=UTF-8``): cut at white space it has the layout's count, the parameter
    read as the status and the status as the digest. Cut at single spaces, the parameters
    joined to the media type and each empty field read as ``-``; None unless that gives the
    layout's count."""
    fields = _cut_at_single_spaces(line)
    if fields is None or b"" not in fields:
        return None
    joined = mime_with_parameters(fields, count, i_mime, i_status)
    return [field or b"-" for field in joined] if joined is not None and len(joined) == count else None


def make_parser(letters, collection=None):
    """Return parse(line) -> Capture (profiler.model.capture), or a skip-reason str, for a CDX
    layout. A CDX line names no language: its captures have the default. collection: the split's
    profiler.model.collection.Collections, which read the WARC file name (``g``), or None (the
    policy has no collection criterion)."""
    fields = letters.split()
    count = len(fields)
    pos = {}
    for i, f in enumerate(fields):      # a letter's first position wins (a legend may repeat one: wget's
        pos.setdefault(f, i)            # 'a b a ...'); letters the reader does not know hold their place
    i_key, i_url, i_ts = pos.get("N"), pos.get("a"), pos["b"]
    i_mime, i_status, i_digest = pos.get("m"), pos.get("s"), pos.get("k")
    i_len = pos.get("S", pos.get("n"))
    i_file = pos.get("g")
    dash = b"-"
    new = capture.new

    def fields_of(line):
        f = line.split()
        if len(f) == count:
            if i_status is not None and b"=" in f[i_status]:       # no status: a media type's parameter?
                return mime_parameters_and_empty_fields(line, count, i_mime, i_status) or f
            return f
        if len(f) < count:
            return empty_fields(line, count)
        return url_with_spaces(line, f, count, i_key, i_url) or mime_with_parameters(f, count, i_mime, i_status) \
            or file_name_with_spaces(line, f, count, pos)

    if collection is not None:
        plain = make_parser(letters)

        def parse(line):
            found = plain(line)
            if found.__class__ is str:
                return found
            name = fields_of(line)[i_file] if i_file is not None else None
            return found._replace(collection=collection(name))
        return parse

    def parse(line):
        f = fields_of(line)
        if f is None:
            return "bad_field_count"
        key_raw = f[i_key] if i_key is not None else None
        url_raw = f[i_url] if i_url is not None else None
        mime = normalise.mime(f[i_mime] if i_mime is not None else dash)
        if mime.startswith(NON_CAPTURE_MIMES) or (url_raw or b"").startswith(NON_CAPTURE_PREFIXES) \
                or (key_raw or b"").startswith(NON_CAPTURE_PREFIXES) or key_raw == dash:
            return "not_a_capture"
        ts = normalise.fractional_timestamp(f[i_ts])
        if ts is None:
            return "bad_timestamp"
        length, ok = normalise.length(f[i_len]) if i_len is not None else (0, True)
        if not ok:
            return "bad_length"
        key = urlkey(key_raw, url_raw)
        if key is None:
            return "bad_url"
        return new(urlkey=key, timestamp=ts, mime=mime,
                   status=normalise.status(f[i_status]) if i_status is not None else normalise.UNKNOWN,
                   digest=normalise.digest(f[i_digest]) if i_digest is not None else "-",
                   length=length, revisit=mime == normalise.REVISIT_MIME)

    return parse


def infer_letters(lines):
    """Guess the layout of a legend-less CDX from sample lines; None when unknown.

    The layout is picked by the most common field count and kept only when at least half the
    sample lines parse with it.
    """
    counts = {}
    for line in lines:
        n = len(line.split())
        counts[n] = counts.get(n, 0) + 1
    if not counts:
        return None
    n = max(counts, key=lambda k: (counts[k], k))
    letters = NETARCHIVESUITE_LAYOUT if n == 8 else LAYOUTS_BY_FIELD_COUNT.get(n)
    if n == 9:
        seventh = [f[6].isdigit() for f in (line.split() for line in lines) if len(f) == 9]
        if sum(seventh) * 2 > len(seventh):
            letters = NINE_WITH_LENGTH
    if letters is None:
        return None
    parse = make_parser(letters)
    good = sum(1 for result in map(parse, lines) if not isinstance(result, str) or result == "not_a_capture")
    return letters if good and good * 2 >= len(lines) else None


def captures_of_lines(lines, split):
    """Captures or skip reasons of a split's lines, parsed with its layout ('fields') until a
    legend line declares another."""
    collection = collections.of_split(split)
    parse = make_parser(split["fields"], collection)
    for line in lines:
        if not line or line.startswith((b"!", b"@")):
            continue
        if is_legend(line):
            try:
                parse = make_parser(legend_letters(line), collection)
            except ValueError:
                yield "bad_legend"
            continue
        yield parse(line)
