"""Every command that reads profiles and maps opens only regular files (profiler.files.infiles):
a device, a FIFO, a socket or a folder is refused in one line before it is read (diff and
overlap read a device without bound and hung on a FIFO); and a file that is not a profile or
map but something the user may have meant (a CDX or CDXJ index, a WARC or ARC file, a
compressed profile, an empty file) is named for what it is, with what to do."""

import gzip
import io
import json
import os
import re
import socket
import subprocess
import sys

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from profiler.testing import synthetic

from helpers.damage import one_line_error
from helpers.random_archives import index_lines, random_captures, random_languages

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, PYTHONPATH=ROOT))


def readers(path, profile, out):
    """Every reading command, reading path (and profile where it needs two files)."""
    return {
        "lookup": ["lookup", path, "http://cnn.com/"],
        "query": ["query", path],
        "merge": ["merge", path, profile, "-o", out + ".cdxj"],
        "split": ["split", path, "--max-lines", "10", "-o", out],
        "compact": ["compact", path, "--max-lines", "10", "-o", out + ".c"],
        "diff": ["diff", profile, path],
        "overlap": ["overlap", path, profile],
        "ukvs": ["ukvs", path, "-o", out + ".ukvs"],
        "validate": ["validate", path],
        "report": ["report", path, "-o", out + ".html"],
    }


NAMES = ["lookup", "query", "merge", "split", "compact", "diff", "overlap", "ukvs", "validate", "report"]


@pytest.mark.parametrize("name", NAMES)
def test_a_fifo_is_never_opened(tmp_path, profile, name):
    fifo = str(tmp_path / "fifo.cdxj")
    os.mkfifo(fifo)
    r = cli(*readers(fifo, profile, str(tmp_path / "out"))[name], timeout=60)     # a hang fails here
    assert one_line_error(r.returncode, r.stderr, "fifo.cdxj is a FIFO, not a regular file"), r.stderr


@pytest.mark.parametrize("name", NAMES)
def test_a_device_is_not_read(tmp_path, profile, name):
    r = cli(*readers("/dev/zero", profile, str(tmp_path / "out"))[name], timeout=60)
    assert one_line_error(r.returncode, r.stderr, "/dev/zero is a character device, not a regular file"), r.stderr


@pytest.mark.parametrize("name", NAMES + ["export", "explore", "serve"])
def test_a_file_of_the_kernel_is_not_read(tmp_path, profile, name):
    """/proc/kmsg waits for the kernel's next message, /proc/self/pagemap reads without end: a
    regular file to stat, refused by the filesystem it is on."""
    for path in [p for p in ("/proc/kmsg", "/proc/self/pagemap") if os.access(p, os.R_OK)]:
        out = str(tmp_path / "out")
        args = {"export": ["export", path, "-o", out + ".json"], "explore": ["explore", path, "--port", "0"],
                "serve": ["serve", path, "--port", "0"]}.get(name) or readers(path, profile, out)[name]
        r = cli(*args, timeout=60)
        assert one_line_error(r.returncode, r.stderr, path, "on the kernel's proc filesystem"), r.stderr


@pytest.mark.parametrize("name", ["query", "merge", "diff", "overlap", "ukvs", "validate"])
def test_a_socket_and_a_folder_are_refused(tmp_path, profile, name):
    sock = str(tmp_path / "s.cdxj")
    server = socket.socket(socket.AF_UNIX)
    server.bind(sock)
    try:
        r = cli(*readers(sock, profile, str(tmp_path / "out"))[name], timeout=60)
        assert one_line_error(r.returncode, r.stderr, "s.cdxj is a socket"), r.stderr
    finally:
        server.close()
    r = cli(*readers(str(tmp_path), profile, str(tmp_path / "out"))[name], timeout=60)
    assert one_line_error(r.returncode, r.stderr, "is a folder"), r.stderr


def test_a_link_to_a_fifo_is_not_opened(tmp_path, profile):
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    os.symlink(fifo, str(tmp_path / "link.cdxj"))
    r = cli("diff", profile, str(tmp_path / "link.cdxj"), timeout=60)
    assert one_line_error(r.returncode, r.stderr, "is a FIFO"), r.stderr


