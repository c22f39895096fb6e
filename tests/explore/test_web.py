"""The explorer's HTTP service as an attacker and a careless user meet it: bad parameters are a
400 with one line, no path reaches the filesystem, every response carries the strict CSP,
idle and slow clients are cut off, too many connections are refused, a profile that changes
under it is read again (or refused while it is damaged) and the service keeps answering; a
damaged profile at start is a one-line error (exit 2)."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import orjson
import pytest

from profiler.explore import answers as explore_answers
from profiler.explore import server as explore_server
from profiler.explore.web import CSP

from helpers.explore import answer, get, serving
from helpers.paths import ROOT
from helpers.reports import make_profile
from helpers.serving import received


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return make_profile(tmp_path_factory.mktemp("explore-web"))


@pytest.fixture(scope="module")
def served(sample):
    with serving("S=" + sample) as (url, server):
        yield url


BAD = [
    {"datetime": "٢٠١٣"},                         # Arabic-Indic digits
    {"datetime": "２０１３"},                        # full-width digits
    {"datetime": "2013-01"},
    {"datetime": "20130230"},
    {"from": "٢٠١٢", "to": "2013"},
    {"from": "2014", "to": "2013"},
    {"from": "2012", "datetime": "2013"},
    {"to": "2013 "},
    {"status": "OK"},
    {"mime": "text/html plain"},
    {"surt": "com,* - - -"},
    {"surt": "com,\n*"},
    {"surt": "x" * 3000},
    {"limit": "0"}, {"limit": "10000"}, {"limit": "１０"}, {"limit": "-1"}, {"limit": "1e3"},
    {"sort": "__class__"}, {"sort": "urim"},
    {"levels": "datetime:week"}, {"levels": "nope:year"}, {"levels": "lang:code"},
    {"profile": "../../etc/passwd"}, {"profile": "nope"},
    {"lang": "ara"},                               # a profile without a lang key field
    {"file": "/etc/passwd"}, {"callback": "x"},
]


@pytest.mark.parametrize("params", BAD, ids=[repr(p)[:40] for p in BAD])
def test_bad_parameters_are_400_with_one_line(served, params):
    status, headers, body = get(served, "/api/answer", params)
    assert status == 400, body
    error = orjson.loads(body)["error"]
    assert "\n" not in error and "Traceback" not in error and len(error) < 400
    assert headers["content-security-policy"] == CSP


def test_raw_query_strings(served):
    for target in ["/api/answer?datetime=2013&datetime=2014", "/api/answer?%ff=1", "/api/answer?datetime=%ff",
                   "/api/answer?" + "&".join("a%d=1" % i for i in range(100))]:
        status, _, body = get(served, target)
        assert status == 400, (target, body)
    status, _, body = get(served, "/api/answer?surt=com%2C%2A&datetime=2013")
    assert status == 200 and orjson.loads(body)["key"] == "com,* 2013 - -"


def test_no_path_reaches_the_filesystem(served):
    for path in ["/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/explore.js/../../../etc/passwd",
                 "/static/explore.js", "/profiler/explore/static/explore.js", "//etc/passwd", "/api",
                 "/api/answer/..", "/favicon.ico", "/.git/config", "/explore.js%00.html"]:
        status, headers, body = get(served, path)
        assert status in (400, 404), (path, status)
        assert b"root:" not in body and headers["content-type"] == "application/json"


def test_methods_and_limits(served):
    for method in ["POST", "PUT", "DELETE", "OPTIONS"]:
        status, _, _ = get(served, "/api/answer", method=method)
        assert status == 405
    status, _, body = get(served, "/api/answer", method="HEAD")
    assert status == 200 and body == b""
    status, _, _ = get(served, "/api/answer?surt=" + "a" * 9000)
    assert status == 414
    status, _, _ = get(served, "/", headers={"X-Big": "x" * 70000})
    assert status in (400, 431)
    status, _, _ = get(served, "/", headers={"X-H%d" % i: "1" for i in range(120)})
    assert status in (400, 431)


def test_page_and_its_files(served):
    status, headers, body = get(served, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert headers["content-security-policy"] == CSP and "unsafe" not in CSP
    assert headers["x-content-type-options"] == "nosniff"
    assert b'src="/explore.js"' in body and b"http" not in body.replace(b"http-equiv", b"")
    for path, kind in [("/explore.js", "text/javascript"), ("/explore.css", "text/css"), ("/favicon.svg", "image/svg+xml")]:
        status, headers, body = get(served, path)
        assert status == 200 and headers["content-type"].startswith(kind) and body
    js = get(served, "/explore.js")[2]
    assert b"innerHTML" not in js and b"eval(" not in js and b"http://" not in js.replace(b"http://www.w3.org/2000/svg", b"")


def _address(url):
    host, port = url.split("//")[1].rstrip("/").split(":")
    return host, int(port)


def _connect(url):
    return socket.create_connection(_address(url), timeout=10)


def test_idle_and_slow_clients_are_cut_off(sample, monkeypatch):
    monkeypatch.setattr(explore_server, "HEAD_SECONDS", 1.0)
    with serving(sample) as (url, _):
        idle = _connect(url)                              # sends nothing
        slow = _connect(url)
        slow.sendall(b"GET /api/answer HTTP/1.1\r\nHost: x\r\n")   # a head never finished
        started = time.monotonic()
        for s in (idle, slow):
            s.settimeout(10)
            assert s.recv(1024) == b""                    # closed by the server
        assert time.monotonic() - started < 8
        assert answer(url)["status"] == "answered"        # and it still answers others


def test_idle_and_slow_connections_make_room_for_others(sample, monkeypatch):
    """Connections waiting for a request head (idle, or a head begun and never finished) hold
    every slot: a new client is answered, the one waiting longest closed to make room (every
    client got a 503 for as long as the flood lasted)."""
    monkeypatch.setattr(explore_server, "MAX_CONNECTIONS", 3)
    monkeypatch.setattr(explore_server, "HEAD_SECONDS", 60.0)
    with serving(sample) as (url, _):
        held = [_connect(url) for _ in range(3)]
        held[1].sendall(b"GET /api/answer HTTP/1.1\r\nHost: x\r\n")
        time.sleep(0.3)
        for _ in range(5):
            assert answer(url)["status"] == "answered"
        held[0].settimeout(10)
        assert held[0].recv(1024) == b""                  # the oldest was closed for them
        for s in held:
            s.close()


def test_too_many_busy_connections_are_refused(sample, monkeypatch):
    """Only when every slot is busy answering (clients that do not read their answers) is a
    new connection refused: 503, closed; served again once they go."""
    monkeypatch.setattr(explore_server, "MAX_CONNECTIONS", 3)
    with serving(sample) as (url, _):
        held = [_never_reading(url, "127.0.0.%d" % (2 + i)) for i in range(3)]
        time.sleep(0.5)
        refused = _exchange(url, b"")
        assert refused.startswith(b"HTTP/1.1 503")
        assert "error" in orjson.loads(refused.partition(b"\r\n\r\n")[2])      # whole JSON (it was cut)
        for s in held:
            s.close()
        time.sleep(0.5)
        assert answer(url)["status"] == "answered"


def _never_reading(url, source="127.0.0.1"):
    """A connection from ``source`` kept busy: requests pipelined whose answers it never reads."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(10)
    s.bind((source, 0))
    s.connect(_address(url))
    s.sendall(b"GET /explore.js HTTP/1.1\r\nHost: x\r\n\r\n" * 2000)
    return s


