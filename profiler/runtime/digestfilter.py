"""Which payload digests more than one map record holds: step 1 writes digest records for those only.

Step 2 corrects the digest features of a digest that several URI-Rs hold. A digest record of a
digest that one URI-R holds needs nothing, and step 2 reads past it; in a real archive they are
most of step 1's digest records and most of its output. Where a runner can
hand files from the map tasks to the reducers (the local runner, profiler.runtime.localrunner):

- each map task sets a filter over the digests of the records it writes: two bitmaps, "in one
  record" and "in two or more" (a blocked Bloom filter, profiler/accel/_apfast.c), written to a file;
- the runner merges them into one bitmap of the digests in two or more records of all tasks
  (merge): a digest in two tasks' "one" is in it too;
- step 1's reducers write a digest record only for a digest that bitmap holds.

A digest that two URI-Rs hold is in two records, so it is always in the bitmap, and the profile
is the same bytes. A digest the bitmap holds wrongly (hash bits shared with others) costs one
record that step 2 reads past, as before. The filters need the compiled module: a map task
without it writes none, and without every map task's filter there is no bitmap.
"""

import os

from profiler.accel import fast
from profiler import contract

#: a map task's filter: "<bytes of one bitmap> <path to write it to>"
FILTER_ENV = contract.FILTER_ENV
#: step 1's reduce tasks: the path of the merged "two or more" bitmap
SHARED_ENV = contract.SHARED_ENV

#: the first line of a map task's filter file, and of the merged bitmap's
MAGIC = b"archive-profiler digest filter 1\n"
SHARED_MAGIC = b"archive-profiler shared digests 1\n"
#: bytes of one bitmap: about one per capture (8 bits), a power of two between these
MIN_BYTES = 1 << 13
MAX_BYTES = 8 << 20
#: index bytes per capture assumed when sizing (a CDX line is about 185), and the factor of a
#: compressed file
INPUT_BYTES_PER_CAPTURE = 128
COMPRESSION_FACTOR = 6
#: bytes of each file merged at a time
MERGE_SLICE = 1 << 20


#: a byte of a digest record costs step 2 about this many times a byte of a key record, once the
#: digest records are those of shared digests (measured on the synthetic index)
DIGEST_RECORD_COST = 8


def step2_cost(key):
    """The relative work of a byte of step 2's input under key (its reduce tasks' parts are cut
    to equal work: a part of digest records took 5 times as long as one of key records)."""
    return DIGEST_RECORD_COST if key.startswith(b"D ") else 1


def bitmap_bytes(input_bytes):
    """Bytes of one bitmap for an input of input_bytes (index bytes, compressed ones scaled): 8
    bits per capture, so 4 bits a digest set in 'one' leave about 1 in 1,000 singletons wrongly
    in 'two or more' (1 in 25 at MAX_BYTES and 10M captures)."""
    want = max(1, int(input_bytes) // INPUT_BYTES_PER_CAPTURE)
    size = MIN_BYTES
    while size < want and size < MAX_BYTES:
        size *= 2
    return size


def split_bytes(split):
    """The index bytes of a manifest split ({"path", "start", "end", "compression"}), compressed
    ones scaled; a file whose size is unknown here (a remote one) counts as large."""
    if split.get("end") is not None:
        n = split["end"] - split.get("start", 0)
    else:
        try:
            n = os.path.getsize(split["path"]) - split.get("start", 0)
        except OSError:
            return MAX_BYTES * INPUT_BYTES_PER_CAPTURE
    return n * COMPRESSION_FACTOR if split.get("compression") else n


def _bitmap_size(n):
    """n bytes can be a bitmap: a power of two of 64-byte blocks (profiler/accel/_apfast.c)."""
    return n >= 64 and n & (n - 1) == 0


def task_filter(environ=os.environ):
    """(filter, path) for a map task that FILTER_ENV asks to write one, or None: the filter is a
    bytearray of its two bitmaps for the compiled aggregator and digest_filter_add."""
    spec = environ.get(FILTER_ENV)
    if not spec or fast.load() is None:
        return None
    size, _, path = spec.partition(" ")
    try:
        size = int(size)
    except ValueError:
        return None
    if not path or not _bitmap_size(size):
        return None
    return bytearray(2 * size), path


def write_filter(filter_, path):
    """A map task's filter to path, atomically (a partial file is never read as a filter)."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(MAGIC)
        f.write(filter_)
    os.replace(tmp, path)


def merge(paths, out_path, chunk=MERGE_SLICE):
    """The map tasks' filters (paths) -> out_path, the bitmap of the digests in two or more
    records of them all: for each task in turn two |= its two | (one & its one); one |= its one
    (in C, chunk bytes of each file at a time). Returns {"tasks", "bytes", "set"} (set: the
    fraction of its bits set), or None, and no file, when a filter is missing, they differ in size
    or there is no compiled module (whose tasks wrote them)."""
    module = fast.load()
    sizes = set()
    for path in paths:
        try:
            sizes.add(os.path.getsize(path))
        except OSError:
            return None
    if module is None or not paths or len(sizes) != 1:
        return None
    size = (sizes.pop() - len(MAGIC)) // 2
    if not _bitmap_size(size):
        return None
    chunk = max(64, chunk - chunk % 64)
    files = []
    try:
        for path in paths:
            files.append(open(path, "rb", buffering=0))
            if files[-1].read(len(MAGIC)) != MAGIC:
                return None
        tmp = out_path + ".tmp"
        set_bits = 0
        with open(tmp, "wb") as out:
            out.write(SHARED_MAGIC)
            for start in range(0, size, chunk):
                n = min(chunk, size - start)
                one, two, its_one, its_two = (bytearray(n) for _ in range(4))
                for f in files:
                    f.seek(len(MAGIC) + start)
                    got = f.readinto(its_one)
                    f.seek(len(MAGIC) + size + start)
                    if got != n or f.readinto(its_two) != n:
                        return None
                    in_two = module.digest_filter_merge(one, two, its_one, its_two)
                out.write(two)
                set_bits += in_two
        os.replace(tmp, out_path)
    finally:
        for f in files:
            f.close()
        if os.path.exists(out_path + ".tmp"):
            os.unlink(out_path + ".tmp")
    return {"tasks": len(paths), "bytes": size, "set": set_bits / (8 * size)}


def load_shared(environ=os.environ):
    """The merged bitmap SHARED_ENV names, or None (none named, or not a merged bitmap)."""
    path = environ.get(SHARED_ENV)
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    bitmap = data[len(SHARED_MAGIC):]
    if not data.startswith(SHARED_MAGIC) or not _bitmap_size(len(bitmap)):
        return None
    return bitmap
