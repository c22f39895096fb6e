"""The HTTP layer of the routing service: one request handler, read-only and bounded, under two
server interfaces (ASGI for uvicorn, WSGI for a threaded server).

GET (or HEAD) only; the path picks one of four fixed endpoints (nothing in a request names a
file); the request target may be at most MAX_TARGET bytes, with at most MAX_FIELDS parameters,
each given once and each one the endpoint takes (a misspelt or unaskable one would be ignored
and the question answered without it); numbers are ASCII digits; answers are JSON (orjson), errors too:
{"error": "..."} with 400, 404, 405 or 414. An archive that cannot answer answers an error for
itself inside a 200 (profiler.serve.answers); /health then says "degraded" and which.

Under ASGI, answers are computed by a pool of Limits.answer_threads threads, never on the event
loop (a slow answer, from many archives or a slow disk, stalled every other client of the
worker), each within Limits.request_timeout of its request's arrival: later, 503 (the wait for a
thread counts; a request whose time is up is not started, and one started asks no more archive).
/health and the errors are answered on the loop (POOLED), also while every thread is busy.
"""

import asyncio
import concurrent.futures
import logging
import time
import urllib.parse

from profiler import contract, jsonnum
from profiler.errors import UserError
from profiler.serve import answers
from profiler.serve.limits import Limits
from profiler.model import criteria
from profiler.toolkit.lookup import datetime_query, value_query

#: the longest request target (path and query) answered; longer: 414
MAX_TARGET = 8192
#: the most results /route returns
MAX_LIMIT = 1000
#: the most parameters a query string may have
MAX_FIELDS = 20
JSON = b"application/json"
log = logging.getLogger("archive-profiler")


class Service:
    """The archives and the request handler over them."""

    def __init__(self, archives):
        self.archives = archives

    def handle(self, method, path, query, deadline=None):
        """(status, body bytes) of one request: method and path str, query bytes; 503 once the
        time.monotonic() deadline (None: none) has passed."""
        if len(path) + len(query) > MAX_TARGET:
            return _error(414, "request target longer than %d bytes" % MAX_TARGET)
        if method not in ("GET", "HEAD"):
            return _error(405, "only GET and HEAD")
        endpoint = _ENDPOINTS.get(path)
        if endpoint is None:
            return _error(404, "no such endpoint: /lookup, /route, /archives and /health are served")
        try:
            answers.in_time(deadline)
            params = _params(query)
            return 200, jsonnum.dumps(endpoint(self, params, deadline))
        except answers.TooSlow as e:
            return _error(503, str(e))
        except (_BadRequest, answers.QueryTooLarge) as e:
            return _error(400, str(e))
        except Exception:                   # never a traceback to the client, always one in the log
            log.exception("answering %s", path)
            return _error(500, "internal error")

    def lookup(self, params, deadline=None):
        _known(params, self.archives, "url", "datetime")
        url, dt = _url(params), _datetime(params)
        found = answers.lookup_all(self.archives, url, dt, _asked(params), deadline)
        if found is None:
            raise _BadRequest("not a URI or SURT: %r" % url[:200])
        return found

    def route(self, params, deadline=None):
        _known(params, self.archives, "url", "datetime", "limit")
        url, dt = _url(params), _datetime(params)
        limit = params.get("limit")
        if limit is not None:
            if not _digits(limit) or not 1 <= int(limit) <= MAX_LIMIT:
                raise _BadRequest("limit must be a whole number from 1 to %d" % MAX_LIMIT)
            limit = int(limit)
        found = answers.route(self.archives, url, dt, limit, _asked(params), deadline)
        if found is None:
            raise _BadRequest("not a URI or SURT: %r" % url[:200])
        return found

    def describe(self, params, deadline=None):
        for a in self.archives:
            a.looked_at()
        return {"archives": [a.describe() for a in self.archives]}

    def health(self, params, deadline=None):
        for a in self.archives:
            a.looked_at()
        problems = [dict(archive=a.name, file=a.path, serving=a.version is not None, **a.problem)
                    for a in self.archives if a.problem is not None]
        if not problems:
            return {"status": "ok", "archives": len(self.archives)}
        return {"status": "degraded", "archives": len(self.archives), "problems": problems}


_ENDPOINTS = {"/lookup": Service.lookup, "/route": Service.route, "/archives": Service.describe,
              "/health": Service.health}
#: the endpoints whose answers a pool of threads computes (the others', /health and the errors, are
#: small: the event loop answers them, also while every thread is busy)
POOLED = frozenset(("/lookup", "/route", "/archives"))
#: the ASGI scope's extension a server may give: awaited, it returns once the connection can take
#: an answer (its client has read those before); profiler.serve.protocol gives it
WRITABLE = "archive-profiler.writable"


class _BadRequest(Exception):
    pass


def _error(status, message):
    return status, jsonnum.dumps({"error": message})


def _digits(text):
    """ASCII digits only (str.isdigit and int take '²' and '٢' too)."""
    return text.isascii() and text.isdigit()


