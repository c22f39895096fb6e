"""Step 2: correct digest features for payload digests shared by several URI-Rs.

Step 1 counts, per key, each URI-R's digests as if no other URI-R had them. For a
digest held by n > 1 URI-Rs under one key the exact values are one digest and the
largest length, so the key gets a correction of -(n-1) digests and
-(sum of lengths - largest) dedup bytes. Digests of a single URI-R need nothing.
"""

import heapq
import itertools
import tempfile
from operator import itemgetter

from profiler import jsonnum
from profiler.model import stats
from profiler.model.keys import surt_levels


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
    yield from _corrections(key_stats(itertools.chain((first, second), records), policy, suffixes, limit))


def key_stats(records, policy, suffixes, limit=None):
    """(profile key, URI-Rs, sum of lengths, largest) of each key some of records (of one digest,
    one per URI-R) touch, each key once; memory bounded as in corrections(). The stats of the
    records of one digest cut into groups add up (URI-Rs and sums) and take the largest."""
    set_of = policy.set_of
    per_key = {}
    runs = []
    try:
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
                runs.append(_spill(per_key))
                per_key = {}
        if runs:
            if per_key:
                runs.append(_spill(per_key))
                per_key = {}
            yield from _merge(runs)
        else:
            yield from ((full, n, total, largest) for full, (n, total, largest) in per_key.items())
    finally:
        for run in runs:
            run.close()


def compiled_key_stats(records, expander, limit):
    """key_stats() by the compiled Expander (profiler.accel.fast)."""
    return _compiled(records, expander, limit, lambda: (
        (full, n, total, largest) for full, (n, total, largest) in expander.take_digest_keys().items()), False)


def compiled_corrections(records, expander, limit, write):
    """corrections() by the compiled Expander (profiler.accel.fast).

    The digest's corrections go to the expander's table, summed with other digests'; write()
    gets its K lines when it fills up (the rest come from ``close_raw()``). A digest that
    touches limit keys or more spills them to sorted runs, as corrections() does, and its
    merged corrections are yielded as corrections() yields them.
    """
    return _compiled(records, expander, limit, lambda: write(expander.end_digest_raw()) or (), True)


def _compiled(records, expander, limit, unspilled, corrected):
    """A digest's records through the compiled Expander: unspilled() when its keys stayed under
    limit, else the merge of its spilled runs (as corrections when corrected)."""
    runs = []
    try:
        for urlkey, entries in records:
            if expander.correct(urlkey, entries) >= limit:
                runs.append(_spill(expander.take_digest_keys()))
        if not runs:
            yield from unspilled()
            return
        runs.append(_spill(expander.take_digest_keys()))
        merged = _merge(runs)
        yield from _corrections(merged) if corrected else merged
    finally:
        for run in runs:
            run.close()


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
