import gzip
import os
import subprocess
import sys

import orjson
import pytest

from profiler.errors import UserError
from profiler.files.datalines import DamagedFile
from hypothesis import given, settings, strategies as st

from profiler.files import ukvs
from profiler.cli.main import main
from profiler.run.profile import run_profile
from profiler.files.profilefile import iter_data
from profiler.testing.synthetic import write_cdx
from profiler.files.ukvs import (Frequency, MapFormatError, datetime_span, format_frequency,
                           parse_frequency, read_map, relaxed_json_loads, write_map)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")

SEED_MAP = b"""!context ["http://oduwsdl.github.io/contexts/ukvs"]
!id {uri: "http://archive.example.org/"}
!fields {keys: ["surt"], values: ["frequency"]}
!meta {type: "MementoMap", name: "A Test Web Archive", year: 1996}
!meta {updated_at: "2018-09-03T13:27:52Z"}
*                   54321
com,*               10000
com,twitter)/       100
com,twitter)/*      250 {datetime: {"2014": "20~/10"}}
uk,co,bbc)/images/* 300
"""


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    """Real profiles of a generated CDX: the `full` and `default` policies."""
    d = tmp_path_factory.mktemp("profiles")
    cdx = d / "in.cdx"
    write_cdx(str(cdx), 1500, seed=7)
    out = {"cdx": cdx}
    for policy in ("full", "default"):
        out[policy] = d / ("%s.cdxj" % policy)
        run_profile([str(cdx)], str(out[policy]), policy=policy, created="2026-01-01T00:00:00Z")
    return out


# ---------------------------------------------------------------- frequencies

@pytest.mark.parametrize("text, freq", [
    ("400/100", Frequency(400, "", 100, "")),
    ("400+/100~", Frequency(400, "+", 100, "~")),
    ("200-/150~", Frequency(200, "-", 150, "~")),
    ("400", Frequency(400, "", None, "")),
    ("400/", Frequency(400, "", None, "")),
    ("/50+", Frequency(None, "", 50, "+")),
    ("/", Frequency(None, "", None, "")),
    ("0", Frequency(0, "", None, "")),
    ("0/20", Frequency(0, "", 20, "")),
])
def test_parse_frequency(text, freq):
    assert parse_frequency(text) == freq
    assert parse_frequency(format_frequency(freq)) == freq


def test_format_frequency_shortest():
    assert format_frequency(Frequency(400, "", None, "")) == "400"
    assert format_frequency(Frequency(None, "", None, "")) == "/"
    assert format_frequency(Frequency(None, "", 7, "-")) == "/7-"


@pytest.mark.parametrize("text", ["", "+", "4x", "01", "400//", "-/5", "400/+", "4 00", "-1", "1/2/3"])
def test_parse_frequency_rejects(text):
    with pytest.raises(MapFormatError):
        parse_frequency(text)


def test_format_frequency_rejects():
    for bad in (Frequency(None, "+", 1, ""), Frequency(-1, "", 1, ""), Frequency(1, "*", 1, "")):
        with pytest.raises(ValueError):
            format_frequency(bad)


counts = st.one_of(st.none(), st.integers(min_value=0, max_value=10 ** 12))
frequencies = st.builds(
    lambda m, mm, r, rm: Frequency(m, mm if m is not None else "", r, rm if r is not None else ""),
    counts, st.sampled_from(ukvs.MARKS), counts, st.sampled_from(ukvs.MARKS)).filter(
    # what an archive can hold: no more URI-Rs than URI-Ms, and no URI-Ms of no URI-R (unless
    # bounds allow it, or "not held")
    lambda f: not (f.urim and f.urir is not None and f.urir > f.urim and f.urir_mark in ("", "+")
                   and f.urim_mark in ("", "-"))
    and not (f.urim and f.urim_mark in ("", "+") and f.urir == 0 and f.urir_mark in ("", "-")))


@given(frequencies)
def test_frequency_round_trip(freq):
    text = format_frequency(freq)
    assert parse_frequency(text) == freq
    assert " " not in text


