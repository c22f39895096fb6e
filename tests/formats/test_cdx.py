"""Tests for profiler.formats.cdx: CDX legends, layouts and lines -> captures."""

import pytest

from profiler.formats import cdx

from helpers.captures import expected, fields
from helpers.paths import shared_data

L11 = "N b a m s k r M S V g"
L10 = "N b a m s k r M V g"
L9 = "N b a m s k r V g"
L7 = "N b a m s k S"

# Real lines, copied from files in ../shared/data.
# pywb/cdx/example.cdx
PYWB_LEGEND = b" CDX N b a m s k r M S V g"
PYWB_200 = (b"com,example)/?example=1 20140103030321 http://example.com?example=1 text/html 200 "
            b"B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 1043 333 example.warc.gz")
PYWB_REVISIT = (b"com,example)/?example=1 20140103030341 http://example.com?example=1 warc/revisit - "
                b"B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 553 1864 example.warc.gz")
# pywb/non-surt-cdx/example-non-surt.cdx
NON_SURT = (b"iana.org/domains/example 20140128051539 http://www.iana.org/domains/example text/html 302 "
            b"JZ622UA23G5ZU6Y3XAKH4LINONUEICEG - - 577 2907 example.warc.gz")
# archive_profiler/index-1.cdx (10 fields, Archive-It)
AIT_LEGEND = b" CDX N b a m s k r M V g"
AIT_FILEDESC = (b"- 20081119011153 filedesc://ARCHIVEIT-1234-MOLLYASTRID-NASARSS-20081119011153-00000-"
                b"ia400030.us.archive.org.arc arc/filedesc0.1.0 - MJ4QD54ETXIS7R64T6N6ZV6EN3JU2MDA - - 0 "
                b"ARCHIVEIT-1234-MOLLYASTRID-NASARSS-20081119011153-00000-ia400030.us.archive.org.arc.gz")
AIT_200 = (b"anon.nasa-global.edgesuite.net/anon.nasa-global/ksc/ksc_042507_chandra_2.ram 20081119011159 "
           b"http://anon.nasa-global.edgesuite.net/anon.nasa-global/ksc/ksc_042507_chandra_2.ram "
           b"audio/x-pn-realaudio 200 B3WF6MRGG7G2AKW4R4JNL2SBEGTMHREA - - 140887 "
           b"ARCHIVEIT-1234-MOLLYASTRID-NASARSS-20081119011153-00000-ia400030.us.archive.org.arc.gz")
# netarchivesuite/NAS-20100909163324-00000-mette.kb.dk.warc.cdx (9 fields, no legend)
NAS_DNS = (b"dns:netarkivet.dk 20100909163324 dns:netarkivet.dk text/dns - "
           b"LWQ2MLCVJN5ILUH5A2FON2H66ZGQYW5R - 656 NAS-20100909163324-00000-mette.kb.dk.warc")
NAS_302 = (b"netarkivet.dk/ 20100909163328 http://netarkivet.dk/ text/html 302 "
           b"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ http://netarkivet.dk/index-da.php 2438 "
           b"NAS-20100909163324-00000-mette.kb.dk.warc")
# netarchivesuite/fyensdk.cdx (NetarchiveSuite 8 fields: url ip date mime length file offset md5)
FYENS = (b"http://www.fyens.dk/picturecache/article/getpicture.php?pictureid=117715&Width=198 "
         b"194.255.126.118 20040511211249 image/jpeg 6345 fyensdk.arc 6950 56bf412eaebc3a9d639898a71dbe614c")
# edgi-wayback (7-field Wayback CDX API output)
EDGI = (b"com,usatoday)/2000/century/tech/003d.htm 20011120210446 "
        b"http://www.usatoday.com:80/2000/century/tech/003d.htm text/html 200 "
        b"EJTUZEVOPPFGLXXQK2KV4DPFRSOULYVN 3823")
EDGI_MONTH_00 = (b"com,usatoday)/2000/century/tech/004.htm 20000012170449 "
                 b"http://www.usatoday.com:80/2000/century/tech/004.htm text/html 200 "
                 b"RT4WYWDBYOFDEIJ2ZI2HD5UMT7UH7LRC 6566")


def parse(letters, line):
    return cdx.make_parser(letters)(line)


# legends

