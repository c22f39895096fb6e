"""Serving the explorer: the standard library's HTTP server, bounded.

At most MAX_CONNECTIONS connections are served at once, each by its own thread, at most
MAX_CLIENT_CONNECTIONS of them from one client. At a limit, the connection that has waited
longest for its next request head (idle, or sending one slowly; of that client, at its own
limit) is closed to make room, so that a flood of idle or slow connections takes turns with
itself; only when every such connection is being answered is a new one refused (503, closed).
A connection must send each request's head within HEAD_SECONDS of being accepted or of its
previous answer (idle and slow clients are cut off by a watchdog that shuts their socket); a
stalled read or write times out after IO_SECONDS. Request lines and headers are bounded by
http.server (64 KiB a line, 100 headers), a request's whole head by MAX_HEAD (431, closed),
targets by MAX_TARGET (414). A body is never read (nor asked
for with a 100 Continue): a request that announces one is answered and its connection closed.
SIGHUP looks at the profiles again (on_sighup), as serve does. One answer is computed at
a time per profile (profiler.explore.answers: bounded work a question).
"""

import http.client
import http.server
import logging
import os
import resource
import signal
import socket
import socketserver
import sys
import threading
import time
import urllib.parse

import orjson

from profiler.errors import UserError
from profiler.files.infiles import require_regular
from profiler.io.listening import client_key, listening_socket
from profiler.explore.web import HEADERS, Profile, Service

log = logging.getLogger("archive-profiler")

MAX_CONNECTIONS = 32
#: connections served at once from one client (an IPv4 address, an IPv6 /64)
MAX_CLIENT_CONNECTIONS = 16
HEAD_SECONDS = 10.0
IO_SECONDS = 10.0
#: seconds a new connection waits for the slot of the connection closed to make room for it
ROOM_SECONDS = 2.0
#: bytes of one request's head (its line and headers) read at most; more: 431, and closed
MAX_HEAD = 64 * 1024
#: descriptors kept beside the connections (the listening socket, standard streams, logs, imports)
SPARE_FILES = 32


class _Watchdog:
    """Shuts the socket of a connection whose next request head is late."""

    def __init__(self):
        self._deadlines = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        threading.Thread(target=self._run, name="explore-watchdog", daemon=True).start()

    def expect(self, sock, seconds):
        with self._lock:
            self._deadlines[sock] = time.monotonic() + seconds

    def busy(self, sock):
        with self._lock:
            self._deadlines.pop(sock, None)

    def evict(self, among=None):
        """Shut the socket of the connection (of ``among``, if given) that has waited longest for
        its next request head, to make room for another; False when none waits (every one is
        being answered)."""
        with self._lock:
            waiting = [s for s in self._deadlines if among is None or s in among]
            if not waiting:
                return False
            oldest = min(waiting, key=self._deadlines.get)
            del self._deadlines[oldest]
        _shut(oldest)
        return True

    def _run(self):
        while not self._stop.wait(0.5):
            now = time.monotonic()
            with self._lock:
                late = [s for s, d in self._deadlines.items() if d < now]
                for s in late:
                    del self._deadlines[s]
            for s in late:
                _shut(s)

    def stop(self):
        self._stop.set()


class _HeadReader:
    """A connection's reader that gives one request's head at most MAX_HEAD bytes: http.server
    bounds each line (64 KiB) and their number (100), not their sum (100 lines of 64 KiB were read
    and parsed whole, 6 MB a connection). Past the bound a header line is too long (431)."""

    def __init__(self, rfile):
        self.rfile = rfile
        self.new_head()

    def new_head(self):
        self.left = MAX_HEAD + 1        # a request line of 64 KiB + 1 is http.server's 414
        self.ended = False

    def end_head(self):
        """The head ends here (an HTTP/0.9 request is its request line alone): the next line read
        is the blank one, not waited for."""
        self.ended = True

    def readline(self, limit=-1):
        if self.ended:
            return b"\r\n"
        line = self.rfile.readline(self.left + 1 if limit is None or limit < 0 else min(limit, self.left + 1))
        self.left -= len(line)
        if self.left < 0:
            raise http.client.LineTooLong("request head longer than %d bytes" % MAX_HEAD)
        return line

    def close(self):
        self.rfile.close()


