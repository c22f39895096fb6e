"""The archives a routing service serves: one sorted map or profile each, looked up by binary
search over the file read through its open descriptor (profiler.serve.reader), and each on its
own: a new version the path names (nightly moves its NAME-latest link) is checked whole in the
background (profiler.serve.versions) and replaces the version served only once found good; one
found bad leaves the last good version serving, and the archive reports the problem (which,
why, since when) until a good version comes or the path names the served one again. A file
changed in place is not served until checked again. An archive with no version to serve
answers an error for itself; the others answer as before."""

import datetime
import logging
import os
import threading
import time

from profiler.errors import UserError
from profiler.model import criteria
from profiler.serve.versions import BadVersion, Changing, identity, open_version

log = logging.getLogger("archive-profiler")

#: seconds between two checks of whether an archive's path names a new file
CHECK_EVERY = 1.0
#: one new version checked at a time in a process (ten links moved at once are ten whole-file
#: checks, each holding the GIL most of the time: together they would starve the serving thread)
_ONE_CHECK = threading.Lock()


class Unavailable(UserError):
    """An archive with no version to serve (its problem says why)."""


def parse_spec(spec):
    """'NAME=FILE' or 'FILE' -> (name or None, path)."""
    name, sep, path = spec.partition("=")
    if sep and name and not os.path.exists(spec):
        return name, path
    return None, spec


def archive_uri(headers):
    """The !id uri of a file's headers, or None."""
    for name, value in headers:
        if name[1:] == "id" and isinstance(value, dict) and isinstance(value.get("uri"), str):
            return value["uri"]
    return None