@pytest.mark.parametrize("line", [PYWB_LEGEND, b"CDX N b a m s k r M S V g", b" CDX N b a m s k r M S V g\r"])
def test_legend(line):
    assert cdx.is_legend(line)
    assert cdx.legend_letters(line) == L11


def test_legend_ait():
    assert cdx.legend_letters(AIT_LEGEND) == L10


def test_not_legend():
    assert not cdx.is_legend(PYWB_200)
    assert not cdx.is_legend(b"CDXJ")


@pytest.mark.parametrize("line", [b" CDX N a m s", b" CDX b m s k", b" CDX"])
def test_legend_without_timestamp_or_url(line):
    with pytest.raises(ValueError):
        cdx.legend_letters(line)


def test_legend_with_only_original_url():
    assert cdx.legend_letters(b" CDX a b m s") == "a b m s"


# layouts

def test_eleven_fields():
    assert parse(L11, PYWB_200) == expected(
        urlkey="com,example)/?example=1", timestamp="20140103030321", mime="text/html", status="200",
        digest="B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A", length=1043)


def test_revisit_flag_from_mime():
    cap = parse(L11, PYWB_REVISIT)
    assert cap.mime == "warc/revisit"
    assert cap.status == "unk"
    assert cap.length == 553
    assert cap.revisit is True


def test_ten_fields_archive_it():
    cap = parse(L10, AIT_200)
    assert cap.urlkey == "net,edgesuite,nasa-global,anon)/anon.nasa-global/ksc/ksc_042507_chandra_2.ram"
    assert fields(cap, "timestamp", "mime", "status", "digest") == ("20081119011159", "audio/x-pn-realaudio", "200", "B3WF6MRGG7G2AKW4R4JNL2SBEGTMHREA")
    assert cap.length == 0    # no S field in the 10-field layout
    assert cap.revisit is False


def test_nine_fields():
    cap = parse(L9, NAS_302)
    assert cap == expected(urlkey="dk,netarkivet)/", timestamp="20100909163328", mime="text/html", status="302",
                           digest="3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")


def test_seven_fields_wayback_api():
    assert parse(L7, EDGI) == expected(
        urlkey="com,usatoday)/2000/century/tech/003d.htm", timestamp="20011120210446", mime="text/html",
        status="200", digest="EJTUZEVOPPFGLXXQK2KV4DPFRSOULYVN", length=3823)


def test_netarchivesuite_eight_fields():
    cap = parse(cdx.NETARCHIVESUITE_LAYOUT, FYENS)
    assert cap == expected(urlkey="dk,fyens)/picturecache/article/getpicture.php?pictureid=117715&width=198",
                           timestamp="20040511211249", mime="image/jpeg", digest="56BF412EAEBC3A9D639898A71DBE614C",
                           length=6345)


def test_layouts_by_field_count_match_their_count():
    for n, letters in cdx.LAYOUTS_BY_FIELD_COUNT.items():
        assert len(letters.split()) == n
    assert len(cdx.NETARCHIVESUITE_LAYOUT.split()) == 8


# urlkeys

def test_non_surt_urlkey_recomputed_from_original_url():
    cap = parse(L11, NON_SURT)
    assert cap.urlkey == "org,iana)/domains/example"


def test_non_surt_query_url():
    line = PYWB_200.replace(b"com,example)/?example=1", b"example.com/?example=1", 1)
    assert parse(L11, line).urlkey == "com,example)/?example=1"


def test_dns_url_keeps_its_form():
    cap = parse(L9, NAS_DNS)
    assert cap.urlkey == "dns:netarkivet.dk"
    assert ")" not in cap.urlkey
    assert fields(cap, "mime", "status") == ("text/dns", "unk")


def test_urlkey_without_original_url_uses_the_key():
    assert parse("N b", b"example.com/a 20140101").urlkey == "com,example)/a"


def test_urlkey_function():
    assert cdx.urlkey(b"com,example)/", b"http://other.org/") == "com,example)/"
    assert cdx.urlkey(b"example.com/", b"http://example.com/x") == "com,example)/x"
    assert cdx.urlkey(b"-", b"-") is None
    assert cdx.urlkey(None, None) is None


