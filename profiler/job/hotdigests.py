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
SALTED_MOST = 10000


class TaskSalter:
    """A step-1 reduce task's writer that salts the later records of the digests it writes often.

    ``write`` takes buffers of whole lines; the digest records in them (found by a regular
    expression: no Python runs for a buffer without one) are counted per digest, in a table of
    at most ``counted`` digests (when full, those counted least are forgotten: a digest then
    reaches the threshold later, which changes only where its records go). A digest's first
    threshold - 1 records keep their key; from its threshold-th on they are keyed ``S <task>
    <digest>``, and one marker record goes to the digest's group. At most ``salted_most``
    digests are salted: memory is bounded whatever the input."""

    def __init__(self, write, task, threshold, counted=COUNTED, salted_most=SALTED_MOST):
        self.out, self.prefix, self.threshold = write, SALTED + b"%d " % task, max(1, threshold)
        self.counted, self.salted_most = counted, salted_most
        self.counts, self.hot, self.records_salted = {}, set(), 0

    def write(self, data):
        if data.startswith(DIGEST):
            self.out(_DIGEST_RECORD.sub(self._record, b"\n" + data)[1:])
        else:
            self.out(_DIGEST_RECORD.sub(self._record, data))

    def _record(self, match):
        """A digest record's key (after its newline) as this task writes it."""
        digest = match.group(1)
        if digest in self.hot:
            self.records_salted += 1
            return b"\n" + self.prefix + digest + b"\t"
        n = self.counts.get(digest, 0) + 1
        if n < self.threshold or len(self.hot) >= self.salted_most:
            self.counts[digest] = n
            if len(self.counts) >= self.counted:
                self._forget()
            return match.group(0)
        self.counts.pop(digest, None)
        self.hot.add(digest)
        self.records_salted += 1
        return b"\n" + marker(digest) + self.prefix + digest + b"\t"

    def _forget(self):
        """Forget the digests counted least (seen once, then twice, ...) until half are left."""
        least = 1
        while len(self.counts) > self.counted // 2:
            self.counts = {d: n for d, n in self.counts.items() if n > least}
            least += 1

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
