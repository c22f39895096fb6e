"""Tests for profiler.model.normalise (spec section 1: capture field normalisation)."""

import doctest

import pytest

from profiler.model import normalise
from profiler.model.normalise import (digest, key_field, length, mime, mime_category, status,
                                status_class, timestamp)


def test_doctests():
    result = doctest.testmod(normalise)
    assert result.attempted > 0
    assert result.failed == 0


# key_field

@pytest.mark.parametrize("raw, expected", [
    (b"com,example)/", "com,example)/"),
    (b"com,example)/a b", "com,example)/a%20b"),
    (b"com,example)/a\tb\nc\rd", "com,example)/a%09b%0Ac%0Dd"),
    (b"com,example)/\x00\x01\x1f\x7f", "com,example)/%00%01%1F%7F"),
    (b"com,example)/caf\xe9", "com,example)/caf%E9"),          # Latin-1, not UTF-8
    (b"com,example)/\xff\xfe", "com,example)/%FF%FE"),
    (b"com,example)/caf\xc3\xa9", "com,example)/caf\u00e9"),   # valid UTF-8 is kept
])
def test_key_field_encodes_unsafe_bytes(raw, expected):
    assert key_field(raw) == expected


def test_key_field_leaves_percent_alone():
    assert key_field(b"com,example)/a%20b%zz%") == "com,example)/a%20b%zz%"


def test_key_field_never_contains_white_space():
    out = key_field(bytes(range(256)))
    assert not any(c in out for c in " \t\n\r\x0b\x0c")
    assert out.isprintable()


# timestamp

@pytest.mark.parametrize("raw, expected", [
    (b"20140103030321", "20140103030321"),
    (b"2014", "20140101000000"),             # the earliest valid datetime
    (b"201401", "20140101000000"),
    (b"2016020900", "20160209000000"),        # 10-digit ARC date
    (b"201602090102", "20160209010200"),
    (b"20141231235960", "20141231235960"),    # leap second
    (b"20160229", "20160229000000"),          # a leap year's 29 February
    (b"20000229120000", "20000229120000"),    # 2000 is a leap year (divisible by 400)
    (b"0001", "00010101000000"),
])
def test_timestamp_valid(raw, expected):
    assert timestamp(raw) == expected


@pytest.mark.parametrize("raw", [
    b"",
    b"201",                    # too short
    b"20000012170449",         # month 00 (edgi-wayback/bad_timestamp_cdx.txt)
    b"20141301000000",         # month 13
    b"201400",
    b"20140100000000",         # day 00
    b"20140132000000",         # day 32
    b"20130229000000",         # 29 February of a common year
    b"19000229",               # 1900 is not a leap year
    b"20130230",               # no 30 February
    b"20130431120000",         # April has 30 days
    b"0000",                   # no year 0
    b"00000101000000",
    b"20140101240000",         # hour 24
    b"20140101006000",         # minute 60
    b"20140101000061",         # second 61
    b"201601010000001",        # 15 digits
    b"201602090000000000",     # 18 digits
    b"20160211000000jpg",      # digits plus text
    b"2014-01-01",
    b"2014010100000a",
    b" 2014",
    b"-",
    b"9c3d2f1e5a7b6c8d9e0f1a2b3c4d5e6f7",  # hex string instead of a date
])
def test_timestamp_invalid(raw):
    assert timestamp(raw) is None


@pytest.mark.parametrize("raw, expected", [(b"201601010000001", "20160101000000"),
                                           (b"201601010000009999999", "20160101000000"),
                                           (b"2016010100000012345678901", None), (b"201613010000001", None),
                                           (b"2016", "20160101000000")])
def test_a_cdxj_timestamp_drops_a_fraction_of_a_second(raw, expected):
    """ArchiveWeb.page's CDXJ has milliseconds; a CDX layout stays inferred from 14-digit timestamps."""
    assert normalise.fractional_timestamp(raw) == expected


# mime