@pytest.mark.parametrize("key, url, expected", [
    (b"(com,example,)/a", b"http://example.com/a", "com,example)/a"),
    (b"(com,example,)/a", b"-", "com,example)/a"),
    (b"(com,example,www,)/a?b=1", b"-", "com,example)/a?b=1"),            # canonicalised as surt() does
    (b"(com,example,www,:8080)/c", b"-", "com,example:8080)/c"),
    (b"http://(com,example,)/", b"-", "com,example)/"),
    (b"https://(org,archive,www,)/details/x", b"-", "org,archive)/details/x"),
    (b"(com,example,)/a", b"http://www.example.com/a", "com,example)/a"),
    (b"()/a", b"-", None),
])
def test_a_surt_in_heritrix_s_form_is_read_as_its_url(key, url, expected):
    """Heritrix writes SURTs as '(com,example,)/a' (OpenWayback's CDXJ keys too): taken as it is,
    '(com' was a TLD. The key is the SURT of the URL, or of the URL that form stands for."""
    line = key + b" 20140103030321 " + url + b" text/html 200 B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 1043 333 x.warc.gz"
    cap = parse(L11, line)
    assert (cap if isinstance(cap, str) else cap.urlkey) == (expected if expected is not None else "bad_url")
    assert cdx.urlkey(key, None if url == b"-" else url) == expected


def test_a_surt_in_heritrix_s_form_is_read_alike_by_the_compiled_map_side(tmp_path):
    lines = [b" CDX N b a m s k r M S V g"] + [
        key + b" 20140103030321 - text/html 200 B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 1043 333 x.warc.gz"
        for key in (b"(com,example,)/a", b"(com,example,www,)/b", b"com,example)/c", b"http://(org,example,)/")]
    path = tmp_path / "h.cdx"
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = _compiled_and_python(path, tmp_path, "local")
    assert [x for x in out["compiled"].splitlines() if not x.startswith(b"!")] == \
        [x for x in out["python"].splitlines() if not x.startswith(b"!")]


def _compiled_and_python(path, tmp_path, runner):
    """{"compiled": profile bytes, "python": profile bytes} of path, with the "full" policy."""
    import os
    from profiler.run.profile import run_profile
    out = {}
    for name, env in (("compiled", {}), ("python", {"ARCHIVE_PROFILER_PURE_PYTHON": "1"})):
        old = dict(os.environ)
        os.environ.update(env)
        try:
            run_profile([str(path)], str(tmp_path / name), "full", runner=runner, cores=1,
                        created="2026-01-01T00:00:00Z")
        finally:
            os.environ.clear()
            os.environ.update(old)
        out[name] = (tmp_path / name).read_bytes()
    return out
    keys = {line.split(b" ")[0] for line in out["compiled"]}
    assert {b"com,example)/a", b"com,example)/b", b"com,example)/c", b"org,example)/"} <= keys
    assert not [k for k in keys if k.startswith(b"(")]


def test_surt_urlkey_is_key_safe():
    cap = parse(L11, PYWB_200.replace(b"com,example)/?example=1", b"com,example)/caf\xe9", 1))
    assert cap.urlkey == "com,example)/caf%E9"


@pytest.mark.parametrize("key, expected", [
    (b"!com,example)/", "%21com,example)/"),
    (b"@com,example)/", "%40com,example)/"),
])
def test_urlkey_starting_with_special_line_prefix_is_encoded(key, expected):
    cap = parse(L11, PYWB_200.replace(b"com,example)/?example=1", key, 1))
    assert cap.urlkey == expected


def test_surt_of_bang_url_is_encoded():
    assert cdx.urlkey(None, b"!foo") == "%21foo)/"


# skipped lines

def test_filedesc_is_not_a_capture():
    assert parse(L10, AIT_FILEDESC) == "not_a_capture"


@pytest.mark.parametrize("mime", [b"warc/warcinfo", b"arc/filedesc", b"warc/metadata", b"warc/request"])
def test_non_capture_mimes(mime):
    assert parse(L11, PYWB_200.replace(b"text/html", mime)) == "not_a_capture"


def test_warcinfo_url_is_not_a_capture():
    line = b"- 20140101000000 warcinfo:/example.warc.gz/1.0 text/plain - - - - 300 0 example.warc.gz"
    assert parse(L11, line) == "not_a_capture"


def test_dash_urlkey_and_url_is_not_a_capture():
    line = b"- 20140101000000 - text/html 200 - - - 300 0 example.warc.gz"
    assert parse(L11, line) == "not_a_capture"


@pytest.mark.parametrize("line", [PYWB_200 + b" extra", PYWB_200.rsplit(b" ", 1)[0], b""])
def test_bad_field_count(line):
    assert parse(L11, line) == "bad_field_count"