def _params(query):
    try:
        pairs = urllib.parse.parse_qsl(query.decode("ascii"), keep_blank_values=True, strict_parsing=False,
                                       errors="strict", max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError) as e:
        raise _BadRequest("bad query string (%s)" % e)
    params = {}
    for name, value in pairs:
        if name in params:
            raise _BadRequest("parameter %r given twice" % name)
        params[name] = value
    return params


def _known(params, archives, *names):
    """A _BadRequest naming a parameter that is neither one of names nor an optional criterion;
    one that an archive's map breaks its lines down by names that archive and the plugin hint
    (a plugin's criterion exists only where its module is loaded)."""
    known = names + tuple(c.name for c in criteria.CRITERIA if c.optional)
    for name in params:
        if name not in known:
            holders = [a.name for a in archives if name in a.unknown_criteria()]
            if holders:
                raise _BadRequest("unknown parameter %r: the map of %s breaks its lines down by %s, a criterion "
                                  "not loaded here (a plugin's: name its module in %s)" % (
                                      name[:40], ", ".join(holders[:3]) + (", ..." if len(holders) > 3 else ""),
                                      name[:40], contract.PLUGINS_ENV))
            raise _BadRequest("unknown parameter %r: ask with %s" % (name[:40], ", ".join(known)))


def _url(params):
    url = params.get("url")
    if not url:
        raise _BadRequest("give url=URI (or a SURT)")
    return url


def _datetime(params):
    dt = params.get("datetime")
    if dt is None or dt == "":
        return None
    if not _digits(dt.strip()):
        raise _BadRequest("not a datetime (4 to 14 digits, e.g. 2013 or 20130512): %r" % dt[:40])
    try:
        return datetime_query(dt)
    except UserError as e:
        raise _BadRequest(str(e))


def _asked(params):
    """(criterion name, key field) of the value of an optional criterion a request asks for
    (lang=ara: ("lang", "ara")), or None; at most one."""
    asked = []
    for c in criteria.CRITERIA:
        text = params.get(c.name) if c.optional else None
        if text:
            try:
                value = value_query(c, text)
            except UserError as e:
                raise _BadRequest(str(e))
            if value is not None:
                asked.append((c.name, value))
    if len(asked) > 1:
        raise _BadRequest("ask a value of one criterion at a time, not %s" % " and ".join(n for n, _ in asked))
    return asked[0] if asked else None


# ---------------------------------------------------------------- server interfaces

def asgi_app(service):
    """The service as an ASGI application (uvicorn): answers computed by a pool of threads
    (see the module's text). An answer is computed once its connection can take it (its client
    has read the answers before: WRITABLE), and at most Limits.answer_threads answers are
    computed or being handed to their connections at once: an answer's bytes are then either
    in the making or counted among those left unread (profiler.serve.protocol)."""
    pool, gate = [], []

    async def answer(method, path, query):
        if not pool:
            pool.append(concurrent.futures.ThreadPoolExecutor(Limits.answer_threads, "answer"))
            gate.append(asyncio.Semaphore(Limits.answer_threads))
        seconds = Limits.request_timeout
        deadline = time.monotonic() + seconds
        try:
            await asyncio.wait_for(gate[0].acquire(), seconds)
        except asyncio.TimeoutError:
            return _error(503, "the answer took longer than %g s: ask again later" % seconds), None
        work = asyncio.get_running_loop().run_in_executor(pool[0], service.handle, method, path, query, deadline)
        try:
            return await asyncio.wait_for(work, max(0.0, deadline - time.monotonic())), gate[0]
        except asyncio.TimeoutError:        # not started: cancelled; started: it stops at its deadline
            return _error(503, "the answer took longer than %g s: ask again later" % seconds), gate[0]
        except BaseException:
            gate[0].release()
            raise

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        method, path, query = scope["method"], scope["path"], scope.get("query_string", b"")
        if path in POOLED:
            writable = scope.get("extensions", {}).get(WRITABLE)
            if writable is not None:
                await writable()
            (status, body), held = await answer(method, path, query)
        else:
            (status, body), held = service.handle(method, path, query), None
        try:
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", JSON), (b"content-length", b"%d" % len(body)),
                                    (b"cache-control", b"no-store")] + ([(b"allow", b"GET, HEAD")] if status == 405
                                                                         else [])})
            await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})
        finally:
            if held is not None:
                held.release()
    return app


_REASONS = {200: "200 OK", 400: "400 Bad Request", 404: "404 Not Found", 405: "405 Method Not Allowed",
            414: "414 URI Too Long", 500: "500 Internal Server Error", 503: "503 Service Unavailable"}


def wsgi_app(service):
    """The service as a WSGI application (a threaded server such as gunicorn's gthread)."""
    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        query = environ.get("QUERY_STRING", "").encode("latin-1")
        status, body = service.handle(environ.get("REQUEST_METHOD", "GET"), path, query)
        start_response(_REASONS[status], [("Content-Type", "application/json"),
                                          ("Content-Length", str(len(body))), ("Cache-Control", "no-store")]
                       + ([("Allow", "GET, HEAD")] if status == 405 else []))
        return [b"" if environ.get("REQUEST_METHOD") == "HEAD" else body]
    return app
