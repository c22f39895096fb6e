"""What a nightly run owns, and so may remove or replace: nothing else is ever touched.

- The output folder's ``.NAME.owner`` marker names the state folder of the config that
  publishes NAME there; a second config with the same output folder and name is refused
  instead of pruning the first one's versions. The state names the NAME and output folder it
  publishes (``state.json`` ``owner``): a second config with the same state folder is refused
  while the first one's marker still names it.
- A ``Ledger`` in the state folder lists what the run placed in one folder, each with its
  identity: inode and type, and for a regular file also its size and modification time. An
  entry is the run's own only while it is there with that identity: a file someone replaced,
  edited or put under one of nightly's names is not, and is never removed or replaced (a
  changed file is forgotten and left alone). The ledgers: ``outputs-ledger.json`` (versions,
  reports, maps, NAME-latest links), ``sets-ledger.json`` (URI-R and digest sets) and
  ``work-ledger.json`` (work folders). An entry is recorded before its file takes its name,
  so a run killed in between leaves nothing it cannot prove.
- A night's scratch files live in a work folder (``STATE_DIR/.work-XXXXXXXX``, mode 0700),
  recorded in the work ledger as soon as it is made and removed with everything in it.
"""

import logging
import os
import re
import secrets
import stat

import orjson

from profiler.errors import UserError, printable
from profiler.io import signalmask
from profiler.nightly.folder import UnsafeFile

log = logging.getLogger("archive-profiler")
WORK_PREFIX = ".work-"
OUTPUTS_LEDGER = "outputs-ledger.json"
SETS_LEDGER = "sets-ledger.json"
WORK_LEDGER = "work-ledger.json"
LEDGER_FORMAT = 1
LEDGER_LIMIT = 64 << 20
MARKER_LIMIT = 1 << 16
_NAME = re.compile(r"\A[^/\x00]{1,255}\Z")
_TYPES = {"file": stat.S_IFREG, "link": stat.S_IFLNK, "dir": stat.S_IFDIR}


def identity(st):
    """What proves an entry is still the one placed: type and inode; a file's size and mtime."""
    kinds = {v: k for k, v in _TYPES.items()}
    out = {"type": kinds.get(stat.S_IFMT(st.st_mode), "other"), "ino": st.st_ino}
    if stat.S_ISREG(st.st_mode):
        out.update(size=st.st_size, mtime_ns=st.st_mtime_ns)
    return out


class LedgerError(UserError):
    """A ledger that is not one this tool wrote (one line naming it, exit status 2)."""


def _entries_of(value, path):
    """{name: [identity, ...]} of a ledger's JSON value, checked; LedgerError otherwise."""
    def bad(why):
        return LedgerError("%s is not a ledger this tool wrote (%s): restore it, or move it away (the files it "
                           "lists are then kept)" % (path, why))
    if not isinstance(value, dict) or value.get("format") != LEDGER_FORMAT or not isinstance(value.get("files"), dict):
        raise bad("expected {\"format\": 1, \"files\": {...}}")
    out = {}
    for name, ids in value["files"].items():
        if not _NAME.match(name) or name in (".", ".."):
            raise bad("a name that is not a plain file name")
        if not isinstance(ids, list) or not all(isinstance(i, dict) and i.get("type") in _TYPES and
                                                all(type(i.get(k)) is int for k in
                                                    (("ino", "size", "mtime_ns") if i["type"] == "file" else ("ino",)))
                                                for i in ids):
            raise bad("entry %r is not a list of identities" % name[:80])
        out[name] = ids
    return out


