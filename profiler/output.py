"""The CDXJ profile file (spec section 4): header lines, sorted merge of job parts, atomic write."""

import datetime
import heapq
import os
import tempfile

import orjson

from profiler import GENERATOR

CONTEXT = ["http://oduwsdl.github.io/contexts/archiveprofiles"]
KEYS = ["surt", "datetime", "mime", "status"]
META_KEY = b"!meta"


class UnsortedPart(Exception):
    """A job output part was not sorted by key (raised to fall back to an in-memory sort)."""


def _checked(lines):
    previous = None
    for line in lines:
        key, _, value = line.rstrip(b"\n").partition(b"\t")
        if previous is not None and key <= previous:
            raise UnsortedPart(key)
        previous = key
        yield key, value


def _merged(part_readers, presorted):
    if presorted:
        pairs = heapq.merge(*(_checked(read()) for read in part_readers))
    else:
        pairs = iter(sorted(line.rstrip(b"\n").partition(b"\t")[::2]
                            for read in part_readers for line in read()))
    previous = None
    for key, value in pairs:
        if key == previous:
            raise ValueError("duplicate key in job output: %r" % key)
        previous = key
        yield key, value


def write_profile(path, part_readers, make_headers):
    """Merge sorted job parts into one byte-wise sorted profile file, atomically.

    ``part_readers`` are zero-argument callables returning an iterable of
    ``key<TAB>value`` lines; ``make_headers(meta)`` returns the '!' lines given the
    job's '!meta' record. Parts that turn out not to be sorted are sorted in memory,
    so the file never depends on the runner's partitioning. Returns the line count.
    """
    for presorted in (True, False):
        pairs = _merged(part_readers, presorted)
        first = next(pairs, None)
        meta = None
        if first is not None and first[0] == META_KEY:
            meta = orjson.loads(first[1])
            first = None
        counter = [0]

        def lines():
            for line in profile_lines(make_headers(meta), pairs if first is None else _chain(first, pairs)):
                counter[0] += 1
                yield line
        try:
            write_atomic(path, lines())
            return counter[0]
        except UnsortedPart:
            continue


def _chain(first, rest):
    yield first
    yield from rest


def header_lines(archive_uri, policy_dict, inputs, meta, skipped_files, resolve_revisits, created=None):
    """The '!' lines, in byte order (so ``LC_ALL=C sort -c`` passes on the whole file)."""
    created = created or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    meta = meta or {}
    skipped = dict(meta.get("skipped", {}))
    for item in skipped_files:
        skipped["unusable_file"] = skipped.get("unusable_file", 0) + 1
    run_meta = {"inputs": inputs, "captures": meta.get("captures", 0),
                "skipped": dict(sorted(skipped.items()))}
    if skipped_files:
        run_meta["skipped_files"] = skipped_files
    about = {"type": "ArchiveProfile", "generator": GENERATOR, "created": created,
             "policy": policy_dict, "revisits": "resolved" if resolve_revisits else "unresolved"}
    lines = [
        b"!context " + orjson.dumps(CONTEXT),
        b"!id " + orjson.dumps({"uri": archive_uri}),
        b"!keys " + orjson.dumps(KEYS),
        b"!meta " + orjson.dumps(run_meta),
        b"!meta " + orjson.dumps(about),
    ]
    return sorted(lines)


def write_atomic(path, lines):
    """Write byte lines to path through a temp file and a rename; on failure path is untouched."""
    def write(f):
        for line in lines:
            f.write(line)
            f.write(b"\n")
    _atomically(path, write)


def write_bytes_atomic(path, data):
    """Write bytes (a PNG, a page) to path through a temp file and a rename."""
    _atomically(path, lambda f: f.write(data))


def _atomically(path, write):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def profile_lines(headers, pairs):
    """Header lines, then 'key {json}' lines."""
    yield from headers
    for key, value in pairs:
        yield key + b" " + value
