"""One version of an archive's file, checked whole before it is served: a regular file, not
empty, its header block at most MAX_HEAD_BLOCK bytes, every data line at most MAX_LINE bytes,
checked as the toolkit's readers check a line (profiler.files.datalines), in strictly
increasing key order, the last one ending with a newline.

A version is read through the descriptor it was checked through (profiler.serve.reader): it
answers from that file whatever the path names later (a NAME-latest link moved, the file
deleted); a file changed in place is seen by its size or times (Version.changed: the change
time moves with every write, even one whose size and modification time were put back) and by
short reads, and is served again only once checked again.
"""

import collections
import copy
import operator
import os
import re
import time

from profiler.errors import UserError
from profiler.files.datalines import Bad, frequency_problem, written_here
from profiler.files.sortedfile import SortedLines, UnsortedFile
from profiler.serve.reader import MAX_LINE, FileChanged, FileReader, open_regular
from profiler.toolkit.lookup import Lookup

#: bytes of header lines (!context, !fields, !meta ...) read at most before the data
MAX_HEAD_BLOCK = 1 << 20
#: bytes read at a time by the check, and the seconds it sleeps after each (a check runs beside
#: the serving thread, in the same process: this lets that thread have the GIL at once)
CHECK_BLOCK = 1 << 19
YIELD = 0.0005

#: what tells a file's version apart: a new file at the path, or the same one changed (its
#: change time too: `rsync --inplace -t`, `cp -p` of a file of the same size put back the rest)
Identity = collections.namedtuple("Identity", "dev ino size mtime_ns ctime_ns")