@pytest.mark.parametrize("raw, expected", [
    (b"text/html", "text/html"),
    (b"Text/HTML", "text/html"),
    (b"text/html; charset=UTF-8", "text/html"),
    (b"text/html;charset=iso-8859-1", "text/html"),
    (b"  application/JSON  ", "application/json"),
    (b"warc/revisit", "warc/revisit"),
    (b"", "unk"),
    (b"-", "unk"),
    (b"unk", "unk"),
    (b"UNKNOWN", "unk"),
    (b"no-type", "unk"),
    (b"None", "unk"),
    (b"; charset=utf-8", "unk"),
    (b"text/html charset=UTF-8", "text/html"),     # cut at white space within, as the WARC reader cuts
    (b"\ttext/html\tx", "text/html"),
    (b"text/ html", "text/"),
    (b"Text /HTML", "text"),
    (b"/", "unk"),                  # no top-level type: its category would be its own spelling
    (b"/html", "unk"),
    (b"text/*", "unk"),             # a category's spelling: its line would count every text type
    (b"*/*; q=0.8", "unk"),
    (b"text/*x", "text/*x"),
])
def test_mime(raw, expected):
    assert mime(raw) == expected


def test_mime_is_key_safe():
    assert mime(b"text/\xe9") == "text/%E9"
    assert " " not in mime(b"text/ html")


# status

@pytest.mark.parametrize("raw, expected", [
    (b"200", "200"), (b"404", "404"), (b"302", "302"),
    (b"-", "unk"), (b"", "unk"), (b"30x", "unk"), (b"2000", "unk"), (b"20", "unk"),
])
def test_status(raw, expected):
    assert status(raw) == expected


@pytest.mark.parametrize("code, expected", [
    ("100", "1xx"), ("200", "2xx"), ("204", "2xx"), ("302", "3xx"), ("404", "4xx"),
    ("503", "5xx"), ("600", "unk"), ("099", "unk"), ("unk", "unk"),
])
def test_status_class(code, expected):
    assert status_class(code) == expected


# digest

@pytest.mark.parametrize("raw, expected", [
    (b"B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A", "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A"),
    (b"sha1:b2ltwwpuoyah7uipq7zupq4vmbsvc36a", "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A"),
    (b"sha1:B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A", "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A"),
    (b"37cf167c2672a4a64af901d9484e75eee0e2c98a", "37CF167C2672A4A64AF901D9484E75EEE0E2C98A"),
    (b"sha256:abc", "ABC"),
    (b"-", "-"),
    (b"", "-"),
    (b"sha1:", "-"),
])
def test_digest(raw, expected):
    assert digest(raw) == expected


# length

@pytest.mark.parametrize("raw, expected", [
    (b"1043", (1043, True)),
    (b"0", (0, True)),
    (b"-", (0, True)),
    (b"", (0, True)),
    (b"-1", (0, False)),
    (b"12a", (0, False)),
    (b"1.5", (0, False)),
    (b"9" * 5000, (0, False)),                 # more digits than Python reads an int of
    (b"0" * 5000 + b"12", (12, True)),
    (b"0" * 5000, (0, True)),
])
def test_length(raw, expected):
    assert length(raw) == expected


# mime_category

@pytest.mark.parametrize("value, expected", [
    ("text/html", "text/*"),
    ("application/vnd.ms-excel", "application/*"),
    ("image/svg+xml", "image/*"),
    ("warc/revisit", "warc/*"),
    ("unk", "unk"),
    ("/weird", "/weird"),
])
def test_mime_category(value, expected):
    assert mime_category(value) == expected


# collection

@pytest.mark.parametrize("raw, expected", [
    (b"crawl-2013", "crawl-2013"),
    (b"-", "%2D"),                  # '-' is any
    (b"unk", "%75nk"),              # 'unk' is a capture of no collection: a name so spelt is another
    (b"%75nk", "%2575nk"),
    (b"UNK", "UNK"),
    (b"unknown", "unknown"),
    (b"unk ", "unk%20"),
])
def test_a_collection_spelt_as_a_reserved_field_is_not_that_field(raw, expected):
    assert normalise.collection(raw) == expected
    assert normalise.collection_name(expected) == raw


def test_a_collection_label_or_question_of_unk_is_no_collection():
    """A label or a question 'unk' is the field of captures of no collection, as without one; a
    question '%75nk' names the collection the name 'unk' is."""
    from profiler.model import collection as collections, criteria
    assert collections.label_field("unk") == "unk"
    assert collections.options(None, collections.label_field("unk")) == {"pattern": None, "label": None}
    assert criteria.COLLECTION.query("unk") == "unk"
    assert criteria.COLLECTION.query("%75nk") == "%75nk"
    assert criteria.COLLECTION.query("-") == "-"