@given(st.text(alphabet="0123456789/+-~ x", max_size=12))
def test_parse_frequency_never_crashes(text):
    try:
        freq = parse_frequency(text)
    except MapFormatError:
        return
    assert parse_frequency(format_frequency(freq)) == freq


# ---------------------------------------------------------------- relaxed JSON and datetime fields

def test_relaxed_json():
    assert relaxed_json_loads('{keys: ["surt"], values: ["frequency"]}') == {
        "keys": ["surt"], "values": ["frequency"]}
    # quoted text that looks like a key is left alone
    assert relaxed_json_loads('{name: "a, b: c", n: 1}') == {"name": "a, b: c", "n": 1}
    assert relaxed_json_loads(b'["x"]') == ["x"]
    with pytest.raises(MapFormatError):
        relaxed_json_loads("{keys: }")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10 ** 9, 10 ** 9) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,6}\Z"), inner, max_size=3),
    max_leaves=8)


def _unquote_keys(value):
    """Serialise like the seed: object keys without quotes."""
    if isinstance(value, dict):
        return "{" + ", ".join("%s: %s" % (k, _unquote_keys(v)) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_unquote_keys(v) for v in value) + "]"
    return orjson.dumps(value).decode()


@given(json_values)
def test_relaxed_json_property(value):
    assert relaxed_json_loads(orjson.dumps(value)) == value
    assert relaxed_json_loads(_unquote_keys(value)) == value


def test_datetime_span():
    assert datetime_span(":") == ("00000000000000", "99999999999999")
    assert datetime_span("-") == datetime_span(":")
    assert datetime_span("2013") == ("20130000000000", "20139999999999")
    assert datetime_span(":2009") == ("00000000000000", "20099999999999")
    assert datetime_span("201603:") == ("20160300000000", "99999999999999")
    for bad in ("2012:2010", "x", "123", "2013:2014:2015", "::"):
        assert datetime_span(bad) is None


# ---------------------------------------------------------------- reading and writing

def test_read_seed_map(tmp_path):
    path = tmp_path / "seed.ukvs"
    path.write_bytes(SEED_MAP)
    headers, records = read_map(str(path))
    assert headers[1] == ("!id", {"uri": "http://archive.example.org/"})
    assert headers[2] == ("!fields", {"keys": ["surt"], "values": ["frequency"]})
    assert headers[3][1]["year"] == 1996
    records = list(records)
    assert records[0] == (b"*", Frequency(54321, "", None, ""))
    assert records[3] == (b"com,twitter)/*", Frequency(250, "", None, ""))
    assert len(records) == 5


def test_read_two_key_map(tmp_path):
    path = tmp_path / "dt.ukvs"
    path.write_bytes(b'!fields {keys: ["surt", "datetime"], values: ["frequency"]}\n'
                     b"com,twitter)/* 2014 20~/10\ncom,twitter)/* 2015 60+/30+\ncom,twitter)/* : 100/35\n")
    _, records = read_map(str(path))
    assert list(records) == [(b"com,twitter)/* 2014", Frequency(20, "~", 10, "")),
                             (b"com,twitter)/* 2015", Frequency(60, "+", 30, "+")),
                             (b"com,twitter)/* :", Frequency(100, "", 35, ""))]


@pytest.mark.parametrize("body, message", [
    (b"com,x)/* 12 13\n", "line 2"),            # 2 key fields where !fields says 1
    (b"com,x)/* many\n", "line 2"),
    (b"lonely\n", "line 2"),
])
def test_read_map_errors_name_the_line(tmp_path, body, message):
    path = tmp_path / "bad.ukvs"
    path.write_bytes(b'!fields {"keys":["surt"],"values":["frequency"]}\n' + body)
    _, records = read_map(str(path))
    with pytest.raises(DamagedFile, match=message):
        list(records)


