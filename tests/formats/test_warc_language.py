"""The language of WARC/ARC responses (spec section 2, lang): <html lang>, then <meta
http-equiv="content-language">, then the Content-Language header, read from the payload's
first 64 KiB after transfer and content decoding; revisits take their original's; optional
detection (--detect-language). Both readers (warcio, fastwarc) give the same captures, and a
WARC's language profile is the profile of the CDXJ that carries the same languages and the
brute-force oracle's."""

import gzip
import io
import json
import os
import subprocess
import sys
import zlib

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler import extras
from profiler.formats import payload, warc, warc_fast
from profiler.run.profile import run_profile
from profiler.model.policy import load as load_policy
from profiler.testing import sample_texts, synthetic_warc

from helpers.oracle import read_profile
from helpers.warc_languages import BOUND, data_lines, expected_language, oracle

pytest.importorskip("fastwarc.warc")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CREATED = "2026-01-01T00:00:00Z"
FRENCH = " ".join(sample_texts.SENTENCES["fra"]).encode("utf-8")


# ---------------------------------------------------------------- one record at a time

def response(body, headers=(), mime="text/html; charset=utf-8", rec_type="response", uri="http://example.com/"):
    """Bytes of a WARC response record whose HTTP payload is body (as stored), headers as given."""
    if rec_type == "resource":
        block, content_type = body, mime
    else:
        head = "HTTP/1.1 200 OK\r\n"
        if mime:
            head += "Content-Type: %s\r\n" % mime
        head += "".join("%s: %s\r\n" % h for h in headers)
        if not any(name.lower() in ("content-length", "transfer-encoding") for name, _ in headers):
            head += "Content-Length: %d\r\n" % len(body)
        block, content_type = head.encode("utf-8") + b"\r\n" + body, "application/http; msgtype=response"
    warc_head = ("WARC/1.0\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:1>\r\nWARC-Date: 2020-01-02T03:04:05Z\r\n"
                 "WARC-Target-URI: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
                 % (rec_type, uri, content_type, len(block)))
    return warc_head.encode("ascii") + block + b"\r\n\r\n"


def read_both(path):
    """The captures of a file, read by both readers, which must agree."""
    got = list(warc.iter_captures(str(path)))
    assert list(warc_fast.iter_captures(str(path))) == got
    return got


def languages(tmp_path, *records, gz=True):
    """The lang of each capture of a file holding records (a gzip member each, or plain)."""
    path = tmp_path / ("r.warc.gz" if gz else "r.warc")
    path.write_bytes(b"".join(gzip.compress(r) if gz else r for r in records))
    got = read_both(path)
    assert all(not isinstance(c, str) for c in got), got
    return [c.lang for c in got]


def page(html_attrs="", head="", body=FRENCH, before=b""):
    """An HTML page (bytes): before, then <html html_attrs>, a head holding head, a French body."""
    return (before + b"<!DOCTYPE html>\n<html" + html_attrs.encode() + b">\n<head>\n<meta charset=utf-8>\n"
            + head.encode() + b"<title>t</title>\n</head>\n<body>\n<p>" + body + b"</p>\n</body>\n</html>\n")


META_DE = '<meta http-equiv="content-language" content="de-DE">'


@pytest.mark.parametrize("html_attrs, head, headers, code", [
    (' lang="ar-EG"', "", (), "ara"),                                          # <html lang>
    (" LANG=zh-Hant class=x", "", (), "zho"),
    (' xml:lang="fr-CA"', "", (), "fra"),                                      # xml:lang alone
    ("", '<meta content="es, en" HTTP-EQUIV="Content-Language"/>', (), "spa"),  # the meta
    ("", "", (("Content-Language", "iw, en;q=0.5"),), "heb"),                  # the header
    ("", "", (), "unk"),                                                       # none
])
def test_each_way_of_declaring(tmp_path, html_attrs, head, headers, code):
    for gz in (True, False):
        assert languages(tmp_path, response(page(html_attrs, head), headers), gz=gz) == [code]


