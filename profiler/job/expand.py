"""Reduce side of step 1: one URI-R's captures -> its contribution to every profile key.

Revisits are resolved inside the URI-R (the original with the same digest is there).
A URI-R's tuples are the distinct values of its captures, one per criterion of the policy
(period, mime, status, ...). For the keys of the host and above (root, tld, domain, host) a
URI-R is cut into blocks: under each group of level combinations that cut its tuples alike,
the tuples with one key suffix form a block whose record is exact for that URI-R (see
blocks(); a URI-R with one tuple is one block). Block records are merged per host by
virtual tuple, rolled up by virtual tuple to the TLD, domain and '*' keys, and expanded into
key suffixes once per (key, virtual tuple), so the work per URI-R does not grow with the
number of combinations. Path and URL keys go straight to the output table. Digest features
are first counted as if no digest were shared between URI-Rs; one record per (URI-R, digest)
lets step 2 correct the digests that are (see profiler.job.digests).
"""

import itertools

from profiler.job.cells import full_cell
from profiler.model import stats
from profiler.model.keys import SuffixTable, group_levels, host_part, own_levels

# tuple entry: (values...) -> [count, bytes, first, last, dash_bytes, {digest: max_len}]


def merge_cells(values, k):
    """Merge the cell lists of one URI-R coming from any number of map records (k criteria)."""
    cells = {}
    kd = k + 2
    for cell_list in values:
        for cell in cell_list:
            cell = full_cell(cell, k)
            ck = tuple(cell[:kd])
            c = cells.get(ck)
            if c is None:
                cells[ck] = cell[kd:]
            else:
                c[0] += cell[kd]
                c[1] += cell[kd + 1]
                if cell[kd + 2] > c[2]:
                    c[2] = cell[kd + 2]
                if cell[kd + 3] < c[3]:
                    c[3] = cell[kd + 3]
                if cell[kd + 4] > c[4]:
                    c[4] = cell[kd + 4]
    return cells


def resolve(cells, chosen):
    """Cells -> tuples, a revisit taking the values of the criteria that follow the original (mime,
    status, ...) from the earliest original with its digest (by time, then those values), or
    the criteria's revisit values when there is none."""
    k = len(chosen)
    taken = [i for i, c in enumerate(chosen) if c.resolved]
    unresolved = tuple(c.revisit for c in chosen)
    originals = {}
    for ck, c in cells.items():
        d = ck[k]
        if not ck[k + 1] and d != "-":
            candidate = (c[3],) + tuple(ck[i] for i in taken)
            known = originals.get(d)
            if known is None or candidate < known:
                originals[d] = candidate
    tuples = {}
    for ck, c in cells.items():
        d = ck[k]
        if ck[k + 1]:
            o = originals.get(d)
            t = list(ck[:k])
            for n, i in enumerate(taken):
                t[i] = o[n + 1] if o else unresolved[i]
            t = tuple(t)
        else:
            t = ck[:k]
        e = tuples.get(t)
        if e is None:
            e = tuples[t] = [0, 0, stats.NO_FIRST, stats.NO_LAST, 0, {}]
        e[0] += c[0]
        e[1] += c[1]
        if c[3] < e[2]:
            e[2] = c[3]
        if c[4] > e[3]:
            e[3] = c[4]
        if d == "-":
            e[4] += c[1]
        elif c[2] > e[5].get(d, -1):
            e[5][d] = c[2]
    return tuples


def _record(entries):
    """Stats record of one URI-R over a list of tuple entries."""
    if len(entries) == 1:
        e = entries[0]
        return stats.of_uri_r(e[0], e[1], len(e[5]), sum(e[5].values()) + e[4], e[2], e[3])
    count = nbytes = dash = 0
    first, last = stats.NO_FIRST, stats.NO_LAST
    digests = {}
    for e in entries:
        count += e[0]
        nbytes += e[1]
        dash += e[4]
        if e[2] < first:
            first = e[2]
        if e[3] > last:
            last = e[3]
        for d, ml in e[5].items():
            if ml > digests.get(d, -1):
                digests[d] = ml
    return stats.of_uri_r(count, nbytes, len(digests), sum(digests.values()) + dash, first, last)


