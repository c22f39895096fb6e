"""Hostile clients of a real `archive-profiler serve`, over real sockets: floods of idle
connections from one address or many, a slowloris head, pipelined floods, a reader that never
reads, a body never sent, an upgrade; each time the other clients are still answered."""

import os
import resource
import select
import signal
import socket
import subprocess
import time

import orjson
import pytest

pytest.importorskip("uvicorn")

from helpers.serving import CLI, Server, env, write_map  # noqa: E402

HEALTH = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.fixture(scope="module")
def map_path(tmp_path_factory):
    return write_map(tmp_path_factory.mktemp("clients") / "a.ukvs", 2000, name="https://a.example.org/")


@pytest.fixture(scope="module", autouse=True)
def enough_files():
    """Room for a few thousand sockets in this process."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 6000 if hard == resource.RLIM_INFINITY else min(hard, 6000)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def connect(port, source="127.0.0.1"):
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    return sock


def readable(sock, seconds):
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(seconds * 1000))


def still_open(sock):
    """Whether the server has neither closed the connection nor answered on it."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b"" and False
    except BlockingIOError:
        return True
    except OSError:
        return False


def read_until_closed(sock, seconds):
    """Everything the server sends until it closes the connection (None: still open after
    seconds)."""
    data, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        if readable(sock, 0.1):
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                return data
            if not chunk:
                return data
            data += chunk
    return None


def answered(server, n=20, source="127.0.0.1"):
    return all(server.get("/health", source=source)[0] == 200 for _ in range(n))