class Ledger:
    """The entries this tool placed in ``folder``, kept in the file ``filename`` of ``state``.
    Writes go through a temp file in ``scratch`` (the work folder; None: the state folder)."""

    def __init__(self, state, filename, folder, scratch=None):
        self.state = state
        self.filename = filename
        self.folder = folder
        self.scratch = scratch
        self._entries = None
        self.kept = {}          # path: why, of the entries the system would not remove (remove)

    @property
    def path(self):
        return self.state.join(self.filename)

    def exists(self):
        return self.state.checked(self.filename) is not None

    def entries(self):
        """{name: [identity, ...]} (read once, then kept up to date)."""
        if self._entries is None:
            data = self.state.read(self.filename, LEDGER_LIMIT)
            if data is None:
                self._entries = {}
            else:
                try:
                    value = orjson.loads(data)
                except orjson.JSONDecodeError as e:
                    raise LedgerError("%s is unreadable (%s): restore it, or move it away (the files it lists "
                                      "are then kept)" % (self.path, str(e).splitlines()[0]))
                self._entries = self._migrated(value) if isinstance(value, list) else _entries_of(value, self.path)
        return self._entries

    def _migrated(self, names):
        """The entries of a ledger that lists only names (sets-ledger.json of earlier versions): the
        listed regular files as they are now."""
        if not all(isinstance(n, str) for n in names):
            raise LedgerError("%s: expected a list of file names" % self.path)
        out = {}
        for name in names:
            st = self.folder.lstat(name) if _NAME.match(name) and name not in (".", "..") else None
            if st is not None and stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
                out[name] = [identity(st)]
        return out

    def _save(self, entries):
        data = orjson.dumps({"format": LEDGER_FORMAT, "files": entries}, option=orjson.OPT_SORT_KEYS) + b"\n"
        # the file is fsynced, the folder not: a crash may bring back the ledger before this write,
        # which only keeps (never removes) what it would have listed
        self.state.write(self.filename, data, self.scratch, sync_folder=False)
        self._entries = entries

    def names(self):
        return sorted(self.entries())

    def record(self, items, also=False):
        """Record {name: stat} (also: besides the identities already recorded for the name)."""
        entries = dict(self.entries())
        for name, st in items.items():
            entries[name] = (entries.get(name, []) if also else []) + [identity(st)]
        self._save(entries)

    def forget(self, names):
        entries = {n: ids for n, ids in self.entries().items() if n not in set(names)}
        if len(entries) != len(self.entries()):
            self._save(entries)

    def owns(self, name, st=None):
        """Whether name in the folder is an entry this tool placed, as it placed it."""
        ids = self.entries().get(name)
        if not ids:
            return False
        st = st or self.folder.lstat(name)
        return st is not None and identity(st) in ids

    def remove(self, names):
        """Remove those of names that are provably this tool's, and forget them all (a missing or
        changed entry is left alone). One the system will not remove (immutable, a WORM store's
        retention) is kept in the ledger, with a warning, to be tried again: it failed every night
        from then on, before any work. Returns the names removed."""
        removed, kept = [], set()
        for name in names:
            st = self.folder.lstat(name)
            if st is None or not self.owns(name, st):
                continue
            try:
                if self.folder.remove(name, st):
                    removed.append(name)
            except OSError as e:
                log.warning("could not remove %s (%s): kept, tried again on the next run",
                            printable(self.folder.join(name)), e.strerror or e)
                kept.add(name)
                self.kept[self.folder.join(name)] = e.strerror or str(e)
        self.forget([n for n in names if n not in kept])
        return removed

    def changed(self, names):
        """Those of names that are there but not as this tool placed them."""
        out = []
        for name in names:
            st = self.folder.lstat(name)
            if st is not None and not self.owns(name, st):
                out.append(name)
        return out


# ---------------------------------------------------------------- the output folder's owner marker

def owner_marker(name):
    return ".%s.owner" % name


def claim_output(out, name, state_dir, create=True):
    """Check the owner marker in the output folder out (a Folder), and write it when missing and
    create: UserError when another config publishes NAME there, or when the marker is not one
    this tool wrote. An empty marker is one a run killed as it made it (or a full disk) left
    unwritten: written again, not refused (every night after was refused)."""
    marker = owner_marker(name)
    me = os.path.realpath(state_dir)
    data = out.read(marker, MARKER_LIMIT)
    if not data:                    # empty: a run killed (or a full disk) as it made it, never written
        if not create:
            return
        try:
            if data is None:
                out.create(marker, orjson.dumps({"state_dir": me}) + b"\n")
            else:
                out.write(marker, orjson.dumps({"state_dir": me}) + b"\n")
        except FileExistsError:
            raise UnsafeFile("%s appeared while nightly was making it: move it away" % out.join(marker))
        return
    try:
        owner = orjson.loads(data).get("state_dir")
    except (orjson.JSONDecodeError, AttributeError):
        owner = None
    if not isinstance(owner, str) or not owner.isprintable():
        raise UserError("%s is not an owner marker this tool wrote: move it away if no other nightly config "
                        "publishes %r in %s" % (out.join(marker), name, out.path))
    if owner != me:
        if not os.path.isdir(owner):        # a setup moved or copied elsewhere names where it was
            raise UserError("%s/%s-*.cdxj belongs to the nightly config whose state folder was %s, which is not "
                            "there any more: if this config's state folder was moved or copied from there, remove "
                            "%s (the next run writes it again); else give this config another name or output_dir"
                            % (out.path, name, owner[:300], out.join(marker)))
        raise UserError("%s/%s-*.cdxj belongs to the nightly config whose state folder is %s (see %s); "
                        "give this config another name or output_dir" % (out.path, name, owner[:300],
                                                                         out.join(marker)))