def _project(tuples, records, suffixes, idx, disjoint):
    """{suffix: record} of one URI-R for the combinations of set idx.

    records holds each tuple's own record; a suffix reached from several tuples gets
    a record over all of them (one URI-R: urir 1, min = max = its count).
    """
    groups = {}
    for t, sx in suffixes.items():
        for suffix in sx[idx]:
            found = groups.get(suffix)
            if found is None:
                groups[suffix] = t
            elif found.__class__ is list:
                found.append(t)
            else:
                groups[suffix] = [found, t]
    out = {}
    for suffix, g in groups.items():
        if g.__class__ is tuple:
            out[suffix] = records[g]
        elif disjoint:
            out[suffix] = _sum_disjoint([records[t] for t in g])
        else:
            out[suffix] = _record([tuples[t] for t in g])
    return out


def _sum_disjoint(records):
    """Record of one URI-R over tuples that share no digest: every field adds up."""
    total = list(records[0])
    for r in records[1:]:
        stats.merge_into(total, r)
    total[1] = total[2] = total[0]
    total[3] = 1
    return total


def _digests_disjoint(tuples):
    """True when no digest occurs in two tuples of the URI-R."""
    seen = set()
    n = 0
    for e in tuples.values():
        seen.update(e[5])
        n += len(e[5])
    return len(seen) == n