def _when(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Archive:
    """One archive: its name (the !id uri unless given), its file, the version served and the
    problem seen, if any. ``strict``: a file that cannot be served is a UserError (start-up);
    otherwise the archive starts without a version (a worker started later, when the file went
    bad since). ``trusted``: (Identity, lines) of a version checked already (by the server
    before it started its workers)."""

    def __init__(self, path, name=None, strict=True, trusted=None):
        self.path = path
        self.version = None
        self.problem = None         # {"problem", "since"} while something is wrong
        self.reloads = 0
        self._checked = time.monotonic()
        self._checking = False
        self._rejected = None       # the identity of the file last found bad
        self._lock = threading.Lock()
        self._local = threading.local()
        try:
            self.version = _open_checked(path, trusted)
        except (BadVersion, Changing) as e:
            if strict:
                raise UserError("cannot serve %s: %s" % (path, e))
            self._rejected = getattr(e, "identity", None)
            self._report("no version can be served: %s" % e)
        self.name = name or (archive_uri(self.version.lookup.headers) if self.version else None) \
            or os.path.basename(path)

    # ------------------------------------------------------------ serving

    def current(self):
        """This thread's lookup of the version served (profiler.toolkit.lookup.Lookup);
        Unavailable when there is none, or the file served changed in place."""
        self.check()
        version = self.version
        if version is None:
            raise Unavailable("%s: %s" % (self.name, self.problem["problem"] if self.problem else "no version"))
        if version.changed():
            self._lost(version)
            raise Unavailable("%s: %s" % (self.name, self.problem["problem"]))
        if threading.current_thread() is threading.main_thread():
            return version.lookup
        local = self._local
        if getattr(local, "version", None) is not version:
            local.version, local.lookup = version, version.clone()
        return local.lookup

    def looked_at(self):
        """check(), and the file served looked at as a lookup looks at it (/health and /archives:
        they said "ok" of a file written in place until a lookup came)."""
        self.check()
        version = self.version
        if version is not None and version.changed():
            self._lost(version)

    def failed(self, error):
        """A lookup of the version served raised ``error``: reported (and logged) once."""
        if not isinstance(error, Unavailable):
            self._report("a lookup failed: %s" % error, error)

    def _lost(self, version):
        """The file served changed in place: it is checked again before it is served."""
        with self._lock:
            if self.version is version:
                self.version = None
                self._rejected = None
                self._checked = 0.0
                self._report("%s changed in place: not served until checked again" % self.path)

    def _report(self, problem, error=None):
        if self.problem is None or self.problem["problem"] != problem:
            self.problem = {"problem": problem, "since": _when(time.time())}
            if error is not None and not isinstance(error, UserError):
                log.error("%s: %s", self.path, problem, exc_info=error)
            else:
                log.warning("%s: %s", self.path, problem)

    # ------------------------------------------------------------ new versions

    def check_now(self):
        """Look at the path at the next request (SIGHUP)."""
        self._checked = 0.0

    def check(self):
        """At most every CHECK_EVERY seconds (asked by every request): when the path names a
        file other than the one served (or last found bad), check it in the background."""
        now = time.monotonic()
        if now - self._checked < CHECK_EVERY or self._checking:
            return
        with self._lock:                        # the answering threads ask at once: one of them looks
            if now - self._checked < CHECK_EVERY or self._checking:
                return
            self._checked = now
            try:
                seen = identity(os.stat(self.path))
            except OSError as e:
                if self.version is not None:
                    self._report("%s cannot be read (%s): serving the version checked at %s"
                                 % (self.path, e.strerror, _when(self.version.checked)))
                return
            if self.version is not None and seen == self.version.identity:
                if self.problem is not None:
                    log.info("%s: the path names the version served again", self.path)
                    self.problem = None
                return
            if seen == self._rejected:
                return
            self._checking = True
            threading.Thread(target=self._reload, name="check %s" % self.name, daemon=True).start()

    def _reload(self):
        try:
            with _ONE_CHECK:
                version = open_version(self.path)
        except Changing:
            pass                                # still being written: looked at again later
        except BadVersion as e:
            served = "serving the version checked at %s" % _when(self.version.checked) if self.version \
                else "no version served"
            real = os.path.realpath(self.path)
            found = "" if real == os.path.abspath(self.path) else " (%s)" % real
            with self._lock:      # in one step: a _lost() between the two left its problem over a file rejected
                self._report("a new version%s cannot be served (%s): %s" % (found, served, e))
                self._rejected = e.identity
        except Exception as e:                  # never lose the checking thread silently
            self._report("checking a new version failed: %s" % e, e)
        else:
            with self._lock:
                self.version = version
                self.reloads += 1
                self._rejected = None
                self.problem = None
            log.info("serving the new version of %s (%s)", self.name, self.path)
        finally:
            self._checking = False
            self._checked = time.monotonic()

    # ------------------------------------------------------------ reports

    def unknown_criteria(self):
        """The criteria the version served breaks its lines down by (a map's !meta) that are not
        registered here: a plugin's, its module not named in ARCHIVE_PROFILER_PLUGINS (asking
        for one of their values is refused, naming it)."""
        version = self.version
        if version is None:
            return []
        return [n for n in version.lookup.breakdowns if n not in criteria.BY_NAME]

    def describe(self):
        version = self.version
        out = {"archive": self.name, "file": self.path, "problem": self.problem, "reloads": self.reloads}
        unknown = self.unknown_criteria()
        if unknown:
            out["unknown_criteria"] = unknown
        if version is None:
            return dict(out, kind=None, keys=None, languages=None, headers=None, lines=None, served=None)
        lookup = version.lookup
        return dict(out, kind=lookup.kind,
                    keys=list(lookup.layout.fields) if lookup.layout is not None else
                    ["surt", "datetime"] if lookup.nkeys == 2 else ["surt"],
                    languages=lookup.has_languages,
                    headers=[{"name": n, "value": v} for n, v in lookup.headers],
                    lines=version.lines,
                    served={"checked": _when(version.checked), "bytes": version.identity.size,
                            "modified": _when(version.identity.mtime_ns / 1e9)})

    def trusted(self):
        """(Identity, lines, the file it is) of the version served, for the workers (None: none
        served; no file when the path's target cannot be named for sure)."""
        version = self.version
        if version is None:
            return None
        real = os.path.realpath(version.path)
        try:
            same = identity(os.stat(real)) == version.identity
        except OSError:
            same = False
        return (list(version.identity), version.lines) + ((real,) if same else ())


def _open_checked(path, trusted):
    """The version path names, checked unless ``trusted`` ((Identity, lines[, file])) names it.
    A worker that starts after the path moved on from the version the server checked (nightly
    moved NAME-latest) opens that version's file while it is still the same, and checks the new
    one in the background as any new version: a bad new version never leaves it nothing to serve."""
    if trusted is not None and len(trusted) > 2:
        ident, real = tuple(trusted[0]), trusted[2]
        try:
            kept = identity(os.stat(real)) == ident
        except OSError:
            kept = False
        try:
            moved = identity(os.stat(path)) != ident
        except OSError:
            moved = True
        if kept and moved:
            try:
                return open_version(real, trusted)
            except (BadVersion, Changing):
                pass
    return open_version(path, trusted)


def open_archives(specs, strict=True, trusted=None, processes=1):
    """Archives from 'NAME=FILE' or 'FILE' specs; names must differ. ``trusted``: per spec,
    the name and (Identity, lines) of a version checked already (see Archive). ``processes``:
    check the files in that many child processes at once (forked: only from a process without
    threads, the server before it starts)."""
    checked_here = check_in_parallel([parse_spec(s)[1] for s in specs], processes) if not trusted else {}
    archives = []
    for n, spec in enumerate(specs):
        name, path = parse_spec(spec)
        checked = trusted[n] if trusted else {"version": checked_here.get(path)}
        if checked.get("name") is not None:
            name = checked["name"]
        archives.append(Archive(path, name, strict, checked.get("version")))
    names = [a.name for a in archives]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserError("two files name the archive %s: name them with NAME=FILE" % twice[0])
    return archives


#: bytes of files worth checking in child processes (below it, starting them costs more)
PARALLEL_FROM = 32 << 20


def check_in_parallel(paths, processes):
    """{path: (Identity, lines)} of the files found good by a check in child processes, one per
    core; the others (and all when there is one process, or little to read) are left to check
    here, which also says why one is bad."""
    processes = min(processes, len(paths))
    try:
        size = sum(os.path.getsize(p) for p in paths if os.path.isfile(p))
    except OSError:
        return {}
    if processes < 2 or size < PARALLEL_FROM:
        return {}
    import concurrent.futures
    import multiprocessing
    try:
        with concurrent.futures.ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork")) as pool:
            found = dict(zip(paths, pool.map(_checked, paths)))
    except (OSError, concurrent.futures.process.BrokenProcessPool):
        return {}                       # no child to spare (or one killed): every file checked here
    return {p: v for p, v in found.items() if v is not None}


def _checked(path):
    try:
        version = open_version(path)
    except Exception:                   # checked again by the caller, which says why
        return None
    return list(version.identity), version.lines
