"""Seeded synthetic WARC files (tests, benchmarks): synthetic.py's captures as WARC records.

Each capture becomes a response record (HTTP status line, Content-Type, a small text body)
or a revisit of its URI-R's last payload; a share of responses get a request record
before them, and the file starts with a warcinfo record. Bodies are slices of a seeded
text pool chosen by the synthetic digest, so captures that share a digest share their
bytes (and real SHA-1); captures without a digest get no WARC-Payload-Digest header.
Same arguments, same bytes.
"""

import base64
import datetime
import hashlib
import io
import random
import zlib

from profiler.testing import synthetic

REASONS = {"200": "OK", "301": "Moved Permanently", "302": "Found", "304": "Not Modified",
           "404": "Not Found", "500": "Internal Server Error", "503": "Service Unavailable"}
_WORDS = ("archive web crawl page memento capture index profile record payload digest host "
          "path query news blog image style script library national university").split()


def _iso(ts):
    return "%s-%s-%sT%s:%s:%sZ" % (ts[:4], ts[4:6], ts[6:8], ts[8:10], ts[10:12], ts[12:14])


def _record(rec_type, rng, ts, uri, block, headers=()):
    lines = ["WARC/1.0", "WARC-Type: " + rec_type,
             "WARC-Record-ID: <urn:uuid:%032x>" % rng.getrandbits(128),
             "WARC-Date: " + _iso(ts)]
    if uri:
        lines.append("WARC-Target-URI: " + uri)
    lines.extend(headers)
    lines.append("Content-Length: %d" % len(block))
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + block + b"\r\n\r\n"


