"""Files reached through another path than their name: standard output or input redirected to
an input (`>> IN`, `1<> IN`, `< OUT`), a descriptor's name (`/dev/stdout`, `/dev/fd/N`), a file
replaced between its check and its search, an output named through a link and '..', standard
input from a device that never ends. None of them is ever written over, read twice, searched
unchecked or read for ever."""

import os
import shutil
import subprocess
import sys

import pytest

from profiler.files import datalines
from profiler.files.sortedfile import ChangedFile
from profiler.toolkit.lookup import Lookup
from profiler.toolkit.query import SortedProfile
from profiler.toolkit.split import split

from helpers.cliruns import one_line_refusal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """A small CDX index (its first 200 lines)."""
    import gzip
    path = tmp_path_factory.mktemp("i") / "i.cdx"
    with gzip.open(SAMPLE, "rb") as f:
        path.write_bytes(b"".join(f.readline() for _ in range(200)))
    return str(path)


def cli(*args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, timeout=120):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), stdin=stdin, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=timeout, env=dict(os.environ, PYTHONPATH=ROOT))


def readers(path, other):
    """Every command reading the profile path and writing to standard output."""
    return {
        "query": ["query", path, "--surt", "com,*"],
        "lookup": ["lookup", path, "http://cnn.com/"],
        "validate": ["validate", path],
        "diff": ["diff", path, other],
        "overlap": ["overlap", path, other],
        "merge": ["merge", path, other, "-o", "-"],
        "ukvs": ["ukvs", path, "-o", "-"],
        "compact": ["compact", path, "--max-lines", "200", "-o", "-"],
        "export": ["export", path, "-o", "-"],
        "report": ["report", path, "-o", "-"],
    }


@pytest.mark.parametrize("name", sorted(readers("p", "q")))
@pytest.mark.parametrize("mode", ["append", "read-write"])
def test_standard_output_that_is_an_input_is_refused(tmp_path, profile, name, mode):
    """`query IN >> IN`, `ukvs IN -o - 1<> IN`: one line, exit 2, the input as it was (the
    answer was written into it: `query` overwrote the profile's first lines, exit 0; `compact`
    appended its map, exit 0; `merge` appended the merged profile, then failed on it as a header
    line after the data), as `cat IN >> IN` is refused."""
    a = tmp_path / "a.cdxj"
    shutil.copyfile(profile, a)
    before = a.read_bytes()
    flags = os.O_WRONLY | os.O_APPEND if mode == "append" else os.O_RDWR
    fd = os.open(str(a), flags)
    try:
        r = cli(*readers(str(a), profile)[name], stdout=fd)
    finally:
        os.close(fd)
    one_line_refusal(r, str(a), "standard output")
    assert a.read_bytes() == before


def test_profile_to_standard_output_that_is_its_input_is_refused(tmp_path, index):
    """`profile IN -o - >> IN` (the profile was appended to the index, exit 0), and the same with
    the index on standard input."""
    a = tmp_path / "a.cdx"
    shutil.copyfile(index, a)
    before = a.read_bytes()
    for argv, stdin in ((["profile", str(a), "-o", "-", "-q"], subprocess.DEVNULL),
                        (["profile", "-", "-o", "-", "-q"], "file")):
        fd = os.open(str(a), os.O_WRONLY | os.O_APPEND)
        src = open(a, "rb") if stdin == "file" else stdin
        try:
            r = cli(*argv, stdin=src, stdout=fd)
        finally:
            os.close(fd)
            if stdin == "file":
                src.close()
        one_line_refusal(r, "standard output is the input")
        assert a.read_bytes() == before


def test_profile_of_standard_input_never_replaces_it(tmp_path, index):
    """`profile - -o IN < IN`: one line, exit 2, the index as it was (it was replaced by its own
    profile, exit 0)."""
    a = tmp_path / "a.cdx"
    shutil.copyfile(index, a)
    before = a.read_bytes()
    with open(a, "rb") as f:
        r = cli("profile", "-", "-o", str(a), "-q", stdin=f)
    one_line_refusal(r, "is the input given on standard input")
    assert a.read_bytes() == before