class Expander:
    """Stateful reducer logic of step 1; ``add()`` and ``close()`` yield output records.

    Output keys: b'K <profile key>' with a stats record (partial: records of one key from
    several flushes add up), b'D <digest>' with [urlkey, [[values..., max_len], ...]] (one entry
    per tuple of the URI-R that holds the digest).

    Host-and-above keys: each URI-R adds one exact record per block of its tuples (see
    blocks(); one record for the many URI-Rs with a single tuple) to a per-host table by
    virtual tuple. At the end of a host the table is expanded into the host key's suffixes and
    rolled up by virtual tuple to the TLD, domain and root keys, which are expanded into
    suffixes when their tables fill up: once per (key, virtual tuple), not per URI-R.
    """

    def __init__(self, policy, limit=200000):
        self.policy = policy
        self.suffixes = SuffixTable(policy)
        self.limit = limit
        self.table = {}
        self.host = self.group = None
        self.host_tuples = {}     # tuple -> record of the host's URI-Rs (see class docstring)
        self.host_suffixes = {}   # combination set index -> {suffix: record}, see ambiguity()
        self.level_tuples = {}    # (tld/domain/root key, set index) -> {tuple: record}
        self.level_size = 0
        self.used = used_options(policy)
        self.criteria = policy.criteria
        self.k = len(self.criteria)
        self.whole = tuple((2 << len(c.levels)) - 1 for c in self.criteria)    # every level's bit
        self.ambiguous = ambiguity(policy)
        self.carried = {}         # blocks(): the value that stands for a field of a level

    def add(self, urlkey, cell_lists):
        tuples = resolve(merge_cells(cell_lists, self.k), self.criteria)
        host = host_part(urlkey)
        policy = self.policy
        if self.group is None or host != self.host:
            self._close_group()
            self.host = host
            self.group = group_levels(host, policy)
        host_tuples = self.host_tuples
        if len(tuples) == 1:
            for t, e in tuples.items():
                stats.add(host_tuples, t + self.whole,
                          stats.of_uri_r(e[0], e[1], len(e[5]), sum(e[5].values()) + e[4], e[2], e[3]))
        elif self.ambiguous(tuples):
            self._add_by_suffix(tuples)
        else:
            for vt, entries in blocks(tuples, self.criteria, self.used, self.carried):
                stats.add(host_tuples, vt, _record(entries))
        own = own_levels(urlkey, host, policy)
        if own:
            records = {t: _record([e]) for t, e in tuples.items()}
            suffixes = {t: self.suffixes(t) for t in tuples}
            disjoint = len(tuples) == 1 or _digests_disjoint(tuples)
            for lt, key in own:
                for suffix, record in _project(tuples, records, suffixes, policy.set_of[lt], disjoint).items():
                    stats.add(self.table, key + " " + suffix, record)
        by_digest = {}
        for t, e in tuples.items():
            for d, ml in e[5].items():
                by_digest.setdefault(d, []).append(list(t) + [ml])
        for d, entries in by_digest.items():
            yield b"D " + d.encode("utf-8"), [urlkey, entries]
        if len(self.table) >= self.limit:
            yield from self._flush()

    def _add_by_suffix(self, tuples):
        """The exact record of each suffix, for a URI-R where two options give one suffix."""
        records = {t: _record([e]) for t, e in tuples.items()}
        suffixes = {t: self.suffixes(t) for t in tuples}
        disjoint = _digests_disjoint(tuples)
        for idx in {self.policy.set_of[lt] for lt, _ in self.group}:
            acc = self.host_suffixes.setdefault(idx, {})
            for suffix, record in _project(tuples, records, suffixes, idx, disjoint).items():
                stats.add(acc, suffix, record)

    def _close_group(self):
        """Roll the finished host's records by tuple up to its host, domain, TLD and root keys."""
        if self.group is None:
            return
        set_of = self.policy.set_of
        suffixes = self.suffixes
        table = self.table
        levels = []
        for lt, key in self.group:
            idx = set_of[lt]
            if lt == "host":
                levels.append((idx, key + " ", None))
            else:
                acc = self.level_tuples.get((key, idx))
                if acc is None:
                    acc = self.level_tuples[(key, idx)] = {}
                levels.append((idx, None, acc))
        for lt, key in self.group:
            prefix = key + " "
            for suffix, r in self.host_suffixes.get(set_of[lt], {}).items():
                stats.add(table, prefix + suffix, r)
        self.host_suffixes = {}
        added = 0
        for t, r in self.host_tuples.items():
            sx = suffixes(t)
            for idx, prefix, acc in levels:
                if not sx[idx]:
                    continue
                if acc is None:
                    for suffix in sx[idx]:
                        stats.add(table, prefix + suffix, r)
                else:
                    stats.add(acc, t, r)
                    added += 1
        self.level_size += added
        self.host_tuples = {}
        self.group = None
        if self.level_size >= self.limit:
            self._expand_levels()

    def _expand(self, key, idx, by_tuple):
        """Add records merged per tuple to every suffix of their tuple under key."""
        table = self.table
        suffixes = self.suffixes
        prefix = key + " "
        for t, r in by_tuple.items():
            for suffix in suffixes(t)[idx]:
                stats.add(table, prefix + suffix, r)

    def _expand_levels(self):
        for (key, idx), by_tuple in self.level_tuples.items():
            self._expand(key, idx, by_tuple)
        self.level_tuples = {}
        self.level_size = 0

    def _flush(self):
        table, self.table = self.table, {}
        for key, record in table.items():
            yield b"K " + key.encode("utf-8"), record

    def close(self):
        self._close_group()
        self._expand_levels()
        yield from self._flush()


def _classes(counts, nesting, used=-1):
    """Levels of one criterion, coarse to fine, grouped where they cut a URI-R's tuples alike.

    counts: the number of distinct values under each level from 'any' (1) to the finest;
    nesting: which level's field determines which (Criterion.nesting); used: the bits of the
    levels the policy emits (the others join any group). Nested levels cut alike exactly when
    they give as many values; a level that does not nest in the group's finest starts a group of
    its own. Yields (bit mask of the levels, index of the finest emitted level of the group).
    """
    mask, finest = 1, 0
    for i in range(1, len(counts)):
        if not used >> i & 1:
            mask |= 1 << i
        elif counts[i] == counts[finest] and nesting[i][finest]:
            mask |= 1 << i
            finest = i
        else:
            yield mask, finest
            mask, finest = 1 << i, i
    yield mask, finest


