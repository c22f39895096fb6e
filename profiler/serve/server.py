"""Starting the routing service: the archives opened and checked whole here (a file that cannot
be served is a one-line error, exit 2), a listening socket bound here (so that port 0 picks a
free port, reported), and uvicorn serving it from N worker processes that each open the
archives again, trusting the versions checked here (an archive whose file went bad since starts
without a version and reports it, rather than the worker failing: uvicorn would stop the service).

Every serving process looks at its archives' paths again on SIGHUP: the supervisor of several
workers passes the signal on (uvicorn's own replaces the workers one by one, and a worker retiring
drops the connections it has just accepted); the connection limits (profiler.serve.protocol) and
the log's repeats (RepeatFilter) are bounded in each."""

import logging
import os
import resource
import signal
import sys
import time

import orjson

from profiler.errors import UserError
from profiler.io.listening import listening_socket
from profiler.serve.archives import open_archives
from profiler.serve.limits import Limits
from profiler.serve.web import Service, asgi_app, wsgi_app

#: the archive specs, for the worker processes (they import app_from_env)
ENV = "ARCHIVE_PROFILER_SERVE"
#: descriptors kept beside the connections (archives' files, the listening socket, logs)
SPARE_FILES = 64
#: the fewest connections a worker is started with: fewer open files than they need is refused
MIN_CONNECTIONS = 16

log = logging.getLogger("archive-profiler")


def _from_env():
    from profiler import plugins
    plugins.load()                                  # a spawned worker: the criteria the parent had
    config = orjson.loads(os.environ[ENV])
    Limits.configure(**config.get("limits", {}))
    fit_connections_to_files(len(config["files"]))
    archives = open_archives(config["files"], strict=False, trusted=config.get("archives"))
    fit_connections_to_files(len(archives), archive_files(archives))
    _on_sighup(archives)
    _bound_repeats()
    return Service(archives)


def app_from_env():
    """The ASGI app of a worker process (uvicorn's factory)."""
    return asgi_app(_from_env())


def wsgi_from_env():
    """The WSGI app of a worker of a threaded WSGI server (scripts/bench_serve.py compares them)."""
    return wsgi_app(_from_env())


def archive_files(archives):
    """Descriptors the archives' files take: each version's files (one, or one per split page),
    and the largest's again while a new version of it is checked (one at a time)."""
    counts = [a.version.files() if a.version is not None else 1 for a in archives]
    return sum(counts) + max(counts, default=0)


def fit_connections_to_files(archives, files=None):
    """Raise this process's limit of open files to what Limits.max_connections needs beside the
    archives' ``files`` (by default two each, before they are opened), or lower the limit of
    connections to what the files allow (past it, accept() fails: a new client's connection is
    reset, and no idle one is closed to make room). Returns whether it was lowered."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    files = 2 * archives if files is None else files
    need = Limits.max_connections + SPARE_FILES + files
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
        if soft < need:
            fewest = MIN_CONNECTIONS + SPARE_FILES + files
            if soft < fewest:
                raise UserError("open files limited to %d: serve needs at least %d for %d archive(s) "
                                "(raise it with ulimit -n)" % (soft, fewest, archives))
            Limits.configure(max_connections=soft - SPARE_FILES - files)
            return True
    return False


def _on_sighup(archives):
    """SIGHUP: every archive's path looked at again at the next request (not the default: the
    process killed)."""
    def handler(signum, frame):
        for a in archives:
            a.check_now()
    signal.signal(signal.SIGHUP, handler)


class RepeatFilter(logging.Filter):
    """Lets a message through at most ``most`` times a minute (a client sending bad requests
    makes uvicorn log a warning for each: the log would grow with the attack)."""

    def __init__(self, most=10):
        super().__init__()
        self.most, self.seen, self.minute = most, {}, 0

    def filter(self, record):
        minute = int(time.monotonic() // 60)
        if minute != self.minute:
            self.minute, self.seen = minute, {}
        key = (record.name, record.msg)
        self.seen[key] = n = self.seen.get(key, 0) + 1
        return n <= self.most


def _bound_repeats():
    for name in ("uvicorn.error", "archive-profiler"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RepeatFilter) for f in logger.filters):
            logger.addFilter(RepeatFilter())


def bind(host, port):
    """The listening socket, inherited by the workers uvicorn forks."""
    sock = listening_socket(host, port, backlog=1024)
    sock.set_inheritable(True)
    return sock


def serve(specs, host="127.0.0.1", port=8080, workers=1, log_level="warning", limits=None):
    """Serve until SIGINT or SIGTERM. limits: values of profiler.serve.protocol.Limits."""
    import uvicorn
    Limits.configure(**(limits or {}))
    lowered = fit_connections_to_files(len(specs))
    # a mistake is a one-line error, before listening; no thread runs yet: the checks may fork
    archives = open_archives(specs, processes=os.cpu_count() or 1)
    # split pages hold a descriptor each
    if fit_connections_to_files(len(archives), archive_files(archives)) or lowered:
        log.warning("open files limited to %d: at most %d connections per worker",
                    resource.getrlimit(resource.RLIMIT_NOFILE)[0], Limits.max_connections)
    http = _http()
    sock = bind(host, port)
    real_port = sock.getsockname()[1]
    print("archive-profiler: serving %d archive(s) on http://%s:%d/ with %d worker(s): %s"
          % (len(archives), host if ":" not in host else "[%s]" % host, real_port, workers,
             ", ".join(a.name for a in archives)), file=sys.stderr, flush=True)
    options = dict(fd=sock.fileno(), log_level=log_level, access_log=False, server_header=False,
                   date_header=False, limit_concurrency=None, timeout_keep_alive=max(1, int(Limits.idle_timeout)),
                   timeout_graceful_shutdown=int(Limits.write_timeout) + 1, ws="none", http=http,
                   loop=_loop(), lifespan="on")
    _bound_repeats()
    if workers > 1:
        os.environ[ENV] = orjson.dumps({"files": specs, "limits": Limits.as_dict(),
                                        "archives": [{"name": a.name, "version": a.trusted()}
                                                     for a in archives]}).decode()
        del archives                                # the workers open their own; this one only watches them
        _supervise(uvicorn.Config("profiler.serve.server:app_from_env", factory=True, workers=workers,
                                  **options))
    else:
        _on_sighup(archives)
        uvicorn.run(asgi_app(Service(archives)), **options)
    sock.close()


def _supervise(config):
    """uvicorn's supervisor of several workers, passing SIGHUP on to them."""
    from uvicorn.supervisors import Multiprocess

    class Supervisor(Multiprocess):
        def handle_hup(self):
            for process in self.processes:
                # one still starting opens its archives afresh (and would die of the signal)
                if process.process.exitcode is None and process.is_ready(timeout=1):
                    try:
                        os.kill(process.pid, signal.SIGHUP)
                    except ProcessLookupError:
                        pass
    try:
        Supervisor(config, sockets=[config.bind_socket()]).run()
    except KeyboardInterrupt:
        pass


def _http():
    """uvicorn's httptools protocol with the bounds of profiler.serve.protocol."""
    try:
        from profiler.serve.protocol import BoundedHttpTools
    except ImportError:
        from profiler import extras
        raise extras.missing("serve", "serve", "uvicorn, httptools, uvloop")
    return BoundedHttpTools


def _loop():
    try:
        import uvloop  # noqa: F401
        return "uvloop"
    except ImportError:
        return "asyncio"