def test_bad_timestamp():
    assert parse(L7, EDGI_MONTH_00) == "bad_timestamp"
    assert parse(L11, PYWB_200.replace(b"20140103030321", b"20160211000000jpg")) == "bad_timestamp"


def test_bad_length():
    assert parse(L11, PYWB_200.replace(b" 1043 ", b" -1043 ")) == "bad_length"


def test_dash_length_is_zero():
    assert parse(L11, PYWB_200.replace(b" 1043 ", b" - "))[5] == 0


def test_tab_separated_fields():
    assert parse(L11, PYWB_200.replace(b" ", b"\t")) == parse(L11, PYWB_200)


# an index of ARC files whose URLs hold spaces, written as they are (the key percent-encodes them)
SPACED_URL = (b"com,example)/a%20b%20%20c.html 20050614070159 http://example.com/a b  c.html text/html 200 "
              b"B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 1043 333 example.arc.gz")


@pytest.mark.parametrize("letters, line", [
    (L11, SPACED_URL), (L9, SPACED_URL.replace(b" - - 1043 ", b" - ")),
    (L11, SPACED_URL.replace(b".html 2005", b".html\t2005").replace(b" text/html", b"\ttext/html"))])
def test_a_url_with_spaces_is_one_field(letters, line):
    found = parse(letters, line)
    assert found.urlkey == "com,example)/a%20b%20%20c.html"
    assert (found.timestamp, found.mime, found.status, found.length) == \
        ("20050614070159", "text/html", "200", 1043 if letters == L11 else 0)


def test_a_url_with_spaces_gives_the_collection_of_its_file():
    from profiler.model import collection
    found = cdx.make_parser(L11, collection.Collections({"pattern": r"(example)\.arc"}))(SPACED_URL)
    assert found.collection == "example"


@pytest.mark.parametrize("line", [
    SPACED_URL.replace(b"com,example)/a%20b%20%20c.html", b"com,example)/other"),
    SPACED_URL.replace(b"com,example)/a%20b%20%20c.html", b"example.com/a%20b%20%20c.html"),
    SPACED_URL.replace(b"text/html", b"text/html extra")])
def test_surplus_fields_that_are_no_url_of_the_key_stay_bad_field_count(line):
    assert parse(L11, line) == "bad_field_count"


def test_a_url_with_spaces_is_read_alike_by_the_compiled_map_side(tmp_path):
    path = tmp_path / "s.cdx"
    path.write_bytes(b" CDX N b a m s k r M S V g\n" + SPACED_URL + b"\n" + PYWB_200 + b"\n")
    out = _compiled_and_python(path, tmp_path, "inline")
    assert out["compiled"] == out["python"]
    assert b"bad_field_count" not in out["compiled"]
    assert b'\n* - - - {"urim":{"total":2,' in out["compiled"]


# cdxj-indexer's -11 index of a WARC file whose name holds spaces: the name is written as it is
SPACED_NAME = PYWB_200.replace(b" example.warc.gz", b" my  crawl 2014.warc.gz")


@pytest.mark.parametrize("letters, line, plain", [
    (L11, SPACED_NAME, PYWB_200),
    (L9, SPACED_NAME.replace(b" - - 1043 ", b" - "), PYWB_200.replace(b" - - 1043 ", b" - ")),
    (L11, SPACED_NAME.replace(b".warc.gz", b".ARC"), PYWB_200)])
def test_a_file_name_with_spaces_is_one_field(letters, line, plain):
    from profiler.model import collection
    assert parse(letters, line) == parse(letters, plain)
    found = cdx.make_parser(letters, collection.Collections({"pattern": r"(.*)"}))(line)
    assert found.collection == "my%20%20crawl%202014." + ("ARC" if b".ARC" in line else "warc.gz")


@pytest.mark.parametrize("line", [
    SPACED_NAME.replace(b".warc.gz", b".txt"),                                     # no WARC or ARC file's name
    PYWB_200.replace(b" - - 1043 ", b" http://example.com/a b - 1043 "),           # a redirect with a space:
    PYWB_200.replace(b" - - 1043 ", b" - - 1043 7 "),                              # every field after it shifted
    PYWB_200.replace(b"text/html 200", b"text/html charset utf-8 200")])
def test_surplus_fields_that_are_no_file_name_stay_bad_field_count(line):
    assert parse(L11, line) == "bad_field_count"