@pytest.mark.parametrize("html_attrs, head, header, code", [
    (' lang="fr"', META_DE, "es", "fra"),            # html before meta before header
    ("", META_DE, "es", "deu"),                      # meta before header
    (' lang="fr"', "", "es", "fra"),
    (' lang="und"', META_DE, "es", "deu"),           # a value naming no language falls through
    (' lang=""', "", "es", "spa"),
    (' lang="" xml:lang="it"', META_DE, "es", "ita"),  # an empty lang: xml:lang
    (' lang="pt" xml:lang="it"', "", None, "por"),   # lang before xml:lang
    (' lang="x-default"', '<meta http-equiv="content-language" content="zxx">', "ja", "jpn"),
    (' lang="mul"', '<meta http-equiv="content-language" content="">', "und", "unk"),
    ("", '<meta name="content-language" content="de">', "es", "spa"),   # not http-equiv
])
def test_precedence(tmp_path, html_attrs, head, header, code):
    headers = (("Content-Language", header),) if header is not None else ()
    assert languages(tmp_path, response(page(html_attrs, head), headers)) == [code]


def test_declarations_that_do_not_count(tmp_path):
    in_comment = page(before=b'<!-- <html lang="ja"> --><!--[if IE]><html lang="ko"><![endif]-->')
    in_body = page(body=b'<meta http-equiv="content-language" content="ru">' + FRENCH)
    after_head = page(head="</head><body>" + META_DE)
    assert languages(tmp_path, response(in_comment), response(in_body), response(after_head),
                     response(in_comment, (("Content-Language", "sv"),))) == ["unk", "unk", "unk", "swe"]


def encode(body, coding, chunk=1000):
    """(payload as stored, its HTTP headers) of body in a coding."""
    headers = []
    if coding in ("gzip", "x-gzip", "chunked+gzip"):
        body = gzip.compress(body)
        headers.append(("Content-Encoding", "gzip" if coding != "x-gzip" else "x-gzip"))
    elif coding in ("deflate", "deflate-raw"):
        c = zlib.compressobj(6, zlib.DEFLATED, 15 if coding == "deflate" else -15)
        body = c.compress(body) + c.flush()
        headers.append(("Content-Encoding", "deflate"))
    elif coding == "mislabelled-gzip":                  # said gzip, stored decoded: read as it is
        headers.append(("Content-Encoding", "gzip"))
    elif coding == "br":                                # a coding not undone: read as stored
        headers.append(("Content-Encoding", "br"))
    if coding.startswith("chunked"):
        body = b"".join(b"%x\r\n" % len(body[i:i + chunk]) + body[i:i + chunk] + b"\r\n"
                        for i in range(0, len(body), chunk)) + b"0\r\n\r\n"
        headers.append(("Transfer-Encoding", "chunked"))
    elif coding == "not-chunked":                       # said chunked, stored de-chunked
        headers.append(("Transfer-Encoding", "chunked"))
    return body, tuple(headers)


CODINGS = ["identity", "chunked", "gzip", "x-gzip", "chunked+gzip", "deflate", "deflate-raw",
           "mislabelled-gzip", "not-chunked"]


@pytest.mark.parametrize("coding", CODINGS + ["br"])
def test_decoding(tmp_path, coding):
    body, headers = encode(page(' lang="nl-BE"'), coding, chunk=7)
    meta_body, meta_headers = encode(page(head=META_DE), coding, chunk=7)
    assert languages(tmp_path, response(body, headers), response(meta_body, meta_headers)) == ["nld", "deu"]
    assert languages(tmp_path, response(body, headers + (("Content-Language", "pl"),))) == ["nld"]
    binary = b"\x1b\x8f\x00\x00" + bytes(range(256)) * 4        # what a br body looks like: no HTML
    assert languages(tmp_path, response(binary, headers + (("Content-Language", "pl"),))) == ["pol"]


