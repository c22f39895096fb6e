"""Reading indexes in bounded memory: compressed data is inflated a bounded piece at a time, a
line longer than MAX_LINE is skipped and counted (`line_too_long`) wherever chunks and splits
cut it, and a truncated bz2 file counts every complete line, as a truncated gzip does."""

import bz2
import gzip
import os
import resource
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.io import readers
from profiler.run.profile import run_profile
from profiler.files.profilefile import iter_data
from profiler.nightly import fold as nightly_fold

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LEGEND = b" CDX N b a m s k r M S V g\n"


def good(i):
    return b"com,example)/%d 20130101000000 http://example.com/%d text/html 200 D%d - - 100 0 a.warc.gz\n" % (i, i, i)


def lines_of(chunks):
    return b"".join(chunks).split(b"\n")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lengths=st.lists(st.integers(0, 60), min_size=1, max_size=30), limit=st.integers(5, 30),
       chunk=st.integers(1, 30), data=st.data())
def test_long_lines_skipped_wherever_cut(monkeypatch, lengths, limit, chunk, data):
    """whole_lines and ranged reads over any chunking and any split points give exactly the
    lines of at most MAX_LINE bytes, and count the others once each."""
    monkeypatch.setattr(readers, "MAX_LINE", limit)
    monkeypatch.setattr(readers, "_CHUNK", max(1, min(chunk, limit)))
    text = b"".join(bytes([97 + i % 26]) * n + b"\n" for i, n in enumerate(lengths))
    expected = [line for line in text.split(b"\n")[:-1] if len(line) <= limit]
    too_long = sum(1 for n in lengths if n > limit)
    size = min(chunk, limit)
    counts = {}
    got = [x for x in lines_of(readers.whole_lines((text[i:i + size] for i in range(0, len(text), size)), counts)) if x]
    assert got == [x for x in expected if x] and counts.get("line_too_long", 0) == too_long
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=4))) | {0, len(text)})
    import io
    all_lines, counts = [], {}
    for a, b in zip(cuts, cuts[1:]):
        all_lines += [x for x in lines_of(readers._ranged_chunks(io.BytesIO(text), a, b, counts)) if x]
    assert all_lines == [x for x in expected if x]
    assert counts.get("line_too_long", 0) == too_long


def test_bz2_truncated_counts_every_complete_block(tmp_path):
    lines = [good(i) for i in range(60000)]
    data = bz2.compress(LEGEND + b"".join(lines), 1)
    path = tmp_path / "t.cdx.bz2"
    path.write_bytes(data[:int(len(data) * 0.8)])
    got = []
    with pytest.raises(EOFError):
        for chunk in readers.iter_bz2_streams(open(path, "rb")):
            got.append(chunk)
    text = b"".join(got)
    complete = text[:text.rfind(b"\n") + 1]
    assert complete == (LEGEND + b"".join(lines))[:len(complete)]
    assert len(complete) > 0.5 * len(LEGEND + b"".join(lines))
    out = tmp_path / "t.cdxj"
    run_profile([str(path)], str(out))
    captures = complete.count(b"\n") - 1
    root = dict(iter_data(str(out)))[b"* - - -"]
    assert root["urim"]["total"] == captures
    assert nightly_fold.run_meta(str(out))[0]["skipped"]["truncated_file"] == 1


def test_multi_stream_bz2(tmp_path):
    path = tmp_path / "m.cdx.bz2"
    path.write_bytes(bz2.compress(LEGEND + good(1)) + bz2.compress(good(2)))
    out = tmp_path / "m.cdxj"
    run_profile([str(path)], str(out))
    assert dict(iter_data(str(out)))[b"* - - -"]["urim"]["total"] == 2


@pytest.mark.parametrize("pure", ["", "1"])
def test_one_long_line_in_a_gzip_is_skipped_in_bounded_memory(tmp_path, pure):
    path = tmp_path / "long.cdx.gz"
    with gzip.open(str(path), "wb", compresslevel=1) as f:
        f.write(LEGEND + good(1))
        block = b"x" * (1 << 20)
        for _ in range(400):                    # a 400 MB line
            f.write(block)
        f.write(b"\n" + good(2))
    out = tmp_path / "long.cdxj"
    # the peak of this program only (VmHWM): ru_maxrss keeps the parent's (pytest's) peak across
    # fork and exec
    code = ("import sys; from profiler.cli.main import main; r = main(sys.argv[1:]); "
            "print(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]); sys.exit(r)")
    env = dict(os.environ, PYTHONPATH=ROOT, ARCHIVE_PROFILER_PURE_PYTHON=pure)
    r = subprocess.run([sys.executable, "-c", code, "profile", str(path), "-o", str(out), "-q"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.split()[-1]) < 300 * 1024            # KB: well under the 300 MB bound
    meta = nightly_fold.run_meta(str(out))[0]
    assert meta["captures"] == 2 and meta["skipped"] == {"line_too_long": 1}
