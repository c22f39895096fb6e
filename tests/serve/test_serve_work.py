"""A real `archive-profiler serve` whose answer to one request is slow (its archive's lookup made
to take seconds by a sitecustomize module in the server's import path): the other clients are
answered meanwhile, and the slow request gets a 503 once --request-timeout has passed."""

import os
import socket
import threading
import time

import pytest

pytest.importorskip("uvicorn")

from helpers.paths import ROOT  # noqa: E402
from helpers.serving import Server, env, received, write_map  # noqa: E402

SLOW = '''
import os, time
from profiler.toolkit import lookup

_answer = lookup.Lookup.lookup_urlkey


def _slow(self, urlkey, *args, **kwargs):
    if "slow" in str(urlkey):
        end = time.monotonic() + float(os.environ["SLOW_SECONDS"])
        while time.monotonic() < end:       # the GIL held most of the time: work, not a wait
            sum(range(1000))
    return _answer(self, urlkey, *args, **kwargs)


lookup.Lookup.lookup_urlkey = _slow
'''


def slow_server(tmp_path, seconds, args=()):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SLOW)
    environ = dict(env(), SLOW_SECONDS=str(seconds), PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), ROOT]))
    return Server([write_map(tmp_path / "a.ukvs", 50, name="https://a.example.org/")], workers=1, args=args,
                  environ=environ)