def at_offset(tag, end, where="html"):
    """A page whose declaring tag (bytes) ends, its '>' included, at decoded offset end."""
    if where == "html":
        fill = end - len(b"<!---->") - len(tag)
        return b"<!--" + b"x" * fill + b"-->" + tag + b"<head></head><body><p>" + FRENCH + b"</p>" + b"y" * 5000
    start = b"<html><head><style>"
    fill = end - len(start) - len(b"</style>") - len(tag)
    return start + b"p{}" * (fill // 3) + b" " * (fill % 3) + b"</style>" + tag + b"</head><body>" + b"y" * 5000


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("where, tag", [("html", b'<html lang="fil">'),
                                        ("meta", b'<meta http-equiv="content-language" content="fil">')])
def test_the_64_kib_bound(tmp_path, coding, where, tag):
    """A declaration whose tag ends within the decoded payload's first 64 KiB counts; one that
    ends past it does not, even when its value is whole (and 'fil' cut to 'fi' is never Finnish)."""
    records = []
    for end in (BOUND - 1, BOUND, BOUND + 1, BOUND + 2, BOUND + 4, BOUND + 9):
        doc = at_offset(tag, end, where)
        assert doc.index(tag) + len(tag) == end
        body, headers = encode(doc, coding)
        records.append(response(body, headers + (("Content-Language", "es"),)))
    assert languages(tmp_path, *records) == ["fil", "fil", "spa", "spa", "spa", "spa"]


def test_a_short_payload_is_read_whole(tmp_path):
    """Under 64 KiB nothing is cut: a tag that ends the payload counts."""
    body, headers = encode(b"<html lang=fil>", "chunked+gzip", chunk=3)
    assert languages(tmp_path, response(body, headers), response(b"<html lang=fil")) == ["fil", "fil"]


def test_other_media_read_only_the_header(tmp_path):
    html = page(' lang="fr"')
    assert languages(tmp_path, response(html, (("Content-Language", "de"),), mime="image/png"),
                     response(html, mime="text/plain"),
                     response(b"{}", (("Content-Language", "ko-KR"),), mime="application/json"),
                     response(html, mime="application/xhtml+xml")) == ["deu", "unk", "kor", "fra"]


def test_resource_records_and_arc_records(tmp_path):
    assert languages(tmp_path, response(page(' lang="tr"'), rec_type="resource")) == ["tur"]
    arc = tmp_path / "a.arc"
    http = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Language: sv\r\n\r\n"
    records = [http + page(' lang="el"'), http + page()]
    arc.write_bytes(b"".join(b"http://example.com/%d 192.0.2.1 20200102030405 text/html %d\n%s\n"
                             % (i, len(r), r) for i, r in enumerate(records)))
    assert [c.lang for c in read_both(arc)] == ["ell", "swe"]


def test_the_digest_is_of_the_whole_payload_read_in_the_same_pass(tmp_path):
    import base64
    import hashlib
    body, headers = encode(page(' lang="ru"') + b"z" * 300000, "chunked+gzip", chunk=4096)
    got = languages(tmp_path, response(body, headers))
    path = tmp_path / "r.warc.gz"
    assert got == ["rus"]
    assert read_both(path)[0].digest == base64.b32encode(hashlib.sha1(body).digest()).decode()


HOSTILE = {
    "quotes": b'<html lang="' + b'"' * 200000,
    "unterminated comment": b"<!--" + b"<html lang=fr>" * 10000,
    "many html tags": b"<html " * 40000,
    "nul bytes": b"\x00" * 100000 + b"<html lang=fr>",
    "utf-16": "\ufeff<html lang=\"fr\"><head></head>".encode("utf-16-le"),
    "random bytes": bytes(range(256)) * 400,
    "long attribute": b"<html data-x=" + b"a" * 300000 + b' lang="fr">',
    "meta storm": b"<html><head>" + b'<meta http-equiv="content-language" content="' * 5000,
}
BROKEN = {   # (payload as stored, headers)
    "truncated gzip": (gzip.compress(page(' lang="fr"') * 50)[:300], (("Content-Encoding", "gzip"),)),
    "gzip then garbage": (gzip.compress(b"<html lang=fr>")[:-8] + b"\xff" * 500, (("Content-Encoding", "gzip"),)),
    "huge chunk size": (b"ffffffffffffffff\r\n<html lang=fr>", (("Transfer-Encoding", "chunked"),)),
    "negative chunk size": (b"-5\r\n\r\n<html lang=fr>", (("Transfer-Encoding", "chunked"),)),
    "size line without end": (b"1" * 100 + b"<html lang=fr>", (("Transfer-Encoding", "chunked"),)),
    "chunk without its CRLF": (b"3\r\n<htXXml lang=fr>", (("Transfer-Encoding", "chunked"),)),
    "one-byte chunks": (b"".join(b"1\r\n%c\r\n" % c for c in page(' lang="fr"')) + b"0\r\n\r\n",
                        (("Transfer-Encoding", "chunked"),)),
    "trailers": (b"5\r\n<html\r\n0\r\nX-T: 1\r\n\r\n", (("Transfer-Encoding", "chunked"),)),
    "long header": (page(), (("Content-Language", "en-" + "x" * 20000),)),
    "header garbage": (page(), (("Content-Language", "\x01\x02;;,,=="),)),
}


@pytest.mark.parametrize("name", sorted(HOSTILE) + sorted(BROKEN))
def test_hostile_payloads_give_a_language_or_unk(tmp_path, name):
    body, headers = BROKEN[name] if name in BROKEN else (HOSTILE[name], ())
    for gz in (True, False):
        (code,) = languages(tmp_path, response(body, headers), gz=gz)
        assert code == "unk" or (len(code) == 3 and code.isalpha() and code.islower())


def test_hostile_results(tmp_path):
    assert languages(tmp_path, *(response(HOSTILE[n]) for n in ("utf-16", "nul bytes", "quotes"))) == \
        ["fra", "unk", "unk"]                           # a page starting with NUL bytes reads as UTF-16
    assert languages(tmp_path, *(response(*BROKEN[n]) for n in ("one-byte chunks", "chunk without its CRLF",
                                                                 "size line without end"))) == ["fra", "fra", "fra"]


def huge_warc(path, mb):
    """A WARC of two HTML records: a gzip bomb declared as Content-Encoding (mb MB decoded, a
    few hundred KB stored) and mb MB of HTML stored as it is (an unterminated lang value);
    written a MB at a time."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = c.compress(b"<html lang=") + b"".join(c.compress(b"a" * (1 << 20)) for _ in range(mb)) + c.flush()
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html lang=\""
    warc_head = (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Date: 2020-01-02T03:04:05Z\r\n"
                 b"WARC-Target-URI: http://example.com/b\r\nContent-Type: application/http; msgtype=response\r\n"
                 b"Content-Length: %d\r\n\r\n" % (len(http) + (mb << 20)))
    with open(path, "wb") as f:
        f.write(gzip.compress(response(bomb, (("Content-Encoding", "gzip"),))))
        member = zlib.compressobj(1, zlib.DEFLATED, 31)
        f.write(member.compress(warc_head + http))
        for _ in range(mb):
            f.write(member.compress(b"x" * (1 << 20)))
        f.write(member.compress(b"\r\n\r\n") + member.flush())


# peak RSS of this program only: VmHWM (ru_maxrss keeps the parent's peak across fork and exec)
READ = ("import sys; from profiler.formats import warc, warc_fast; "
        "read = warc.iter_captures if sys.argv[2] == 'warcio' else warc_fast.iter_captures; "
        "got = list(read(sys.argv[1])); "
        "peak = [line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:')]; "
        "print(len(got), got[0].lang, got[-1].lang, peak[0])")


@pytest.mark.parametrize("reader", ["warcio", "fastwarc"])
def test_memory_stays_bounded_on_huge_html_records(tmp_path, reader):
    """64 KiB of each record is decoded for its language; the rest streams through the digest."""
    if not os.path.exists("/proc/self/status"):
        pytest.skip("peak memory is read from /proc/self/status (Linux)")
    path = tmp_path / "huge.warc.gz"
    huge_warc(str(path), 160)
    r = subprocess.run([sys.executable, "-c", READ, str(path), reader], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    n, first, last, rss_kb = r.stdout.split()
    assert (n, first, last) == ("2", "unk", "unk")
    assert int(rss_kb) < 100 * 1024, rss_kb           # KB, for records of 160 MB


# ---------------------------------------------------------------- generated WARCs and ARCs

@pytest.mark.parametrize("gz, arc", [(True, False), (False, False), (True, True), (False, True)])
def test_generated_captures_have_the_languages_they_declare(tmp_path, gz, arc):
    path = tmp_path / "g"
    captures = synthetic_warc.write_language_warc(str(path), 400, seed=11, gzip=gz, arc=arc, bound_share=0.15)
    got = [c for c in read_both(path) if not isinstance(c, str)]
    assert len(got) == len(captures)
    ways = {(w, c["coding"]) for c in captures if c["type"] == "response" for w in c["declared"]}
    assert {w for w, _ in ways} == {"html", "meta", "header"}
    assert {c for _, c in ways} == set(synthetic_warc.CODINGS)
    assert sum(1 for c in captures if c.get("ends") and max(c["ends"].values()) > BOUND) > 5
    for capture, found in zip(captures, got):
        if capture["type"] == "response":
            assert found.lang == (expected_language(capture) or "unk"), capture


@pytest.mark.parametrize("arc", [False, True])
def test_the_generator_is_seeded(tmp_path, arc):
    a, b, c = (tmp_path / n for n in "abc")
    first = synthetic_warc.write_language_warc(str(a), 80, seed=4, arc=arc)
    assert synthetic_warc.write_language_warc(str(b), 80, seed=4, arc=arc) == first
    synthetic_warc.write_language_warc(str(c), 80, seed=5, arc=arc)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()


def write_inputs(tmp_path, n=300, seed=0, **options):
    """Generated inputs (a gzip WARC, a plain WARC, a gzip ARC) and their captures."""
    paths, captures = [], []
    for name, gz, arc in (("a.warc.gz", True, False), ("b.warc", False, False), ("c.arc.gz", True, True)):
        path = str(tmp_path / name)
        captures += synthetic_warc.write_language_warc(path, n, seed=seed + len(paths), gzip=gz, arc=arc, **options)
        paths.append(path)
    return paths, captures


def profile(inputs, out, **kw):
    run_profile([str(p) for p in inputs], str(out), policy="lang", created=CREATED, **kw)
    return data_lines(out)


def test_profile_of_warcs_equals_profile_of_their_cdxj_and_the_oracle(tmp_path):
    paths, captures = write_inputs(tmp_path, bound_share=0.1)
    cdxj = tmp_path / "index.cdxj"
    synthetic_warc.write_language_cdxj(str(cdxj), captures, [expected_language(c) for c in captures])
    from_warcs = profile(paths, tmp_path / "warcs.cdxj")
    assert from_warcs == profile([cdxj], tmp_path / "cdxj.cdxj")
    assert profile(paths, tmp_path / "fast.cdxj", warc_reader="fastwarc") == from_warcs
    assert read_profile(str(tmp_path / "warcs.cdxj")) == oracle(captures, load_policy("lang"))
    keys = {line.split(b" ")[4] for line in from_warcs}
    assert {b"eng", b"fra", b"zho", b"ara", b"unk", b"-"} <= keys and len(keys) > 15
    revisits = [c for c in captures if c["type"] == "revisit"]
    assert revisits and any(c["digest"] not in {o["digest"] for o in captures if o["type"] == "response"}
                            for c in revisits)           # revisits with and without an original


def test_a_policy_without_languages_reads_none(tmp_path):
    """Its WARC/ARC splits say so (read_languages: false): payloads are only hashed, the
    captures are the same but for their lang, and so is the profile."""
    from profiler.formats import registry
    paths, captures = write_inputs(tmp_path, n=100)
    for path in paths:
        full = [c for c in warc.iter_captures(path) if not isinstance(c, str)]
        for read in (warc.iter_captures, warc_fast.iter_captures):
            bare = [c for c in read(path, languages=False) if not isinstance(c, str)]
            assert [c._replace(lang="unk") for c in bare] == [c._replace(lang="unk") for c in full]
            assert {c.lang for c in bare} == {"unk"}
    splits = registry.without_languages([{"format": "warc", "path": paths[0]}, {"format": "cdxj", "path": "x"}])
    assert [s.get("read_languages") for s in splits] == [False, None]
    assert {c.lang for c in registry.captures(splits[0]) if not isinstance(c, str)} == {"unk"}
    cdxj = tmp_path / "index.cdxj"
    synthetic_warc.write_language_cdxj(str(cdxj), captures, [expected_language(c) for c in captures])
    for policy in ("default", "full"):
        run_profile(paths, str(tmp_path / "w.cdxj"), policy=policy, created=CREATED)
        run_profile([str(cdxj)], str(tmp_path / "c.cdxj"), policy=policy, created=CREATED)
        assert data_lines(tmp_path / "w.cdxj") == data_lines(tmp_path / "c.cdxj")


def test_revisits_take_the_language_of_their_original(tmp_path):
    import base64
    import hashlib
    body = page(' lang="ar"')
    digest = "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()

    def revisit(date, digest):
        block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
        return (b"WARC/1.0\r\nWARC-Type: revisit\r\nWARC-Date: %s\r\nWARC-Target-URI: http://example.com/\r\n"
                b"WARC-Payload-Digest: %s\r\nContent-Type: application/http; msgtype=response\r\n"
                b"Content-Length: %d\r\n\r\n%s\r\n\r\n" % (date, digest.encode(), len(block), block))
    path = tmp_path / "r.warc.gz"
    path.write_bytes(b"".join(gzip.compress(r) for r in (
        response(body), revisit(b"2021-01-01T00:00:00Z", digest), revisit(b"2022-01-01T00:00:00Z", "sha1:NONE"))))
    lines = profile([path], tmp_path / "p.cdxj")
    root = {tuple(line.split(b" ")[1:5]): json.loads(line.split(b" ", 5)[5]) for line in lines
            if line.startswith(b"* ")}
    assert root[(b"-", b"-", b"-", b"ara")]["urim"]["total"] == 2      # the response and its revisit
    assert root[(b"-", b"-", b"-", b"unk")]["urim"]["total"] == 1      # the revisit without an original


# ---------------------------------------------------------------- properties

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rng=st.randoms(use_true_random=False), language=st.sampled_from(sorted(sample_texts.SENTENCES)),
       near=st.sampled_from([None, None, "html", "meta"]), coding=st.sampled_from(synthetic_warc.CODINGS),
       gz=st.booleans())
def test_random_pages_have_the_language_the_spec_gives_them(tmp_path_factory, rng, language, near, coding, gz):
    declared = synthetic_warc.page_declarations(rng, language, True)
    if near not in declared:
        near = None
    html, ends = synthetic_warc.html_page(rng, language, declared, near)
    body, headers = synthetic_warc.encode_body(rng, html, coding)
    if "header" in declared:
        headers.append(("Content-Language", declared["header"]))
    capture = {"type": "response", "html": True, "declared": declared, "ends": ends}
    tmp = tmp_path_factory.mktemp("page")
    assert languages(tmp, response(body, headers), gz=gz) == [expected_language(capture) or "unk"]


def warcio_start(raw, headers):
    """The first 64 KiB warcio's content_stream() gives of a payload."""
    from warcio.bufferedreaders import BufferedReader, ChunkedDataReader
    h = dict(headers)
    encoding = h.get("Content-Encoding")
    stream = io.BytesIO(raw)
    if h.get("Transfer-Encoding") == "chunked":
        stream = ChunkedDataReader(stream, decomp_type=encoding)
    elif encoding:
        stream = BufferedReader(stream, decomp_type=encoding)
    return stream.read(BOUND + 1)[:BOUND]


@settings(max_examples=80, deadline=None)
@given(body=st.one_of(st.binary(max_size=3000), st.binary(min_size=1, max_size=40).map(lambda b: b * 5000),
                      st.binary(max_size=100).map(lambda b: b"<html" + b * 1000)),
       coding=st.sampled_from(["identity", "chunked", "gzip", "chunked+gzip", "deflate", "deflate-raw",
                               "mislabelled-gzip", "not-chunked"]),
       chunk=st.integers(1, 70000))
def test_decoded_start_is_what_warcio_content_stream_gives(body, coding, chunk):
    raw, headers = encode(body, coding, chunk)
    start = payload.read_start(io.BytesIO(raw), dict(headers).get)
    assert start.data == warcio_start(raw, headers) and start.raw <= len(raw)
    if coding not in ("not-chunked", "mislabelled-gzip"):          # well formed
        assert start.data == body[:BOUND] and start.cut == (len(body) >= BOUND)
    elif body[:1] == b"<":                             # HTML that is not what its headers say
        assert start.data == body[:BOUND]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=st.binary(max_size=2000), te=st.sampled_from([None, "chunked"]),
       ce=st.sampled_from([None, "gzip", "deflate", "br"]), language=st.sampled_from([None, "fr", "und", "x" * 80]))