def test_a_file_name_with_spaces_is_read_alike_by_the_compiled_map_side(tmp_path):
    path = tmp_path / "s.cdx"
    path.write_bytes(PYWB_LEGEND + b"\n" + SPACED_NAME + b"\n" + PYWB_REVISIT + b"\n")
    out = _compiled_and_python(path, tmp_path, "inline")
    assert out["compiled"] == out["python"]
    assert b"bad_field_count" not in out["compiled"]
    assert b'\n* - - - {"urim":{"total":2,' in out["compiled"]


# wget's --warc-cdx index of a crawl with --no-warc-digests: its digest field is empty (two spaces)
WGET_LEGEND = b" CDX a b a m s k r M V g u"
WGET_NO_DIGEST = (b"http://127.0.0.1:18765/robots.txt 20261128180939 http://127.0.0.1:18765/robots.txt "
                  b"text/html 404  - - 1659 mcrawl-00000.warc.gz <urn:uuid:b4dcadef-790e-40ba-98cf-7b1dc097a10d>")


def test_an_empty_field_between_two_spaces_is_read_as_dash():
    found = parse("a b a m s k r M V g u", WGET_NO_DIGEST)
    assert (found.urlkey, found.timestamp, found.mime, found.status, found.digest) == \
        ("1,0,0,127:18765)/robots.txt", "20261128180939", "text/html", "404", "-")
    assert parse("a b a m s k r M V g u", WGET_NO_DIGEST + b"\r").status == "404"


@pytest.mark.parametrize("line", [
    WGET_NO_DIGEST.replace(b"404  - -", b"404 - -"),                 # a field missing, no empty one
    WGET_NO_DIGEST.replace(b"404  - -", b"404  -"),                  # an empty field and one missing
    WGET_NO_DIGEST.replace(b"404  - -", b"404 - -") + b" ",          # a field missing, a blank at the end
    b" " + WGET_NO_DIGEST.replace(b"404  - -", b"404 - -"),          # and at the start
    WGET_NO_DIGEST.replace(b" ", b"\t").replace(b"404\t\t", b"404\t")])   # tabs: no empty field
def test_a_missing_field_stays_bad_field_count(line):
    assert parse("a b a m s k r M V g u", line) == "bad_field_count"


# wget's --warc-cdx writes a Content-Type as the server sent it: parameters after a space, no ';'
WGET_SPACED_MIME = (b"http://127.0.0.1:18766/ctspace 20261128181131 http://127.0.0.1:18766/ctspace "
                    b"text/html charset=UTF-8 200 5KK47MAM26KJRKGNQXPOSV636WKPZFF5 - - 12261 odd.warc.gz "
                    b"<urn:uuid:8c26418e-4825-4e28-bb10-0152e8e9718e>")


def test_a_media_type_with_parameters_after_a_space_is_one_field():
    found = parse("a b a m s k r M V g u", WGET_SPACED_MIME)
    assert (found.urlkey, found.mime, found.status, found.digest) == \
        ("1,0,0,127:18766)/ctspace", "text/html", "200", "5KK47MAM26KJRKGNQXPOSV636WKPZFF5")
    two = WGET_SPACED_MIME.replace(b"charset=UTF-8", b"charset=UTF-8 q=1")
    assert parse("a b a m s k r M V g u", two).mime == "text/html"


@pytest.mark.parametrize("line", [
    WGET_SPACED_MIME.replace(b"charset=UTF-8", b"charset"),            # no parameter: a surplus field
    WGET_SPACED_MIME.replace(b"text/html charset", b"html charset"),    # no media type before it
    WGET_SPACED_MIME.replace(b" - - 12261 ", b" - - 12261 extra=1 ")])  # surplus elsewhere
def test_a_surplus_that_is_no_media_type_parameter_stays_bad_field_count(line):
    assert parse("a b a m s k r M V g u", line) == "bad_field_count"


def test_a_wget_index_is_read_alike_by_the_compiled_map_side(tmp_path):
    path = tmp_path / "wget.cdx"
    path.write_bytes(WGET_LEGEND + b"\n" + WGET_NO_DIGEST + b"\n" + WGET_SPACED_MIME + b"\n"
                     + WGET_NO_DIGEST.replace(b"robots.txt", b"a.txt").replace(b" 404 ", b" 200 ") + b"\n")
    out = _compiled_and_python(path, tmp_path, "inline")
    assert out["compiled"] == out["python"]
    assert b"bad_field_count" not in out["compiled"]
    assert b'\n* - - - {"urim":{"total":3,' in out["compiled"]