def test_standard_input_that_is_another_input_is_refused(tmp_path, index):
    """`profile - IN < IN` (or IN in a folder or manifest): one line, exit 2 (its captures were
    counted twice, exit 0, where `profile IN ./IN` reads it once); piped in, profiled as ever."""
    out = tmp_path / "out.cdxj"
    manifest = tmp_path / "m.txt"
    manifest.write_text(index + "\n")
    for extra in ([index], ["./" + os.path.relpath(index)], ["--manifest", str(manifest)]):
        with open(index, "rb") as f:
            r = cli("profile", "-", *extra, "-o", str(out), "-q", stdin=f)
        one_line_refusal(r, "standard input is the input", "given twice")
        assert not out.exists()
    alone = tmp_path / "alone.cdxj"
    assert cli("profile", index, "-o", str(alone), "-q").returncode == 0
    with open(index, "rb") as data:
        piped = subprocess.Popen(["cat"], stdin=data, stdout=subprocess.PIPE)
        r = cli("profile", "-", "-o", str(out), "-q", stdin=piped.stdout)
        piped.stdout.close()
        piped.wait()
    assert r.returncode == 0, r.stderr
    assert _captures(out) == _captures(alone) == 199          # the index's 200 lines less its header line


def _captures(path):
    import json
    line = next(x for x in path.read_bytes().splitlines() if x.startswith(b'!meta {"inputs"'))
    return json.loads(line[len(b"!meta "):])["captures"]


def _replaced_after_check(monkeypatch, path, new):
    """The file at path replaced by rename with the bytes new right after its whole-file check
    (a new version published while the check read the old one)."""
    check = datalines.DataFile.check

    def checked_then_replaced(self, *args, **kwargs):
        done = check(self, *args, **kwargs)
        if self.path == path:
            tmp = path + ".new"
            with open(tmp, "wb") as f:
                f.write(new)
            os.replace(tmp, path)
        return done
    monkeypatch.setattr(datalines.DataFile, "check", checked_then_replaced)


def _longer_version(profile):
    """A profile of the same header lines holding one more line than profile (a later version):
    its lines after the check's end were never read by the search."""
    data = open(profile, "rb").read()
    lines = data.split(b"\n")
    i = next(i for i, line in enumerate(lines) if line.startswith(b"com,cnn)/* - - - "))
    extra = lines[i].replace(b"com,cnn)/* - - - ", b"com,cnn)/* 1990 - - ", 1)
    return b"\n".join(lines[:i] + [extra] + lines[i:])


@pytest.mark.parametrize("tool", ["lookup", "query"])
def test_a_file_replaced_between_its_check_and_its_search_is_refused(tmp_path, profile, monkeypatch, tool):
    """The profile renamed over by another version after lookup or query checked it whole: one
    line (ChangedFile), never an answer from a file not checked, read with the offsets of the
    one checked (lookup searched the new file: 'is not in byte order' of a sorted file, or an
    answer from the lines before the old file's end)."""
    path = str(tmp_path / "q.cdxj")
    shutil.copyfile(profile, path)
    _replaced_after_check(monkeypatch, path, _longer_version(profile))
    with pytest.raises(ChangedFile, match="changed while it was read"):
        if tool == "lookup":
            Lookup(path, verify=True).close()
        else:
            SortedProfile(path)


def test_a_page_replaced_between_its_check_and_its_search_is_refused(tmp_path, profile, monkeypatch):
    path = str(tmp_path / "p.cdxj")
    shutil.copyfile(profile, path)
    pages = split(path, 4000, str(tmp_path / "pg"))
    assert len(pages) > 1
    second = pages[1]
    _replaced_after_check(monkeypatch, second, open(second, "rb").read().replace(b'"total":', b'"total": ', 1))
    with pytest.raises(ChangedFile, match="changed while it was read"):
        Lookup(pages[0], verify=True).close()


