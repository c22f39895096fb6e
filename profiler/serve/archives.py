"""The archives a routing service serves: one sorted map or profile each, looked up by binary
search over the memory-mapped file, and reopened when the path names a new file (nightly moves
its NAME-latest link) without failing a lookup in flight."""

import logging
import os
import threading
import time

from profiler.errors import UserError
from profiler.files.datalines import written_here
from profiler.toolkit.lookup import Lookup

log = logging.getLogger("archive-profiler")

#: seconds between two checks of whether an archive's path names a new file
CHECK_EVERY = 1.0


def parse_spec(spec):
    """'NAME=FILE' or 'FILE' -> (name or None, path)."""
    name, sep, path = spec.partition("=")
    if sep and name and not os.path.exists(spec):
        return name, path
    return None, spec


def _identity(path):
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def archive_uri(headers):
    """The !id uri of a file's headers, or None."""
    for name, value in headers:
        if name[1:] == "id" and isinstance(value, dict) and isinstance(value.get("uri"), str):
            return value["uri"]
    return None


class Archive:
    """One archive: its name (the !id uri unless given), its file and the open lookup of the
    file's current version (one per thread: a lookup keeps its place in the file)."""

    def __init__(self, path, name=None):
        self.path = path
        self.given_name = name
        self._lock = threading.Lock()
        self._local = threading.local()
        self._checked = 0.0
        self.lines = None           # counted in the background (the file is never read whole here)
        self.reloads = 0
        self._open()

    def _open(self):
        try:
            identity = _identity(self.path)
            lookup = Lookup(self.path, mapped=True)
            if not written_here(lookup.headers):
                # another tool's file (mementomap generate writes its lines unsorted): checked
                # whole once (remembered per version), so no answer rests on lines out of order
                lookup.close()
                lookup = Lookup(self.path, mapped=True, verify=True)
        except (OSError, UserError, ValueError) as e:
            raise UserError("cannot serve %s: %s" % (self.path, e))
        self.lookup, self.identity = lookup, identity
        self._owner = threading.current_thread()
        self.name = self.given_name or archive_uri(lookup.headers) or os.path.basename(self.path)
        self.lines = None
        threading.Thread(target=self._count, args=(lookup, identity), daemon=True).start()

    def _count(self, lookup, identity):
        n = 0
        try:
            with open(lookup.path, "rb") as f:
                if _identity(lookup.path) != identity:
                    return
                while True:
                    block = f.read(1 << 20)
                    if not block:
                        break
                    n += block.count(b"\n")
        except OSError:
            return
        if self.identity == identity:
            self.lines = n - len(lookup.headers)

    def current(self):
        """This thread's lookup of the file the path names now (profiler.toolkit.lookup.Lookup)."""
        self._check()
        local, lookup = self._local, self.lookup
        if getattr(local, "main", None) is not lookup:
            local.main = lookup
            local.lookup = lookup if threading.current_thread() is self._owner else \
                Lookup(lookup.path, mapped=True)
        return local.lookup

    def _check(self):
        """Open the version the path names now if it changed, at most every CHECK_EVERY
        seconds; a version that cannot be opened leaves the old one serving. A lookup in
        flight keeps the version it started with."""
        now = time.monotonic()
        if now - self._checked >= CHECK_EVERY:
            self._checked = now
            try:
                changed = _identity(self.path) != self.identity
            except OSError:
                changed = False         # gone for a moment (a link being replaced): keep serving
            if changed and self._lock.acquire(blocking=False):
                try:
                    old = self.lookup
                    self._open()
                    self.reloads += 1
                    log.info("serving the new version of %s (%s)", self.name, self.path)
                    del old             # closed when the last lookup using it is done
                except UserError as e:
                    log.warning("keeping the version served of %s: %s", self.name, e)
                finally:
                    self._lock.release()

    def release_pages(self):
        for lookup in {id(x): x for x in (self.lookup, getattr(self._local, "lookup", None)) if x}.values():
            lookup.lines.release_pages()

    def describe(self):
        lookup = self.lookup
        return {"archive": self.name, "file": self.path, "kind": lookup.kind,
                "keys": list(lookup.layout.fields) if lookup.layout is not None else
                ["surt", "datetime"] if lookup.nkeys == 2 else ["surt"],
                "languages": lookup.has_languages,
                "headers": [{"name": n, "value": v} for n, v in lookup.headers],
                "lines": self.lines, "reloads": self.reloads}


def file_pages():
    """Bytes of mapped file pages this process holds (RssFile), or 0 when not known."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"RssFile:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


class PageBudget:
    """Lets the archives' mapped pages go when the process holds more than ``budget`` bytes of
    them (None: no limit), checked at most every CHECK_EVERY seconds. They stay in the page
    cache, but taking them back costs page faults: a lower RSS for fewer lookups a second."""

    def __init__(self, archives, budget=None):
        self.archives, self.budget, self._checked, self.releases = archives, budget, 0.0, 0

    def check(self):
        if self.budget is None:
            return
        now = time.monotonic()
        if now - self._checked < CHECK_EVERY:
            return
        self._checked = now
        if file_pages() > self.budget:
            for a in self.archives:
                a.release_pages()
            self.releases += 1


def open_archives(specs):
    """Archives from 'NAME=FILE' or 'FILE' specs; names must differ."""
    archives = []
    for spec in specs:
        name, path = parse_spec(spec)
        archives.append(Archive(path, name))
    names = [a.name for a in archives]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserError("two files name the archive %s: name them with NAME=FILE" % twice[0])
    return archives