# both at once: the parameter and the empty digest make up the count cut at white space
WGET_BOTH = WGET_SPACED_MIME.replace(b"200 5KK47MAM26KJRKGNQXPOSV636WKPZFF5 -", b"200  -")


def test_a_media_type_parameter_and_an_empty_field_together_are_not_read_shifted():
    """Cut at white space the line had the layout's count: it was read with the status
    `charset=UTF-8` (unk) and the digest `200`, which every such line shared (its dedup wrong)."""
    found = parse("a b a m s k r M V g u", WGET_BOTH)
    assert (found.mime, found.status, found.digest) == ("text/html", "200", "-")
    shifted = WGET_BOTH.replace(b"charset=UTF-8 200  -", b"charset=UTF-8 200 -")   # no empty field: as it was
    assert parse("a b a m s k r M V g u", shifted).status == "unk"


@pytest.mark.parametrize("layout", ["wget", "pywb"])
def test_a_status_with_a_parameter_is_read_alike_by_the_compiled_map_side(tmp_path, layout):
    path = tmp_path / "wget.cdx"
    if layout == "wget":
        path.write_bytes(WGET_LEGEND + b"\n" + WGET_BOTH + b"\n" + WGET_BOTH.replace(b"ctspace", b"other") + b"\n")
    else:           # the same quirks in the common 11-field layout, which the compiled map side reads itself
        line = b"com,example)/%s 20261128181131 http://example.com/%s text/html charset=UTF-8 200  - - 12261 0 a.warc.gz"
        path.write_bytes(b" CDX N b a m s k r M S V g\n" + line % (b"a", b"a") + b"\n" + line % (b"b", b"b") + b"\n")
    out = _compiled_and_python(path, tmp_path, "inline")
    assert out["compiled"] == out["python"]
    assert b'\n* - - 200 {"urim":{"total":2,' in out["compiled"] and b'"digests":0' in out["compiled"].split(
        b"\n* - - - ")[1].split(b"\n")[0], out["compiled"]


# layout inference

def test_infer_letters_by_field_count():
    assert cdx.infer_letters([PYWB_200, PYWB_REVISIT]) == L11
    assert cdx.infer_letters([AIT_FILEDESC, AIT_200]) == L10
    assert cdx.infer_letters([NAS_DNS, NAS_302]) == L9
    assert cdx.infer_letters([EDGI, EDGI]) == L7
    assert cdx.infer_letters([FYENS]) == cdx.NETARCHIVESUITE_LAYOUT


# the Wayback CDX server's answer with fl=urlkey,timestamp,original,mimetype,statuscode,digest,length,offset,filename
CDX_SERVER_9 = (b"com,example)/ 20020120142510 http://example.com:80/ text/html 200 "
                b"HSTOKG6KXHMBLE6JC2TGUD2CIFNHKYDC 466 12345 crawl-1.arc.gz")


def test_nine_fields_with_a_length_where_the_redirect_goes_are_read_with_it():
    """Nine fields without a legend whose seventh is a number in most lines (a CDX server's answer
    with fl=...,length,offset,filename) are ``N b a m s k S V g``: a redirect is ``-`` or a URL, never
    a number (the length was read as the redirect: every capture 0 bytes, without a word)."""
    revisit = CDX_SERVER_9.replace(b"text/html 200", b"warc/revisit -").replace(b" 466 ", b" 512 ")
    assert cdx.infer_letters([CDX_SERVER_9, revisit, NAS_302]) == "N b a m s k S V g"
    assert parse("N b a m s k S V g", CDX_SERVER_9).length == 466
    assert cdx.infer_letters([NAS_DNS, NAS_302, CDX_SERVER_9]) == L9         # most lines: a redirect's place


def test_infer_letters_uses_the_most_common_count():
    assert cdx.infer_letters([NAS_302, NAS_302, EDGI]) == L9


def test_infer_letters_refuses_prose():
    prose = [b"Every file was copied byte for byte from a public repository",
             b"at the commit shown, with one exception: a test recording.",
             b"No code, scripts or build recipes were copied at all here."]
    assert cdx.infer_letters(prose) is None
    assert cdx.infer_letters([b"one two three four five six seven"] * 3) is None