def state_owner(name, output_dir, config):
    """The ``owner`` a state records: the NAME and output folder its versions are published as, and
    the config file that says so."""
    return {"name": name, "output_dir": _text(os.path.realpath(output_dir)),
            "config": _text(os.path.abspath(config))}


def _text(path):
    """path as JSON can hold it: bytes that are not UTF-8 (surrogate escapes) shown as \\xff."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _marker_state_dir(path):
    """The state folder the owner marker at path names, or None (missing, not a regular file,
    unreadable, not a marker). Opened without following a link or blocking on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        try:
            owner = orjson.loads(f.read(MARKER_LIMIT)).get("state_dir")
        except (OSError, orjson.JSONDecodeError, AttributeError):
            return None
    return owner if isinstance(owner, str) else None


def check_state_owner(owner, name, output_dir, state_dir, config):
    """UserError when the state in state_dir is another config's: another config file's, publishing
    another NAME or into another output folder (owner, from state.json; None: a state that does not
    say), whose owner marker still names state_dir. Two configs sharing a state folder (two names
    in one output folder share its default, OUTPUT_DIR/.nightly) each took the other's inputs for
    removed and rebuilt every night. The same config file edited (another name or output folder)
    goes on; a config file moved as well is taken for another until the old marker goes."""
    me = state_owner(name, output_dir, config)
    if not owner or owner.get("config") == me["config"] or \
            (owner["name"], owner["output_dir"]) == (me["name"], me["output_dir"]):
        return
    marker = os.path.join(owner["output_dir"], owner_marker(owner["name"]))
    if _marker_state_dir(marker) != os.path.realpath(state_dir):
        return                      # no config claims it any more: this one takes it over
    raise UserError("the state folder %s holds the state of the nightly config %s, publishing %r in %s (%s names "
                    "it): give this config a state_dir of its own (the default, OUTPUT_DIR/.nightly, is shared by "
                    "every name in one output folder); if this config is that one, its file moved, remove %s"
                    % (state_dir, owner["config"][:300], owner["name"][:200], owner["output_dir"][:300],
                       marker[:300], marker[:300]))


# ---------------------------------------------------------------- work folders

class WorkFolders:
    """The night's work folder in the state folder, and those killed runs left."""

    def __init__(self, state):
        self.state = state
        self.ledger = Ledger(state, WORK_LEDGER, state)

    def make(self):
        """A new work folder (a Folder, mode 0700), recorded before anything is written in it;
        then the work folders earlier runs left are removed. Returns (folder, names removed).
        SIGINT, SIGTERM and SIGHUP are held from before it is made until it is recorded: one
        that came between the two left a folder no ledger names, never removed."""
        earlier = self.ledger.names()
        with signalmask.held():
            for _ in range(100):
                name = WORK_PREFIX + secrets.token_hex(4)
                try:
                    os.mkdir(name, 0o700, dir_fd=self.state.fd)
                    break
                except FileExistsError:
                    continue
                except OSError as e:
                    raise UnsafeFile("cannot make a work folder in %s: %s" % (self.state.path, e.strerror or e))
            else:
                raise UnsafeFile("cannot make a work folder in %s" % self.state.path)
            try:
                folder = self.state.sub(name, make=False)
                self.ledger.scratch = folder
                self.ledger.record({name: self.state.lstat(name)})
            except BaseException:
                try:
                    os.rmdir(name, dir_fd=self.state.fd)
                except OSError:
                    pass
                raise
        return folder, self.ledger.remove(earlier)

    def remove(self, folder):
        """Remove the night's work folder: its content, then its ledger entry, then the folder."""
        name = os.path.basename(folder.path)
        st = self.state.lstat(name)
        if st is None or not self.ledger.owns(name, st):
            folder.close()
            return
        for entry in folder.names():
            sub = folder.lstat(entry)
            if sub is not None:
                folder.remove(entry, sub)
        self.ledger.forget([name])          # written through the (now empty) work folder
        folder.close()
        try:
            os.rmdir(name, dir_fd=self.state.fd)
        except OSError:
            pass


# ---------------------------------------------------------------- inputs

def not_own_files(files, output_dir, name, state_dir):
    """(files, dropped): the inputs that are not this config's outputs (NAME-* and .NAME* in the
    output folder) nor anything under its state folder."""
    out = os.path.realpath(output_dir)
    state = os.path.realpath(state_dir) + os.sep
    kept, dropped = [], []
    for path in files:
        if "://" in path:
            kept.append(path)
            continue
        real = os.path.realpath(path)
        folder, base = os.path.split(real)
        own = real.startswith(state) or (folder == out and base.startswith((name + "-", "." + name)))
        (dropped if own else kept).append(path)
    return kept, dropped