@pytest.mark.parametrize("start", [b"", b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: "])
def test_an_idle_flood_from_one_client_leaves_the_others_answered(map_path, start):
    """Two thousand idle connections from one address, or two thousand heads begun and never
    finished (slow headers): that address holds at most its share, every other client is
    answered, never a 503 (uvicorn alone answered them all 503)."""
    s = Server([map_path], workers=1)
    flood = []
    try:
        for _ in range(2100):
            try:
                sock = connect(s.port, "127.0.0.2")
                flood.append(sock)
                if start:
                    sock.sendall(start)
            except OSError:
                pass
        assert answered(s)
        time.sleep(0.5)
        held = sum(still_open(sock) for sock in flood)
        assert held <= 64 and s.proc.poll() is None
    finally:
        for sock in flood:
            sock.close()
        s.stop()


def test_a_flood_from_many_addresses_takes_turns_with_itself(map_path):
    """More connections than a worker holds, from many addresses: the ones idle longest are
    closed to make room, and every other client is answered."""
    s = Server([map_path], workers=1, args=["--max-connections", "200", "--max-client-connections", "20"])
    flood = []
    try:
        for n in range(40):
            for _ in range(20):
                try:
                    flood.append(connect(s.port, "127.0.1.%d" % (n + 1)))
                except OSError:
                    pass
        assert answered(s)
        time.sleep(0.5)
        assert sum(still_open(sock) for sock in flood) <= 200
    finally:
        for sock in flood:
            sock.close()
        s.stop()


def test_a_split_archive_s_pages_leave_room_for_the_connections(tmp_path):
    """An archive split in 200 pages (a descriptor each) under a limit of 600 open files: the
    worker holds as many connections as its descriptors allow beside the pages, so a flood of
    idle connections from many addresses makes room for another client (the pages were not
    counted: accept() failed for want of a descriptor, and every new client's connection was
    reset while the flood lasted)."""
    write_map(tmp_path / "big.ukvs", 20000, name="https://s.example.org/")
    (tmp_path / "pages").mkdir()
    split = subprocess.run(CLI + ["split", str(tmp_path / "big.ukvs"), "--max-lines", "100", "-o",
                                  str(tmp_path / "pages" / "p")], capture_output=True, text=True, env=env())
    assert split.returncode == 0, split.stderr

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (600, 600))
    s = Server([str(tmp_path / "pages")], workers=1, preexec_fn=limit)
    flood = []
    try:
        for n in range(400):
            flood.append(connect(s.port, "127.0.4.%d" % (n % 50 + 1)))
        time.sleep(0.5)
        assert all(s.get("/lookup?url=http://h00010.com/")[0] == 200 for _ in range(5))
        assert s.proc.poll() is None
    finally:
        for sock in flood:
            sock.close()
        s.stop()


def test_idle_and_slow_heads_are_timed_out(map_path):
    """A connection that sends nothing is closed after --idle-timeout; one that sends its head
    a byte at a time gets 408 once --head-timeout has passed since its first byte, however
    steadily the bytes come."""
    s = Server([map_path], workers=1, args=["--idle-timeout", "1", "--head-timeout", "2"])
    try:
        idle = connect(s.port)
        assert read_until_closed(idle, 10) == b""
        slow = connect(s.port)
        slow.sendall(b"GET /health HTTP/1.1\r\n")
        started, closed = time.monotonic(), None
        while time.monotonic() - started < 15:
            try:
                slow.sendall(b"X")
            except OSError:
                break
            got = read_until_closed(slow, 0.3)
            if got is not None:
                closed = got
                break
        assert closed is not None and closed.startswith(b"HTTP/1.1 408"), closed
        assert answered(s, 5)
    finally:
        s.stop()


def test_a_pipelined_flood_is_answered_in_part_then_closed(map_path):
    """Thousands of requests pipelined at once: the worker answers the first ones in order,
    then closes the connection (never queueing them all), and answers other clients."""
    s = Server([map_path], workers=1)
    try:
        sock = connect(s.port)
        sock.sendall(HEALTH * 3000)
        data = read_until_closed(sock, 20)
        assert data is not None and 1 <= data.count(b"HTTP/1.1 200") <= 20
        assert answered(s, 5)
    finally:
        s.stop()


def test_a_client_that_never_reads_is_dropped(tmp_path):
    """Large answers pipelined to a client that never reads them: the connection is dropped
    after --write-timeout rather than held until the client reads."""
    path = map_with_a_long_header(tmp_path, 500000)
    s = Server([str(path)], workers=1, args=["--write-timeout", "1"])
    try:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", s.port))
        sock.sendall(b"GET /archives HTTP/1.1\r\nHost: x\r\n\r\n" * 16)
        time.sleep(4)                           # never reading, for longer than the timeout
        data = read_until_closed(sock, 20)
        assert data is not None and data.count(b"HTTP/1.1 200") < 16
        assert answered(s, 5)
    finally:
        s.stop()


def map_with_a_long_header(tmp_path, size):
    """A map whose /archives answer is large: a !meta line of size bytes after its first line."""
    path = tmp_path / "big-headers.ukvs"
    write_map(path, 100)
    with open(path) as f:
        head, rest = f.readline(), f.read()
    path.write_text(head + '!meta {"note":"%s"}\n' % ("x" * size) + rest)
    return path


def test_a_client_gone_in_the_middle_of_pipelined_answers_leaves_no_traceback(tmp_path):
    """Clients that pipeline large answers and close their connection before reading them: the
    answer being written is let go quietly (the worker wrote the rest of it to the closed
    connection, and logged "Exception in ASGI application" with a traceback each time); the
    server answers the others."""
    path = map_with_a_long_header(tmp_path, 500000)
    s = Server([str(path)], workers=1)
    try:
        for _ in range(20):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", s.port))
            sock.sendall(b"GET /archives HTTP/1.1\r\nHost: x\r\n\r\n" * 16)
            time.sleep(0.1)
            sock.close()
        assert answered(s, 5)
        s.proc.send_signal(signal.SIGTERM)
        log = s.proc.stderr.read().decode()
        assert "Traceback" not in log and "Exception in ASGI" not in log, log[:2000]
    finally:
        s.stop()


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])


