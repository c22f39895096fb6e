"""Numbers in arguments are ASCII digits (profiler.cli.arguments): Python's int() and
str.isdigit() also take superscripts, Arabic-Indic and fullwidth digits, which gave a traceback
(lookup --datetime ²⁰¹³) or were taken silently (--top ٣). One line, exit 2."""

import os
import subprocess
import sys

import pytest

from profiler.run.profile import run_profile

from helpers.damage import one_line_error

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")
#: 2013 in superscripts, Arabic-Indic, extended Arabic-Indic, fullwidth and Devanagari digits
YEARS = ["²⁰¹³", "٢٠١٣", "۲۰۱۳", "２０１３", "२०१३"]
#: 3 in the same scripts
THREES = ["³", "٣", "۳", "３", "३"]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("a")
    profile = str(d / "p.cdxj")
    run_profile([SAMPLE], profile, created="2026-01-01T00:00:00Z")
    assert cli("ukvs", profile, "-o", str(d / "p.ukvs"), "--keys", "surt,datetime").returncode == 0
    return {"profile": profile, "map": str(d / "p.ukvs"), "dir": d}


@pytest.mark.parametrize("year", YEARS)
@pytest.mark.parametrize("which", ["profile", "map"])
def test_a_datetime_of_other_digits(files, year, which):
    r = cli("lookup", files[which], "http://cnn.com/", "--datetime", year)
    assert one_line_error(r.returncode, r.stderr, "not a datetime"), r.stderr


@pytest.mark.parametrize("year", YEARS)
@pytest.mark.parametrize("command", ["query", "overlap"])
def test_a_datetime_field_of_other_digits(files, year, command):
    argv = ["query", files["profile"]] if command == "query" else ["overlap", files["profile"], files["profile"]]
    r = cli(*argv, "--datetime", year)
    assert one_line_error(r.returncode, r.stderr, "--datetime"), r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("three", THREES)
@pytest.mark.parametrize("argv", [
    ["query", "{profile}", "--level", "host", "--by", "bytes", "--top"],
    ["report", "{profile}", "-o", "{dir}/r.html", "--top"],
    ["split", "{profile}", "-o", "{dir}/pages", "--max-lines"],
    ["compact", "{map}", "-o", "{dir}/c.ukvs", "--max-lines"],
    ["compact", "{map}", "-o", "{dir}/c.ukvs", "--max-bytes"],
    ["validate", "{profile}", "--max-problems"],
    ["serve", "{map}", "--workers"],
    ["serve", "{map}", "--port"],
    ["serve", "{map}", "--max-mapped"],
    ["profile", SAMPLE, "-o", "{dir}/x.cdxj", "--cores"],
])
def test_a_count_of_other_digits(files, argv, three):
    r = cli(*[a.format(**files) for a in argv], three)
    assert one_line_error(r.returncode, r.stderr, "not a whole number"), r.stderr
    assert not [n for n in os.listdir(files["dir"]) if n.startswith(("r.html", "pages", "c.ukvs", "x.cdxj"))]


@pytest.mark.parametrize("size", ["６４M", "٦٤M", "64１k", "infM", "nanM", "1e400"])
def test_a_split_size_of_other_digits(files, size):
    r = cli("profile", SAMPLE, "-o", str(files["dir"] / "x.cdxj"), "--split-size", size)
    assert one_line_error(r.returncode, r.stderr, "not a size"), r.stderr


def test_ascii_numbers_still_work(files):
    r = cli("query", files["profile"], "--level", "host", "--by", "bytes", "--top", "3")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 3
    r = cli("lookup", files["profile"], "http://cnn.com/", "--datetime", "2013")
    assert r.returncode == 0 and r.stdout.startswith("http://cnn.com/\t")


@pytest.mark.parametrize("option", ["--idle-timeout", "--head-timeout", "--write-timeout"])
@pytest.mark.parametrize("value", ["٣", "３", "³", " 3", "3 ", "+3", "1_000", "1e3", "0x10"])
def test_seconds_of_other_digits_or_spellings(files, option, value):
    """serve's timeouts were read by float(), which takes other scripts' digits, blanks, signs,
    '_' and exponents: `--idle-timeout ٣` served with 3 s."""
    r = cli("serve", files["map"], "--port", "0", option, value)
    assert one_line_error(r.returncode, r.stderr, "not a number of seconds"), r.stderr


@pytest.mark.parametrize("command", ["serve", "explore"])
@pytest.mark.parametrize("host", ["a" * 100, "a..b", "." * 3])
def test_a_host_the_idna_codec_refuses_is_one_line(files, command, host):
    """A host name with a label over 63 characters or an empty one: a traceback (UnicodeError
    from the IDNA codec in getaddrinfo)."""
    r = cli(command, files["map" if command == "serve" else "profile"], "--port", "0", "--host", host)
    assert one_line_error(r.returncode, r.stderr, "cannot listen on"), r.stderr


NOT_UTF8 = os.fsdecode(b"\xff\xfe")


@pytest.mark.parametrize("argv, option", [
    (["profile", SAMPLE, "-o", "{dir}/x.cdxj", "--archive-uri"], "--archive-uri"),
    (["ukvs", "{profile}", "-o", "{dir}/x.ukvs", "--archive-uri"], "--archive-uri"),
    (["merge", "{profile}", "-o", "{dir}/x.cdxj", "--archive-uri"], "--archive-uri"),
    (["report", "{profile}", "-o", "{dir}/x.html", "--title"], "--title"),
    (["query", "{profile}", "--surt"], "--surt"),
    (["query", "{profile}", "--mime"], "--mime"),
    (["query", "{profile}", "--group", "surt", "--under"], "--under"),
    (["split", "{profile}", "--max-lines", "3000", "-o", "{dir}/pg", "--base-uri"], "--base-uri"),
])
def test_an_option_that_is_not_utf8_is_one_line(files, argv, option):
    """Bytes of an argument that are not UTF-8 (lone surrogates in Python) in a value written to
    JSON or HTML, or encoded for a search: a traceback (orjson's TypeError, a UnicodeEncodeError)."""
    r = subprocess.run([sys.executable, "-m", "profiler.cli"] + [a.format(**files) for a in argv] + [NOT_UTF8],
                       capture_output=True, text=True, errors="replace", env=dict(os.environ, PYTHONPATH=ROOT),
                       timeout=120)
    assert one_line_error(r.returncode, r.stderr, "argument %s: not UTF-8" % option), r.stderr
    assert not [n for n in os.listdir(files["dir"]) if n.startswith(("x.", "pg"))]


def test_a_split_prefix_that_is_not_utf8_is_one_line(files):
    """The pages' names are written into their links (JSON): a prefix not UTF-8 was a traceback."""
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "split", files["profile"], "--max-lines", "3000",
                        "-o", os.path.join(str(files["dir"]), NOT_UTF8)], capture_output=True, text=True,
                       errors="replace", env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert one_line_error(r.returncode, r.stderr, "the prefix is not UTF-8"), r.stderr
    assert not [n for n in os.listdir(files["dir"]) if n.startswith((NOT_UTF8, ".split-"))]
