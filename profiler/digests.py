"""Step 2: correct digest features for payload digests shared by several URI-Rs.

Step 1 counts, per key, each URI-R's digests as if no other URI-R had them. For a
digest held by n > 1 URI-Rs under one key the exact values are one digest and the
largest length, so the key gets a correction of -(n-1) digests and
-(sum of lengths - largest) dedup bytes. Digests of a single URI-R need nothing.
"""

import itertools

from profiler import stats
from profiler.keys import surt_levels


def corrections(records, policy, suffixes):
    """records: [urlkey, [[period, mime, status, max_len], ...]] of one digest, one per URI-R.

    Yields (profile key, correction record). Records are streamed: memory grows with the
    keys the digest touches, not with the number of its captures.
    """
    records = iter(records)
    first = next(records, None)
    second = next(records, None)
    if second is None:
        return   # one URI-R holds the digest: nothing was counted twice
    set_of = policy.set_of
    per_key = {}
    for urlkey, entries in itertools.chain((first, second), records):
        levels = surt_levels(urlkey, policy)
        mine = {}
        for period, mime, status, max_len in entries:
            sx = suffixes((period, mime, status))
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
    for full, (n, total, largest) in per_key.items():
        if n > 1:
            yield full, stats.correction(n - 1, total - largest)
