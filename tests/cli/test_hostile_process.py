"""A run started in a hostile process state: standard streams closed (`>&-`, `<&-`, `2>&-`),
file names with control characters in the end summaries. One line, never a traceback; nothing
written through a descriptor that stood for a closed stream."""

import os
import subprocess
import sys

import pytest

from profiler.run.profile import run_profile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def shell(command, cwd):
    """command run by sh with the project's CLI as $AP."""
    ap = "'%s' -m profiler.cli" % sys.executable
    return subprocess.run(["sh", "-c", command.replace("$AP", ap)], capture_output=True, text=True, cwd=str(cwd),
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("p")
    run_profile([SAMPLE], str(d / "p.cdxj"), created="2026-01-01T00:00:00Z")
    assert shell("$AP ukvs p.cdxj -o m.ukvs", d).returncode == 0
    return d


#: every command that writes its answer to standard output
TO_STDOUT = [
    "query p.cdxj --surt 'com,*'",
    "lookup m.ukvs http://www.cnn.com/",
    "overlap p.cdxj p.cdxj",
    "diff p.cdxj p.cdxj",
    "export p.cdxj -o -",
    "merge p.cdxj -o -",
    "ukvs p.cdxj -o -",
    "compact m.ukvs --max-lines 100 -o -",
    "report p.cdxj -o -",
    "profile %s -o -" % SAMPLE,
    "completion bash",
]


@pytest.mark.parametrize("command", TO_STDOUT)
def test_a_closed_standard_output_is_one_line(files, command):
    """`>&-`: sys.stdout was None, a traceback (AttributeError) from every command, and the next
    file opened took descriptor 1."""
    r = shell("$AP %s >&-" % command, files)
    assert "Traceback" not in r.stderr, r.stderr
    errors = [line for line in r.stderr.splitlines() if "error:" in line]
    if command.startswith("diff"):          # no differences: nothing to write, exit 0
        assert r.returncode == 0 and not errors, r.stderr
        return
    assert r.returncode == 2, r.stderr
    assert errors == ["archive-profiler: error: standard output is closed: nothing can be written to it"], r.stderr


@pytest.mark.parametrize("command", [c for c in TO_STDOUT if not c.startswith("diff")])
def test_a_full_standard_output_says_the_answer_may_be_incomplete(files, command):
    """`> /dev/full`: the answer written to standard output is lost or cut short; the error line
    says so, where for an output file it says the previous file is unchanged (atomic writes)."""
    r = shell("$AP %s > /dev/full" % command, files)
    assert "Traceback" not in r.stderr, r.stderr
    errors = [line for line in r.stderr.splitlines() if "error:" in line]
    assert r.returncode == 1 and len(errors) == 1, r.stderr
    assert errors[0].endswith("(the answer on standard output may be incomplete)"), r.stderr


@pytest.mark.parametrize("command", ["lookup m.ukvs -", "profile - -o o.cdxj", "validate -"])
def test_a_closed_standard_input_is_one_line(files, command):
    r = shell("$AP %s <&-" % command, files)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines()[-1] == \
        "archive-profiler: error: standard input is closed: nothing can be read from it", r.stderr
    assert not os.path.exists(files / "o.cdxj")


def test_writing_to_a_file_with_standard_output_closed_works(files, tmp_path):
    """The output opened while descriptor 1 is closed is never descriptor 1: nothing the run (or a
    task it starts) prints lands in it."""
    r = shell("$AP profile %s -o '%s' -r local >&- <&-" % (SAMPLE, tmp_path / "o.cdxj"), files)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "o.cdxj").read_bytes().startswith(b"!context ")
    r = shell("$AP split p.cdxj --max-lines 3000 -o '%s' >&-" % (tmp_path / "pg"), files)
    assert r.returncode == 0 and "page(s)" in r.stderr, r.stderr


@pytest.mark.parametrize("command", ["query p.cdxj --surt nonsense", "lookup nofile http://x.com/", "query p.cdxj"])
def test_a_closed_standard_error_keeps_standard_output_clean(files, command):
    """`2>&-`: print(file=None) wrote the error to standard output."""
    r = shell("$AP %s 2>&-" % command, files)
    assert "error" not in r.stdout and "Traceback" not in r.stdout, r.stdout
    assert r.returncode in (0, 2)


@pytest.mark.parametrize("command", ["validate c.cdxj", "query c.cdxj --surt 'com,*'", "merge c.cdxj c.cdxj -o o.cdxj",
                                     "ukvs --policy=c.cdxj c.cdxj -o o.ukvs", "profile c.cdx.gz -o o.cdxj -r local"])