def ask(port, target):
    """(status line, seconds) of one GET on a connection of its own."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % target.encode())
        data = received(sock)
    return data.split(b"\r\n", 1)[0], time.monotonic() - started


def test_a_slow_answer_leaves_the_other_clients_answered(tmp_path):
    """The slow answer was computed on the event loop: every other request waited for it."""
    s = slow_server(tmp_path, 4)
    try:
        slow = {}
        t = threading.Thread(target=lambda: slow.update(answer=ask(s.port, "/lookup?url=http://slow.com/")))
        t.start()
        time.sleep(0.5)
        for target in ("/health", "/lookup?url=http://h00001.com/", "/archives"):
            line, seconds = ask(s.port, target)
            assert line == b"HTTP/1.1 200 OK" and seconds < 2, (target, line, seconds)
        t.join()
        assert slow["answer"][0] == b"HTTP/1.1 200 OK"
    finally:
        s.stop()


def test_a_request_past_its_time_limit_is_a_503(tmp_path):
    """--request-timeout 1: the slow request answered 503 after about a second, the server still
    answers the others, and the next request for it too (once a thread is free)."""
    s = slow_server(tmp_path, 3, ["--request-timeout", "1"])
    try:
        line, seconds = ask(s.port, "/lookup?url=http://slow.com/")
        assert line == b"HTTP/1.1 503 Service Unavailable" and seconds < 2.5, (line, seconds)
        assert ask(s.port, "/health")[0] == b"HTTP/1.1 200 OK"
        assert ask(s.port, "/route?url=http://h00002.com/")[0] == b"HTTP/1.1 200 OK"
    finally:
        s.stop()


PLUGIN_MAP = """!context ["http://oduwsdl.github.io/contexts/ukvs"]
!fields {"keys":["surt"],"values":["frequency"]}
!id {"uri":"https://s.example.org/"}
!meta {"type":"MementoMap","generator":"archive-profiler/0.1.0","source":{"captures":3,"policy":"scheme"},\
"coverage":{"host_depth":3,"exact_urls":false},"breakdown":["scheme"]}
* 3/3 {"scheme":{"ftp":"1/1","http":"1/1","https":"1/1"}}
com,* 2/2 {"scheme":{"http":"1/1","https":"1/1"}}
com,a)/* 2/2 {"scheme":{"http":"1/1","https":"1/1"}}
org,* 1/1 {"scheme":{"ftp":"1/1"}}
org,b)/* 1/1 {"scheme":{"ftp":"1/1"}}
"""


def test_a_value_of_a_plugin_s_criterion_not_loaded_names_the_archive_and_the_plugin(tmp_path):
    """A map broken down by a plugin's criterion (scheme), served where the plugin is not loaded:
    asking for a scheme was 'unknown parameter' listing the others, not saying that the archive's
    map has it and the plugin is missing; /archives lists the criterion."""
    path = tmp_path / "s.ukvs"
    path.write_text(PLUGIN_MAP)
    environ = {k: v for k, v in env().items() if k != "ARCHIVE_PROFILER_PLUGINS"}
    s = Server([str(path)], workers=1, environ=environ)
    try:
        status, body = s.get("/lookup?url=http://a.com/x&scheme=https")
        assert status == 400
        assert "https://s.example.org/" in body["error"] and "scheme" in body["error"]
        assert "ARCHIVE_PROFILER_PLUGINS" in body["error"], body
        status, body = s.get("/route?url=http://a.com/x&schem=https")     # a misspelling: no plugin hint
        assert status == 400 and "ARCHIVE_PROFILER_PLUGINS" not in body["error"]
        status, body = s.get("/archives")
        assert body["archives"][0]["unknown_criteria"] == ["scheme"]
        assert s.get("/lookup?url=http://a.com/x")[1]["archives"][0]["answer"] == "held"
    finally:
        s.stop()


def test_other_methods_are_a_405_that_says_which_are_allowed(tmp_path):
    """OPTIONS, POST, DELETE: 405 with the Allow header HTTP requires of it (it had none)."""
    s = Server([write_map(tmp_path / "a.ukvs", 5)], workers=1)
    try:
        for method in (b"OPTIONS", b"POST", b"DELETE", b"PUT"):
            for target in (b"/health", b"/lookup?url=http://a.com/", b"*"):
                with socket.create_connection(("127.0.0.1", s.port), timeout=10) as sock:
                    sock.sendall(b"%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % (method, target))
                    data = received(sock)
                head = data.split(b"\r\n\r\n", 1)[0].lower()
                assert head.startswith(b"http/1.1 405 ") and b"\r\nallow: get, head" in head, data
    finally:
        s.stop()


def exchange(port, data, half_close=False, seconds=10):
    """Everything the server sends back to data until it closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        out = b""
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                out += chunk
        except ConnectionResetError:
            pass
    return out


def test_old_and_odd_requests_are_answered_or_refused_in_bounded_time(tmp_path):
    """HTTP/1.0, a socket half closed after its request, a Range (ignored: the whole answer),
    Expect: 100-continue (the answer at once, then closed), a non-UTF-8 path percent-encoded (404),
    and HTTP/0.9, which the parser cannot read (408 once --head-timeout has passed)."""
    s = Server([write_map(tmp_path / "a.ukvs", 5)], workers=1, args=["--head-timeout", "1"])
    try:
        whole = exchange(s.port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        body = whole.split(b"\r\n\r\n", 1)[1]
        for request, half in [(b"GET /health HTTP/1.0\r\n\r\n", False),
                              (b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", True),
                              (b"GET /health HTTP/1.1\r\nHost: x\r\nRange: bytes=0-3\r\nConnection: close\r\n\r\n", False),
                              (b"GET /health HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 9\r\n\r\n",
                               False)]:
            out = exchange(s.port, request, half)
            assert out.startswith(b"HTTP/1.1 200 OK\r\n") and out.endswith(b"\r\n\r\n" + body), (request, out)
            assert b"100 Continue" not in out
        out = exchange(s.port, b"GET /%ff%fe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert out.startswith(b"HTTP/1.1 404 ") and b'{"error":' in out
        started = time.monotonic()
        out = exchange(s.port, b"GET /health\r\n")
        assert out.startswith(b"HTTP/1.1 408 ") and time.monotonic() - started < 5, out
    finally:
        s.stop()


def test_a_2_gb_sparse_file_moved_into_place_is_refused_and_the_others_served(tmp_path):
    """A 2 GB sparse file (no line end) moved into an archive's path: checked in the background
    and refused, that archive keeps serving its version, /health says why, and a good file after
    it is served."""
    good = write_map(tmp_path / "a.ukvs", 50, name="https://a.example.org/")
    other = write_map(tmp_path / "b.ukvs", 50, name="https://b.example.org/", seed=3)
    s = Server(["A=" + good, "B=" + other], workers=1)
    try:
        before = s.get("/lookup?url=http://h00003.com/")[1]
        with open(tmp_path / "sparse", "wb") as f:
            f.truncate(2 << 30)
        os.replace(tmp_path / "sparse", good)
        body = s.wait_for(lambda b: b["status"] == "degraded", seconds=60)
        assert body["problems"][0]["archive"] == "A" and body["problems"][0]["serving"], body
        assert s.get("/lookup?url=http://h00003.com/")[1] == before
        write_map(tmp_path / "again.ukvs", 50, name="https://a.example.org/")
        os.replace(tmp_path / "again.ukvs", good)
        s.wait_for(lambda b: b["status"] == "ok", seconds=60)
    finally:
        s.stop()


def test_health_says_at_once_that_a_file_was_written_in_place(tmp_path):
    """A served file grown in place (bytes appended): /health says so at once, as a lookup of
    that archive does (it said "ok" until a lookup came)."""
    path = write_map(tmp_path / "a.ukvs", 50, name="https://a.example.org/")
    s = Server(["A=" + path], workers=1)
    try:
        assert s.get("/health")[1]["status"] == "ok"
        with open(path, "ab") as f:
            f.write(b"\0" * 100000)
        body = s.get("/health")[1]
        assert body["status"] == "degraded" and "changed in place" in body["problems"][0]["problem"], body
    finally:
        s.stop()