def warc_records(n_captures, seed=0, request_share=0.25, max_body=2000, **kw):
    """Yield the bytes of each record (uncompressed) of a synthetic WARC."""
    rng = random.Random(seed * 31 + 7)
    pool = " ".join(rng.choice(_WORDS) for _ in range(60000)).encode("ascii")
    yield _record("warcinfo", rng, "20240101000000", None,
                  b"software: archive-profiler synthetic_warc\r\nformat: WARC File Format 1.0\r\n",
                  ["Content-Type: application/warc-fields"])
    bodies = {}              # synthetic digest -> (body, sha1 base32)
    last = {}                # urlkey -> sha1 of its last 200 payload
    for urlkey, ts, url, mime, status, digest, length in synthetic.generate_captures(n_captures, seed, **kw):
        if mime == "warc/revisit":
            real = last.get(urlkey)
            if real is None:
                continue
            http = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
            yield _record("revisit", rng, ts, url, http, [
                "WARC-Profile: http://netpreserve.org/warc/1.0/revisit/identical-payload-digest",
                "WARC-Payload-Digest: sha1:" + real, "Content-Type: application/http; msgtype=response"])
            continue
        if digest == "-" or digest not in bodies:
            n = min(max_body, max(0, length // 4))
            start = rng.randrange(len(pool) - n)
            body = pool[start:start + n]
            entry = (body, base64.b32encode(hashlib.sha1(body).digest()).decode("ascii"))
            if digest != "-":
                bodies[digest] = entry
        else:
            entry = bodies[digest]
        body, real = entry
        if status == "200":
            last[urlkey] = real
        http = "HTTP/1.1 %s %s\r\n" % (status, REASONS.get(status, "Status"))
        if mime not in ("-", "unk"):
            http += "Content-Type: %s\r\n" % (mime + "; charset=utf-8" if mime == "text/html" else mime)
        http = (http + "Content-Length: %d\r\n\r\n" % len(body)).encode("ascii")
        if rng.random() < request_share:
            yield _record("request", rng, ts, url, b"GET / HTTP/1.1\r\nHost: example\r\n\r\n",
                          ["Content-Type: application/http; msgtype=request"])
        headers = ["Content-Type: application/http; msgtype=response"]
        if digest != "-":
            headers.append("WARC-Payload-Digest: sha1:" + real)
        yield _record("response", rng, ts, url, http + body, headers)


def write_warc(path, n_captures, seed=0, gzip=True, **kw):
    """Write a synthetic WARC (one gzip member per record when gzip); returns the record count."""
    count = 0
    with open(path, "wb") as f:
        for record in warc_records(n_captures, seed, **kw):
            if gzip:
                c = zlib.compressobj(6, zlib.DEFLATED, 31)
                record = c.compress(record) + c.flush()
            f.write(record)
            count += 1
    return count


# ---------------------------------------------------------------- pages that declare languages

#: media types of generated HTML, and of other responses
HTML_TYPES = ("text/html", "application/xhtml+xml")
OTHER_TYPES = ("image/png", "text/css", "application/json", "text/plain", "application/pdf")
#: how a body is encoded: transfer coding and content coding
CODINGS = ("identity", "chunked", "gzip", "chunked+gzip", "deflate", "deflate-raw")
#: where the generated hosts are, and the languages their pages are written in
HOST_LANGUAGES = (("fr", ("fra",)), ("de", ("deu",)), ("es", ("spa",)), ("it", ("ita",)),
                  ("com,br", ("por",)), ("nl", ("nld",)), ("pl", ("pol",)), ("ru", ("rus",)),
                  ("com,tr", ("tur",)), ("se", ("swe",)), ("eg", ("ara",)), ("cn", ("zho",)),
                  ("jp", ("jpn",)), ("gr", ("ell",)), ("il", ("heb", "eng")), ("kr", ("kor",)),
                  ("uk,co", ("eng",)), ("ca", ("eng", "fra")), ("ch", ("deu", "fra", "ita")),
                  ("com", None), ("org", None))
#: decoded payload bytes a page's declarations are read from (the spec's bound, written here
#: again: the generator places declarations around it)
BOUND = 64 * 1024


def _tag(rng, language, other_share=0.15, none_share=0.08):
    """A tag declaring language; sometimes another language's, or a value naming none."""
    from profiler.testing.sample_texts import NO_LANGUAGE, TAGS
    r = rng.random()
    if r < none_share:
        return rng.choice(NO_LANGUAGE)
    if r < none_share + other_share:
        language = rng.choice(sorted(TAGS))
    return rng.choice(TAGS[language])


def _quoted(rng, value):
    quote = rng.choice(('"', '"', "'", "")) if value and " " not in value and "," not in value else '"'
    return quote + value + quote


def page_declarations(rng, language, declare=True):
    """What an HTML page in language declares: {'html': (lang, xml_lang), 'meta': content,
    'header': value}, each way present or not (none when not declare); the values are mostly
    tags of language, sometimes another language's or values that name none."""
    if not declare:
        return {}
    r = rng.random()
    if r < 0.2:
        ways = ()
    elif r < 0.45:
        ways = ("html",)
    elif r < 0.55:
        ways = ("meta",)
    elif r < 0.65:
        ways = ("header",)
    else:
        ways = rng.choice((("html", "meta"), ("html", "header"), ("meta", "header"), ("html", "meta", "header")))
    out = {}
    if "html" in ways:
        form = rng.random()
        if form < 0.75:
            out["html"] = (_tag(rng, language), None)
        elif form < 0.85:
            out["html"] = (None, _tag(rng, language))
        else:
            out["html"] = (_tag(rng, language), _tag(rng, language, 0.5))
    if "meta" in ways:
        value = _tag(rng, language)
        if value and rng.random() < 0.2:
            value += ", " + _tag(rng, language, 0.8, 0)
        out["meta"] = value
    if "header" in ways:
        value = _tag(rng, language)
        if value and rng.random() < 0.2:
            value += ", " + _tag(rng, language, 0.8, 0) + ";q=0.5"
        out["header"] = value
    return out


def _html_tag(rng, lang, xml_lang, language):
    attrs = []
    if lang is not None:
        attrs.append(rng.choice(("lang", "lang", "LANG", "Lang")) + rng.choice(("=", "=", " = ")) + _quoted(rng, lang))
    if xml_lang is not None:
        attrs.append("xml:lang=" + _quoted(rng, xml_lang))
    if rng.random() < 0.4:
        attrs.append('class="no-js"')
    if language in ("ara", "heb"):
        attrs.append('dir="rtl"')
    rng.shuffle(attrs)
    return ("<html" + "".join(" " + a for a in attrs) + ">").encode("utf-8")


def _meta_tag(rng, content):
    name = rng.choice(("Content-Language", "content-language", "CONTENT-LANGUAGE"))
    http_equiv = rng.choice(("http-equiv", "HTTP-EQUIV")) + "=" + _quoted(rng, name)
    content = "content=" + _quoted(rng, content)
    attrs = [http_equiv, content] if rng.random() < 0.7 else [content, http_equiv]
    return ("<meta " + " ".join(attrs) + rng.choice((">", " />"))).encode("utf-8")


def html_page(rng, language, declared, near_bound=None, kind="page"):
    """An HTML page (UTF-8 bytes) with its text in language and its declarations; kind 'page',
    'redirect' (a line of English) or 'empty' (no text: a frameset); near_bound: 'html' or
    'meta', the declaration whose tag is made to end around BOUND bytes (and the page's words
    start past it). Returns (bytes, ends): ends['html'], ends['meta'], where each declaring tag
    ends (the offset just after its '>'), and ends['text'], where the page's words start."""
    from profiler.testing.sample_texts import SENTENCES, TAGS
    parts = [b"<!DOCTYPE html>\n"]
    decoy_lang = rng.choice(sorted(TAGS))
    if rng.random() < 0.1:                  # tags in comments do not count
        parts.append(('<!-- <html lang="%s"> -->\n' % TAGS[decoy_lang][0]).encode("ascii"))
    if rng.random() < 0.05:
        parts.append(('<!--[if IE 8]><html class="ie8" lang="%s"><![endif]-->\n' % TAGS[decoy_lang][0]).encode())
    lang, xml_lang = declared.get("html", (None, None))
    html = _html_tag(rng, lang, xml_lang, language)
    head = b'<head>\n<meta charset="utf-8">\n'
    meta = _meta_tag(rng, declared["meta"]) + b"\n" if "meta" in declared else b""
    ends = {}
    if near_bound == "html":
        target = BOUND + rng.choice((-300, -2, -1, 0, 0, 1, 1, 2, 3, 9000))
        before = sum(map(len, parts)) + len(b"<!-- -->\n")
        parts.append(b"<!-- " + b"x" * max(0, target - before - len(html)) + b" -->\n")
    parts.append(html + b"\n")
    if "html" in declared:
        ends["html"] = sum(map(len, parts)) - 1
    parts.append(head)
    if near_bound == "meta" and meta:
        target = BOUND + rng.choice((-300, -2, -1, 0, 0, 1, 1, 2, 3, 9000))
        before = sum(map(len, parts)) + len(b"<style>\n</style>\n")
        rule = b"p.c { color: #123456; margin: 0 }\n"
        fill = max(0, target - before - (len(meta) - 1))
        parts.append(b"<style>\n" + (rule * (fill // len(rule) + 1))[:fill] + b"</style>\n")
    parts.append(meta)
    if meta:
        ends["meta"] = sum(map(len, parts)) - 1
    if near_bound:                          # the words past the bound too, not cut by it
        fill = max(0, BOUND + 64 - sum(map(len, parts)) - len(b"<script>\n</script>\n"))
        parts.append(b"<script>\n" + b"/" * fill + b"</script>\n")
    ends["text"] = sum(map(len, parts))
    if kind == "redirect":
        title, paragraphs = "Moved", ['The document has moved <a href="/">here</a>.']
    elif kind == "empty":
        title, paragraphs = "", []
    else:
        sentences = SENTENCES[language]
        title = sentences[rng.randrange(len(sentences))].split(",")[0][:40]
        paragraphs = [" ".join(rng.sample(sentences, rng.randint(2, 4))) for _ in range(rng.randint(2, 4))]
    parts.append(("<title>%s</title>\n</head>\n<body>\n" % title).encode("utf-8"))
    if rng.random() < 0.1:                  # a meta in the body does not count
        parts.append(('<meta http-equiv="content-language" content="%s">\n' % TAGS[decoy_lang][0]).encode())
    parts.append(("<h1>%s</h1>\n" % title).encode("utf-8"))
    for p in paragraphs:
        parts.append(("<p>%s</p>\n" % p).encode("utf-8"))
    parts.append(b"</body>\n</html>\n")
    return b"".join(parts), ends


def encode_body(rng, body, coding):
    """The payload as stored in a coding (CODINGS), and the HTTP headers that coding needs."""
    headers = []
    if coding in ("gzip", "chunked+gzip"):
        c = zlib.compressobj(rng.choice((1, 6, 9)), zlib.DEFLATED, 31)
        body = c.compress(body) + c.flush()
        headers.append(("Content-Encoding", "gzip"))
    elif coding in ("deflate", "deflate-raw"):
        c = zlib.compressobj(6, zlib.DEFLATED, 15 if coding == "deflate" else -15)
        body = c.compress(body) + c.flush()
        headers.append(("Content-Encoding", "deflate"))
    if coding.startswith("chunked"):
        out, pos = [], 0
        while pos < len(body):
            n = rng.choice((1, 17, 512, 4096, 16000, 70000))
            piece = body[pos:pos + n]
            out.append(b"%x\r\n" % len(piece) + piece + b"\r\n")
            pos += n
        body = b"".join(out) + b"0\r\n\r\n"
        headers.append(("Transfer-Encoding", "chunked"))
    else:
        headers.append(("Content-Length", str(len(body))))
    return body, headers


def _other_body(rng, mime):
    if mime == "image/png":
        return b"\x89PNG\r\n\x1a\n" + bytes(rng.getrandbits(8) for _ in range(rng.randint(50, 400)))
    if mime == "application/json":
        return b'{"items": [%s]}' % b", ".join(b"%d" % rng.randrange(1000) for _ in range(rng.randint(1, 30)))
    if mime == "application/pdf":
        return b"%PDF-1.4\n" + bytes(rng.getrandbits(8) for _ in range(rng.randint(50, 400)))
    return (" ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 80)))).encode("ascii")


def language_pages(n_captures, seed=0, declare=True, bound_share=0.04, revisit_share=0.12, other_share=0.2,
                   arc=False):
    """Yield (capture, http head, payload) for a seeded list of captures; a capture is a dict:

    url, timestamp (14 digits), type ('response' or 'revisit'), mime (a media type), status,
    and for responses: html (an HTML media type), text (the ISO 639-3 language of the page's
    text; English on redirect pages; None for pages without text and other media), declared
    ({'html': (lang, xml_lang), 'meta': content, 'header': value}: what was written, each way
    present or not), ends (html_page's: where each declaring tag ends and the words start, as
    decoded offsets), coding;
    digest: the payload's (base32 SHA-1 of the payload as stored), or for revisits the one it
    refers to (an earlier 200 response's of its URL, or one no record has).
    declare=False: no page declares a language (detection only). ARC files have no revisits.
    """
    from profiler.testing.sample_texts import SENTENCES
    rng = random.Random(seed * 7919 + 23)
    languages = sorted(SENTENCES)
    hosts = []
    for i, (suffix, host_languages) in enumerate(HOST_LANGUAGES):
        for j in range(2):
            labels = suffix.split(",")[::-1]
            hosts.append(("http://%s%d.%s" % (rng.choice(("www.", "news.", "")), i * 2 + j,
                                             ".".join(labels)), host_languages or languages))
    ts = datetime.datetime(2015, 1, 1)
    originals = {}                      # url -> payload digests of its 200 responses
    for _ in range(n_captures):
        ts += datetime.timedelta(seconds=rng.randint(1, 4 * 86400))
        host, host_languages = rng.choice(hosts)
        url = host + rng.choice(("/", "/index.html", "/news/a.html", "/news/b.html", "/about/", "/x?y=1"))
        stamp = ts.strftime("%Y%m%d%H%M%S")
        if not arc and rng.random() < revisit_share:
            if originals.get(url) and rng.random() < 0.8:
                digest = rng.choice(originals[url])
            else:
                digest = "sha1:" + base64.b32encode(hashlib.sha1(b"nothing %d" % rng.getrandbits(32)).digest()).decode()
            capture = {"url": url, "timestamp": stamp, "type": "revisit", "mime": "warc/revisit", "status": "200",
                       "digest": digest}
            yield capture, [("Content-Type", "text/html; charset=utf-8")], b""
            continue
        status = rng.choice(("200",) * 8 + ("404", "301", "500"))
        capture = {"url": url, "timestamp": stamp, "type": "response", "status": status}
        headers = []
        if rng.random() < other_share:
            mime = rng.choice(OTHER_TYPES)
            capture.update(mime=mime, html=False, text=None, declared={}, ends={}, coding="identity")
            if rng.random() < 0.5:
                value = _tag(rng, rng.choice(host_languages))
                capture["declared"] = {"header": value}
                headers.append(("Content-Language", value))
            body = _other_body(rng, mime)
            headers = [("Content-Type", mime)] + headers + [("Content-Length", str(len(body)))]
        else:
            mime = rng.choice(HTML_TYPES[:1] * 9 + HTML_TYPES[1:])
            kind = "redirect" if status == "301" else "empty" if rng.random() < 0.04 else "page"
            language = rng.choice(host_languages)
            declared = page_declarations(rng, language, declare)
            near = None
            if rng.random() < bound_share and ("html" in declared or "meta" in declared):
                near = rng.choice([w for w in ("html", "meta") if w in declared])
            page, ends = html_page(rng, language, declared, near, kind)
            coding = rng.choice(CODINGS)
            body, coded = encode_body(rng, page, coding)
            text = {"page": language, "redirect": "eng", "empty": None}[kind]
            capture.update(mime=mime, html=True, text=text, declared=declared, ends=ends, coding=coding)
            headers.append(("Content-Type", mime + rng.choice(("; charset=utf-8", "; charset=UTF-8", ""))))
            if "header" in declared:
                headers.append(("Content-Language", declared["header"]))
            headers += coded
        if status == "301":
            headers.append(("Location", host + "/"))
        capture["digest"] = "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")
        if status == "200":
            originals.setdefault(url, []).append(capture["digest"])
        yield capture, headers, body


def write_language_warc(path, n_captures, seed=0, gzip=True, arc=False, **options):
    """Write a WARC (warcio's writer; ARC v1 with arc=True) of language_pages; returns the
    captures, each with its digest (the WARC-Payload-Digest written, or for ARC the base32
    SHA-1 of the payload) and length (its gzip member, or its bytes without the blank lines
    after it), in file order."""
    if arc:
        return _write_arc(path, n_captures, seed, gzip, **options)
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter
    rng = random.Random(seed * 104729 + 5)
    captures = []
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=gzip)
        warcinfo = writer.create_warcinfo_record("synthetic-languages.warc",
                                                 {"software": "archive-profiler synthetic_warc"})
        warcinfo.rec_headers.replace_header("WARC-Record-ID", "<urn:uuid:%032x>" % rng.getrandbits(128))
        warcinfo.rec_headers.replace_header("WARC-Date", "2015-01-01T00:00:00Z")
        writer.write_record(warcinfo)
        for capture, headers, body in language_pages(n_captures, seed, **options):
            iso = _iso(capture["timestamp"])
            warc_headers = {"WARC-Date": iso, "WARC-Record-ID": "<urn:uuid:%032x>" % rng.getrandbits(128)}
            http = StatusAndHeaders("%s %s" % (capture["status"], REASONS.get(capture["status"], "Status")),
                                    headers, protocol="HTTP/1.1")
            if capture["type"] == "revisit":
                record = writer.create_revisit_record(capture["url"], capture["digest"], capture["url"], iso,
                                                      http_headers=http, warc_headers_dict=warc_headers)
            else:
                if rng.random() < 0.3:
                    writer.write_record(writer.create_warc_record(
                        capture["url"], "request", payload=io.BytesIO(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
                        warc_headers_dict={"WARC-Date": iso,
                                           "WARC-Record-ID": "<urn:uuid:%032x>" % rng.getrandbits(128)}))
                record = writer.create_warc_record(capture["url"], "response", payload=io.BytesIO(body),
                                                   http_headers=http, warc_headers_dict=warc_headers)
            start = f.tell()
            writer.write_record(record)
            capture["length"] = f.tell() - start - (0 if gzip else 4)
            captures.append(capture)
    return captures


def _write_arc(path, n_captures, seed, gzip, **options):
    """write_language_warc as an ARC v1 file (a filedesc record, then one record per response)."""
    def member(data):
        if not gzip:
            return data
        c = zlib.compressobj(6, zlib.DEFLATED, 31)
        return c.compress(data) + c.flush()
    captures = []
    with open(path, "wb") as f:
        version = b"1 0 archive-profiler\nURL IP-address Archive-date Content-type Archive-length\n"
        f.write(member(b"filedesc://synthetic-languages.arc 0.0.0.0 20150101000000 text/plain %d\n%s\n"
                       % (len(version), version)))
        for capture, headers, body in language_pages(n_captures, seed, arc=True, **options):
            head = "HTTP/1.1 %s %s\r\n" % (capture["status"], REASONS.get(capture["status"], "Status"))
            head += "".join("%s: %s\r\n" % h for h in headers) + "\r\n"
            block = head.encode("utf-8") + body
            line = "%s 192.0.2.1 %s %s %d\n" % (capture["url"], capture["timestamp"], capture["mime"], len(block))
            data = member(line.encode("utf-8") + block + b"\n")
            f.write(data)
            capture["length"] = len(data) - (0 if gzip else 1)
            captures.append(capture)
    return captures


def write_language_cdxj(path, captures, languages):
    """Write the CDXJ index of captures (as write_language_warc returns them), sorted as an
    index is, each line with Common Crawl's ``languages`` field holding languages[i] (None:
    no field). The languages are the caller's: what the captures' pages declare."""
    import json
    import surt
    lines = []
    for capture, language in zip(captures, languages):
        fields = {"url": capture["url"], "mime": capture["mime"], "status": capture["status"],
                  "digest": capture["digest"], "length": str(capture["length"])}
        if language is not None:
            fields["languages"] = language
        lines.append(("%s %s %s\n" % (surt.surt(capture["url"]), capture["timestamp"], json.dumps(fields)))
                     .encode("utf-8"))
    with open(path, "wb") as f:
        f.writelines(sorted(lines))