def test_answers_left_unread_are_bounded_in_all(tmp_path):
    """Hundreds of connections, from many addresses, each asking for a large answer (/archives
    of a file with a 1 MB header line) and never reading it: the worker holds at most
    Limits.max_unread (64 MB) of answers left unread, dropping the connections that left theirs
    unread longest (each held its answer until --write-timeout: 400 of them, 790 MB), and
    answers the other clients."""
    path = map_with_a_long_header(tmp_path, 1000000)
    s = Server([str(path)], workers=1)
    flood = []
    try:
        before = rss_kb(s.proc.pid)
        for n in range(400):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.bind(("127.0.2.%d" % (n // 50 + 1), 0))
            sock.connect(("127.0.0.1", s.port))
            sock.sendall(b"GET /archives HTTP/1.1\r\nHost: x\r\n\r\n" * 16)
            flood.append(sock)
        assert answered(s, 5)
        time.sleep(2)
        grown = rss_kb(s.proc.pid) - before
        assert grown < 320 * 1024, "the worker grew by %d MB" % (grown >> 10)     # 64 MB, and what malloc keeps
        assert s.proc.poll() is None
    finally:
        for sock in flood:
            sock.close()
        s.stop()


def test_a_body_never_sent_does_not_hold_the_connection(map_path):
    s = Server([map_path], workers=1, args=["--idle-timeout", "30", "--head-timeout", "30"])
    try:
        sock = connect(s.port)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nabc")
        data = read_until_closed(sock, 10)
        assert data is not None and data.startswith(b"HTTP/1.1 200")
        sock = connect(s.port)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
        data = read_until_closed(sock, 10)
        assert data is not None and data.startswith(b"HTTP/1.1 200")
    finally:
        s.stop()


def test_sighup_does_not_stop_the_server(map_path):
    """SIGHUP to the server and to its workers while clients ask: the same processes go on
    answering every request (uvicorn's supervisor replaced its workers, and a retiring worker
    dropped connections it had just accepted)."""
    for workers in (1, 2):
        s = Server([map_path], workers=workers)
        try:
            before = serving_workers(s, workers)
            until = time.monotonic() + 4            # uvicorn's supervisor looks at its signals twice a second
            while time.monotonic() < until:
                os.kill(s.proc.pid, signal.SIGHUP)
                for pid in before:
                    os.kill(pid, signal.SIGHUP)
                assert answered(s, 10)
                time.sleep(0.3)
            assert s.proc.poll() is None
            assert serving_workers(s, workers) == before
        finally:
            s.stop()


def serving_workers(server, workers):
    """The worker processes once only they are left (the checks' processes at the start gone),
    each catching SIGHUP (its app loaded; one still starting dies of it and is replaced)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pids = sorted(server.workers())
        if len(pids) == (workers if workers > 1 else 0) and all(map(catches_sighup, pids)):
            return pids
        time.sleep(0.1)
    return pids


def catches_sighup(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            caught = next(line for line in f if line.startswith("SigCgt:")).split()[1]
    except (OSError, StopIteration):
        return False
    return bool(int(caught, 16) & (1 << (signal.SIGHUP - 1)))


MALFORMED = [b"GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
             b"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef",
             b"GET /health HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n", b"GET /health HTTP/1.1\r\n X-folded: a\r\n\r\n",
             b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"]


def test_a_request_http_cannot_parse_gets_a_json_400(map_path):
    """A request line or header the parser refuses (a byte past ASCII in the path, HTTP/2's
    preface, two lengths, a NUL, a folded header, a TLS hello) gets a JSON error like every other
    answer, and the connection closed (the parser's plain-text 400 before)."""
    s = Server([map_path], workers=1)
    try:
        for request in MALFORMED:
            sock = connect(s.port)
            sock.sendall(request)
            data = read_until_closed(sock, 10)
            assert data is not None and data.startswith(b"HTTP/1.1 400 "), (request, data)
            head, _, body = data.partition(b"\r\n\r\n")
            assert b"content-type: application/json" in head.lower(), (request, head)
            assert set(orjson.loads(body)) == {"error"}
        assert answered(s)
    finally:
        s.stop()
