"""Readers are strict unless told: a malformed line makes ukvs, merge, report and query refuse
the file in one line naming it; with --skip-bad-lines they skip it, counted and reported once,
and answer as from the file without it; validate stays strict; '@' header lines are read
exactly like '!' ones."""

import os
import subprocess
import sys

import pytest

from profiler.run.profile import run_profile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")
URI = "https://archive.example.org/"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("t")
    good = d / "good.cdxj"
    run_profile([SAMPLE], str(good), archive_uri=URI, created="2026-01-01T00:00:00Z")
    lines = good.read_bytes().splitlines(keepends=True)
    data_start = next(i for i, x in enumerate(lines) if not x.startswith(b"!"))
    at = len(lines) // 2
    bad = d / "bad.cdxj"
    key = lines[at].split(b" {")[0]
    bad.write_bytes(b"".join(lines[:at + 1] + [key + b"~ no json block\n"] + lines[at + 1:]))
    ats = d / "at.cdxj"
    ats.write_bytes(b"".join(b"@" + x[1:] if x.startswith(b"!") else x for x in lines))
    return {"good": str(good), "bad": str(bad), "at": str(ats), "dir": d, "lineno": at + 2,
            "data": len(lines) - data_start}


COMMANDS = [
    ["ukvs", "{bad}", "-o", "{out}.ukvs"],
    ["merge", "{bad}", "{good}", "-o", "{out}.cdxj"],
    ["report", "{bad}", "-o", "{out}.html"],
    ["query", "{bad}", "--level", "host", "--top", "3", "--by", "bytes"],
]


@pytest.mark.parametrize("args", COMMANDS)
def test_a_malformed_line_is_refused(files, args):
    out = str(files["dir"] / ("refused-" + args[0]))
    r = cli(*[a.format(bad=files["bad"], good=files["good"], out=out) for a in args])
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [r.stderr.strip()]
    assert "bad.cdxj line %d: not KEY {json}" % files["lineno"] in r.stderr
    assert r.stdout == "" and not [n for n in os.listdir(files["dir"]) if n.startswith("refused-")]


@pytest.mark.parametrize("args", COMMANDS)
def test_a_malformed_line_is_skipped_with_one_warning(files, args):
    out = str(files["dir"] / ("out-" + args[0]))
    argv = [a.format(bad=files["bad"], good=files["good"], out=out) for a in args] + ["--skip-bad-lines"]
    r = cli(*argv)
    assert r.returncode == 0, r.stderr
    warnings = [x for x in r.stderr.splitlines() if "damaged line(s) skipped" in x]
    assert len(warnings) == 1
    assert "bad.cdxj: 1 damaged line(s) skipped (1 not a data line)" in warnings[0]
    assert "line %d" % files["lineno"] in warnings[0]


def test_validate_stays_strict(files):
    r = cli("validate", files["bad"])
    assert r.returncode != 0


def test_the_same_answers_without_the_bad_line(files):
    out_bad, out_good = str(files["dir"] / "b.ukvs"), str(files["dir"] / "g.ukvs")
    assert cli("ukvs", files["bad"], "-o", out_bad, "--skip-bad-lines").returncode == 0
    assert cli("ukvs", files["good"], "-o", out_good).returncode == 0
    strip = lambda p: [x for x in open(p, "rb") if not x.startswith(b"!meta")]     # noqa: E731
    assert strip(out_bad) == strip(out_good)
    assert b'"skipped_lines":{"%s":{"lines":1,"reasons":{"not_a_line":1},"first_line":%d}}' \
        % (files["bad"].encode(), files["lineno"]) in open(out_bad, "rb").read()


def test_at_headers_are_read_like_bang_headers(files):
    for name in ("good", "at"):
        out = str(files["dir"] / ("%s.ukvs" % name))
        assert cli("ukvs", files[name], "-o", out).returncode == 0
        assert ('!id {"uri":"%s"}' % URI) in open(out).read()
    r = cli("query", files["at"], "--surt", "com,*", "--group", "mime")
    assert r.returncode == 0 and r.stdout.count("\n") > 3
    r = cli("query", files["at"], "--surt", "com,example)/*", "--group", "mime")
    assert r.returncode == 2 and "policy" in r.stderr          # the policy was read from @meta
    r = cli("report", files["at"], "-o", str(files["dir"] / "at.html"))
    assert r.returncode == 0 and URI in open(str(files["dir"] / "at.html")).read()