def test_an_output_named_through_a_link_and_dotdot_is_written_where_the_system_puts_it(tmp_path, profile):
    """`-o LINK/../out` is the file out beside LINK's target (the system takes '..' there), not
    beside LINK: written there, its temp file made there (made beside LINK, the rename failed
    with EXDEV after all the work when the two folders were on two filesystems); split's pages
    too (they were written beside LINK)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else str(tmp_path)
    elsewhere = os.path.join(base, "ap-other-%d" % os.getpid())
    os.makedirs(os.path.join(elsewhere, "sub"))
    try:
        work = tmp_path / "here"
        work.mkdir()
        os.symlink(os.path.join(elsewhere, "sub"), str(work / "link"))
        for name, argv in (("ukvs", ["ukvs", profile]), ("merge", ["merge", profile]),
                           ("compact", ["compact", profile, "--max-lines", "200"])):
            r = subprocess.run([sys.executable, "-m", "profiler.cli"] + argv + ["-o", "link/../" + name + ".out"],
                               capture_output=True, cwd=str(work), timeout=120,
                               env=dict(os.environ, PYTHONPATH=ROOT))
            assert r.returncode == 0, r.stderr
            assert os.path.getsize(os.path.join(elsewhere, name + ".out")) > 100
            assert not os.path.exists(work / (name + ".out"))
            assert not [e for e in os.listdir(work) + os.listdir(elsewhere) if e.endswith(".tmp")]
        r = subprocess.run([sys.executable, "-m", "profiler.cli", "split", profile, "--max-lines", "4000", "-o",
                            "link/../pg"], capture_output=True, cwd=str(work), timeout=120,
                           env=dict(os.environ, PYTHONPATH=ROOT))
        assert r.returncode == 0, r.stderr
        assert os.path.exists(os.path.join(elsewhere, "pg-00001.cdxj")) and not os.path.exists(work / "pg-00001.cdxj")
    finally:
        shutil.rmtree(elsewhere)


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "link"])
def test_an_output_named_by_an_open_descriptor_is_refused(tmp_path, profile, name):
    """`-o /dev/stdout >> LOG` (or /dev/fd/1, /proc/self/fd/1, a link to /dev/stderr): one line,
    exit 2, LOG as it was (the link was written through: LOG replaced by the map, what was in it
    before lost; `2>> LOG` lost LOG and the messages after)."""
    log = tmp_path / "log.txt"
    log.write_bytes(b"a line written before\n")
    fd = os.open(str(log), os.O_WRONLY | os.O_APPEND)
    try:
        if name == "link":
            os.symlink("/dev/stderr", str(tmp_path / "link"))
            r = subprocess.run([sys.executable, "-m", "profiler.cli", "ukvs", profile, "-o", str(tmp_path / "link")],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=fd, timeout=120,
                               env=dict(os.environ, PYTHONPATH=ROOT))
            err = log.read_bytes().decode()[len("a line written before\n"):]
            assert r.returncode == 2 and len(err.strip().splitlines()) == 1 and "a link of the kernel's to an open file" in err, err
            assert log.read_bytes().startswith(b"a line written before\n")
            return
        r = cli("ukvs", profile, "-o", name, stdout=fd)
    finally:
        os.close(fd)
    one_line_refusal(r, "a link of the kernel's to an open file", "give - for standard output")
    assert log.read_bytes() == b"a line written before\n"


def test_an_input_named_by_an_open_descriptor_is_the_file_it_names(tmp_path, index):
    """`profile /dev/fd/5 5< IN -r local`: profiled as IN, so named in !meta (the local runner's
    tasks, other processes, opened their own descriptor 5: the job failed, 'was replaced while the
    run read it ... run again'); `/dev/stdin` and `-o IN` is refused as IN itself."""
    out = tmp_path / "out.cdxj"
    with open(index, "rb") as f:
        r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", "/dev/fd/%d" % f.fileno(), "-o", str(out),
                            "-q", "-r", "local"], stdin=subprocess.DEVNULL, capture_output=True, timeout=300,
                           pass_fds=(f.fileno(),), env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    assert _captures(out) == 199
    meta = next(x for x in out.read_bytes().splitlines() if x.startswith(b'!meta {"inputs"'))
    assert os.path.realpath(index).encode() in meta
    copy = tmp_path / "i.cdx"
    shutil.copyfile(index, copy)
    with open(copy, "rb") as f:
        r = cli("profile", "/dev/stdin", "-o", str(copy), "-q", stdin=f)
    one_line_refusal(r, "is the input")
    assert copy.read_bytes() == open(index, "rb").read()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_standard_input_from_a_device_that_never_ends_is_refused(tmp_path, profile, device):
    """`validate - < /dev/zero`, `profile - < /dev/urandom`, `lookup FILE - < /dev/zero`: one line,
    exit 2, at once (validate and profile copied it to a temp file until the disk was full;
    lookup read it for ever). /dev/null is read: empty."""
    for argv in (["validate", "-"], ["profile", "-", "-o", str(tmp_path / "o.cdxj")], ["lookup", profile, "-"]):
        with open(device, "rb") as f:
            r = cli(*argv, stdin=f, timeout=60)
        one_line_refusal(r, "standard input is %s, a device that never ends" % device)
    r = cli("validate", "-", stdin=subprocess.DEVNULL)
    one_line_refusal(r, "standard input is empty")
