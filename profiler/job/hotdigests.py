"""Hot digests: the records of a payload digest that many URI-Rs hold (the empty payload's),
spread over step 2's tasks instead of all meeting in one.

Step 1 gives some of a digest's records a salted key, ``S <salt> <digest>``, so that they group
by salt: the Spark runner salts every record of the digests its driver finds hot
(profiler.runtime.sparksteps); on the other runners a step-1 reduce task salts the records of a
digest it has written often with its own task number (``TaskSalter``), and leaves a marker,
``D <digest><TAB>"S"``, in the digest's own group, where its first records stay.

Step 2 reads a salted group, and a digest's group that holds a marker, as it reads any digest's
records (profiler.job.digests.KeyStats), but writes shares instead of corrections: per profile
key, ``K <profile key><TAB>["<digest>", URI-Rs, sum of lengths, largest]``. A share is keyed as
the key's own records, so it meets them in step 3, whatever the partitioner; there the shares of
a (key, digest) add up (URI-Rs and sums, the largest kept) to the correction one group holding
all the digest's records would make (``with_corrections``). A stats record's first element is an
integer, a share's a string.
"""

import collections
import itertools
import re

from profiler import jsonnum
from profiler.model import stats

DIGEST, SALTED = b"D ", b"S "
#: the value of a marker record (a digest record's value is a JSON list)
MARKER = b'"S"'
#: a digest record's key after a newline (a literal start the regular expression engine looks
#: for fast, where ``^`` with re.M tries every byte); group 1: the digest
_DIGEST_RECORD = re.compile(rb"\nD ([^\t\n]*)\t")

#: digests a TaskSalter counts at most (the least counted are forgotten past it), and salts at most
COUNTED = 50000
SALTED_MOST = 64
#: a TaskSalter counts one digest record in threshold / SAMPLES (at least one in one)
SAMPLES = 16
#: the longest digest a TaskSalter counts (a payload digest is 32 to 64 characters; a longer field
#: is never hot, and the count table stays small whatever an index holds)
LONGEST_DIGEST = 128


class TaskSalter:
    """A step-1 reduce task's writer that salts the records of the digests it writes often.

    ``write`` takes buffers of whole lines. Their digest records are found, counted and salted by
    the regular expression engine and collections.Counter, whose loops are C's: Python runs once
    a buffer, and once for each record it counts, one in ``every`` (threshold // SAMPLES, at
    least 1). Once a digest's count reaches the threshold (its counted records times ``every``),
    one marker record goes to the digest's group and its records, from the buffer that made it
    hot on, are keyed ``S <task> <digest>``: a task keeps about threshold of a digest's records
    in the digest's own group, whatever it holds. The table holds at most
    ``counted`` digests of at most LONGEST_DIGEST bytes (when full, the most counted half stays: a
    digest then reaches the threshold later, which changes only where its records go) and at
    most ``salted_most`` digests are salted: memory is bounded whatever the input."""

    def __init__(self, write, task, threshold, counted=COUNTED, salted_most=SALTED_MOST):
        self.out, self.salted_key = write, b"\n" + SALTED + b"%d " % task + b"\\1\t"
        self.every = max(1, threshold // SAMPLES)
        self.needed = max(1, -(-threshold // self.every))
        self.counted, self.salted_most = counted, salted_most
        self.counts, self.hot, self.pattern = collections.Counter(), set(), None
        self.records_salted = 0
        self._skip = 0              # digest records before the next one counted

    def write(self, data):
        lead = data.startswith(DIGEST)
        text = b"\n" + data if lead else data
        digests = _DIGEST_RECORD.findall(text)
        if digests:
            markers = self._count(digests)
            if self.pattern is not None:
                text, n = self.pattern.subn(self.salted_key, text)
                self.records_salted += n
            text += markers
            data = text[1:] if lead else text
        self.out(data)

    def _count(self, digests):
        """Marker lines of the digests this buffer's counted records make hot."""
        counted = [d for d in digests[self._skip::self.every] if len(d) <= LONGEST_DIGEST]
        self._skip = (self._skip - len(digests)) % self.every
        if not counted:
            return b""
        self.counts.update(counted)
        hot = [d for d in set(counted) if self.counts[d] >= self.needed and d not in self.hot]
        hot = sorted(hot, key=self.counts.__getitem__, reverse=True)[:self.salted_most - len(self.hot)]
        if len(self.counts) >= self.counted:
            self.counts = collections.Counter(dict(self.counts.most_common(self.counted // 2)))
        if not hot:
            return b""
        self.hot.update(hot)
        self.pattern = re.compile(rb"\nD (" + b"|".join(re.escape(d) for d in sorted(self.hot)) + rb")\t")
        return b"".join(marker(d) for d in hot)

    def count(self, count):
        """The task's counters: digests salted, records salted."""
        count("hot digests", "digests salted in a task", len(self.hot))
        count("hot digests", "records salted", self.records_salted)


def marker(digest):
    """The marker line of a digest a task salts: its group holds shares, not all its records."""
    return DIGEST + digest + b"\t" + MARKER + b"\n"


class Unmarked:
    """The records of a digest's group without its markers; ``marked`` says, once they are read,
    whether there was one."""

    def __init__(self, records):
        self.records, self.marked = records, False

    def __iter__(self):
        for record in self.records:
            if record.__class__ is list:
                yield record
            else:
                self.marked = True


def digest_of(key):
    """The digest of a group's key, ``D <digest>`` or ``S <salt> <digest>``."""
    return key[2:] if key.startswith(DIGEST) else key.split(b" ", 2)[2]


def share_lines(digest, key_stats, batch=10000):
    """Buffers of the share lines of a digest's group, batch lines each: key_stats ((profile key,
    URI-Rs, sum of lengths, largest), profiler.job.digests.KeyStats) as
    ``K <profile key><TAB>["<digest>", URI-Rs, sum, largest]``."""
    head = b"\t[" + jsonnum.dumps(digest.decode("latin-1")) + b","     # any bytes: one string in step 3
    key_stats = iter(key_stats)
    while True:
        lines = [b"K " + full.encode("utf-8") + head + b"%d,%d,%d]\n" % (n, total, largest)
                 for full, n, total, largest in itertools.islice(key_stats, batch)]
        if not lines:
            return
        yield b"".join(lines)


def with_corrections(records):
    """A key's records (step 3) with its shares replaced by their corrections: the shares of each
    digest added up (URI-Rs and sums, the largest kept), a digest held by n > 1 URI-Rs under the
    key giving -(n-1) digests and -(sum - largest) dedup bytes (profiler.job.digests)."""
    if all(record[0].__class__ is not str for record in records):
        return records
    kept, by_digest = [], {}
    for record in records:
        if record[0].__class__ is not str:
            kept.append(record)
            continue
        digest, n, total, largest = record
        found = by_digest.get(digest)
        if found is None:
            by_digest[digest] = [n, total, largest]
        else:
            found[0] += n
            found[1] += total
            if largest > found[2]:
                found[2] = largest
    kept.extend(stats.correction(n - 1, total - largest) for n, total, largest in by_digest.values() if n > 1)
    return kept