def _shut(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class Handler(http.server.BaseHTTPRequestHandler):
    """One connection: requests answered by the server's Service."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True          # an answer's head and body go out at once
    server_version = "archive-profiler-explore"
    sys_version = ""
    timeout = IO_SECONDS

    @property
    def request_version(self):
        return self._request_version

    @request_version.setter
    def request_version(self, version):
        """HTTP/0.9 (a request line without a version, or naming it, or refused before its
        version is read) is answered as HTTP/1.0: with a status line and headers, the CSP above
        all, never a bare body."""
        self._request_version = "HTTP/1.0" if version == "HTTP/0.9" else version

    def version_string(self):
        return self.server_version

    def setup(self):
        super().setup()
        self.rfile = _HeadReader(self.rfile)
        self.server.watchdog.expect(self.connection, HEAD_SECONDS)

    def handle_one_request(self):
        self.rfile.new_head()
        super().handle_one_request()

    def finish(self):
        self.server.watchdog.busy(self.connection)
        super().finish()

    def parse_request(self):
        if len(str(self.raw_requestline, "iso-8859-1").split()) == 2:     # HTTP/0.9: no version, no headers
            self.rfile.end_head()
        ok = super().parse_request()
        self.server.watchdog.busy(self.connection)
        if ok and _has_body(self.headers):
            self.close_connection = True    # a body is never read: its bytes are no next request
        return ok

    def handle_expect_100(self):
        """No 100 Continue: a body is never read, so the client is never asked to send one (it
        sent it to a server that answered and closed the connection); the final answer comes at
        once, as HTTP/1.1 lets a server do."""
        return True

    def _answer(self, head_only):
        try:
            target = urllib.parse.urlsplit(self.path)
        except ValueError:                  # an unclosed IPv6 bracket in an absolute form
            status, kind, body = 400, "application/json", b'{"error":"not a request target"}'
        else:
            # http.server decodes the request line as Latin-1: its bytes again, a byte past ASCII
            # refused by the service (never replaced by '?' and another question answered)
            status, kind, body = self.server.service.handle(self.command, target.path,
                                                            target.query.encode("latin-1"))
        self.send_response(status)
        self._head(kind, body, ("Cache-Control", "no-store" if kind.startswith("application/json") else "no-cache"))
        if not head_only:
            self.wfile.write(body)
        self.server.watchdog.expect(self.connection, HEAD_SECONDS)

    def _head(self, kind, body, extra):
        """The rest of an answer's head: its type and length, extra (a (name, value) header), then
        the page's HEADERS."""
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header(*extra)
        for name, value in HEADERS:
            self.send_header(name, value)
        if self.close_connection and extra[0] != "Connection":
            self.send_header("Connection", "close")
        self.end_headers()

    def do_GET(self):
        self._answer(False)

    def do_HEAD(self):
        self._answer(True)

    def _not_allowed(self):
        self.send_response(405)
        body = b'{"error":"only GET and HEAD"}'
        self._head("application/json", body, ("Allow", "GET, HEAD"))
        self.wfile.write(body)

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed

    def send_error(self, code, message=None, explain=None):
        """http.server's own errors (a bad request line, a header too long) as JSON, closing."""
        self.close_connection = True
        if code == 431 and self.rfile.left < 0:
            message = "request head longer than %d bytes" % MAX_HEAD
        try:
            self.send_response(code, message)
            body = ('{"error":"%s"}' % (message or self.responses.get(code, ("error",))[0]).replace('"', "'")).encode()
            self._head("application/json", body, ("Connection", "close"))
            if self.command != "HEAD" and code >= 200 and code not in (204, 304):
                self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, format, *args):
        log.debug("%s - %s", self.address_string(), format % args)


def _has_body(headers):
    """Whether a request's head announces a body (a Content-Length other than 0, or a
    Transfer-Encoding)."""
    length = headers.get_all("Content-Length") or []
    return headers.get("Transfer-Encoding") is not None or any(v.strip() != "0" for v in length)


_TOO_MANY = orjson.dumps({"error": "too many connections now: try again later"})


