"""Random bytes, random fields and random truncation of gzip and bz2, thrown at the real
`profile` command: it exits 0 or 2, never with a traceback, writes a profile that validates,
and counts exactly the well-formed lines that the truncated file still holds whole (the oracle:
one decompress call over the bytes that are there)."""

import bz2
import gzip
import os
import subprocess
import sys
import zlib

import orjson
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.files.validate import validate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LEGEND = b" CDX N b a m s k r M S V g\n"

good_line = st.builds(
    lambda i, year, length: b"com,example)/p%d %d0102030405 http://example.com/p%d text/html 200 D%d - - %d 0 a.warc.gz"
    % (i, year, i, i, length),
    st.integers(0, 50), st.integers(1996, 2024), st.integers(0, 10 ** 6))
junk_line = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"").replace(b" ", b"").replace(b"\t", b"")
                                       .replace(b"\r", b"").replace(b"\x0b", b"").replace(b"\x0c", b""))
line = st.one_of(good_line.map(lambda x: (True, x)), junk_line.map(lambda x: (False, x)))


def recoverable(data, compression):
    if compression == "gzip":
        return zlib.decompressobj(31).decompress(data)
    if compression == "bz2":
        d = bz2.BZ2Decompressor()
        try:
            return d.decompress(data)
        except (OSError, EOFError):
            return b""
    return data


def profiled(folder, path, args=(), **environ):
    """The profile `profile` writes of path (exit 0, and it validates), or None when it refused
    the input in one line (exit 2, nothing written); never a traceback."""
    out = folder / "out.cdxj"
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", str(path), "-o", str(out), "-q", *args],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT, **environ))
    assert r.returncode in (0, 2), r.stderr
    assert "Traceback" not in r.stderr
    if r.returncode == 2:
        assert not out.exists()
        return None
    report = validate(str(out))
    assert report.count == 0, [(p.lineno, p.message) for p in report.problems]
    return out


def whole_lines(data, compression):
    """The bytes of whole lines a truncated input still holds (a plain file: all of them)."""
    held = recoverable(data, compression)
    return held[:held.rfind(b"\n") + 1] if compression else held


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(lines=st.lists(line, min_size=1, max_size=40), compression=st.sampled_from([None, "gzip", "bz2"]),
       cut=st.floats(0.2, 1.0))
def test_profile_of_hostile_input(tmp_path_factory, lines, compression, cut):
    folder = tmp_path_factory.mktemp("h")
    text = LEGEND + b"".join(x + b"\n" for _, x in lines)
    data = {None: text, "gzip": gzip.compress(text, mtime=0), "bz2": bz2.compress(text)}[compression]
    data = data[:max(1, int(len(data) * cut))]
    path = folder / ("in.cdx" + {None: "", "gzip": ".gz", "bz2": ".bz2"}[compression])
    path.write_bytes(data)
    out = profiled(folder, path)
    if out is None:
        return
    whole = whole_lines(data, compression)
    # a line cut short still counts when it keeps its 11 fields (a plain file's last line)
    expected = sum(1 for x in whole.split(b"\n") if x.startswith(b"com,example)/p") and len(x.split()) == 11)
    if not whole.startswith(LEGEND):
        expected = 0
    meta = None
    with open(out, "rb") as f:
        for x in f:
            if x.startswith(b'!meta {"inputs"'):
                meta = orjson.loads(x[6:])
    assert meta is not None
    if expected or meta["captures"]:
        assert meta["captures"] == expected, (meta, compression)


good_cdxj = st.builds(
    lambda i, year, length, lang: b'com,example)/p%d %d0102030405 {"url":"http://example.com/p%d","mime":"text/html",'
    b'"status":"200","digest":"D%d","length":"%d","languages":%s}' % (i, year, i, i, length, orjson.dumps(lang)),
    st.integers(0, 50), st.integers(1996, 2024), st.integers(0, 10 ** 6),
    st.one_of(st.sampled_from(["eng", "ara,eng", "zh-Hant", "", "und", "x" * 70]), st.text(max_size=12)))
junk_cdxj = st.one_of(
    st.binary(max_size=60).map(lambda b: b"org,junk)/j 2013 {" + b.replace(b"\n", b"").replace(b"\r", b"")),
    st.builds(lambda value: b'com,example)/v 2013 {"languages":%s}' % orjson.dumps(value),
              st.recursive(st.none() | st.booleans() | st.integers(-2 ** 63, 2 ** 63 - 1) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                          max_size=3),
                           max_leaves=6)))
cdxj_line = st.one_of(good_cdxj.map(lambda x: (True, x)), junk_cdxj.map(lambda x: (False, x)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(lines=st.lists(cdxj_line, min_size=1, max_size=30), compression=st.sampled_from([None, "gzip"]),
       cut=st.floats(0.3, 1.0), pure=st.booleans())
def test_language_profile_of_hostile_cdxj(tmp_path_factory, lines, compression, cut, pure):
    """Hostile CDXJ (junk JSON, languages of any JSON type) through `profile --policy lang`, on
    the compiled and the Python path: exit 0 or 2, a five-field profile that validates, and every
    whole well-formed line counted once."""
    folder = tmp_path_factory.mktemp("l")
    text = b"".join(x + b"\n" for _, x in lines)
    data = gzip.compress(text, mtime=0) if compression else text
    data = data[:max(1, int(len(data) * cut))]
    path = folder / ("in.cdxj" + (".gz" if compression else ""))
    path.write_bytes(data)
    out = profiled(folder, path, ["--policy", "lang"], ARCHIVE_PROFILER_PURE_PYTHON="1" if pure else "")
    if out is None:
        return
    whole = whole_lines(data, compression)
    expected = sum(1 for x in whole.split(b"\n") if x.startswith(b"com,example)/") and _is_object(x.split(b" ", 2)[-1]))
    with open(out, "rb") as f:
        lines_out = f.read().splitlines()
    assert b'!keys ["surt","datetime","mime","status","lang"]' in lines_out
    com = [x for x in lines_out if x.startswith(b"com,* - - - - {")]
    assert (orjson.loads(com[0].split(b" ", 5)[5])["urim"]["total"] if com else 0) == expected


def _is_object(block):
    try:
        return isinstance(orjson.loads(block), dict)
    except orjson.JSONDecodeError:
        return False
