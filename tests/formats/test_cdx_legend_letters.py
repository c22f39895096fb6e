"""CDX legend letters the reader does not map (``c``, the old-style checksum of the IA legend, ``d``,
``v``, ``X``, a word), letters a legend repeats, and legends with more or fewer fields than the
lines: a letter the reader does not know holds its place (the fields after it are read where they
are), a repeated letter is read at its first position (wget's ``a b a ...``; the compiled map side
read the first, the Python parser the last), a line with more or fewer fields than the legend is a
counted ``bad_field_count``, and a legend that names no URL or urlkey is refused in one line. The
compiled and the Python readers write the same profile."""

import contextlib

import pytest

from profiler.formats import cdx
from profiler.nightly import fold
from profiler.run.profile import run_profile

from helpers.cliruns import run
from helpers.exactness import pure_python

ROWS = [
    [b"com,example)/a", b"20200101000000", b"http://example.com/a", b"text/html", b"200", b"AAAA", b"-", b"-",
     b"1000", b"0", b"f1.warc.gz"],
    [b"com,example)/b", b"20210101000000", b"http://example.com/b", b"image/png", b"404", b"BBBB", b"-", b"-",
     b"2000", b"100", b"f1.warc.gz"],
    [b"org,example)/c", b"20220101000000", b"http://example.org/c", b"text/plain", b"301", b"CCCC", b"-", b"-",
     b"3000", b"200", b"f2.warc.gz"],
]
STANDARD = "N b a m s k r M S V g"


def write(path, legend, rows):
    path.write_bytes(b" CDX " + legend.encode() + b"\n" + b"".join(b" ".join(r) + b"\n" for r in rows))
    return path


def profile_of(path, out):
    """(the profile's lines, its !meta's run figures), the same from the compiled and the Python readers."""
    found = []
    for python in (False, True):
        with pure_python() if python else contextlib.nullcontext():
            run_profile([str(path)], str(out), created="2026-01-01T00:00:00Z")
        found.append(out.read_bytes())
    assert found[0] == found[1], "the compiled and the Python readers differ"
    meta = fold.run_meta(str(out))[0]
    return [line for line in found[0].splitlines() if not line.startswith(b"!")], \
        (meta["captures"], meta.get("skipped", {}))


def with_field(rows, at, value):
    return [r[:at] + [value] + r[at:] for r in rows]


@pytest.mark.parametrize("legend, rows", [
    ("N b a m s k c r M S V g", with_field(ROWS, 6, b"0123abcd")),      # c: the IA legend's old-style checksum
    ("c N b a m s k r M S V g", with_field(ROWS, 0, b"0123abcd")),
    ("N b a m s k r M S V g c", with_field(ROWS, 11, b"0123abcd")),
    ("N b a m s k r M S d V v g", with_field(with_field(ROWS, 9, b"77"), 11, b"88")),
    ("X N b a m s k r M S V g", with_field(ROWS, 0, b"x")),
    ("N b a m s k r M S V g foo", with_field(ROWS, 11, b"bar")),
    ("N b a m s k r M S V g C", with_field(ROWS, 11, b"99")),
], ids=lambda v: v if isinstance(v, str) else "")
def test_letters_the_reader_does_not_know_hold_their_place(tmp_path, legend, rows):
    expected, figures = profile_of(write(tmp_path / "std.cdx", STANDARD, ROWS), tmp_path / "std.cdxj")
    assert profile_of(write(tmp_path / "odd.cdx", legend, rows), tmp_path / "odd.cdxj") == (expected, figures)
    assert figures == (3, {})


@pytest.mark.parametrize("legend, rows", [
    ("N b a m s k r M S V g S", with_field(ROWS, 11, b"7")),          # S twice: the first is the length
    ("N b a m s k r M S V g b", with_field(ROWS, 11, b"19990101000000")),
    ("N b a m s k r M S V g a", with_field(ROWS, 11, b"http://example.net/")),
    ("N b a m s k r M S V g N", with_field(ROWS, 11, b"net,example)/")),
])
def test_a_repeated_letter_is_read_at_its_first_position(tmp_path, legend, rows):
    expected = profile_of(write(tmp_path / "std.cdx", STANDARD, ROWS), tmp_path / "std.cdxj")
    assert profile_of(write(tmp_path / "rep.cdx", legend, rows), tmp_path / "rep.cdxj") == expected


def test_a_repeated_letter_is_read_at_its_first_position_by_the_parser():
    parse = cdx.make_parser("N b a m s k r M S V g S")
    found = parse(b" ".join(ROWS[0] + [b"7"]))
    assert (found.length, found.timestamp) == (1000, "20200101000000")
    found = cdx.make_parser("a b a m s k r M V g u")(
        b"http://example.com/a 20200101000000 http://example.org/b text/html 200 AAAA - - 0 f.warc.gz <urn:x>")
    assert found.urlkey == "com,example)/a"


@pytest.mark.parametrize("legend", ["N b a m s k r M S V", "N b a m s k r M S V g c"])
def test_lines_with_more_or_fewer_fields_than_the_legend_are_counted_skips(tmp_path, legend):
    _, figures = profile_of(write(tmp_path / "a.cdx", legend, ROWS), tmp_path / "a.cdxj")
    assert figures == (0, {"bad_field_count": 3})


def test_a_line_short_of_the_legend_is_a_counted_skip(tmp_path):
    rows = ROWS[:2] + [ROWS[2][:9]]
    _, figures = profile_of(write(tmp_path / "a.cdx", STANDARD, rows), tmp_path / "a.cdxj")
    assert figures == (2, {"bad_field_count": 1})


@pytest.mark.parametrize("legend", ["A b m s k r M S V g", "n b m s k r M S V g", "b m s k r M S V g"])
def test_a_legend_without_a_url_or_urlkey_is_refused_in_one_line(tmp_path, capsys, legend):
    rows = [r[1:2] + r[3:] for r in ROWS]
    rows = [[b"http://example.com/x"] + r for r in rows] if legend[0] in "An" else rows
    path = write(tmp_path / "a.cdx", legend, rows)
    assert run("profile", path, "-o", tmp_path / "a.cdxj", "-q") == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "legend" in err and "a.cdx" in err
    assert not (tmp_path / "a.cdxj").exists()