def test_any_payload_gives_a_capture(tmp_path_factory, raw, te, ce, language):
    headers = tuple((n, v) for n, v in (("Transfer-Encoding", te), ("Content-Encoding", ce),
                                        ("Content-Language", language)) if v)
    (code,) = languages(tmp_path_factory.mktemp("any"), response(raw, headers + (("Content-Length", str(len(raw))),)))
    assert code == "unk" or (len(code) == 3 and code.isalpha() and code.islower())


# ---------------------------------------------------------------- --detect-language

def about(path):
    with open(path, "rb") as f:
        return next(json.loads(line[6:]) for line in f if line.startswith(b'!meta {"') and b'"policy"' in line)


def test_detection_gives_pages_that_declare_nothing_the_language_of_their_text(tmp_path):
    """With the flag (set in every split of the manifest, read by the local runner's tasks),
    the profile is that of the CDXJ whose pages carry their text's language; without it, unk."""
    paths, captures = write_inputs(tmp_path, n=150, declare=False)
    pages = [c for c in captures if c["type"] == "response" and c["html"]]
    assert pages and all(expected_language(c) is None for c in pages)
    assert len({c["text"] for c in pages}) > 12 and None in {c["text"] for c in pages}
    detected, declared = tmp_path / "detected.cdxj", tmp_path / "declared.cdxj"
    synthetic_warc.write_language_cdxj(str(detected), captures, [expected_language(c, True) for c in captures])
    synthetic_warc.write_language_cdxj(str(declared), captures, [expected_language(c) for c in captures])
    out = tmp_path / "local.cdxj"
    lines = profile(paths, out, runner="local", cores=2, detect_language=True)
    assert lines == profile([detected], tmp_path / "d.cdxj")
    assert read_profile(str(out)) == oracle(captures, load_policy("lang"), detect=True)
    assert profile(paths, tmp_path / "fast.cdxj", warc_reader="fastwarc", detect_language=True) == lines
    assert profile(paths, tmp_path / "plain.cdxj") == profile([declared], tmp_path / "u.cdxj") != lines
    meta = about(out)["language_detection"]
    assert meta["detector"] == "CLD2" and meta["package"].startswith("pycld2 ") and "Resiliparse" in meta["text"]
    assert "language_detection" not in about(tmp_path / "plain.cdxj")