def write_warc(path, compressed):
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=compressed)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record("http://example.com/", "response",
                                                      payload=io.BytesIO(b"<html>hi</html>"),
                                                      http_headers=headers))


@pytest.fixture(scope="module")
def mistakes(tmp_path_factory, profile):
    """Files given by mistake: indexes, archives, compressed profiles."""
    import random
    d = tmp_path_factory.mktemp("m")
    out = {}
    out["cdx"] = str(d / "crawl.cdx")
    synthetic.write_cdx(out["cdx"], 200, seed=1)
    out["cdx.gz"] = SAMPLE
    rng = random.Random(2)
    caps = random_captures(rng)
    out["cdxj"] = str(d / "crawl.cdxj")
    with open(out["cdxj"], "wb") as f:
        f.write(b"".join(x + b"\n" for x in sorted(index_lines(caps, random_languages(rng, caps)))))
    out["warc"] = str(d / "crawl.warc")
    write_warc(out["warc"], False)
    out["warc.gz"] = str(d / "crawl.warc.gz")
    write_warc(out["warc.gz"], True)
    out["arc"] = str(d / "crawl.arc")
    with open(out["arc"], "wb") as f:
        f.write(b"filedesc://crawl.arc 0.0.0.0 20130101000000 text/plain 76\n1 0 Example\nURL IP-address "
                b"Archive-date Content-type Archive-length\n\n")
    out["profile.gz"] = str(d / "p.cdxj.gz")
    with open(profile, "rb") as f, gzip.open(out["profile.gz"], "wb") as g:
        g.write(f.read())
    out["empty"] = str(d / "empty.cdxj")
    open(out["empty"], "wb").close()
    out["jsonld"] = str(d / "p.jsonld")
    assert cli("export", profile, "-o", out["jsonld"]).returncode == 0
    out["odu"] = str(d / "profile-20141126-141036.json")
    with open(out["odu"], "w") as f:       # the shape oduwsdl archive_profiler writes (indent 4, keys sorted)
        json.dump({"@context": "https://oduwsdl.github.io/contexts/archiveprofile.jsonld", "@id": "http://e.org/",
                   "about": {"name": "E"}, "stats": {
                       "language": {}, "mediatype": {"text/html": {"urim": {"max": 2, "min": 1, "total": 3}, "urir": 2}},
                       "suburi": {"com)/": {"urim": {"max": 2, "min": 1, "total": 3}, "urir": 2}}, "time": {}}},
                  f, indent=4, sort_keys=True)
    return out


MISTAKES = {
    "cdx": "is a CDX index, not a profile or map; profile it first: archive-profiler profile",
    "cdx.gz": "is a CDX index (gzip-compressed), not a profile or map; profile it first",
    "cdxj": "is a CDXJ index, not a profile or map; profile it first",
    "warc": "is a WARC file, not a profile or map; profile it first",
    "warc.gz": "is a WARC file (gzip-compressed), not a profile or map; profile it first",
    "arc": "is an ARC file, not a profile or map; profile it first",
    "profile.gz": "is gzip-compressed: decompress it first (gzip -dk",
    "empty": "is empty: not a profile or map",
    "jsonld": "is a JSON-LD document (as `export` writes from a profile: give the profile itself), not a profile",
    "odu": ("is a JSON archive profile (oduwsdl archive_profiler's), whose keys are not this format's, not a profile "
            "or map: convert it first: archive-profiler merge "),
}


@pytest.mark.parametrize("name, kind", [(n, k) for n in NAMES for k in MISTAKES
                                        if (n not in ("report", "query", "lookup", "overlap")
                                            or k in ("cdx", "cdxj", "empty", "odu"))
                                        and (n, k) != ("merge", "odu")])     # merge converts it