def test_infer_letters_refuses_unknown_count_and_empty():
    assert cdx.infer_letters([b"a b c d e"]) is None
    assert cdx.infer_letters([]) is None


def test_infer_letters_needs_half_the_lines_to_parse():
    bad = EDGI_MONTH_00
    assert cdx.infer_letters([EDGI, bad, bad]) is None
    assert cdx.infer_letters([EDGI, EDGI, bad]) == L7


# real files

def test_real_netarchivesuite_cdx():
    path = shared_data("netarchivesuite", "NAS-20100909163324-00000-mette.kb.dk.warc.cdx")
    with open(path, "rb") as f:
        lines = f.read().splitlines()
    letters = cdx.infer_letters(lines)
    assert letters == L9
    caps = [cdx.make_parser(letters)(line) for line in lines]
    assert all(isinstance(c, tuple) for c in caps)
    assert len(caps) == 41
    assert all(c.urlkey.startswith("dns:") or ")" in c.urlkey for c in caps)


def test_real_iana_cdx():
    path = shared_data("pywb", "cdx", "iana.cdx")
    with open(path, "rb") as f:
        legend, *lines = f.read().splitlines()
    parse_line = cdx.make_parser(cdx.legend_letters(legend))
    caps = [parse_line(line) for line in lines]
    assert len(caps) == 171
    assert all(isinstance(c, tuple) and c.urlkey.startswith("org,iana)/") for c in caps)
    revisits = [c for c in caps if c.revisit]
    assert revisits and all(c.mime == "warc/revisit" and c.status == "unk" for c in revisits)


def test_revisit_flag_uses_the_normalised_mime():
    from profiler.formats import cdx
    parse = cdx.make_parser("N b a m s k r M S V g")
    got = parse(b"com,a)/ 20100101000000 http://a/ WARC/Revisit;x=1 - sha1:AA - - 10 0 f")
    assert got.mime == "warc/revisit" and got.revisit is True


@pytest.mark.parametrize("fraction", [b"123", b"1", b"123456789"])
def test_a_timestamp_with_a_fraction_of_a_second_is_a_capture_of_that_second(fraction):
    """pywb and OpenWayback write 17-digit (millisecond) timestamps in some indexes: the first 14
    digits are the capture's second, as in a CDXJ index; an impossible date is still refused."""
    parse = cdx.make_parser(L11)
    c = parse(PYWB_200.replace(b"20140103030321", b"20140103030321" + fraction))
    assert (c.timestamp, c.status, c.length) == ("20140103030321", "200", 1043)
    assert parse(PYWB_200.replace(b"20140103030321", b"20141303030321123")) == "bad_timestamp"
    assert parse(PYWB_200.replace(b"20140103030321", b"20140103030321" + b"1" * 10)) == "bad_timestamp"


@pytest.mark.parametrize("pure", [False, True])
@pytest.mark.parametrize("legend", [True, False])
def test_a_millisecond_cdx_profiles_every_capture(tmp_path, legend, pure):
    """Every line of a CDX index of 17-digit timestamps is a capture, its layout found without a
    legend too, with the compiled readers and without (it was skipped as bad_timestamp, and
    without a legend the file was of no known format)."""
    import os
    import subprocess
    import sys
    from profiler import contract
    first = PYWB_200.replace(b"20140103030321", b"20140103030321123")
    second = PYWB_200.replace(b"20140103030321", b"20150101000000001").replace(b"example=1", b"example=2")
    (tmp_path / "index.cdx").write_bytes((PYWB_LEGEND + b"\n" if legend else b"") + first + b"\n" + second + b"\n")
    env = dict(os.environ)
    env.pop(contract.PURE_ENV, None)
    if pure:
        env[contract.PURE_ENV] = "1"
    out = tmp_path / "p.cdxj"
    subprocess.run([sys.executable, "-m", "profiler.cli", "profile", str(tmp_path / "index.cdx"), "-o", str(out),
                    "-r", "inline", "--quiet"], check=True, capture_output=True, env=env)
    lines = out.read_text().splitlines()
    assert '"captures":2,"skipped":{}' in next(line for line in lines if line.startswith('!meta {"inputs"'))
    top = next(line for line in lines if line.startswith("* - - - "))
    assert '"urim":{"total":2,' in top and '"first":"20140103030321","last":"20150101000000"' in top
