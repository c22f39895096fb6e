"""Starting the routing service: the archives opened (and checked) here, a listening socket bound
here (so that port 0 picks a free port, reported), and uvicorn serving it from N worker processes
that each open the archives again (memory-mapped: the pages are shared)."""

import os
import socket
import sys

import orjson

from profiler.errors import UserError
from profiler.serve.archives import open_archives
from profiler.serve.web import Service, asgi_app, wsgi_app

#: the archive specs, for the worker processes (they import app_from_env)
ENV = "ARCHIVE_PROFILER_SERVE"


def _from_env():
    config = orjson.loads(os.environ[ENV])
    return Service(open_archives(config["files"]), config.get("page_budget"))


def app_from_env():
    """The ASGI app of a worker process (uvicorn's factory)."""
    return asgi_app(_from_env())


def wsgi_from_env():
    """The WSGI app of a worker of a threaded WSGI server (scripts/bench_serve.py compares them)."""
    return wsgi_app(_from_env())


def bind(host, port):
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise UserError("cannot listen on %s: %s" % (host, e))
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as e:
        sock.close()
        raise UserError("cannot listen on %s port %d: %s" % (host, port, e.strerror or e))
    if family in (socket.AF_INET, socket.AF_INET6):
        # answers are small: sent at once, not held back for an ACK (accepted sockets inherit it)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


def serve(specs, host="127.0.0.1", port=8080, workers=1, log_level="warning", page_budget=None):
    """Serve until SIGINT or SIGTERM. page_budget: bytes of mapped file pages a worker keeps
    (profiler.serve.archives.PageBudget; None: as many as it reads)."""
    import uvicorn
    archives = open_archives(specs)                  # a mistake is a one-line error, before listening
    sock = bind(host, port)
    real_port = sock.getsockname()[1]
    print("archive-profiler: serving %d archive(s) on http://%s:%d/ with %d worker(s): %s"
          % (len(archives), host if ":" not in host else "[%s]" % host, real_port, workers,
             ", ".join(a.name for a in archives)), file=sys.stderr, flush=True)
    options = dict(fd=sock.fileno(), log_level=log_level, access_log=False, server_header=False,
                   date_header=False, limit_concurrency=2048, timeout_keep_alive=5,
                   h11_max_incomplete_event_size=16 * 1024, http=_http(), loop=_loop(), lifespan="on")
    if workers > 1:
        del archives                                # the workers open their own; this one only watches them
        os.environ[ENV] = orjson.dumps({"files": specs, "page_budget": page_budget}).decode()
        uvicorn.run("profiler.serve.server:app_from_env", factory=True, workers=workers, **options)
    else:
        uvicorn.run(asgi_app(Service(archives, page_budget)), **options)
    sock.close()


def _http():
    """uvicorn's httptools protocol with a bound on a request's head, or h11 (bounded by
    h11_max_incomplete_event_size) without httptools."""
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "h11"
    from profiler.serve.protocol import BoundedHttpTools
    return BoundedHttpTools


def _loop():
    try:
        import uvloop  # noqa: F401
        return "uvloop"
    except ImportError:
        return "asyncio"
