"""Reduce side of step 1: one URI-R's captures -> its contribution to every profile key.

Revisits are resolved inside the URI-R (the original with the same digest is there).
Keys of the host and above (root, tld, domain, host) are accumulated per host and
rolled up once per host. URI-Rs whose captures all share one (period, mime, status)
tuple (most of them) contribute the same record to every key of that tuple, so they are
merged per tuple up to the TLD, domain and '*' keys and expanded into keys only once per
tuple. Path and URL keys go straight to the output table. Digest
features are first counted as if no digest were shared between URI-Rs; one record per
(URI-R, digest) lets step 2 correct the digests that are (see profiler.digests).
"""

from profiler import stats
from profiler.keys import SuffixTable, group_levels, host_part, own_levels
from profiler.normalise import REVISIT_MIME, UNKNOWN

# tuple entry: (period, mime, status) -> [count, bytes, first, last, dash_bytes, {digest: max_len}]


def merge_cells(values):
    """Merge the cell lists of one URI-R coming from any number of map records."""
    cells = {}
    for cell_list in values:
        for cell in cell_list:
            ck = (cell[0], cell[1], cell[2], cell[3], cell[4])
            c = cells.get(ck)
            if c is None:
                cells[ck] = cell[5:]
            else:
                c[0] += cell[5]
                c[1] += cell[6]
                if cell[7] > c[2]:
                    c[2] = cell[7]
                if cell[8] < c[3]:
                    c[3] = cell[8]
                if cell[9] > c[4]:
                    c[4] = cell[9]
    return cells


def resolve(cells):
    """Cells -> tuples, revisits taking mime and status of the earliest original with their digest."""
    originals = {}
    for (p, m, s, d, rev), c in cells.items():
        if not rev and d != "-":
            candidate = (c[3], m, s)
            known = originals.get(d)
            if known is None or candidate < known:
                originals[d] = candidate
    tuples = {}
    for (p, m, s, d, rev), c in cells.items():
        if rev:
            o = originals.get(d)
            m, s = (o[1], o[2]) if o else (REVISIT_MIME, UNKNOWN)
        t = (p, m, s)
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

    Output keys: b'K <profile key>' with a stats record, b'D <digest>' with
    [urlkey, [[period, mime, status, max_len], ...]].
    """

    def __init__(self, policy, limit=200000):
        self.policy = policy
        self.suffixes = SuffixTable(policy)
        self.limit = limit
        self.table = {}
        self.host = self.group = None
        self.host_single = {}     # tuple -> merged records of single-tuple URI-Rs
        self.host_sets = {}       # combo set index -> {suffix: record}
        self.level_single = {}    # (tld/domain/root key, set index) -> {tuple: record}
        self.level_tuples = 0

    def add(self, urlkey, cell_lists):
        tuples = resolve(merge_cells(cell_lists))
        host = host_part(urlkey)
        policy = self.policy
        if self.group is None or host != self.host:
            self._close_group()
            self.host = host
            self.group = group_levels(host, policy)
            self.group_sets = sorted({policy.set_of[lt] for lt, _ in self.group})
        records = {t: _record([e]) for t, e in tuples.items()}
        single = len(tuples) == 1
        if single:
            (t, record), = records.items()
            stats.add(self.host_single, t, record)
        own = own_levels(urlkey, host, policy)
        if own or not single:
            suffixes = {t: self.suffixes(t) for t in tuples}
            disjoint = single or _digests_disjoint(tuples)
            if not single:
                for idx in self.group_sets:
                    acc = self.host_sets.setdefault(idx, {})
                    for suffix, record in _project(tuples, records, suffixes, idx, disjoint).items():
                        stats.add(acc, suffix, record)
            for lt, key in own:
                for suffix, record in _project(tuples, records, suffixes, policy.set_of[lt], disjoint).items():
                    stats.add(self.table, key + " " + suffix, record)
        by_digest = {}
        for t, e in tuples.items():
            for d, ml in e[5].items():
                by_digest.setdefault(d, []).append([t[0], t[1], t[2], ml])
        for d, entries in by_digest.items():
            yield b"D " + d.encode("utf-8"), [urlkey, entries]
        if len(self.table) >= self.limit:
            yield from self._flush()

    def _close_group(self):
        """Roll the finished host up: multi-tuple URI-Rs by suffix, single-tuple ones by tuple."""
        if self.group is None:
            return
        set_of = self.policy.set_of
        table = self.table
        for lt, key in self.group:
            for suffix, record in self.host_sets.get(set_of[lt], {}).items():
                stats.add(table, key + " " + suffix, record)
            if lt == "host":
                self._expand(key, set_of[lt], self.host_single)
            else:
                acc = self.level_single.setdefault((key, set_of[lt]), {})
                for t, record in self.host_single.items():
                    stats.add(acc, t, record)
                self.level_tuples += len(self.host_single)
        self.host_single = {}
        self.host_sets = {}
        self.group = None
        if self.level_tuples >= self.limit:
            self._expand_levels()

    def _expand(self, key, idx, by_tuple):
        """Add records of single-tuple URI-Rs, merged per tuple, to every suffix of their tuple."""
        table = self.table
        suffixes = self.suffixes
        for t, record in by_tuple.items():
            for suffix in suffixes(t)[idx]:
                stats.add(table, key + " " + suffix, record)

    def _expand_levels(self):
        for (key, idx), by_tuple in self.level_single.items():
            self._expand(key, idx, by_tuple)
        self.level_single = {}
        self.level_tuples = 0

    def _flush(self):
        table, self.table = self.table, {}
        for key, record in table.items():
            yield b"K " + key.encode("utf-8"), record

    def close(self):
        self._close_group()
        self._expand_levels()
        yield from self._flush()
