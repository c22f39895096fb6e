"""Step 2: correct digest features for payload digests shared by several URI-Rs.

Step 1 counts, per key, each URI-R's digests as if no other URI-R had them. For a
digest held by n > 1 URI-Rs under one key the exact values are one digest and the
largest length, so the key gets a correction of -(n-1) digests and
-(sum of lengths - largest) dedup bytes. Digests of a single URI-R need nothing.

A digest's records are read into its (URI-Rs, sum of lengths, largest) per profile key
(``KeyStats``), which give its corrections or, for a digest whose records are spread over
several groups, its shares of them (profiler.job.hotdigests).
"""

import contextlib
import heapq
import itertools
import tempfile
from operator import itemgetter

from profiler import jsonnum
from profiler.model import stats
from profiler.model.keys import SuffixTable, surt_levels


def corrections(records, policy, suffixes, limit=None):
    """records: [urlkey, [[values..., max_len], ...]] of one digest, one per URI-R.

    Yields (profile key, correction record), each key once. Records are streamed: memory
    grows with the keys the digest touches, not with the number of its captures; with a
    limit it holds at most that many keys (and one URI-R's) and spills sorted runs of
    (key, URI-Rs, sum of lengths, largest) to temporary files, merged at the end (a digest
    that every host of a large archive holds, such as the empty payload's, touches a key
    per host).
    """
    records = iter(records)
    first = next(records, None)
    second = next(records, None)
    if second is None:
        return   # one URI-R holds the digest: nothing was counted twice
    yield from read(itertools.chain((first, second), records), policy, suffixes, limit).corrections()


def compiled_corrections(records, expander, limit, write):
    """corrections() by the compiled Expander (profiler.accel.fast).

    The digest's corrections go to the expander's table, summed with other digests'; write()
    gets its K lines when it fills up (the rest come from ``close_raw()``). A digest that
    touches limit keys or more spills them to sorted runs, as corrections() does, and its
    merged corrections are yielded as corrections() yields them.
    """
    yield from read_compiled(records, expander, limit).corrections(write)


def reader(policy, limit, expander=None):
    """records -> their KeyStats (read() or read_compiled(), by the compiled Expander when there
    is one)."""
    if expander is not None:
        return lambda records: read_compiled(records, expander, limit)
    suffixes = SuffixTable(policy)
    return lambda records: read(records, policy, suffixes, limit)


def read(records, policy, suffixes, limit=None):
    """The KeyStats of records (of one digest, one per URI-R), read now."""
    held = KeyStats()
    with held.closed_on_error():
        set_of = policy.set_of
        per_key = {}
        for urlkey, entries in records:
            levels = surt_levels(urlkey, policy)
            mine = {}
            for entry in entries:
                max_len = entry[-1]
                sx = suffixes(tuple(entry[:-1]))
                for level_type, key in levels:
                    for suffix in sx[set_of[level_type]]:
                        full = key + " " + suffix
                        if max_len > mine.get(full, -1):
                            mine[full] = max_len
            for full, max_len in mine.items():
                e = per_key.get(full)
                if e is None:
                    per_key[full] = [1, max_len, max_len]
                else:
                    e[0] += 1
                    e[1] += max_len
                    if max_len > e[2]:
                        e[2] = max_len
            if limit and len(per_key) >= limit:
                held.spill(per_key)
                per_key = {}
        held.last = per_key
    return held


def read_compiled(records, expander, limit):
    """read() by the compiled Expander, which holds the keys that are not spilled."""
    held = KeyStats(expander)
    with held.closed_on_error():
        for urlkey, entries in records:
            if expander.correct(urlkey, entries) >= limit:
                held.spill(expander.take_digest_keys())
    return held


class KeyStats:
    """A digest's (URI-Rs, sum of lengths, largest) per profile key, once its records are read:
    sorted runs spilled to temporary files, and the last keys in memory (a dict, or the compiled
    Expander's). Read once, as its corrections or as its key stats (the shares of a digest
    whose records are spread over several groups, profiler.job.hotdigests)."""

    def __init__(self, expander=None):
        self.expander, self.runs, self.last = expander, [], {}

    def spill(self, per_key):
        self.runs.append(_spill(per_key))

    def _held(self):
        return self.expander.take_digest_keys() if self.expander is not None else self.last

    def key_stats(self):
        """(profile key, URI-Rs, sum of lengths, largest) of each key, each once. The stats of
        the records of one digest cut into groups add up (URI-Rs and sums) and take the largest."""
        try:
            if not self.runs:
                yield from ((full, n, total, largest) for full, (n, total, largest) in self._held().items())
                return
            self.spill(self._held())
            yield from _merge(self.runs)
        finally:
            self.close()

    def corrections(self, write=None):
        """(profile key, correction) of each key held twice or more; with the compiled Expander
        the keys that were not spilled go to its table instead (write() gets its K lines when it
        fills up)."""
        if self.expander is not None and not self.runs:
            write(self.expander.end_digest_raw())
            return
        yield from _corrections(self.key_stats())

    def close(self):
        for run in self.runs:
            run.close()
        self.runs = []

    @contextlib.contextmanager
    def closed_on_error(self):
        """Its runs closed when the block fails."""
        try:
            yield
        except BaseException:
            self.close()
            raise


def _corrections(merged):
    """(profile key, correction) of each (key, URI-Rs, sum of lengths, largest) held twice or more."""
    for full, n, total, largest in merged:
        if n > 1:
            yield full, stats.correction(n - 1, total - largest)


def _spill(per_key):
    """A temporary file of per_key's entries, one JSON [key, n, total, largest] per line, by key."""
    run = tempfile.TemporaryFile()
    write = run.write
    for full in sorted(per_key):
        n, total, largest = per_key[full]
        write(jsonnum.dumps([full, n, total, largest]))
        write(b"\n")
    run.seek(0)
    return run


def _merge(runs):
    """(key, n, total, largest) over sorted runs, each key once."""
    current = None
    for full, n, total, largest in heapq.merge(*(map(jsonnum.loads, run) for run in runs), key=itemgetter(0)):
        if current is not None and current[0] == full:
            current[1] += n
            current[2] += total
            if largest > current[3]:
                current[3] = largest
            continue
        if current is not None:
            yield current
        current = [full, n, total, largest]
    if current is not None:
        yield current