def _refuse(request):
    """503 to a connection not served, before it is closed."""
    try:
        request.settimeout(1.0)
        request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(_TOO_MANY), _TOO_MANY))
    except OSError:
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """A threading HTTP server with at most MAX_CONNECTIONS connections at once and
    MAX_CLIENT_CONNECTIONS from one client, the one idle longest closed to make room for a new
    one."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128
    allow_reuse_address = True

    def __init__(self, sock, service):
        self.service = service
        self.watchdog = _Watchdog()
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._clients = {}              # client key -> the sockets of its connections served
        self._clients_lock = threading.Lock()
        http.server.HTTPServer.__init__(self, sock.getsockname()[:2], Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock

    def process_request(self, request, client_address):
        key = client_key(client_address)
        with self._clients_lock:
            theirs = set(self._clients.get(key, ()))
        if len(theirs) >= MAX_CLIENT_CONNECTIONS:
            # room among its own connections only, never another client's
            admitted = self.watchdog.evict(theirs) and self.slots.acquire(timeout=ROOM_SECONDS)
        else:
            admitted = self.slots.acquire(blocking=False) or (
                self.watchdog.evict() and self.slots.acquire(timeout=ROOM_SECONDS))
        if not admitted:
            _refuse(request)
            self.shutdown_request(request)
            return
        with self._clients_lock:
            self._clients.setdefault(key, set()).add(request)
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            key = client_key(client_address)
            with self._clients_lock:
                theirs = self._clients.get(key)
                if theirs is not None:
                    theirs.discard(request)
                    if not theirs:
                        del self._clients[key]
            self.slots.release()

    def handle_error(self, request, client_address):
        log.debug("connection from %s ended with an error", client_address[0], exc_info=True)

    def server_close(self):
        self.watchdog.stop()
        super().server_close()


def open_profiles(specs):
    """Profiles from 'NAME=FILE' or 'FILE' specs; names must differ."""
    profiles = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not (sep and name and not os.path.exists(spec)):
            name, path = None, spec
        if not os.path.lexists(path):
            raise UserError("profile not found: %s" % path)
        require_regular(path)               # a device, FIFO, folder or link loop named for what it is
        profiles.append(Profile(path, name))
    names = [p.name for p in profiles]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserError("two files name the profile %s: name them with NAME=FILE" % twice[0])
    return profiles


def fit_files(profiles):
    """Raise this process's limit of open files to what MAX_CONNECTIONS connections need beside
    the profiles' files (each open twice while a new version is read); a limit too low for them is
    a UserError. Fewer descriptors than connections made accept() fail while a connection waits
    in the queue: the server spun on it, and no idle connection was closed to make room."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = MAX_CONNECTIONS + SPARE_FILES + 2 * profiles
    if soft == resource.RLIM_INFINITY or soft >= need:
        return
    if hard == resource.RLIM_INFINITY or hard >= need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
        return
    raise UserError("open files limited to %d: explore needs at least %d for %d profile(s) "
                    "(raise it with ulimit -n)" % (hard, need, profiles))


def make_server(specs, host="127.0.0.1", port=8080):
    """(Server, its URL): the profiles opened and indexed, a socket listening (port 0: a free
    one). A mistake (a missing file, a damaged one, too few open files) is a UserError before
    anything listens."""
    started = time.monotonic()
    fit_files(len(specs))
    profiles = open_profiles(specs)
    sock = listening_socket(host, port)
    real = sock.getsockname()[1]
    url = "http://%s:%d/" % (host if ":" not in host else "[%s]" % host, real)
    server = Server(sock, Service(profiles))
    server.started_in = time.monotonic() - started
    return server, url


def on_sighup(profiles):
    """SIGHUP: every profile's path looked at again now, a new version read in the background
    (as serve does; not the end of the process, which a daemon's SIGHUP is not)."""
    def handler(signum, frame):
        for p in profiles:
            threading.Thread(target=p.check, daemon=True, name="explore: SIGHUP").start()
    signal.signal(signal.SIGHUP, handler)


def explore(specs, host="127.0.0.1", port=8080):
    """Index the profiles, then serve until SIGINT or SIGTERM; SIGHUP: on_sighup."""
    server, url = make_server(specs, host, port)
    profiles = server.service.profiles
    on_sighup(profiles)
    lines = sum(p.explorer.index.lines for p in profiles)
    print("archive-profiler: exploring %d profile(s), %s lines indexed in %.1f s, on %s"
          % (len(profiles), "{:,}".format(lines), server.started_in, url), file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()
        for p in profiles:
            p.explorer.close()
