"""The explorer's HTTP layer: the page, its script and style, and the JSON API under it.

GET (or HEAD) only; the path picks one of a few fixed resources, and nothing in a request names
a file: the page's files are read from the package once, at start. Every response carries a
Content-Security-Policy that lets the page load only its own script and style and call only
its own API. Answers are JSON (orjson); errors too: {"error": "..."} with 400 (a bad
parameter), 404, 405, 414 or 503 (a profile that changed and cannot be read now).
"""

import logging
import os
import threading
import time

from profiler import jsonnum
from profiler.errors import UserError
from profiler.explore import questions
from profiler.explore.answers import MAX_ROWS, ROWS, SHOWN, Explorer
from profiler.files.infiles import identity

log = logging.getLogger("archive-profiler")

#: the longest request target (path and query) answered; longer: 414
MAX_TARGET = 8192
#: seconds between two checks of whether a profile's path names a changed file (0: every answer)
CHECK_EVERY = 0.0
#: seconds a request waits for a new version being read (then the version read before answers,
#: or a 503 when that file was itself written)
RELOAD_WAIT = 2.0
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = [("Content-Security-Policy", CSP), ("X-Content-Type-Options", "nosniff"),
           ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY")]
STATIC = {"/": ("explore.html", "text/html; charset=utf-8"),
          "/explore.js": ("explore.js", "text/javascript; charset=utf-8"),
          "/explore.css": ("explore.css", "text/css; charset=utf-8"),
          "/favicon.svg": ("favicon.svg", "image/svg+xml")}
JSON = "application/json"
#: the end of a profile's problem while the version read before answers
READ_BEFORE = ": exploring the version read before"


def _identity(path):
    """What tells a changed file (profiler.files.infiles.identity): its ctime too, which moves with
    every write even when its size and mtime are put back."""
    return identity(os.stat(path))


class Profile:
    """One explored profile: the Explorer of the file its path names now. A changed file is
    opened (and indexed) again in a thread of its own, one at a time; a request waits for it at
    most RELOAD_WAIT seconds (an index of a large file takes minutes: the request, and every other
    of that profile, waited for it whole). Meanwhile, and while it cannot be opened, the version
    read before keeps answering when it is another file still as it was (a new version moved
    into place), said in ``problem`` when the new one is refused; else (the file read was itself
    written) answers are 503. A refused file is read again only once it changes again (a
    damaged file is not read whole at every request)."""

    def __init__(self, path, name=None):
        self.path, self.given_name = path, name
        self.explorer = Explorer(path, name)
        self.identity = _identity(path)
        self.name = self.explorer.name
        self._checked = time.monotonic()
        self._lock = threading.Lock()
        self._rejected = None           # (identity, why broken, problem) of the file last found unreadable
        self._reading = None            # the thread reading a new version, while it does
        self.broken = None              # why the path's file cannot be explored (answers 503)
        self.problem = None             # why the path cannot be read while the open version answers

    def check(self):
        """Look at the path: a file other than the one explored (and the one last refused) is
        read in the background (one at a time). The thread reading, if any."""
        with self._lock:
            self._checked = time.monotonic()
            try:
                identity = _identity(self.path)
            except OSError as e:
                identity = None             # gone (for a moment: a link being moved): keep what is open
                self._unreadable(e)
            else:
                self.problem = None
            if identity == self.identity:
                self.broken = None          # the path names the file explored again
            elif identity is not None and self._rejected is not None and identity == self._rejected[0]:
                self.broken, self.problem = self._rejected[1], self._rejected[2] or self.problem
            elif identity is not None and self._reading is None:
                self._reading = threading.Thread(target=self._open, args=(identity,), daemon=True,
                                                 name="explore: read %s" % self.name)
                self._reading.start()
            return self._reading

    def current(self):
        if time.monotonic() - self._checked >= CHECK_EVERY or self.broken:
            reading = self.check()
            if reading is not None:
                reading.join(RELOAD_WAIT)
        if self.broken:
            raise _Unavailable(self.broken)
        explorer = self.explorer
        if self._reading is not None and not explorer.unchanged():
            raise _Unavailable("%s changed: it is being read again" % self.path)
        return explorer

    def _unreadable(self, error):
        """The path names no file now: the version open keeps answering, reported (the refusal
        of a damaged version before it, if any, says so instead)."""
        why = "%s cannot be read now (%s)" % (self.path, error.strerror or error)
        if self.broken:
            if self.broken != why:
                self.broken = why
                log.warning("%s", why)
        elif self.problem != why + READ_BEFORE:
            self.problem = why + READ_BEFORE
            log.warning("%s", self.problem)

    def _open(self, identity):
        """Read the version of ``identity`` (a thread of its own) and explore it once read."""
        try:
            fresh = Explorer(self.path, self.given_name or self.name)
        except Exception as e:              # whatever it is, the reading thread reports it
            if not isinstance(e, (OSError, UserError)):
                log.exception("reading %s", self.path)
            why = "%s changed and cannot be read now: %s" % (self.path, e)
            with self._lock:
                if identity[:2] != self.identity[:2] and self.explorer.unchanged():
                    # another file moved into place: the one read before is whole and open, it answers
                    self.broken, self.problem = None, why + READ_BEFORE
                    log.warning("%s", self.problem)
                else:
                    self.broken = why
                    log.warning("%s", self.broken)
                self._rejected = identity, self.broken, self.problem
                self._reading = None
        else:
            with self._lock:
                old, self.explorer, self.identity, self.broken, self._rejected = (
                    self.explorer, fresh, identity, None, None)
                self._reading = None
            log.info("exploring the new version of %s", self.path)
            with old.lock:                  # after the answer it may be giving
                old.close()


class _Unavailable(Exception):
    pass


class Service:
    """The profiles and the request handler over them."""

    def __init__(self, profiles):
        self.profiles = profiles
        self.by_name = {p.name: p for p in profiles}
        self.static = {}
        from importlib.resources import files
        for path, (name, kind) in STATIC.items():
            self.static[path] = (files("profiler.explore").joinpath("static", name).read_bytes(), kind)

    def handle(self, method, path, query):
        """(status, content type, body bytes) of one request: method and path str, query bytes."""
        if len(path) + len(query) > MAX_TARGET:
            return _error(414, "request target longer than %d bytes" % MAX_TARGET)
        if method not in ("GET", "HEAD"):
            return _error(405, "only GET and HEAD")
        if path in self.static:
            if query and path != "/":
                return _error(400, "the page's files take no parameters")
            body, kind = self.static[path]
            return 200, kind, body
        endpoint = {"/api/profiles": self.describe, "/api/answer": self.answer}.get(path)
        if endpoint is None:
            return _error(404, "no such page: /, /api/profiles and /api/answer are served")
        try:
            return 200, JSON, jsonnum.dumps(endpoint(questions.parse_query(query)))
        except questions.BadRequest as e:
            return _error(400, str(e))
        except _Unavailable as e:
            return _error(503, str(e))
        except UserError as e:              # the file found out of order, or a line that is not a profile line
            log.error("%s", e)
            return _error(500, "the profile cannot answer: %s" % e)
        except Exception:                   # never a traceback to the client, always one in the log
            log.exception("answering %s", path)
            return _error(500, "internal error")

    def describe(self, params):
        if params:
            raise questions.BadRequest("/api/profiles takes no parameters")
        out = []
        for p in self.profiles:
            try:
                described = p.current().describe()
                if p.problem:
                    described["problem"] = p.problem
                out.append(described)
            except _Unavailable as e:
                out.append({"name": p.name, "file": p.path, "error": str(e)})
        return {"profiles": out}

    def answer(self, params):
        name = params.get("profile")
        if name is None or name == "":
            profile = self.profiles[0]
        else:
            profile = self.by_name.get(name)
            if profile is None:
                raise questions.BadRequest("no profile named %r (see /api/profiles)" % name[:80])
        explorer = profile.current()
        question = questions.question(params, explorer.layout, SHOWN, MAX_ROWS, ROWS)
        return explorer.answer(question)


def _error(status, message):
    return status, JSON, jsonnum.dumps({"error": message})
