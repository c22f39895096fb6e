"""Compaction: shrink a MementoMap or profile to a quota by rolling lines up into wildcard parents.

The lines of a sorted file form groups by their SURT field (a profile or a surt,datetime map has
several lines per SURT). Rolling a wildcard ``P`` (a path directory ``com,cnn)/world/*``, a host
``com,cnn)/*`` or a host-label wildcard ``com,cnn,*``, ``com,*``; never ``*``) removes every group
whose SURT starts with ``P`` without its ``*`` (one contiguous range of the sorted file) and keeps
or creates the line of ``P``. A created line (maps only) gets the sum of the removed groups that no
other removed wildcard contains: their URI-R sets are disjoint, so sums of exact counts are exact.
In a CDXJ profile only existing parent lines are used, so every count stays exact. A SURT with
several lines (a profile, a surt,datetime map) can also be reduced to its all-time line
(``SURT - - -``, every criterion of the profile's !keys '-', or ``SURT :``), dropping its
breakdown by datetime, mime, status (and lang).

No false negatives: a URI that a removed line answered as held has ``P`` among its candidate keys
(lookup.surt_candidates), nothing under ``P`` is left to answer first, and ``P``'s count includes
the removed line's. A wildcard that is an explicit zero ("not held") is never a rollup target.

Estimated false-positive rate (a model, stated in docs/toolkit.md): absent URIs are looked up
near what the archive holds: for each held URI-R, one in its directory, one elsewhere on its
host, one on a neighbouring host (same parent domain). The estimate is the share of those that
the map answers as held for a router, i.e. that a held wildcard line other than ``*`` covers and
lists (profiler.files.coverage: in a complete map, a TLD line above its host lines lists no
absent host; a rolled-up line lists what is under it). An exact-URL map
has 0; a map with host lines has at least 2/3. The greedy compaction rolls up, at each step, the wildcard with the
fewest newly covered URI-Rs per line (or byte) saved (ties: the fewest URI-R answers made coarser
per line saved, then the most lines saved), until the file fits the quota.
"""

import bisect
import heapq
import os

from profiler import GENERATOR, jsonnum
from profiler.errors import UserError
from profiler.files.output import write_atomic
from profiler.files import coverage, pages
from profiler.files.datalines import DataFile, skipped_meta
from profiler.model.keys import host_part
from profiler.toolkit.lookup import is_held, surt_candidates
from profiler.files.ukvs import ALL_TIME, Frequency, format_frequency, header_line