def test_declared_languages_win_over_detection(tmp_path):
    french = page(' lang="de"')
    path = tmp_path / "r.warc.gz"
    path.write_bytes(b"".join(gzip.compress(response(b)) for b in (
        french, page(), page(body=" ".join(sample_texts.SENTENCES["jpn"]).encode()), page(body=b"Hello"))))
    got = [c.lang for c in warc.iter_captures(str(path), detect_language=True)]
    assert got == [c.lang for c in warc_fast.iter_captures(str(path), detect_language=True)]
    assert got == ["deu", "fra", "jpn", "unk"]                     # too few letters: unk
    header = tmp_path / "h.warc.gz"
    header.write_bytes(gzip.compress(response(page(), (("Content-Language", "it"),))))
    assert [c.lang for c in warc.iter_captures(str(header), detect_language=True)] == ["ita"]


def test_index_inputs_ignore_detection(tmp_path):
    paths, captures = write_inputs(tmp_path, n=60, declare=False)
    cdxj = tmp_path / "index.cdxj"
    synthetic_warc.write_language_cdxj(str(cdxj), captures, [expected_language(c) for c in captures])
    assert profile([cdxj], tmp_path / "a.cdxj", detect_language=True) == profile([cdxj], tmp_path / "b.cdxj")


def test_detection_with_a_policy_without_languages_warns_and_detects_nothing(tmp_path, caplog):
    import logging
    paths, _ = write_inputs(tmp_path, n=30, declare=False)
    logger = logging.getLogger("archive-profiler")    # earlier CLI runs set its level, stop its propagation
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING, logger="archive-profiler"):
            run_profile(paths, str(tmp_path / "p.cdxj"), policy="default", detect_language=True, created=CREATED)
    finally:
        logger.removeHandler(caplog.handler)
    assert "--detect-language does nothing: policy default has no lang level" in caplog.text
    assert "language_detection" not in about(tmp_path / "p.cdxj")


@pytest.mark.parametrize("missing", ["pycld2", "resiliparse"])
def test_detection_without_the_extra_is_a_one_line_error(tmp_path, missing):
    path = tmp_path / "a.warc.gz"
    synthetic_warc.write_language_warc(str(path), 10, seed=1)
    code = ("import sys; sys.modules[%r] = None; from profiler.cli.main import main; sys.exit(main(sys.argv[1:]))"
            % missing)
    out = tmp_path / "p.cdxj"
    out.write_bytes(b"an earlier profile\n")
    r = subprocess.run([sys.executable, "-c", code, "profile", str(path), "-o", str(out), "--policy", "lang",
                        "--detect-language"], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [r.stderr.strip()]
    assert "--detect-language needs the detect extra" in r.stderr and extras.install_command("detect") in r.stderr
    assert out.read_bytes() == b"an earlier profile\n"
