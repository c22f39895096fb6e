"""The explorer's start-up index: the SURT nodes too large to break down by reading them.

A breakdown by SURT lists a node's children (profiler.explore.tree): for most nodes it reads
the node's lines, one range of the sorted file. For a node whose lines span more than
SCAN_BYTES that read would be too long for a click, so one sequential pass at start-up notes,
for each such node:

- with at most LIST_MAX children: their keys (a breakdown then reads one line per child);
- with more: for each of its children's key suffixes ('- - -', '2013 - -', ...: at most
  MAX_COMBOS, the most common first) and each ranked feature, the byte offsets of the TOP
  children's lines with the largest values (a breakdown reads those lines).

Memory is bounded: at most LIST_MAX keys or MAX_COMBOS x len(RANKED) x TOP offsets a node, at
most MAX_ENTRIES in all (past it, a node is noted as not indexed), whatever the file's size.
The pass refuses a file out of byte order, with a key twice, or with a line that is not a
profile line (profiler.files.sortedfile.UnsortedFile, DamagedFile): exit status 2. In another
producer's profile (``foreign``: profiler.files.layout.is_foreign) a line may lack features: a
ranking holds the lines that have its feature, and the node counts, by suffix and feature,
the children's lines that lack it (``lacking``).
"""

import array
import bisect
import heapq
import os

import orjson

from profiler import jsonnum
from profiler.explore import tree
from profiler.files.datalines import DamagedFile, foreign_value
from profiler.files.profilefile import flatten, ratio
from profiler.files.sortedfile import UnsortedFile

SCAN_BYTES = 1 << 18
#: the block keys noted: one a BLOCK bytes, at most MAX_BLOCKS of them (larger blocks past that)
BLOCK = 1 << 12
MAX_BLOCKS = 1 << 16
LIST_MAX = 512
TOP = 100
MAX_COMBOS = 32
MAX_ENTRIES = 1 << 22
RANKED = ("urim.total", "urir", "bytes", "digests", "dedup_bytes", "avg_size")
READ = 1 << 22


class Node:
    """An indexed node: its children's keys (``children``) or rankings (``rankings``:
    {suffix: (children with a line there, {feature: array of line offsets, largest first})};
    ``lacking``: {suffix: {feature: lines without it}} in another producer's profile)."""

    __slots__ = ("key", "span", "count", "children", "rankings", "lacking", "dropped", "every_suffix")

    def __init__(self, key, span, count):
        self.key, self.span, self.count = key, span, count
        self.children = None
        self.rankings = None
        self.lacking = None
        self.dropped = False        # too many children to list and no room left to rank them
        self.every_suffix = True    # the rankings hold every key suffix the children have


class _Open:
    """A node while the pass is inside it."""

    __slots__ = ("key", "start", "count", "children", "heaps", "combos", "missed")

    def __init__(self, key, start):
        self.key, self.start, self.count = key, start, 0
        self.children = []
        self.heaps = {}             # suffix -> [number of lines, [heap per ranked feature]]
        self.combos = 0
        self.missed = False         # a suffix met past the most the pass follows