def ambiguity(policy):
    """tuples -> True when a value of a URI-R's tuples reads the same at two levels the policy
    emits ('unk' as a status code and class, 'x/*' as a type and category), or, for a criterion
    with a level whose fields are not values of its own (a content class: the media type 'html'
    is 'other'), when two of its values do ('html' as one's type and another's class).

    Their suffixes then coincide across blocks of different levels, so such URI-Rs (rare)
    are added suffix by suffix.
    """
    checks, across = [], []
    for i, c in enumerate(policy.criteria):
        levels = policy.used_levels[c.name]
        if len(levels) > 1:
            checks.append((i, c, levels))
            if not all(c.level(lv).reprojects for lv in levels if lv != "any"):
                across.append((i, c, levels))
    seen = {}

    def ambiguous(tuples):
        for t in tuples:
            for i, c, levels in checks:
                v = t[i]
                found = seen.get((i, v))
                if found is None:
                    fields = [c.field(v, level) for level in levels]
                    found = seen[(i, v)] = len(set(fields)) < len(fields)
                    if len(seen) > 100000:
                        seen.clear()
                if found:
                    return True
        for i, c, levels in across:
            values = {t[i] for t in tuples}
            if len(values) > 1:
                level_of = {}
                for v in values:
                    for level in levels:
                        if level_of.setdefault(c.field(v, level), level) != level:
                            return True
        return False
    return ambiguous


def used_options(policy):
    """The level bits (one per criterion) of every combination the policy emits."""
    bits = [c.bits for c in policy.criteria]
    return {tuple(b[level] for b, level in zip(bits, combo)) for combos in policy.combo_sets for combo in combos}


def blocks(tuples, chosen, used=None, carried=None):
    """A URI-R with several tuples -> (virtual tuple, [entries]) per block.

    Under one combination of levels (say year, any mime, status class) the URI-R's tuples
    fall into blocks with the same key suffix; the URI-R's exact record for that suffix is the
    record of the block. Combinations that cut the tuples alike share the block: the virtual
    tuple (values..., level masks...) holds the values projected to the finest of those
    levels, and SuffixTable expands it into the suffixes of exactly those combinations. A URI-R
    with one tuple is the case of one block under all levels (values..., whole masks...).

    A level whose fields are not values of its own (a media type's content class: the type
    'html' is 'other') cannot stand for its block by its field: the virtual tuple holds a value
    of that field instead, the first one ``carried`` ({(criterion, level, field): value}, kept by
    the caller so that blocks of one field from many URI-Rs share it) has met.
    """
    items = list(tuples.items())
    k = len(chosen)
    chains = []
    classes = []
    own = []
    emitted = [-1] * k
    if used is not None:
        emitted = [0] * k
        for u in used:
            for i in range(k):
                emitted[i] |= u[i]
    for i, c in enumerate(chosen):
        chain = [c.chain(t[i]) for t, _ in items]
        chains.append(chain)
        classes.append(list(_classes([len({v[j] for v in chain}) for j in range(len(chain[0]))], c.nesting,
                                     emitted[i])))
        own.append(c.reprojects)
    if carried is None:
        carried = {}
    entries = [e for _, e in items]
    values = [t for t, _ in items]
    out = []
    for combo in itertools.product(*classes):
        masks = tuple(mask for mask, _ in combo)
        if used is not None and not any(all(u[i] & masks[i] for i in range(k)) for u in used):
            continue
        found = {}
        for n, e in enumerate(entries):
            block = tuple(chains[i][n][combo[i][1]] for i in range(k))
            group = found.get(block)
            if group is None:
                found[block] = (n, [e])
            else:
                group[1].append(e)
        for block, (n, group) in found.items():
            vt = tuple(block[i] if own[i][combo[i][1]] else
                       carried.setdefault((i, combo[i][1], block[i]), values[n][i]) for i in range(k)) + masks
            out.append((vt, group))
    if len(carried) > 100000:
        carried.clear()
    return out
