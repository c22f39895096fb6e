"""A byte-wise sorted file read by prefix: seek-based bisection, never a full load.

Every line a search reads is checked against its neighbours (inside a block, across
consecutive blocks and between bisection probes): a file found out of order, or with a key
twice, raises UnsortedFile rather than giving a confident wrong answer.
"""

import bisect
import os

from profiler.errors import UserError
from profiler.files import infiles
from profiler.files.infiles import open_regular

BLOCK = 1 << 12           # bytes read at the end of a bisection
FORWARD_BLOCK = 1 << 18   # bytes read at a time by a batch's forward walk
KEPT_LEVELS = 12          # bisection levels whose probe lines are kept (at most 2^12 per file)
KEPT_PROBES = 1 << 13


class UnsortedFile(UserError):
    """The file is not in byte order, or holds a key twice (one line, exit status 2)."""


class ChangedFile(UserError):
    """The file is another version than the one checked (one line, exit status 2)."""


def whole_line(line):
    return line


def profile_key(line):
    """A profile line's key: the fields before its JSON block."""
    i = line.find(b" {")
    return line if i < 0 else line[:i]


class SortedLines:
    """Lines of a byte-wise sorted file from byte offset ``start``, found by prefix without
    reading the file whole: seek-based bisection to a block, then bisection inside the block.
    ``key`` gives a line's key, which must increase strictly from line to line. ``end``: where
    the lines end (a whole-file check found the bytes after it damaged: a last line cut short),
    else the file's end. ``reader``: an open file object to read instead of opening path (seek,
    tell, read, readline, close, and the fixed ``size`` it reads: profiler.serve.reader).
    ``identity``: the version of the file (profiler.files.infiles.identity) a check read, whose
    offsets ``start`` and ``end`` are: the file opened must be that version (a new version renamed
    into place since was searched unchecked, with the offsets of the one checked)."""

    def __init__(self, path, start=0, block=BLOCK, forward_block=FORWARD_BLOCK, key=whole_line, mapped=False,
                 end=None, reader=None, identity=None):
        self.path = path
        self.key = key
        self._probes = []           # (line start offset, key) of bisection probes, by offset
        self.f = open_regular(path) if reader is None else reader
        if identity is not None and reader is None and tuple(infiles.identity(os.fstat(self.f.fileno()))) \
                != tuple(identity):
            self.f.close()
            raise ChangedFile("%s changed while it was read: ask again when it is written" % path)
        self.size = os.fstat(self.f.fileno()).st_size if reader is None else reader.size
        if end is not None:
            self.size = min(self.size, end)
        if mapped and self.size and reader is None:
            # memory-mapped: the pages read stay in the page cache, shared by every process
            # that maps the file (a server's workers), and the file handle is not needed
            import mmap
            raw, self.f = self.f, mmap.mmap(self.f.fileno(), 0, access=mmap.ACCESS_READ)
            raw.close()
        self.start = start
        self.block_size = block
        self.forward_block = max(forward_block, block)
        self._block = None          # (start offset, end offset, list of lines)
        self._mids = {}             # bisection probe offset -> (line start, line)
        self._checked = set()       # (offset, lines) of the blocks found in order
        self._kept_lines = []       # the kept probe lines in file (and byte) order, and their offsets
        self._kept_at = []
        self.seeks = 0

    def close(self):
        self.f.close()

    def release_pages(self):
        """Drop this process's hold on the mapped pages read so far (they stay in the page cache
        and come back on the next read): a long-running server's RSS stays bounded."""
        import mmap
        if isinstance(self.f, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            self.f.madvise(mmap.MADV_DONTNEED)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _line_at_or_after(self, pos, keep=True):
        """(offset, line) of the first line starting at or after pos; kept for the next search
        (the top levels of every bisection are the same) when ``keep``."""
        hit = self._mids.get(pos)
        if hit is not None:
            return hit
        self.seeks += 1
        f = self.f
        if pos <= self.start:
            f.seek(self.start)
        else:
            f.seek(pos - 1)
            f.readline()
        at = f.tell()
        found = (at, f.readline().rstrip(b"\n") if at < self.size else b"")
        if keep:
            if len(self._mids) > KEPT_PROBES:
                self._mids.clear()
                self._probes = []
                self._kept_lines, self._kept_at = [], []
            self._mids[pos] = found
            if found[1]:
                i = bisect.bisect_left(self._kept_at, at)
                if i == len(self._kept_at) or self._kept_at[i] != at:
                    self._kept_at.insert(i, at)
                    self._kept_lines.insert(i, found[1])
        if found[1]:
            self._check_probe(at, self.key(found[1]), keep)
        return found

    def _check_probe(self, at, key, keep=True):
        probes = self._probes
        i = bisect.bisect_left(probes, (at,))
        if i < len(probes) and probes[i][0] == at:
            return
        if i > 0 and not probes[i - 1][1] < key:
            self._unsorted(probes[i - 1][1], key, at)
        if i < len(probes) and not key < probes[i][1]:
            self._unsorted(key, probes[i][1], probes[i][0])
        if keep:
            probes.insert(i, (at, key))

    def forget_block(self):
        """Drop the block held from the last read (the next search reads the file again)."""
        self._block = None

    def _check_block(self, offset, lines):
        """Check a block's lines are in order (once per block: a server reads the same blocks
        again and again), and its first line against the block before when that was read last."""
        key = self.key
        b = self._block
        if b is not None and b[1] == offset and b[2] and lines:
            a, z = key(b[2][-1]), key(lines[0])
            if not a < z:
                self._unsorted(a, z, offset)
        seen = (offset, len(lines))
        if seen in self._checked:
            return
        keys = [key(line) for line in lines]
        for a, z in zip(keys, keys[1:]):
            if not a < z:
                self._unsorted(a, z, offset)
        if len(self._checked) > 1 << 20:
            self._checked.clear()
        self._checked.add(seen)

    def _unsorted(self, before, after, offset):
        what = "holds the key %r twice" % _short(after) if before == after else \
            "is not in byte order (%r comes before %r)" % (_short(before), _short(after))
        raise UnsortedFile("%s %s near byte %d: sort it (LC_ALL=C sort) or make it again"
                           % (self.path, what, offset))

    def _bisect_file(self, target, lo):
        """A line-start offset at or before the first line >= target (searching from lo). The
        lines kept from earlier searches narrow the range first (one bisection in memory)."""
        hi = self.size
        kept = self._kept_lines
        if kept:
            i = bisect.bisect_left(kept, target)
            if i:
                lo = max(lo, self._kept_at[i - 1] + len(kept[i - 1]) + 1)
            if i < len(kept) and self._kept_at[i] >= lo:
                hi = self._kept_at[i]
        deep = self.size >> KEPT_LEVELS
        while hi - lo > self.block_size // 2:
            mid = (lo + hi) // 2
            at, line = self._line_at_or_after(mid, hi - lo > deep)
            if at >= hi:
                hi = mid
            elif line < target:
                lo = at + len(line) + 1
            else:
                hi = at
        return lo

    def _load(self, offset, forward=False):
        f = self.f
        f.seek(offset)
        self.seeks += 1
        data = f.read(max(0, min(self.forward_block if forward else self.block_size, self.size - offset)))
        if offset + len(data) < self.size:
            cut = data.rfind(b"\n")
            if cut < 0:
                data += f.readline()
            else:
                data = data[:cut + 1]
        lines = data.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()
        self._check_block(offset, lines)
        self._block = (offset, offset + len(data), lines)
        return self._block

    def _position(self, prefix, forward):
        """(block, index) of the first line >= prefix."""
        b = self._block
        if b is not None:
            i = bisect.bisect_left(b[2], prefix)
            if i < len(b[2]) or b[1] >= self.size:
                if i > 0 or b[0] <= self.start:
                    return b, i
            elif forward:
                b = self._load(b[1], True)
                i = bisect.bisect_left(b[2], prefix)
                if i < len(b[2]) or b[1] >= self.size:
                    return b, i
        lo = self.start
        if forward and b is not None and b[2] and b[2][0] < prefix:
            lo = b[0]
        b = self._load(self._bisect_file(prefix, lo), forward)
        i = bisect.bisect_left(b[2], prefix)
        while i == len(b[2]) and b[1] < self.size:
            b = self._load(b[1], forward)
            i = bisect.bisect_left(b[2], prefix)
        return b, i

    def group(self, prefix, forward=False):
        """Every line starting with prefix (bytes), in file order. ``forward``: the prefixes of
        successive calls increase (a sorted batch), so the search starts at the current block."""
        b, i = self._position(prefix, forward)
        out = []
        lines = b[2]
        while True:
            while i < len(lines) and lines[i].startswith(prefix):
                out.append(lines[i])
                i += 1
            if i < len(lines) or b[1] >= self.size:
                return out
            b = self._load(b[1], forward)
            lines, i = b[2], 0

    def iter_from(self, prefix):
        """Stream the lines starting with prefix (all lines from ``start`` for b''), in file order."""
        b, i = self._position(prefix, False) if prefix else (self._load(self.start, True), 0)
        while True:
            lines = b[2]
            while i < len(lines):
                if not lines[i].startswith(prefix):
                    return
                yield lines[i]
                i += 1
            if b[1] >= self.size:
                return
            b, i = self._load(b[1], True), 0


def _short(key, limit=60):
    text = key.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + "..."