class CompactReport:
    """What a compaction did: lines and bytes before and after, rollups, estimated FP rates."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def summary(self, path):
        return ("%s: %d -> %d lines, %d -> %d bytes, %d rollups (%d new wildcard lines), "
                "%d SURTs reduced to their all-time line; "
                "estimated false-positive rate %.2f%% -> %.2f%%"
                % (path, self.lines_in, self.lines_out, self.bytes_in, self.bytes_out, self.rollups,
                   self.created, self.collapsed, 100 * self.fp_in, 100 * self.fp_out))

    def as_dict(self):
        return dict(self.__dict__)


_parents_cache = {}


def parents(key):
    """Canonical wildcard keys containing a SURT key, most specific first ('*' left out).

    >>> parents('com,cnn)/world/index.html')
    ['com,cnn)/world/*', 'com,cnn)/*', 'com,*']
    >>> parents('com,cnn,edition,*')
    ['com,cnn,*', 'com,*']
    """
    found = _parents_cache.get(key)
    if found is not None:
        return found
    if key == "*":
        found = []
    elif key.endswith(",*") and ")" not in key:
        labels = key[:-2].split(",")
        found = [",".join(labels[:k]) + ",*" for k in range(len(labels) - 1, 0, -1)]
    else:
        probe = key[:-1] + "x" if key.endswith("*") else key
        found = [k for k in surt_candidates(probe)[1:] if k != key and k != "*"]
    if len(_parents_cache) > 500000:
        _parents_cache.clear()
    _parents_cache[key] = found
    return found


class _Fenwick:
    """Prefix sums over slots, with point updates (a binary indexed tree); ``cells`` mirrors the values."""

    def __init__(self, n, values=None):
        self.n = n
        self.cells = list(values) if values is not None else [0] * n
        t = [0] + self.cells
        for i in range(1, n + 1):          # O(n) build
            j = i + (i & -i)
            if j <= n:
                t[j] += t[i]
        self.t = t

    def add(self, i, v):
        self.cells[i] += v
        i += 1
        while i <= self.n:
            self.t[i] += v
            i += i & -i

    def prefix(self, i):
        s = 0
        while i > 0:
            s += self.t[i]
            i -= i & -i
        return s

    def range(self, lo, hi):
        return self.prefix(hi) - self.prefix(lo)


def _sum(freqs):
    """Sum of frequencies of disjoint URI sets, with looseness marks."""
    def total(values):
        known = [(v, m) for v, m in values if v is not None]
        if not known:
            return None, ""
        marks = {m for _, m in known}
        if len(known) < len(values):
            marks.add("+")
        marks.discard("")
        mark = "" if not marks else marks.pop() if len(marks) == 1 else "~"
        return sum(v for v, _ in known), mark
    urim, um = total([(f.urim, f.urim_mark) for f in freqs])
    urir, rm = total([(f.urir, f.urir_mark) for f in freqs])
    return Frequency(urim, um, urir, rm)


def _created(freqs, complete):
    """The frequency of a created wildcard line: the sum of the removed groups' frequencies, exact
    only when the file is complete (profiler.files.coverage: every held URI-R has a line under the
    wildcard); otherwise URI-Rs the file lists at no line under it are uncounted, and the sum is
    a lower bound."""
    return _sum(freqs if complete else freqs + [Frequency(None, "", None, "")])


def _held(freq):
    return freq is not None and is_held(freq)


def read_groups(path, skipped=None):
    """(kind, nkeys, header lines, groups, headers as read): groups are [surt str, lines, all-time Frequency or None,
    all-time line or None]. Every line is checked (profiler.files.datalines); ``skipped``: damaged
    lines are counted there and left out, else they are refused."""
    found = DataFile(path)
    pages.require_whole(path, found.headers, "compact")
    kind, nkeys = found.kind, found.nkeys
    if kind == "ukvs" and nkeys not in (1, 2):
        raise UserError("%s: compact needs a map keyed by surt or surt,datetime, not %d key fields" % (path, nkeys))
    all_time = [b"-"] * (nkeys - 1)         # a profile's criteria, all '-' (its !keys)
    groups = []
    for record in found.records(skipped):
        fields = record.key.split(b" ")
        surt = fields[0].decode("utf-8", "surrogateescape")
        if not groups or groups[-1][0] != surt:
            groups.append([surt, [], None, None])
        g = groups[-1]
        g[1].append(record.line)
        if kind == "cdxj":
            if fields[1:] == all_time:
                v = record.value
                g[2] = Frequency(v["urim"]["total"], "", v["urir"], "")
                g[3] = record.line
        elif nkeys == 1 or fields[1] in (b":", b"-"):
            g[2] = record.value
            g[3] = record.line
    if kind == "ukvs":
        raw_headers = [header_line(n, v) for n, v in found.headers]
    else:
        raw_headers = list(found.raw_headers)
    return kind, nkeys, raw_headers, groups, found.headers


def compact_file(path, out_path, max_lines=None, max_bytes=None, skipped=None):
    """Compact path into out_path (atomically) to at most max_lines lines or max_bytes bytes,
    headers included. Returns a CompactReport; a quota that cannot be met is a UserError.
    ``skipped`` (a profiler.files.datalines.Skipped): damaged lines are left out and counted,
    in the !meta too; otherwise they are refused. The file is read whole before anything is written."""
    kind, nkeys, raw_headers, groups, read_headers = read_groups(path, skipped)
    by_bytes = max_bytes is not None
    quota = max_bytes if by_bytes else max_lines
    lines_in = len(raw_headers) + sum(len(g[1]) for g in groups)

    def meta_line(fp):
        """The '!meta' line saying what compaction did (same length whatever fp is)."""
        compacted = {"generator": GENERATOR, "source_lines": lines_in,
                     "quota": "%s %d" % ("--max-bytes" if by_bytes else "--max-lines", quota),
                     "estimated_false_positive_rate": "%.4f" % fp}
        if skipped is not None and skipped.count:
            compacted["skipped_lines"] = skipped_meta([skipped])
        return header_line("!meta", {"compacted": compacted})
    raw_headers = raw_headers + [meta_line(0.0)]

    # slots: every existing group, plus every wildcard parent (rollup targets, probe places)
    existing = {g[0] for g in groups}
    wanted = set()
    for g in groups:
        wanted.update(parents(g[0]))
    keys = sorted(existing | wanted)
    index = {k: i for i, k in enumerate(keys)}
    n = len(keys)
    lines_of = [None] * n
    freq_of = [None] * n
    all_time = [None] * n
    for g in groups:
        i = index[g[0]]
        lines_of[i], freq_of[i], all_time[i] = g[1], g[2], g[3]
    bkeys = [k.encode("utf-8", "surrogateescape") for k in keys]

    def size(i):
        return (sum(len(x) + 1 for x in lines_of[i]) if by_bytes else len(lines_of[i])) if lines_of[i] else 0

    def weight(i):
        f = freq_of[i]
        return f.urir if f is not None and f.urir is not None else 1

    alive = [bool(lines_of[i]) for i in range(n)]
    live = _Fenwick(n, [size(i) if alive[i] else 0 for i in range(n)])
    # URI-Rs answered by each live line (nested lines count again)
    answers = _Fenwick(n, [weight(i) if alive[i] else 0 for i in range(n)])
    total = (sum(len(h) + 1 for h in raw_headers) if by_bytes else len(raw_headers)) + live.prefix(n)
    cover = coverage.of_headers(read_headers, kind)
    lists = _lister(cover,
                    [bool(lines_of[i]) and any(b'"rollup":true' in x for x in lines_of[i]) for i in range(n)])
    probes, uncovered = _probes(keys, index, freq_of, alive, weight, lists)
    probes_total = max(probes, 1)
    unc_in = uncovered.prefix(n)
    bytes_in = os.path.getsize(path)

    def span(i):
        prefix = bkeys[i][:-1]
        lo = bisect.bisect_left(bkeys, prefix)
        hi = bisect.bisect_left(bkeys, prefix[:-1] + bytes([prefix[-1] + 1]))
        return lo, hi

    spans = {}

    def score(i):
        lo, hi = spans[i]
        own = size(i) if alive[i] else (new_size(i) if kind == "ukvs" else None)
        if own is None or (alive[i] and not _held(freq_of[i])):
            return None
        saved = live.range(lo, hi) - own
        if saved <= 0:
            return None
        changed = answers.range(lo, hi) - (weight(i) if alive[i] else 0)
        return uncovered.range(lo, hi) / saved, changed / saved, -saved

    def new_size(i):
        return len(bkeys[i]) + (3 if nkeys == 2 else 1) + 12 if by_bytes else 1

    def collapse_score(i):
        if not alive[i] or all_time[i] is None or len(lines_of[i]) < 2:
            return None
        saved = size(i) - (len(all_time[i]) + 1 if by_bytes else 1)
        return 0.0, weight(i) / saved, -saved

    # operations: roll a wildcard up (0), or collapse a group to its all-time line (1)
    heap = []
    for k in wanted:
        i = index.get(k)
        if i is None:
            continue
        spans[i] = span(i)
        s = score(i)
        if s is not None:
            heap.append((s, 0, i))
    for i in range(n):
        s = collapse_score(i)
        if s is not None:
            heap.append((s, 1, i))
    heapq.heapify(heap)
    dead_cover = [False] * n   # inside an applied rollup (its own line removed)
    rollups = created = collapsed = 0
    while total > quota and heap:
        s, op, i = heapq.heappop(heap)
        if dead_cover[i]:
            continue
        s2 = score(i) if op == 0 else collapse_score(i)
        if s2 is None:
            continue
        if s2 > s:
            heapq.heappush(heap, (s2, op, i))
            continue
        if op == 1:
            sz = size(i)
            lines_of[i] = [all_time[i]]
            live.add(i, size(i) - sz)
            total += size(i) - sz
            collapsed += 1
            continue
        lo, hi = spans[i]
        removed_freqs = _maximal(keys, freq_of, alive, lo, hi, i)
        for j in range(lo, hi):
            if j != i:
                dead_cover[j] = True
                if alive[j]:
                    sz = size(j)
                    live.add(j, -sz)
                    answers.add(j, -weight(j))
                    total -= sz
                    alive[j] = False
            w = uncovered.cells[j]
            if w:
                uncovered.add(j, -w)
        if not alive[i]:
            f = _created(removed_freqs, kind == "cdxj" or cover is not None)
            key = bkeys[i] + (b" " + ALL_TIME.encode() if nkeys == 2 else b"")
            lines_of[i] = [key + b" " + format_frequency(f).encode()]
            all_time[i] = lines_of[i][0]
            freq_of[i] = f
            alive[i] = True
            sz = size(i)
            live.add(i, sz)
            answers.add(i, weight(i))
            total += sz
            created += 1
        if kind == "ukvs":                  # it now stands for URIs no longer listed (profiler.files.coverage)
            sz = size(i)
            lines_of[i] = [_marked(line) for line in lines_of[i]]
            live.add(i, size(i) - sz)
            total += size(i) - sz
        rollups += 1
    if total > quota:
        raise UserError("cannot shrink %s to %d %s: the smallest compaction has %d"
                        % (path, quota, "bytes" if by_bytes else "lines", total))
    unc_out = uncovered.prefix(n)
    raw_headers[-1] = meta_line((probes - unc_out) / probes_total)

    def out():
        yield from sorted(raw_headers)
        for i in range(n):
            if alive[i]:
                yield from lines_of[i]

    size = [0]

    def counted():
        for line in out():
            size[0] += len(line) + 1
            yield line
    write_atomic(out_path, counted())
    lines_out = len(raw_headers) + sum(len(lines_of[i]) for i in range(n) if alive[i])
    return CompactReport(lines_in=lines_in, lines_out=lines_out, bytes_in=bytes_in,
                         bytes_out=size[0], rollups=rollups, created=created, collapsed=collapsed,
                         probes=probes, fp_in=(probes - unc_in) / probes_total,
                         fp_out=(probes - unc_out) / probes_total)


def _marked(line):
    """A map line with the rollup mark in its JSON block (profiler.files.coverage)."""
    if b'"rollup":true' in line:
        return line
    i = line.find(b" {")
    if i < 0:
        return line + b' {"rollup":true}'
    try:
        block = jsonnum.loads(line[i + 1:])
    except jsonnum.JSONDecodeError:
        from profiler.files.ukvs import relaxed_json_loads
        try:
            block = relaxed_json_loads(line[i + 1:].decode("utf-8", "replace"))
        except ValueError:
            block = None
    if not isinstance(block, dict):
        return line[:i] + b' {"rollup":true}'
    block["rollup"] = True
    return line[:i] + b" " + jsonnum.dumps(block)


def _lister(cover, rolled_up):
    """lists(i, key): whether a held wildcard line answers the URIs under it as held for a router
    (profiler.files.coverage.listed): in a complete file (``cover``), only a line at or below the
    level it lists held URIs at, or one rolled up; in any other file, every wildcard but '*'."""
    def lists(i, k):
        if cover is None or rolled_up[i] or ")" in k and not cover.get("exact_urls"):
            return True
        if cover.get("exact_urls") or k == "*":
            return False
        return len(k.split(",")) - 1 >= cover["host_depth"]
    return lists


def _probes(keys, index, freq_of, alive, weight, lists=None):
    """The absent-URI probes of the false-positive model, placed at slots, and which are
    uncovered. For each held URI-R (a line not inside a held wildcard that lists it counts its
    URI-Rs; a wildcard above the level a complete file lists at, a TLD line, lists none): one
    absent URI in its directory (placed at the line), one elsewhere on its host (at 'HOST)/*')
    and one on a neighbouring host (at the parent label wildcard 'com,cnn,*'; none for a
    one-label host). A probe is positive when a held wildcard other than '*' that lists
    (``lists(slot, key)``, _lister) holds it. Returns (number of probes, Fenwick of uncovered
    probe weight by slot)."""
    cells = [0] * len(keys)
    held = [alive[i] and _held(freq_of[i]) for i in range(len(keys))]
    lists = lists or (lambda i, k: True)
    held_wild = {k for i, k in enumerate(keys) if held[i] and k.endswith("*") and k != "*" and lists(i, k)}
    unlisting = {k for i, k in enumerate(keys) if held[i] and k.endswith("*") and k != "*" and k not in held_wild}

    def covered(k):
        return k in held_wild or any(p in held_wild for p in parents(k))

    total = 0
    hosts = {}
    for i, k in enumerate(keys):
        if not held[i] or k == "*" or k in unlisting or any(p in held_wild for p in parents(k)):
            continue        # a line inside a held wildcard: its URI-Rs are counted there
        w = weight(i)
        total += w
        if k not in held_wild:
            cells[i] += w
        if ")" in k:
            h = host_part(k)
            hosts[h] = hosts.get(h, 0) + w
    for h, w in hosts.items():
        places = [h + ")/*"]
        labels = h.split(",")
        if len(labels) >= 2:
            places.append(",".join(labels[:-1]) + ",*")
        for place in places:
            total += w
            if not covered(place):
                cells[index[place]] += w
    return total, _Fenwick(len(keys), cells)


def _maximal(keys, freq_of, alive, lo, hi, parent):
    """All-time frequencies of the held live groups in [lo, hi) not inside another held live
    wildcard there (a zero wildcard does not hold the lines below it)."""
    live_wild = {keys[j] for j in range(lo, hi)
                 if alive[j] and j != parent and keys[j].endswith("*") and _held(freq_of[j])}
    out = []
    for j in range(lo, hi):
        if j == parent or not alive[j] or not _held(freq_of[j]):
            continue
        if any(p in live_wild for p in parents(keys[j])):
            continue
        out.append(freq_of[j] if freq_of[j] is not None else Frequency(None, "", None, ""))
    return out