def test_write_map_sorts_and_is_strict(tmp_path):
    path = tmp_path / "out.ukvs"
    recs = [(b"com,b)/*", Frequency(3, "", 2, "")), (b"*", Frequency(9, "+", None, "")),
            (b"com,a)/x", Frequency(1, "", 1, ""))]
    n = write_map(str(path), [("!meta", {"b": 1}), ("!context", ukvs.CONTEXT)], recs)
    assert n == 3
    lines = path.read_bytes().splitlines()
    assert lines == sorted(lines)
    assert lines[0] == b'!context ["http://oduwsdl.github.io/contexts/ukvs"]'
    assert lines[2:] == [b"* 9+", b"com,a)/x 1/1", b"com,b)/* 3/2"]
    headers, records = read_map(str(path))
    assert dict(headers)["!meta"] == {"b": 1}
    assert sorted(recs) == list(records)


def test_write_map_rejects_duplicates_and_keeps_old_file(tmp_path):
    path = tmp_path / "out.ukvs"
    path.write_bytes(b"old\n")
    with pytest.raises(MapFormatError, match="duplicate"):
        write_map(str(path), [], [(b"a", Frequency(1, "", 1, "")), (b"a", Frequency(2, "", 1, ""))])
    assert path.read_bytes() == b"old\n"
    assert [n for n in os.listdir(tmp_path) if n.startswith(".out.ukvs")] == []


def test_a_map_is_written_as_its_records_come(tmp_path):
    """write_map held every record of a map before it wrote one (the memory of `ukvs` grew with
    the map: 104 MB for 400,000 records). Records that come in order are written as they come:
    the temp file grows while they are read; an out-of-order or repeated key is an error that
    leaves nothing."""
    path = tmp_path / "out.ukvs"
    seen = []

    def records():
        for i in range(200000):
            if i == 150000:
                temps = [n for n in os.listdir(tmp_path) if n.startswith(".out.ukvs")]
                seen.append(sum(os.path.getsize(tmp_path / n) for n in temps))
            yield b"com,h%06d)/*" % i, Frequency(i + 1, "", 1, ""), None
    assert write_map(str(path), ukvs.map_headers(), records()) == 200000
    assert seen and seen[0] > 1000000
    assert path.read_bytes().splitlines()[-1] == b"com,h199999)/* 200000/1"
    for bad in ([b"b", b"a"], [b"a", b"a"]):
        with pytest.raises(MapFormatError):
            write_map(str(path), [], ((k, Frequency(1, "", 1, "")) for k in bad))
        assert path.read_bytes().splitlines()[-1] == b"com,h199999)/* 200000/1"
    assert [n for n in os.listdir(tmp_path) if n.startswith(".out.ukvs")] == []


keys = st.lists(st.from_regex(r"\A[a-z]{1,4}(,[a-z]{1,4}){0,2}\)/[a-z/]{0,6}\*?\Z"), unique=True, max_size=20)


@settings(max_examples=60, deadline=None)
@given(keys, st.lists(frequencies, min_size=20, max_size=20), st.sampled_from([" ", "   ", "\t"]))
def test_map_round_trip_property(tmp_path_factory, keys, freqs, blank):
    path = tmp_path_factory.mktemp("rt") / "m.ukvs"
    recs = [(k.encode(), f) for k, f in zip(keys, freqs)]
    write_map(str(path), ukvs.map_headers("https://a.example/"), recs)
    _, records = read_map(str(path))
    assert list(records) == sorted(recs)
    # runs of blanks and a trailing JSON block are accepted by the reader
    loose = path.read_bytes().replace(b") ", b")" + blank.encode()).replace(b"* ", b"*" + blank.encode())
    loose = b"\n".join(line + (b" {note: 1}" if not line.startswith(b"!") else b"")
                       for line in loose.splitlines()) + b"\n"
    path.write_bytes(loose)
    _, records = read_map(str(path))
    assert list(records) == sorted(recs)


# ---------------------------------------------------------------- from real profiles

def _profile_lines(path):
    return {key: value for key, value in iter_data(str(path))}