def test_one_client_never_holds_every_connection(sample, monkeypatch):
    """A client (an address) that keeps its connections busy, never reading its answers, holds
    at most MAX_CLIENT_CONNECTIONS of them: its next is refused (503), another client's is
    answered (it held all 32, and every other client got a 503)."""
    monkeypatch.setattr(explore_server, "MAX_CONNECTIONS", 4)
    monkeypatch.setattr(explore_server, "MAX_CLIENT_CONNECTIONS", 2)
    with serving(sample) as (url, _):
        held = [_never_reading(url) for _ in range(4)]
        time.sleep(0.5)
        mine = _connect(url)
        mine.settimeout(10)
        assert mine.recv(1024).startswith(b"HTTP/1.1 503")
        other = socket.socket()
        other.settimeout(10)
        other.bind(("127.0.0.2", 0))
        other.connect(_address(url))
        other.sendall(b"GET /api/profiles HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert other.recv(1024).startswith(b"HTTP/1.1 200")
        for s in held + [mine, other]:
            s.close()


def test_a_profile_that_changes_is_read_again(sample, tmp_path, monkeypatch):
    monkeypatch.setattr("profiler.explore.web.CHECK_EVERY", 0.0)
    path = tmp_path / "live.cdxj"
    shutil.copy(sample, path)
    with serving(str(path)) as (url, _):
        before = answer(url)["features"]["urim.total"]
        # replaced by another version (what nightly's link move does): the new one answers
        lines = path.read_bytes().splitlines(keepends=True)
        head = [l for l in lines if l.startswith(b"!")]
        data = [l for l in lines if not l.startswith(b"!")]
        smaller = tmp_path / "smaller.cdxj"
        smaller.write_bytes(b"".join(head + [l for l in data if not l.startswith(b"* ")]))
        os.replace(smaller, path)
        a = answer(url)
        assert a["status"] != "answered" and a["features"] is None
        # cut in place mid-line: refused with 503 while it is so, never a wrong number
        with open(path, "wb") as f:
            f.write(b"".join(head + data)[:-40])
        status, _, body = get(url, "/api/answer")
        assert status == 503 and b"cut short" in body
        shutil.copy(sample, path)
        assert answer(url)["features"]["urim.total"] == before


def test_a_profile_changed_in_place_keeping_its_size_and_time_is_read_again(sample, tmp_path, monkeypatch):
    """Two lines swapped in place, the file's size and modification time put back (`touch -r`,
    a copy that keeps times): the change is seen (its ctime moved) and the file read again,
    refused while unsorted; never an answer from the old reading of a file that changed."""
    monkeypatch.setattr("profiler.explore.web.CHECK_EVERY", 0.0)
    path = tmp_path / "live.cdxj"
    shutil.copy(sample, path)
    with serving(str(path)) as (url, _):
        assert answer(url, surt="com,*")["status"] == "answered"
        before = os.stat(path)
        data = path.read_bytes()
        lines = data.splitlines(keepends=True)
        i = next(n for n, l in enumerate(lines) if not l.startswith(b"!")) + 1
        swapped = b"".join(lines[:i] + [lines[i + 1], lines[i]] + lines[i + 2:])
        assert len(swapped) == len(data) and swapped != data
        with open(path, "r+b") as f:
            f.write(swapped)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = os.stat(path)
        assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
        status, _, body = get(url, "/api/answer", {"surt": "com,*"})
        assert status == 503 and b"not sorted" in body, body
        shutil.copy(sample, path)
        assert answer(url, surt="com,*")["status"] == "answered"


def test_a_damaged_new_version_is_read_once_not_at_every_request(sample, tmp_path, monkeypatch, caplog):
    """A new version found cut (moved into place) is refused until the file changes again: the
    version read before, another file still whole, keeps answering, and /api/profiles says why
    (every answer was a 503 while a good version was open); each request does not read the cut
    file whole again (nor log it again), whatever the clients ask."""
    monkeypatch.setattr("profiler.explore.web.CHECK_EVERY", 0.0)
    path = tmp_path / "live.cdxj"
    shutil.copy(sample, path)
    cut = tmp_path / "cut.cdxj"
    cut.write_bytes(path.read_bytes()[:-30])
    with serving(str(path)) as (url, _):
        before = answer(url)
        assert before["status"] == "answered"
        os.replace(cut, path)
        with caplog.at_level("WARNING", logger="archive-profiler"):
            for _ in range(5):
                assert answer(url)["features"] == before["features"]
                listed = orjson.loads(get(url, "/api/profiles")[2])["profiles"][0]
                assert "cut short" in listed["problem"] and "exploring the version read before" in listed["problem"]
        refusals = [r for r in caplog.records if "cannot be read now" in r.getMessage()]
        assert len(refusals) == 1, [r.getMessage()[:80] for r in refusals]
        shutil.copy(sample, tmp_path / "again.cdxj")
        os.replace(tmp_path / "again.cdxj", path)
        assert answer(url)["status"] == "answered"


def test_a_profile_whose_path_is_gone_keeps_answering_and_is_reported(sample, tmp_path, monkeypatch):
    """The path deleted, or made a link loop, under a profile explored: the version read keeps
    answering, and /api/profiles says the path cannot be read (nothing said so); with a damaged
    version refused before it, the reason is the path's, not the damaged file's."""
    monkeypatch.setattr("profiler.explore.web.CHECK_EVERY", 0.0)
    path = tmp_path / "live.cdxj"
    shutil.copy(sample, path)
    with serving("L=" + str(path)) as (url, _):
        before = answer(url)["features"]
        os.unlink(path)
        assert answer(url)["features"] == before
        listed = orjson.loads(get(url, "/api/profiles")[2])["profiles"][0]
        assert str(path) in listed["problem"] and "cannot be read" in listed["problem"], listed
        (tmp_path / "cut.cdxj").write_bytes(open(sample, "rb").read()[:-30])
        os.replace(tmp_path / "cut.cdxj", path)
        assert answer(url)["features"] == before                       # a cut version moved in: refused
        listed = orjson.loads(get(url, "/api/profiles")[2])["profiles"][0]
        assert "cut short" in listed["problem"], listed
        os.unlink(path)
        os.symlink(path.name, path)                                     # a link to itself
        assert answer(url)["features"] == before
        listed = orjson.loads(get(url, "/api/profiles")[2])["profiles"][0]
        assert "symbolic links" in listed["problem"] and "cut short" not in listed["problem"], listed
        shutil.copy(sample, tmp_path / "again.cdxj")
        os.replace(tmp_path / "again.cdxj", path)
        assert answer(url)["features"] == before
        assert "problem" not in orjson.loads(get(url, "/api/profiles")[2])["profiles"][0]


def test_a_profile_replaced_while_it_is_opened_is_read_from_one_file(sample, tmp_path, monkeypatch):
    """The path replaced again while a new version is being opened (its lines checked, its
    index not yet built; the real replacement made at that moment): the version is read whole
    from the one file it opened, never indexed from another, and a FIFO put in its place is never
    waited on (its index opened the path again: it waited forever, or indexed the other file);
    the next answer reads the file the path names then."""
    monkeypatch.setattr("profiler.explore.web.CHECK_EVERY", 0.0)
    path = tmp_path / "live.cdxj"
    shutil.copy(sample, path)
    lines = open(sample, "rb").read().splitlines(keepends=True)
    smaller = tmp_path / "smaller.cdxj"
    smaller.write_bytes(b"".join(l for l in lines if not l.startswith(b"com,")))
    fifo = tmp_path / "fifo"
    with serving(str(smaller)) as (url, _):
        expected = answer(url, surt="com,*")
    with serving(str(path)) as (url, _):
        full = answer(url, surt="com,*")
        assert full["features"] != expected["features"]
        swap = []

        class ReplacedWhileOpened(explore_answers.Index):
            def __init__(self, *args, **kwargs):
                if swap:
                    os.replace(swap.pop(), path)
                super().__init__(*args, **kwargs)

        monkeypatch.setattr(explore_answers, "Index", ReplacedWhileOpened)
        for replacement in [fifo, tmp_path / "full.cdxj"]:
            if replacement == fifo:
                os.mkfifo(fifo)
            else:
                shutil.copy(sample, replacement)
            shutil.copy(smaller, tmp_path / "next.cdxj")
            os.replace(tmp_path / "next.cdxj", path)
            swap.append(str(replacement))
            status, _, body = get(url, "/api/answer", {"surt": "com,*"})     # the version opened: smaller
            assert status == 200 and orjson.loads(body)["features"] == expected["features"], body[:300]
            status, _, body = get(url, "/api/answer", {"surt": "com,*"})     # then what the path names
            if replacement == fifo:                     # refused: the version read before answers
                assert status == 200 and orjson.loads(body)["features"] == expected["features"], body[:300]
                listed = orjson.loads(get(url, "/api/profiles")[2])["profiles"][0]
                assert "FIFO" in listed["problem"], listed
            else:
                assert status == 200 and orjson.loads(body)["features"] == full["features"]


def test_damaged_profiles_are_refused_at_start(sample, tmp_path):
    lines = open(sample, "rb").read().splitlines(keepends=True)
    head = [l for l in lines if l.startswith(b"!")]
    data = [l for l in lines if not l.startswith(b"!")]
    cases = {"unsorted": head + data[1:3] + data[:1] + data[3:], "twice": head + data[:5] + data[4:],
             "cut": [b"".join(head + data)[:-30]], "junk": head + data[:3] + [b"not a profile line\n"] + data[3:],
             "keys": [b'!keys ["surt","when"]\n'] + data,
             "impossible": head + data[:3] + [data[3].replace(b'"urir":', b'"urir":99999', 1)] + data[4:]}
    env = dict(os.environ, PYTHONPATH=ROOT)
    for name, content in cases.items():
        bad = tmp_path / (name + ".cdxj")
        bad.write_bytes(b"".join(content))
        r = subprocess.run([sys.executable, "-m", "profiler.cli", "explore", str(bad), "--port", "0"],
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 2, (name, r.stderr)
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, (name, r.stderr)
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "explore", str(tmp_path / "missing.cdxj")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2 and "not found" in r.stderr


def test_a_map_is_refused_naming_explore_not_query(sample, tmp_path):
    """explore of a UKVS map said "query reads CDXJ profiles": one line that fits both commands."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    ukvs = str(tmp_path / "p.ukvs")
    assert subprocess.run([sys.executable, "-m", "profiler.cli", "ukvs", sample, "-o", ukvs, "-q"],
                          env=env).returncode == 0
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "explore", ukvs, "--port", "0"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "is a UKVS map, not a CDXJ profile (use 'lookup' for maps)" in r.stderr and "query" not in r.stderr


def test_start_up_options_are_one_line_errors(sample, tmp_path):
    """A port in digits that are not ASCII, or a profile that is a device, a FIFO or a folder:
    one line naming the mistake, exit 2, nothing listens (`--port ٣٠٠٠` listened on 3000)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    fifo = tmp_path / "fifo.cdxj"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.cdxj"
    os.symlink(loop.name, loop)
    cases = [([sample, "--port", "٣٠٠٠"], "--port"), ([sample, "--port", "８０８０"], "--port"),
             (["/dev/zero", "--port", "0"], "not a regular file"), ([str(fifo), "--port", "0"], "not a regular file"),
             ([str(tmp_path), "--port", "0"], "not a regular file"),
             ([str(loop), "--port", "0"], "symbolic links")]
    for args, said in cases:
        try:
            r = subprocess.run([sys.executable, "-m", "profiler.cli", "explore"] + args, capture_output=True,
                               text=True, env=env, timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("explore %s served instead of refusing" % args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and said in r.stderr, (args, r.stderr)


def _explore_with_files(sample, soft, hard):
    """`explore` started with RLIMIT_NOFILE (soft, hard)."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return subprocess.Popen([sys.executable, "-m", "profiler.cli", "explore", sample, "--port", "0"],
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=ROOT),
                            preexec_fn=limit)


def test_too_few_open_files_for_its_connections_is_one_line(sample):
    """A hard limit of open files below what MAX_CONNECTIONS connections need: one line, exit 2,
    nothing listens (it served, and with more connections waiting than descriptors accept()
    failed over and over: the server spun, and no idle connection was closed to make room)."""
    proc = _explore_with_files(sample, 24, 24)
    try:
        assert proc.wait(timeout=30) == 2
        err = proc.stderr.read()
        assert err.count("\n") == 1 and "open files limited to 24" in err and "ulimit -n" in err, err
    finally:
        proc.kill()
        proc.stderr.close()


def test_a_low_soft_limit_of_open_files_is_raised_to_fit_the_connections(sample):
    """A soft limit below what the connections need (ulimit -n 24) with room under the hard one:
    raised, so that every connection the explorer serves has its descriptor."""
    proc = _explore_with_files(sample, 24, 4096)
    try:
        assert "exploring 1 profile(s)" in proc.stderr.readline()
        with open("/proc/%d/limits" % proc.pid) as f:
            soft = int(next(line for line in f if line.startswith("Max open files")).split()[3])
        assert soft > explore_server.MAX_CONNECTIONS + 1
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stderr.close()


def test_the_command_serves_and_stops(sample):
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen([sys.executable, "-m", "profiler.cli", "explore", sample, "--port", "0"],
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stderr.readline()
        assert "exploring 1 profile(s)" in line
        url = line.strip().rsplit(" ", 1)[-1]
        assert answer(url)["key"] == "* - - -"
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def _exchange(url, data, seconds=10):
    """Everything the server sends back to ``data`` until it closes the connection (or
    ``seconds`` pass without a byte)."""
    s = _connect(url)
    s.settimeout(seconds)
    s.sendall(data)
    out = b""
    try:
        while True:
            piece = s.recv(65536)
            if not piece:
                break
            out += piece
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return out


SMUGGLED = b"GET /nosuch HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.mark.parametrize("request_head", [
    b"GET /api/answer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(SMUGGLED),
    b"POST /api/answer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(SMUGGLED),
    b"POST /api/answer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n" % len(SMUGGLED),
    b"POST /api/answer HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n",
], ids=["get-with-body", "post", "chunked", "lying-length"])
def test_a_request_body_is_never_read_as_a_request(sample, monkeypatch, request_head):
    """A body is never read: the answer closes the connection, and the body's bytes are never
    taken for the next request (a request smuggled in a body was answered)."""
    monkeypatch.setattr(explore_server, "HEAD_SECONDS", 3.0)
    with serving(sample) as (url, _):
        out = _exchange(url, request_head + SMUGGLED)
        assert out.count(b"HTTP/1.1 ") == 1, out[:300]
        assert b"no such page" not in out and b"Bad request" not in out
        assert b"\r\nConnection: close\r\n" in out
        assert answer(url)["status"] == "answered"


def test_bytes_not_ascii_in_the_query_are_a_400(served):
    """A raw byte past ASCII in the query string is refused, never replaced by '?' and the
    question answered for another SURT."""
    for raw in [b"surt=com,\xff", b"surt=com,\xc3\xa9", b"mime=text/\xe9"]:
        out = _exchange(served, b"GET /api/answer?%s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % raw)
        assert out.startswith(b"HTTP/1.1 400 "), (raw, out[:300])
        assert b"ASCII" in out


@pytest.mark.parametrize("request_line", [b"GET /", b"GET /api/answer", b"PRI * HTTP/2.0", b"GET / HTTP/2.0",
                                          b"GET / HTTP/1.1 extra", b"GET", b"GET / HTTP/0.9",
                                          b"GET / x HTTP/0.9", b"\xff\xff HTTP/0.9"])
def test_every_answer_has_a_status_line_and_the_page_s_headers(served, request_line):
    """A request line of HTTP/0.9 or another version is answered with a status line and the
    page's headers (the CSP above all); the page was sent bare to 'GET /', the error to others
    with no status line."""
    out = _exchange(served, request_line + b"\r\n\r\n")
    head = out.partition(b"\r\n\r\n")[0].decode("latin-1").lower()
    assert head.startswith("http/1."), out[:200]
    assert "content-security-policy: " + CSP.lower() in head and "x-content-type-options: nosniff" in head


@pytest.mark.parametrize("request_line", [b"GET /", b"GET /api/profiles"])
def test_an_http_0_9_request_is_answered_at_its_request_line(served, request_line):
    """An HTTP/0.9 request is its request line alone: it is answered (as HTTP/1.0) and the
    connection closed at once; http.server waited for header lines and a blank line that never
    come, and the watchdog closed the connection after HEAD_SECONDS with nothing sent."""
    started = time.monotonic()
    out = _exchange(served, request_line + b"\r\n", seconds=5)
    assert out.startswith(b"HTTP/1.") and b" 200 " in out.split(b"\r\n", 1)[0], out[:200]
    assert time.monotonic() - started < 3


def test_a_request_head_is_bounded_as_a_whole(served):
    """Header lines each under http.server's 64 KiB a line but more than MAX_HEAD together are
    a 431 and the connection closed as soon as the head passes MAX_HEAD (100 lines of 64 KiB
    were read and parsed whole: 30 such connections took the explorer to 550 MB); a head within
    the bound is answered."""
    line = b"X-Big: " + b"a" * 60000 + b"\r\n"
    out = _exchange(served, b"GET /api/profiles HTTP/1.1\r\nHost: x\r\n" + line * 2, seconds=5)
    assert out.startswith(b"HTTP/1.1 431 "), out[:200]
    assert b"\r\nConnection: close\r\n" in out and b"request head longer than" in out
    fits = b"X-Fits: " + b"a" * (explore_server.MAX_HEAD - 200) + b"\r\n"
    out = _exchange(served, b"GET /api/profiles HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + fits + b"\r\n")
    assert out.startswith(b"HTTP/1.1 200 "), out[:200]


@pytest.mark.parametrize("target", [b"http://[x/", b"http://[::1/api/profiles", b"https://]/api/answer?surt=*"])
def test_a_target_the_url_parser_refuses_is_a_400(served, target):
    """A request target urllib cannot split (an unclosed IPv6 bracket in an absolute form) is a
    400 with a JSON error and the page's headers: the connection was dropped without an answer."""
    out = _exchange(served, b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % target)
    assert out.startswith(b"HTTP/1.1 400 "), out[:200]
    head, _, body = out.partition(b"\r\n\r\n")
    assert b"Content-Security-Policy: " in head and "error" in orjson.loads(body)


def test_answers_kept_are_bounded_by_their_bytes(sample, monkeypatch):
    """Questions asked again are answered from the answers kept: at most CACHE_BYTES of them (as
    JSON) in all, the least recently asked let go; they were bounded by their count alone (256
    answers of a breakdown of 500 rows each held hundreds of MB)."""
    monkeypatch.setattr(explore_answers, "CACHE_BYTES", 100_000)
    with serving(sample) as (url, server):
        explorer = server.service.profiles[0].explorer
        asked = [{"limit": str(n)} for n in range(470, 500)]
        sizes = []
        for params in asked:
            status, _, body = get(url, "/api/answer", params)
            assert status == 200 and not orjson.loads(body)["kept"]
            sizes.append(len(body))
        assert sum(sizes) > 3 * explore_answers.CACHE_BYTES
        assert explorer.cache_bytes <= explore_answers.CACHE_BYTES
        assert orjson.loads(get(url, "/api/answer", asked[-1])[2])["kept"]
        assert not orjson.loads(get(url, "/api/answer", asked[0])[2])["kept"]


def test_a_new_version_is_read_in_the_background(sample, tmp_path, monkeypatch):
    """A new version that takes long to index (made slow here): a request waits for it at most
    RELOAD_WAIT, the version read before answering meanwhile (the request that saw the change
    read and indexed it whole, and every other request of that profile waited for it too); the
    new version answers once read."""
    monkeypatch.setattr("profiler.explore.web.CHECK_EVERY", 0.0)
    monkeypatch.setattr("profiler.explore.web.RELOAD_WAIT", 0.5)
    path = tmp_path / "live.cdxj"
    shutil.copy(sample, path)
    lines = path.read_bytes().splitlines(keepends=True)
    smaller = tmp_path / "smaller.cdxj"
    smaller.write_bytes(b"".join(l for l in lines if not l.startswith(b"com,")))
    with serving(str(path)) as (url, _):
        before = answer(url, surt="com,*")
        assert before["status"] == "answered"

        class Slow(explore_answers.Index):
            def __init__(self, *args, **kwargs):
                time.sleep(4)
                super().__init__(*args, **kwargs)
        monkeypatch.setattr(explore_answers, "Index", Slow)
        os.replace(smaller, path)
        for _ in range(3):
            started = time.monotonic()
            assert answer(url, surt="com,*")["features"] == before["features"]
            assert time.monotonic() - started < 2
        deadline = time.monotonic() + 20
        while answer(url, surt="com,*")["status"] == "answered":
            assert time.monotonic() < deadline, "the new version never answered"
            time.sleep(0.2)


def test_sighup_looks_at_the_profiles_again_and_never_ends_the_explorer(sample, tmp_path):
    """SIGHUP, as to serve: the profiles' paths looked at again (a new version read), and the
    explorer goes on answering (it ended)."""
    path = tmp_path / "live.cdxj"
    shutil.copy(sample, path)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen([sys.executable, "-m", "profiler.cli", "explore", str(path), "--port", "0", "-v"],
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stderr.readline()
        url = line.strip().rsplit(" ", 1)[-1]
        assert answer(url)["status"] == "answered"
        shutil.copy(sample, tmp_path / "next.cdxj")
        os.replace(tmp_path / "next.cdxj", path)
        for _ in range(3):
            proc.send_signal(signal.SIGHUP)
            time.sleep(0.3)
        assert proc.poll() is None
        assert answer(url)["status"] == "answered"
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0
        log = proc.stderr.read()
        proc.stderr.close()
    assert "exploring the new version of %s" % path in log, log


def test_expect_100_continue_is_answered_without_asking_for_the_body(sample):
    """A request with `Expect: 100-continue` and a body: the final answer at once, never a
    100 Continue (the body it asked for was never read: the client's send of it broke on the
    closed connection)."""
    with serving(sample) as (url, _):
        for method in (b"GET", b"POST"):
            out = _exchange(url, b"%s /api/profiles HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                                 b"Content-Length: 3000000\r\n\r\n" % method)
            assert out.startswith(b"HTTP/1.1 200 " if method == b"GET" else b"HTTP/1.1 405 "), out[:100]
            assert b"100 Continue" not in out and b"\r\nConnection: close\r\n" in out


def test_half_closed_http_1_0_and_range_requests_get_the_whole_answer(served):
    """A socket half closed after its request, HTTP/1.0, a Range header (ignored): the whole
    answer, then closed."""
    whole = get(served, "/api/profiles")[2]
    for request, half in [(b"GET /api/profiles HTTP/1.1\r\nHost: x\r\n\r\n", True),
                          (b"GET /api/profiles HTTP/1.0\r\n\r\n", False),
                          (b"GET /api/profiles HTTP/1.1\r\nHost: x\r\nRange: bytes=0-3\r\nConnection: close\r\n\r\n",
                           False)]:
        s = _connect(served)
        s.settimeout(10)
        s.sendall(request)
        if half:
            s.shutdown(socket.SHUT_WR)
        out = received(s)
        s.close()
        assert out.startswith(b"HTTP/1.") and b" 200 " in out[:16] and out.endswith(b"\r\n\r\n" + whole), request


def test_a_2_gb_sparse_file_moved_into_place_leaves_the_version_read_before(sample, tmp_path, monkeypatch):
    """A 2 GB sparse file (no line end) moved into the profile's path: refused without reading it
    whole, the version read before answering, /api/profiles saying why."""
    monkeypatch.setattr("profiler.explore.web.CHECK_EVERY", 0.0)
    path = tmp_path / "live.cdxj"
    shutil.copy(sample, path)
    with serving(str(path)) as (url, _):
        before = answer(url)["features"]
        with open(tmp_path / "sparse", "wb") as f:
            f.truncate(2 << 30)
        os.replace(tmp_path / "sparse", path)
        started = time.monotonic()
        assert answer(url)["features"] == before
        assert time.monotonic() - started < 5
        listed = orjson.loads(get(url, "/api/profiles")[2])["profiles"][0]
        assert "cannot be read now" in listed["problem"], listed
