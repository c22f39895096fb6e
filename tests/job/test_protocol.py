"""Tests for profiler.job.protocol: raw bytes keys, orjson values."""

import orjson
import pytest

from profiler.job.protocol import RawKeyJsonValueProtocol, RawLineProtocol

KEYS = [
    b"K * - - -",
    b"K com,example)/a%20b 2010 text/html 2xx",
    b"K com,example)/100%",
    "K com,bücher)/straße 2010 - -".encode("utf-8"),
    "D 日本語".encode("utf-8"),
    b'K com,example)/say"hi" - - -',
    b"K com,example)/back\\slash - - -",
    b"K com,example)/\\u0041",
    b"!meta",
    b"",
]


@pytest.mark.parametrize("key", KEYS)
def test_key_written_byte_for_byte(key):
    line = RawKeyJsonValueProtocol().write(key, [1, 2])
    assert line == key + b"\t[1,2]"


@pytest.mark.parametrize("key", KEYS)
def test_key_round_trip(key):
    p = RawKeyJsonValueProtocol()
    assert p.read(p.write(key, {"a": 1})) == (key, {"a": 1})


def test_key_read_is_bytes():
    key, _ = RawKeyJsonValueProtocol().read(b"K * - - -\t1")
    assert isinstance(key, bytes)


@pytest.mark.parametrize("value", [
    [5, 5, 5, 1, 1000, 3, 700, "20100101000000", "20100101000000"],
    [0, 1 << 62, 0, 0, 0, -2, -150, "~", ""],
    ["com,example)/a", [["2010", "text/html", "200", 1043]]],
    {"captures": 3, "skipped": {"bad_line": 1, "truncated_file": 1}},
    [["201001", "", "", "ABC", 1, 2, 20, 10, "20100101000000", "20100102000000"]],
    "caf\u00e9 \u65e5\u672c",
    None,
    0,
])
def test_value_round_trip(value):
    p = RawKeyJsonValueProtocol()
    line = p.write(b"K x", value)
    assert line.split(b"\t", 1)[1] == orjson.dumps(value)
    assert p.read(line) == (b"K x", value)


def test_value_with_tabs_and_newlines_stays_one_field():
    p = RawKeyJsonValueProtocol()
    value = ["a\tb", "c\nd", {"e\tf": "g"}]
    line = p.write(b"K k", value)
    assert line.count(b"\t") == 1 and b"\n" not in line
    assert p.read(line) == (b"K k", value)


def test_tuple_value_reads_back_as_list():
    p = RawKeyJsonValueProtocol()
    assert p.read(p.write(b"k", ("a", 1))) == (b"k", ["a", 1])


# RawLineProtocol

def test_raw_line_write():
    assert RawLineProtocol().write(b"* - - -", b'{"urir":1}') == b'* - - -\t{"urir":1}'


@pytest.mark.parametrize("key", KEYS)
def test_raw_line_round_trip(key):
    p = RawLineProtocol()
    value = b'{"first":"20100101000000"}'
    assert p.read(p.write(key, value)) == (key, value)


def test_raw_line_value_keeps_later_tabs():
    p = RawLineProtocol()
    assert p.read(b"k\ta\tb") == (b"k", b"a\tb")


def test_raw_line_value_is_not_decoded():
    key, value = RawLineProtocol().read(b'k\t{"a": 1}')
    assert value == b'{"a": 1}'