@pytest.mark.parametrize("policy", ["full", "default"])
def test_map_of_profile_surt(profiles, tmp_path, policy):
    out = tmp_path / "m.ukvs"
    assert main(["ukvs", str(profiles[policy]), "-o", str(out), "-q"]) == 0
    headers, records = read_map(str(out))
    h = dict(headers)
    assert h["!fields"] == {"keys": ["surt"], "values": ["frequency"]}
    assert h["!meta"]["type"] == "MementoMap" and h["!meta"]["source"]["policy"] == policy
    prof = _profile_lines(profiles[policy])
    expected = {k.split(b" ")[0]: v for k, v in prof.items() if k.endswith(b" - - -")}
    got = dict(records)
    assert set(got) == set(expected)
    for key, value in expected.items():
        assert got[key] == Frequency(value["urim"]["total"], "", value["urir"], "")
    lines = out.read_bytes().splitlines()
    assert lines == sorted(lines)


def test_map_of_profile_surt_datetime(profiles, tmp_path):
    out = tmp_path / "m.ukvs"
    assert main(["ukvs", str(profiles["full"]), "-o", str(out), "--keys", "surt,datetime", "-q"]) == 0
    headers, records = read_map(str(out))
    assert dict(headers)["!fields"]["keys"] == ["surt", "datetime"]
    got = dict(records)
    prof = _profile_lines(profiles["full"])
    expected = {}
    for k, v in prof.items():
        surt, dt, mime, status = k.split(b" ")
        if mime == status == b"-":
            expected[surt + b" " + (b":" if dt == b"-" else dt)] = Frequency(v["urim"]["total"], "", v["urir"], "")
    assert got == expected
    assert any(k.endswith(b" :") for k in got) and any(len(k.split()[1]) == 6 for k in got)
    # byte order: ':' after the years and months of the same SURT
    lines = out.read_bytes().splitlines()
    assert lines == sorted(lines)


def test_ukvs_command_errors(tmp_path, capsys):
    assert main(["ukvs", str(tmp_path / "missing.cdxj"), "-o", str(tmp_path / "o.ukvs")]) == 2
    not_profile = tmp_path / "x.ukvs"
    not_profile.write_bytes(SEED_MAP)
    assert main(["ukvs", str(not_profile), "-o", str(tmp_path / "o.ukvs")]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "not a CDXJ profile: give the profile the map was made from" in err
    assert not (tmp_path / "o.ukvs").exists()


def test_ukvs_console_script_on_sample(tmp_path):
    """The installed console script, on the bundled sample."""
    prof = tmp_path / "s.cdxj"
    run_profile([SAMPLE], str(prof), policy="hosts")
    out = tmp_path / "s.ukvs"
    exe = os.path.join(os.path.dirname(sys.executable), "archive-profiler")
    subprocess.run([exe, "ukvs", str(prof), "-o", str(out), "--archive-uri", "https://a.example/"], check=True)
    headers, records = read_map(str(out))
    assert dict(headers)["!id"] == {"uri": "https://a.example/"}
    records = dict(records)
    with gzip.open(SAMPLE, "rb") as f:
        captures = sum(1 for line in f if not line.startswith(b" CDX"))
    assert records[b"*"].urim == captures


@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(max_size=30) | st.sampled_from(
    [b"!fields {keys: [\"surt\"]}", b"@meta {a: 1}", b"* 1/2", b"com,x)/ 3+/", b"a b c", b"x {y}", b""]),
    max_size=8))
def test_read_map_fails_only_with_map_errors(tmp_path_factory, lines):
    """Arbitrary bytes: records or a one-line error (a UserError: not a map, damaged, unsorted),
    never another exception."""
    path = tmp_path_factory.mktemp("fz") / "m.ukvs"
    path.write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines) + b"\n")
    try:
        headers, records = read_map(str(path))
        for key, freq in records:
            assert isinstance(key, bytes) and key and isinstance(freq, Frequency)
    except UserError:
        pass