def identity(st):
    return Identity(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class BadVersion(UserError):
    """A version that cannot be served (one line); ``identity``: the file it was found in."""

    def __init__(self, message, identity=None):
        super().__init__(message)
        self.identity = identity


class Changing(UserError):
    """The path named another file, or the file changed, while it was checked: check later."""


class Version:
    """A checked version: its lookup, identity, data lines, when it was checked; ``watched``:
    the descriptor of the file at path (the first page of a folder's) and the size, times and
    count of links it had when it was opened."""

    def __init__(self, path, lookup, ident, lines, watched):
        self.path, self.lookup, self.identity, self.lines = path, lookup, ident, lines
        self.checked = time.time()
        self._fd, self._watched = watched

    def changed(self):
        """Whether the file read is no longer the one checked: its size or modification time
        moved, or its change time while its count of links stayed (a link removed or added moves
        the change time too: the file deleted or renamed over is still the one checked)."""
        try:
            st = os.fstat(self._fd)
        except OSError:
            return True
        size, mtime, ctime, links = self._watched
        if (st.st_size, st.st_mtime_ns) != (size, mtime):
            return True
        if st.st_nlink != links:
            self._watched = size, mtime, st.st_ctime_ns, st.st_nlink
            return False
        return st.st_ctime_ns != ctime

    def files(self):
        """How many files the version holds open: one, or one per split page."""
        return len(_parts(self.lookup))

    def clone(self):
        """A lookup of the same version for another thread (a lookup keeps its place in the
        file): the same open descriptors, read with positions of its own."""
        clone = copy.copy(self.lookup)
        clone.lines = copy.copy(self.lookup.lines)
        if isinstance(clone.lines, SortedLines):
            clone.lines = _reopened(clone.lines)
        else:
            clone.lines.pages = [(first, last, _reopened(part)) for first, last, part in clone.lines.pages]
        return clone


def _reopened(part):
    return SortedLines(part.path, part.start, part.block_size, part.forward_block, part.key, reader=part.f.view())


def _parts(lookup):
    """The SortedLines of a lookup: one, or one per split page."""
    lines = lookup.lines
    return [lines] if isinstance(lines, SortedLines) else [part for _, _, part in lines.pages]


def _readers(lookup):
    return [part.f for part in _parts(lookup)]


def open_version(path, trusted=None):
    """The Version of the file (or folder of split pages) path names now, checked whole unless
    its identity is the ``trusted`` one, checked already ((Identity, lines)). BadVersion when it
    cannot be served, Changing when it changed while opened."""
    first = ident = None
    try:
        if os.path.isdir(path):
            ident, opener = identity(os.stat(path)), FileReader.open
        else:
            fd, st = open_regular(path)
            ident, first = identity(st), FileReader(fd, path, st.st_size)
            if not st.st_size:
                raise BadVersion("%s is empty" % path, ident)
            _check_head(first)

            def opener(p):
                return first.dup() if p == path else FileReader.open(p)
        lookup = Lookup(path, opener=opener)
    except FileChanged as e:
        raise Changing(str(e))
    except OSError as e:
        raise BadVersion("cannot open %s: %s" % (path, e.strerror or e), ident)
    except (UserError, ValueError) as e:
        raise BadVersion(str(e), ident)
    finally:
        if first is not None:
            first.close()
    try:
        if identity(os.stat(path)) != ident:
            raise Changing("%s changed while it was opened" % path)
        readers = _readers(lookup)
        mine = [r for r in readers if r.path == path] if first is not None else []
        if mine:
            watched = mine[0].fd, (ident.size, ident.mtime_ns, ident.ctime_ns, os.fstat(mine[0].fd).st_nlink)
        else:
            st = os.fstat(readers[0].fd)
            watched = readers[0].fd, (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink)
        if trusted is not None and tuple(trusted[0]) == ident:
            return Version(path, lookup, ident, trusted[1], watched)
        return Version(path, lookup, ident, check_lines(lookup), watched)
    except BaseException as e:
        lookup.close()
        if isinstance(e, (Changing, FileChanged)):
            raise Changing(str(e))
        if isinstance(e, OSError):
            raise Changing("%s: %s" % (path, e.strerror or e))
        if isinstance(e, UserError):
            raise BadVersion(str(e), ident)
        raise


def _check_head(reader):
    """The header block and the first data line are bounded (a lookup reads them whole)."""
    while True:
        line = reader.readline()
        if reader.tell() > MAX_HEAD_BLOCK:
            raise BadVersion("%s: its header lines pass %d bytes" % (reader.path, MAX_HEAD_BLOCK))
        if not line.endswith(b"\n") and reader.tell() < reader.size:
            raise BadVersion("%s has a line longer than %d bytes" % (reader.path, MAX_LINE))
        if line[:1] not in (b"!", b"@"):
            return


def check_lines(lookup):
    """The number of data lines, after checking every one: at most MAX_LINE bytes, checked as
    the toolkit's readers check a line (profiler.files.datalines, the lookup's checker), keys in
    strictly increasing order (across split pages too), the last line ending with a newline.
    UnsortedFile or BadVersion otherwise. Read with pread: the lookup's own reads keep their place."""
    count = 0
    previous = None
    plain = _plain_lines(lookup)
    for part in _parts(lookup):
        at, rest = part.start, b""
        while at < part.size:
            block = part.f.pread(CHECK_BLOCK, at)
            at += len(block)
            data = rest + block
            cut = data.rfind(b"\n") + 1
            rest = data[cut:]
            if len(rest) > MAX_LINE:
                raise BadVersion("%s has a line longer than %d bytes near byte %d" % (part.path, MAX_LINE, at))
            if not cut:
                continue
            lines = data[:cut - 1].split(b"\n")
            if cut > MAX_LINE and max(map(len, lines)) > MAX_LINE:
                raise BadVersion("%s has a line longer than %d bytes before byte %d" % (part.path, MAX_LINE, at))
            if plain is not None and plain.fullmatch(data, 0, cut):
                keys = _plain_keys(data[:cut], lookup.nkeys, part.path, count)
            else:
                _check_records(lookup, part, lines, count)
                keys = list(map(part.key, lines))
            if previous is not None:
                keys.insert(0, previous)
            if not all(map(operator.lt, keys, keys[1:])):
                _unsorted(part, keys, count - (previous is not None), not written_here(lookup.headers))
            count += len(lines)
            previous = keys[-1]
            time.sleep(YIELD)               # the serving thread waits for the GIL no longer than this
        if rest:
            raise BadVersion("%s is cut: its last line has no newline" % part.path)
    return count


def _check_records(lookup, part, lines, before):
    """Every line of a block checked by the lookup's checker (the toolkit's), and a map's with
    no field empty (no blank at either end)."""
    check = lookup.checker
    for n, line in enumerate(lines):
        body = line[:-1] if line[-1:] == b"\r" else line
        try:
            if not body or body[:1] in (b"!", b"@"):
                raise Bad("line", "an empty line" if not body else "a header line after the data")
            if lookup.kind == "ukvs" and (body[:1].isspace() or body[-1:].isspace()):
                raise Bad("key", "a field is empty")
            check(body, False)
        except Bad as e:
            raise BadVersion("%s: data line %d cannot be read (%s): %r" % (part.path, before + n + 1, e, line[:80]))


def _plain_lines(lookup):
    """For a map: a pattern that matches a block of lines the checker finds plain and good at a
    glance (its ``plain``: single spaces, as many key fields as the map has, a frequency), each
    ending with a newline: such a block is checked in one match. None for a profile."""
    pattern = getattr(lookup.checker, "plain", None)
    if lookup.kind != "ukvs" or pattern is None:
        return None
    line = pattern.pattern
    if not (line.startswith(b"\\A") and line.endswith(b"\\Z")):
        return None
    return re.compile(b"(?:" + line[2:-2] + b"\n)*")


def _plain_keys(block, nkeys, path, before):
    """The keys of a block of plain map lines (each: nkeys key fields and a frequency, single
    spaces, a newline), split in C; a BadVersion for a frequency no archive has (more URI-Rs
    than URI-Ms, mementos of no URI-R: profiler.files.datalines.frequency_problem)."""
    fields = block.replace(b"\n", b" ").split(b" ")
    n = nkeys + 1
    for i, freq in enumerate(fields[nkeys:-1:n]):
        if b"/" in freq:
            problem = frequency_problem(freq)
            if problem is not None:
                raise BadVersion("%s: data line %d cannot be read (%s)" % (path, before + i + 1, problem))
    if nkeys == 1:
        return fields[0:-1:n]
    return list(map(b" ".join, zip(*[fields[k:-1:n] for k in range(nkeys)])))


def _unsorted(part, keys, before, foreign=False):
    """The error of keys out of order; for another tool's file (mementomap generate writes its
    lines unsorted) the hint is merge, which sorts such a file on the way in."""
    for n, (a, z) in enumerate(zip(keys, keys[1:])):
        if not a < z:
            what = "holds the key %r twice" % _short(z) if a == z else \
                "is not in byte order (%r comes before %r)" % (_short(a), _short(z))
            hint = ("another tool's file, unsorted: 'archive-profiler merge %s -o SORTED' sorts it" % part.path
                    if foreign and a != z else "sort it (LC_ALL=C sort) or make it again")
            raise UnsortedFile("%s %s at data line %d: %s" % (part.path, what, before + n + 2, hint))


def _short(key, limit=60):
    text = key.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + "..."