class Index:
    """The indexed nodes of one profile file, by key (str), and the first key of each block of
    the file (``find``: a line by its key in one read)."""

    def __init__(self, path, file, start, probe, foreign=False):
        """``file``: the profile's file opened (read through it alone, never through the path,
        which may name another file by now; its owner closes it); ``start``: the first data
        line's offset; ``probe(key bytes)``: whether the file has lines of that SURT key (a
        bisection), asked for the rare holder sorting after a key; ``foreign``: another
        producer's profile, whose lines may lack features."""
        self.path = path
        self._file = file
        self.foreign = foreign
        if foreign:
            self._rank = self._rank_foreign
        self.nodes = {}
        self.lines = 0
        self.entries = 0
        self._probe = probe
        self._probed = {}
        self.size = os.fstat(file.fileno()).st_size
        self.block = max(BLOCK, -(-self.size // MAX_BLOCKS))
        self._keys, self._offsets = [], array.array("q")
        self._build(start)
        self._offsets.append(self.size)
        self._fd = file.fileno()

    def close(self):
        self._fd = None

    def node(self, key):
        return self.nodes.get(key)

    def find(self, key):
        """The line (without its newline) whose key is ``key`` (bytes), or None: one read of the
        block holding it, located by the block keys the pass noted. A read that comes back short
        (the file cut since) is a DamagedFile."""
        i = bisect.bisect_right(self._keys, key) - 1
        if i < 0:
            return None
        at, end = self._offsets[i], self._offsets[i + 1]
        data = os.pread(self._fd, end - at, at)
        if len(data) != end - at:
            raise DamagedFile("%s changed while it was read: ask again" % self.path)
        wanted = key + b" {"
        j = 0 if data.startswith(wanted) else data.find(b"\n" + wanted)
        if j < 0:
            return None
        if j or not data.startswith(wanted):
            j += 1
        return data[j:data.find(b"\n", j)]

    # ------------------------------------------------------------ the pass

    def _build(self, start):
        # the root holds every key, whether the file has a line of its own or not
        entries, stack = {"*": _Open("*", start)}, ["*"]
        previous_key = None
        current_surt, parent = None, None
        at = start
        mark = start
        for block in _blocks(self._file, self.path, start):
            self.lines += len(block)
            for line in block:
                i = line.find(b" {")
                if i <= 0 or line[-1:] != b"}":
                    raise DamagedFile("%s: line at byte %d is not a profile line (%r): run "
                                             "'archive-profiler validate %s'" % (self.path, at, line[:60], self.path))
                key = line[:i]
                if previous_key is not None and not previous_key < key:
                    what = "holds the key %r twice" % key[:60] if previous_key == key else \
                        "is not in byte order (%r before %r)" % (previous_key[:60], key[:60])
                    raise UnsortedFile("%s %s near byte %d: sort it (LC_ALL=C sort) or make it again"
                                       % (self.path, what, at))
                previous_key = key
                if at >= mark:
                    self._keys.append(key)
                    self._offsets.append(at)
                    mark = at + self.block
                j = key.find(b" ")
                raw_surt = key if j < 0 else key[:j]
                if raw_surt != current_surt:
                    current_surt = raw_surt
                    surt = raw_surt.decode("utf-8", "surrogateescape")
                    while stack and not surt.startswith(tree.prefix(stack[-1])):
                        self._close(entries.pop(stack.pop()), at)
                    parent = self._parent(surt, entries, stack)
                    if parent is not None:
                        parent.count += 1
                        if len(parent.children) <= LIST_MAX:
                            parent.children.append(surt)
                    if surt.endswith("*") and surt != "*":
                        if surt not in entries:
                            entries[surt] = _Open(surt, at)
                        elif entries[surt].start is None:
                            entries[surt].start = at
                        stack.append(surt)
                if parent is not None:
                    self._rank(parent, key[j + 1:] if j >= 0 else b"", line, i, at)
                at += len(line) + 1
        while stack:
            self._close(entries.pop(stack.pop()), at)
        for rest in entries.values():           # holders probed present whose lines never came
            self._close(rest, at)

    def _parent(self, surt, entries, stack):
        """The _Open of the nearest holder the file has (created ahead for a holder that sorts
        after the key: its lines come later)."""
        for holder in tree.holders(surt):
            found = entries.get(holder)
            if found is not None:
                return found
            if holder > surt:
                present = self._probed.get(holder)
                if present is None:
                    present = self._probe(holder.encode("utf-8", "surrogateescape"))
                    if len(self._probed) > 1 << 16:
                        self._probed.clear()
                    self._probed[holder] = present
                if present:
                    if found is None:
                        found = entries[holder] = _Open(holder, None)
                    return found
        return None

    def _rank(self, parent, suffix, line, i, at):
        """Keep a child's line in its parent's rankings for that key suffix."""
        slot = _slot(parent, suffix, False)
        if slot is None:
            return
        raw = line[i + 1:]
        try:
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                value = jsonnum.loads(raw)          # integers past 64 bits
            urir, dedup = value["urir"], value["dedup_bytes"]
            values = (value["urim"]["total"], urir, value["bytes"], value["digests"], dedup)
        except (jsonnum.JSONDecodeError, KeyError, TypeError):
            raise DamagedFile("%s: the line at byte %d is not a profile line with every feature: run "
                                     "'archive-profiler validate %s'" % (self.path, at, self.path))
        if not all(type(v) is int for v in values):
            raise DamagedFile("%s: a count that is not a whole number at byte %d: run 'archive-profiler "
                                     "validate %s'" % (self.path, at, self.path))
        for value, heap in zip(values + ((ratio(dedup, urir, 2) if urir else None),), slot[1]):
            if value is not None:
                _keep(heap, value, at)

    def _rank_foreign(self, parent, suffix, line, i, at):
        """_rank for another producer's line: its features as it has them (its own style read as
        ours), each ranked where the line has it and counted as lacking where not."""
        slot = _slot(parent, suffix, True)
        if slot is None:
            return
        try:
            flat = flatten(foreign_value(jsonnum.loads(line[i + 1:])))
        except (jsonnum.JSONDecodeError, ValueError) as e:
            raise DamagedFile("%s: the line at byte %d is not a profile line (%s): run 'archive-profiler "
                              "validate %s'" % (self.path, at, str(e)[:80], self.path))
        urir, dedup = flat.get("urir"), flat.get("dedup_bytes")
        values = [flat.get(name) for name in RANKED[:-1]]
        values.append(ratio(dedup, urir, 2) if urir and dedup is not None else None)
        for n, (value, heap) in enumerate(zip(values, slot[1])):
            if value is None:
                slot[2][n] += 1
            else:
                _keep(heap, value, at)

    def _close(self, node, end):
        span = end - node.start if node.start is not None else 0
        if node.count <= LIST_MAX:
            if span > SCAN_BYTES:
                kept = self.nodes[node.key] = Node(node.key, span, node.count)
                kept.children = node.children
                self.entries += len(node.children)
            return
        kept = self.nodes[node.key] = Node(node.key, span, node.count)
        combos = sorted(node.heaps.items(), key=lambda kv: -kv[1][0])[:MAX_COMBOS]
        kept.every_suffix = not node.missed and len(node.heaps) <= MAX_COMBOS
        size = sum(len(h) for _, (_, heaps, *_) in combos for h in heaps)
        if self.entries + size > MAX_ENTRIES:
            kept.dropped = True
            return
        self.entries += size
        kept.rankings = {}
        if self.foreign:
            kept.lacking = {suffix.decode("utf-8", "surrogateescape"): dict(zip(RANKED, slot[2]))
                            for suffix, slot in combos}
        for suffix, (n, heaps, *_) in combos:
            kept.rankings[suffix.decode("utf-8", "surrogateescape")] = (n, {
                name: array.array("q", [-at for _, at in sorted(heap, reverse=True)])
                for name, heap in zip(RANKED, heaps)})


def _blocks(f, path, start):
    """The lines (without their newline) of the file ``f`` (named ``path``) from ``start``, a list
    per large block read; a last line without a newline is a file cut short."""
    f.seek(start)
    at = start
    rest = b""
    while True:
        block = f.read(READ)
        if not block:
            break
        block = rest + block
        lines = block.split(b"\n")
        rest = lines.pop()
        at += len(block) - len(rest)
        yield lines
    if rest:
        raise DamagedFile("%s ends without a newline: the file was cut short (at byte %d); "
                          "make it again" % (path, at + len(rest)))


def _slot(parent, suffix, foreign):
    """The rankings kept for a key suffix under parent ([lines, heaps per RANKED feature] and, for
    another producer's file, the lines lacking each feature), counted one line more; None once
    the parent keeps no more suffixes (it is then marked as having missed some)."""
    slot = parent.heaps.get(suffix)
    if slot is None:
        if parent.combos >= MAX_COMBOS * 4:
            parent.missed = True
            return None
        parent.combos += 1
        slot = parent.heaps[suffix] = [0, [[] for _ in RANKED]] + ([[0] * len(RANKED)] if foreign else [])
    slot[0] += 1
    return slot


def _keep(heap, value, at):
    """value (of the line at byte at) kept in heap when among the TOP largest."""
    if len(heap) < TOP:
        heapq.heappush(heap, (value, -at))
    elif value > heap[0][0]:
        heapq.heapreplace(heap, (value, -at))
