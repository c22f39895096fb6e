"""An uncompressed index whose last line has no line end: a file copied or written only in part
may end inside a line, whose capture then reads as it is (a 7-field CDX cut inside its length
gives a smaller length). Such a line cannot be told from a whole one, so the run reads it and says
so in a warning naming the file; a compressed index cut short fails to inflate instead."""

import gzip
import subprocess
import sys

import pytest

from profiler.formats import inputs

LINE = b"com,a)/ 20130101000000 http://a.com/ text/html 200 AAAA 67890\n"


@pytest.mark.parametrize("data, unended", [
    (LINE, False), (LINE[:-3], True), (LINE + LINE[:-1], True), (LINE + b"\n", False),
    (b'com,a)/ 20130101000000 {"url":"http://a.com/","status":"200","length":"5"}', True),
])
def test_an_index_whose_last_line_has_no_end_is_found(tmp_path, data, unended):
    path = tmp_path / "in.cdx"
    path.write_bytes(data)
    assert inputs.last_line_unended(inputs.sniff(str(path))) is unended


def test_compressed_inputs_and_archives_are_not_asked(tmp_path):
    gz = tmp_path / "in.cdx.gz"
    gz.write_bytes(gzip.compress(LINE[:-3]))
    assert not inputs.last_line_unended(inputs.sniff(str(gz)))
    nothing = tmp_path / "empty.cdx"
    nothing.write_bytes(b"")
    assert not inputs.last_line_unended(inputs.sniff(str(nothing)))


def test_a_run_over_it_warns_once_and_counts_it(tmp_path):
    """The run reads the line (the file may simply lack its last line end) and says which file."""
    path = tmp_path / "cut.cdx"
    path.write_bytes(LINE + LINE.replace(b"com,a)/", b"com,b)/")[:-4])
    done = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", str(path), "-o", str(tmp_path / "p.cdxj"),
                           "-r", "inline"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("cut.cdx: its last line has no line end") == 1
    assert "2 captures" in done.stderr