def test_an_index_is_named_for_what_it_is(tmp_path, profile, mistakes, name, kind):
    """query called a CDX 'a UKVS map', diff 'a map', validate listed 5,000 problems. (Every
    command meets each kind of file; report, query, lookup and overlap, which open files the
    same way, the commonest three.)"""
    r = cli(*readers(mistakes[kind], profile, str(tmp_path / "out"))[name])
    assert one_line_error(r.returncode, r.stderr, MISTAKES[kind]), r.stderr
    assert r.stdout == ""


def test_the_suggested_command_works(tmp_path, mistakes):
    r = cli("query", mistakes["cdx"])
    suggested = r.stderr.strip().split("profile it first: ")[1].split()
    assert suggested[:2] == ["archive-profiler", "profile"] and suggested[-1] == mistakes["cdx"] + ".cdxj"
    assert cli(*suggested[1:], "-q").returncode == 0
    assert cli("query", suggested[-1], "--surt", "*").returncode == 0


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("exists", [False, True])
def test_a_file_name_with_control_bytes_is_shown_on_one_line(tmp_path, profile, name, exists):
    """A file named with a newline and a terminal escape ('a\\nb\\x1b[31m.cdxj'), missing or
    unsorted: its error was two lines, and the escape reached the terminal. Control bytes of an
    error are shown escaped: one line, exit 2."""
    path = str(tmp_path / "a\nb\x1b[31m.cdxj")
    if exists:
        lines = open(profile, "rb").read().splitlines(True)
        first = next(i for i, line in enumerate(lines) if not line.startswith(b"!"))
        lines[first + 3], lines[first + 4] = lines[first + 4], lines[first + 3]
        with open(path, "wb") as f:
            f.write(b"".join(lines))
    r = cli(*readers(path, profile, str(tmp_path / "out"))[name])
    err = r.stderr.strip()
    if name == "validate" and exists:
        assert r.returncode == 1 and "not in byte order" in r.stdout and "\x1b" not in r.stdout, r.stdout
        assert len(r.stdout.strip().splitlines()) == len(err.splitlines()) == 1
    else:
        assert r.returncode == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "\x1b" not in err and "a\\nb\\x1b[31m.cdxj" in err, err


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("name", ["merge", "split", "compact", "ukvs", "report", "export"])
def test_an_input_named_in_bytes_that_are_not_utf8_is_written_as_its_name(tmp_path, profile, name, skip):
    """An input whose name is not UTF-8 (b'n\\xff\\xfe.cdxj', in any locale), named in the
    output's !meta (merge's parts, a map's source, a page's source, the report's title, the
    skipped lines of --skip-bad-lines): a TypeError or UnicodeEncodeError traceback, exit 1,
    nothing written. Its name is written as profile does, bytes that are not UTF-8 as \\xNN."""
    path = os.fsdecode(os.path.join(os.fsencode(str(tmp_path)), b"n\xff\xfe.cdxj"))
    with open(profile, "rb") as f, open(path, "wb") as out:
        out.write(f.read())
        if skip:
            out.write(b'zz,zz)/* - - - {"urim":\n')       # a damaged last line
    out = str(tmp_path / "out")
    args = readers(path, profile, out)[name] if name != "export" else ["export", path, "-o", out + ".json"]
    if name in ("split", "compact"):
        args = args[:2] + ["--max-lines", "500"] + args[4:]
    for locale in ("C", "C.UTF-8"):
        r = subprocess.run([sys.executable, "-m", "profiler.cli"] + args[:1] + ["-q"] + args[1:]
                           + (["--skip-bad-lines"] if skip else []), capture_output=True, text=True,
                           timeout=300, env=dict(os.environ, PYTHONPATH=ROOT, LC_ALL=locale))
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    written = [os.path.join(str(tmp_path), n) for n in os.listdir(str(tmp_path)) if n.startswith("out")]
    assert written
    text = b"".join(open(w, "rb").read() for w in written)
    if name != "export" and (name != "compact" or skip):
        assert re.search(rb"n\\+xff\\+xfe", text), text[:300]
    for w in written:
        if not w.endswith((".html", ".json")):
            assert cli("validate", w).returncode == 0