def test_standard_error_appended_to_a_file_the_command_names_is_refused(files, tmp_path, command):
    """`2>> INPUT`: the run's messages and progress were appended to its own input. Refused in
    one line on standard output, exit 2, the file unchanged; with standard output there too,
    nothing is written anywhere."""
    for name in ("c.cdxj", "c.cdx.gz"):
        source = files / "p.cdxj" if name.endswith("cdxj") else SAMPLE
        (tmp_path / name).write_bytes(open(source, "rb").read())
    named = [w for w in command.replace("=", " ").split() if w.startswith("c.")]
    before = (tmp_path / named[0]).read_bytes()
    r = shell("$AP %s 2>> %s" % (command, named[0]), tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stdout.splitlines() == ["archive-profiler: error: standard error is %s, which the command line names "
                                     "(2>> it?): the run's messages would be written into it; send them elsewhere"
                                     % named[0]], r.stdout
    assert (tmp_path / named[0]).read_bytes() == before
    assert not os.path.exists(tmp_path / "o.cdxj") and not os.path.exists(tmp_path / "o.ukvs")
    r = shell("$AP %s >> %s 2>&1" % (command, named[0]), tmp_path)
    assert r.returncode == 2 and (tmp_path / named[0]).read_bytes() == before
    r = shell("$AP validate c.cdxj 2>> other.log", tmp_path)
    assert r.returncode == 0 and "valid" in (tmp_path / "other.log").read_text()


def test_file_names_in_summaries_are_printable(files, tmp_path):
    """A file name with a newline or a terminal escape is shown escaped in every end summary
    (it was printed raw: a second line, a colour change)."""
    bad = "o\x1b[31m\nx"
    for name in ("p.cdxj", "m.ukvs"):
        (tmp_path / name).write_bytes((files / name).read_bytes())
    for command in ["profile %s -o '%s.cdxj'" % (SAMPLE, bad), "merge p.cdxj -o '%s.m'" % bad,
                    "ukvs p.cdxj -o '%s.u'" % bad, "export p.cdxj -o '%s.j'" % bad,
                    "compact m.ukvs --max-lines 100 -o '%s.c'" % bad, "split p.cdxj --max-lines 3000 -o '%s.s'" % bad]:
        r = shell("$AP %s" % command, tmp_path)
        assert r.returncode == 0, r.stderr
        assert "\x1b" not in r.stderr and "o\\x1b[31m\\nx" in r.stderr, (command, r.stderr)


def test_a_name_that_is_not_utf8_shows_its_byte_in_an_error(files, tmp_path):
    """A byte of a file name that is not UTF-8 showed as Python's surrogate escape (\\udcff) in
    error lines; it shows as the byte (\\xff)."""
    name = os.fsdecode(b"bad\xffname.cdxj")
    data = (files / "p.cdxj").read_bytes()
    (tmp_path / name).write_bytes(data + b"cut")
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "lookup", name, "http://example.com/"], cwd=str(tmp_path),
                       capture_output=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=60)
    err = r.stderr.decode("utf-8")
    assert r.returncode == 2 and len(err.splitlines()) == 1, err
    assert "bad\\xffname.cdxj line" in err and "udc" not in err, err


def _body(path):
    return [line for line in path.read_bytes().splitlines() if b'"created"' not in line]


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_task_variables_in_the_client_s_environment_are_never_read(files, tmp_path, runner):
    """The variables a run sets for its tasks (contract.TASK_ENV), set by the user: the inline
    runner's tasks read them (a reduce range 'a-b' failed the job, a shared-digest filter of
    /dev/zero hung growing); now every run ignores them."""
    base = tmp_path / "base.cdxj"
    assert shell("$AP profile %s -o %s -q -r %s" % (SAMPLE, base, runner), files).returncode == 0
    garbage = {"ARCHIVE_PROFILER_REDUCE_RANGE": "a-b", "ARCHIVE_PROFILER_REDUCE_MERGE": "1",
               "ARCHIVE_PROFILER_SHARED_DIGESTS": "/dev/zero", "ARCHIVE_PROFILER_DIGEST_FILTER": "8 /dev/zero",
               "ARCHIVE_PROFILER_SIGNALS": "/nonexistent"}
    out = tmp_path / "o.cdxj"
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", SAMPLE, "-o", str(out), "-q", "-r", runner],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT, **garbage), timeout=60)
    assert r.returncode == 0, r.stderr
    assert _body(out) == _body(base)


def _limited(megabytes):
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
    return limit


@pytest.fixture(scope="module")
def huge_header(files):
    """The profile with a header line of 60 MB (under datalines.MAX_HEADER: read and parsed)."""
    lines = (files / "p.cdxj").read_bytes().splitlines()
    heads = sorted([x for x in lines if x.startswith(b"!")] + [b'!meta {"x":"' + b"a" * (60 << 20) + b'"}'])
    path = files / "huge-header.cdxj"
    path.write_bytes(b"\n".join(heads + [x for x in lines if not x.startswith(b"!")]) + b"\n")
    return path


@pytest.mark.parametrize("megabytes", [150, 200, 250, 300])
@pytest.mark.parametrize("command", [["lookup", "{f}", "http://www.cnn.com/"], ["validate", "{f}"],
                                     ["merge", "{f}", "-o", "{d}/o.cdxj"], ["ukvs", "{f}", "-o", "{d}/o.ukvs"],
                                     ["report", "{p}", "-o", "{d}/o.html"]])
