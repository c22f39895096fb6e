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
    out = folder / "out.cdxj"
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", str(path), "-o", str(out), "-q"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode in (0, 2), r.stderr
    assert "Traceback" not in r.stderr
    if r.returncode == 2:
        assert not out.exists()
        return
    report = validate(str(out))
    assert report.count == 0, [(p.lineno, p.message) for p in report.problems]
    held = recoverable(data, compression)
    whole = held[:held.rfind(b"\n") + 1] if compression else held
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
