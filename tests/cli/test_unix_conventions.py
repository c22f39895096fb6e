"""Unix conventions: '-' is standard input for inputs read as a stream (`profile -`,
`lookup FILE -`, `validate -`) and standard output for `-o -`; mrjob's own log lines appear
only with -v."""

import gzip
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), input=stdin, capture_output=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))


def body(data):
    return [x for x in data.splitlines() if b'"created"' not in x and not x.startswith(b'!meta {"inputs"')]


def test_profile_reads_stdin_and_writes_stdout(tmp_path):
    from_file = tmp_path / "f.cdxj"
    assert cli("profile", SAMPLE, "-o", str(from_file), "-q").returncode == 0
    for data in (open(SAMPLE, "rb").read(), gzip.decompress(open(SAMPLE, "rb").read())):
        r = cli("profile", "-", "-o", "-", "-q", stdin=data)
        assert r.returncode == 0, r.stderr
        assert body(r.stdout) == body(from_file.read_bytes())
    assert not [n for n in os.listdir(os.environ["TMPDIR"]) if n.startswith("archive-profiler-stdin-")]


def test_lookup_and_validate_read_stdin(tmp_path):
    profile = tmp_path / "p.cdxj"
    assert cli("profile", SAMPLE, "-o", str(profile), "-q").returncode == 0
    r = cli("lookup", str(profile), "-", stdin=b"http://example.com/\nnot a uri\n")
    lines = r.stdout.decode().splitlines()
    assert r.returncode == 0 and len(lines) == 2 and lines[1].split("\t")[1] == "invalid"
    r = cli("validate", "-", stdin=profile.read_bytes())
    assert r.returncode == 0 and b"valid CDXJ profile" in r.stderr
    r = cli("validate", "-", stdin=profile.read_bytes() + b"junk\n")
    assert r.returncode == 1


def test_mrjob_lines_only_with_verbose(tmp_path):
    """The runner's own lines (mrjob's, or the local runner's without mrjob: localjob's) only with -v."""
    out = tmp_path / "o.cdxj"
    for extra in ([], ["--", "--num-cores", "2"]):
        r = cli("profile", SAMPLE, "-o", str(out), "-r", "local", *extra)
        assert r.returncode == 0 and b"mrjob." not in r.stderr and b"Counters" not in r.stderr
        assert b"localjob" not in r.stderr
        r = cli("profile", SAMPLE, "-o", str(out), "-r", "local", "-v", *extra)
        assert r.returncode == 0 and (b"mrjob." if extra else b"archive-profiler.localjob: Running step") in r.stderr


def test_split_into_a_folder(tmp_path):
    profile = tmp_path / "p.cdxj"
    assert cli("profile", SAMPLE, "-o", str(profile), "-q").returncode == 0
    pages = tmp_path / "pages"
    pages.mkdir()
    for target in (str(pages) + os.sep, str(pages)):
        r = cli("split", str(profile), "--max-lines", "4000", "-o", target)
        assert r.returncode == 0, r.stderr
        assert sorted(os.listdir(pages)) == ["p-00001.cdxj", "p-00002.cdxj", "p-00003.cdxj"]
        assert str(pages / "p-00001.cdxj").encode() in r.stderr
    r = cli("split", str(profile), "--max-lines", "4000", "-o", str(tmp_path / "nosuch") + os.sep)
    assert r.returncode == 2


def test_profile_format_ukvs_writes_the_map_directly(tmp_path):
    profile, direct, via = tmp_path / "p.cdxj", tmp_path / "d.ukvs", tmp_path / "v.ukvs"
    assert cli("profile", SAMPLE, "-o", str(profile), "-q").returncode == 0
    assert cli("ukvs", str(profile), "-o", str(via)).returncode == 0
    r = cli("profile", SAMPLE, "-o", str(direct), "--format", "ukvs", "-q")
    assert r.returncode == 0, r.stderr
    strip = lambda p: [x for x in open(p, "rb") if not x.startswith(b"!meta")]     # noqa: E731
    assert strip(direct) == strip(via)
    r = cli("profile", SAMPLE, "-o", "-", "--format", "ukvs:surt,datetime", "-q")
    assert r.returncode == 0 and b'"keys":["surt","datetime"]' in r.stdout
    assert not [n for n in os.listdir(os.environ["TMPDIR"]) if n.startswith("archive-profiler-")]


def test_end_summary(tmp_path):
    out = tmp_path / "o.cdxj"
    for runner in ("inline", "local"):
        r = cli("profile", SAMPLE, "-o", str(out), "-r", runner)
        err = r.stderr.decode()
        assert r.returncode == 0, err
        assert "5,000 captures, 1,875 URI-Rs" in err
        lines = sum(1 for _ in open(out, "rb"))
        assert ("%s: %s lines" % (out, format(lines, ","))) in err and "CPU-s" in err
    r = cli("profile", SAMPLE, "-o", str(out), "-q")
    assert r.stderr == b""


def test_end_summary_of_a_profile_on_standard_output(tmp_path):
    """`-o -` gets the same summary, on stderr, skips included, from what was written."""
    junk = tmp_path / "junk.txt"
    junk.write_bytes(b"not an index\n")
    r = cli("profile", SAMPLE, str(junk), "-o", "-")
    err = r.stderr.decode()
    assert r.returncode == 0, err
    lines = r.stdout.count(b"\n")
    assert "5,000 captures, 1,875 URI-Rs" in err and "skipped: unusable_file 1" in err and "refused " in err
    assert ("standard output: %s lines, %.1f MB" % (format(lines, ","), len(r.stdout) / 1e6)) in err


def test_standard_input_is_named_dash_in_meta(tmp_path):
    """The copy of standard input lives in a temp folder removed at the end: !meta names it '-'."""
    data = open(SAMPLE, "rb").read()
    r = cli("profile", "-", "-o", "-", stdin=data)
    assert r.returncode == 0, r.stderr
    meta = [line for line in r.stdout.splitlines() if line.startswith(b'!meta {"inputs"')][0]
    assert meta.startswith(b'!meta {"inputs":["-"],"captures":5000')
    r = cli("profile", "-", SAMPLE, "-o", str(tmp_path / "p.cdxj"), stdin=b"not an index\n")
    meta = [line for line in (tmp_path / "p.cdxj").read_bytes().splitlines() if line.startswith(b'!meta {"inputs"')][0]
    assert b'"skipped_files":[{"path":"-","reason":"not ' in meta
    assert b"archive-profiler-stdin" not in r.stderr and b"refused -: not " in r.stderr


def test_lookup_without_a_uri_on_a_terminal_says_it_reads_uris_from_it(tmp_path):
    """A newcomer's `lookup FILE` (no URI) at a terminal waits for URIs: it says so on stderr, and
    the URIs typed are answered; from a pipe it says nothing."""
    import pty
    profile = tmp_path / "p.cdxj"
    assert cli("profile", SAMPLE, "-o", str(profile), "-q").returncode == 0
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "profiler.cli", "lookup", str(profile)], stdin=slave,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=ROOT))
        os.close(slave)
        os.write(master, b"http://www.cnn.com/world/\n\x04")     # typed ahead: a line, then Ctrl-D
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(master)
    said = err.decode().splitlines()
    assert len(said) == 1 and "reads URIs from the terminal" in said[0] and "Ctrl-D" in said[0], said
    assert proc.returncode == 0 and out.decode().split("\t")[1] == "held"
    r = cli("lookup", str(profile), stdin=b"http://www.cnn.com/world/\n")
    assert r.returncode == 0 and r.stderr == b""