def test_a_small_address_space_is_one_line(files, huge_header, tmp_path, megabytes, command):
    """RLIMIT_AS too small for the work: exit 1 and one line (`out of memory`, or the report's
    libraries not loaded), never a crash or a traceback. orjson crashed (SIGSEGV) on the 60 MB header
    line, or called it not JSON (validate: INVALID); the report's imports gave a SystemError."""
    argv = [a.format(f=huge_header, d=tmp_path, p=files / "p.cdxj") for a in command]
    r = subprocess.run([sys.executable, "-m", "profiler.cli"] + argv, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT), timeout=120, preexec_fn=_limited(megabytes))
    assert r.returncode in (0, 1), (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr and "INVALID" not in r.stderr, r.stderr[-2000:]
    if r.returncode == 1:
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr[-2000:]
        assert "out of memory" in r.stderr or "could not be loaded" in r.stderr or "OpenBLAS" in r.stderr, r.stderr
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


@pytest.mark.parametrize("limit", [12, 40])
def test_serve_with_too_few_open_files_is_one_line(files, limit):
    """RLIMIT_NOFILE below what 16 connections need beside the spare descriptors: serve claimed 16
    connections, then failed `Too many open files` with asyncio's warnings (12), or served with
    fewer descriptors than it promised connections (40)."""
    import resource

    def few():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "serve", str(files / "m.ukvs"), "--port", "0"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=60,
                       preexec_fn=few)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        "archive-profiler: error: open files limited to %d: serve needs at least 82 for 1 archive(s) "
        "(raise it with ulimit -n)" % limit], r.stderr


@pytest.mark.parametrize("variable", ["HOME", "XDG_CACHE_HOME"])
def test_a_home_or_cache_base_that_is_not_there_is_never_made(files, tmp_path, variable):
    """HOME (or XDG_CACHE_HOME) naming a folder that does not exist: the run made it, and the
    folders above it, to keep its cache there; now nothing is kept and the run is the same."""
    gone = tmp_path / "gone" / "home"
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("XDG_CACHE_HOME", None)
    env[variable] = str(gone if variable == "HOME" else gone / ".cache")
    out = tmp_path / "o.cdxj"
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", SAMPLE, "-o", str(out), "-q"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "gone").exists()
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "lookup", str(out), "http://www.cnn.com/"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and not (tmp_path / "gone").exists(), r.stderr


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_a_reader_that_goes_mid_write_ends_the_run_quietly(files, runner):
    """`profile -o - | head`: the reader gone while a large block was written. The buffered
    stream wrote part of it and returned that count without an error: the run went on, exit 0,
    and said it wrote every line to standard output. Now the broken pipe ends it quietly."""
    p = subprocess.Popen([sys.executable, "-m", "profiler.cli", "profile", SAMPLE, "-o", "-", "-r", runner],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=ROOT))
    assert len(p.stdout.read(100)) == 100
    import time
    time.sleep(1.5)                         # the writer blocked in its large write, the pipe full
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "standard output:" not in err, err


@pytest.mark.parametrize("verbose", [False, True])
def test_mrjob_s_failure_to_remove_its_temp_folder_is_one_line(tmp_path, verbose):
    """mrjob logs a traceback when it cannot remove its temp folder (out of descriptors: `ulimit
    -n 8` on a run that otherwise succeeds): its message alone, one line, exit 0; -v keeps the
    traceback (it came under -q too)."""
    code = ("import sys, mrjob.runner\n"
            "def rmtree(path): raise OSError(24, 'Too many open files', path)\n"
            "mrjob.runner.rmtree = rmtree\n"
            "from profiler.cli.main import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    done = subprocess.run([sys.executable, "-c", code, "profile", SAMPLE, "-o", "p.cdxj", "-q"]
                          + (["-v"] if verbose else []), capture_output=True, text=True, cwd=str(tmp_path),
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert done.returncode == 0 and (tmp_path / "p.cdxj").exists()
    if verbose:
        assert "Traceback" in done.stderr
    else:
        assert done.stderr.startswith("mrjob.runner: [Errno 24] Too many open files: ")
        assert len(done.stderr.splitlines()) == 1, done.stderr


def test_a_ctrl_c_outside_main_is_one_line(tmp_path):
    """A Ctrl-C that arrives while the command line's modules are still being imported, or once
    main() has returned, reaches no handler of a command: one line, no traceback, and the process
    still ends by the signal as Python's own interrupt does."""
    code = "import os, signal, time; import profiler.cli; os.kill(os.getpid(), signal.SIGINT); time.sleep(5); import profiler.cli.main"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(tmp_path),
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=60)
    assert done.returncode == -2
    assert done.stderr == "archive-profiler: interrupted (the previous output, if any, is unchanged)\n"


def test_other_exceptions_outside_main_keep_their_traceback(tmp_path):
    """Only a Ctrl-C is shortened: a defect outside main() still shows where it is."""
    done = subprocess.run([sys.executable, "-c", "import profiler.cli; raise LookupError('seen')"],
                          capture_output=True, text=True, cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=ROOT),
                          timeout=60)
    assert done.returncode == 1 and "Traceback" in done.stderr and "LookupError: seen" in done.stderr
