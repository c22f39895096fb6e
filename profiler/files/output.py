"""The CDXJ profile file (spec section 4): header lines, sorted merge of job parts, atomic write."""

import datetime
import heapq
import operator
import os
import shutil

from profiler import GENERATOR, jsonnum
from profiler.accel import fast
from profiler.files import outfiles
from profiler.io.readers import whole_lines
from profiler.model import criteria

CONTEXT = ["http://oduwsdl.github.io/contexts/archiveprofiles"]
META_KEY = b"!meta"


def keys_of(policy_dict):
    """The !keys of a profile made with a policy (as Policy.to_dict gives it): 'surt' and the
    policy's criteria, in key order."""
    return ["surt"] + [c.name for c in criteria.of_levels(policy_dict.get("levels") or {})]


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


class Tally:
    """What a profile's writer wrote, counted as it goes: lines, bytes and the values of the line
    whose key is root (the '*' line: the whole archive's figures), so that a summary needs no
    file to read back (standard output, or a copy on a cluster's filesystem)."""

    def __init__(self, root):
        self.marker = b"\n" + root + b" {"
        self.lines = self.bytes = 0
        self.root = None

    def over(self, out):
        """out (a binary file) with everything written to it counted; counts from zero again."""
        self.lines = self.bytes = 0
        self.root = None
        return _Counted(out, self)


class _Counted:
    def __init__(self, out, tally):
        self.out, self.tally = out, tally
        self.tail = b"\n"                  # the bytes before the next write (a line starts)
        self.taking = None                 # the root line's value, while it is being written

    def write(self, data):
        self.out.write(data)
        tally = self.tally
        tally.bytes += len(data)
        tally.lines += data.count(b"\n")
        if tally.root is None:
            self._look(data)

    def _look(self, data):
        if self.taking is not None:
            end = data.find(b"\n")
            if end < 0:
                self.taking += data
                return
            self._found(self.taking + data[:end])
            return
        buf = self.tail + data
        i = buf.find(self.tally.marker)
        if i >= 0:
            value = buf[i + len(self.tally.marker) - 1:]
            end = value.find(b"\n")
            if end >= 0:
                self._found(value[:end])
            else:
                self.taking = value
        self.tail = buf[-(len(self.tally.marker) - 1):]

    def _found(self, value):
        self.taking = None
        try:
            self.tally.root = jsonnum.loads(value)
        except ValueError:
            self.tally.root = {}


def write_profile(path, part_readers, make_headers, part_paths=None, tally=None):
    """Merge sorted job parts into one byte-wise sorted profile file, atomically.

    ``part_readers`` are zero-argument callables returning an iterable of
    ``key<TAB>value`` lines; ``make_headers(meta)`` returns the '!' lines given the
    job's '!meta' record. Parts that turn out not to be sorted are sorted in memory,
    so the file never depends on the runner's partitioning. Returns the line count.
    ``part_paths``, the same parts as local files, allow a faster path when their key ranges
    follow each other (the local runner's parts): see write_ordered_parts(). ``tally`` (a
    Tally) counts what is written.
    """
    if part_paths:
        try:
            n = write_ordered_parts(path, part_paths, make_headers, tally=tally)
        except UnsortedPart:
            n = None
        if n is not None:
            return n
    for presorted in (True, False):
        pairs = _merged(part_readers, presorted)
        first = next(pairs, None)
        meta = None
        if first is not None and first[0] == META_KEY:
            meta = jsonnum.loads(first[1])
            first = None
        counter = [0]

        def lines():
            for line in profile_lines(make_headers(meta), pairs if first is None else _chain(first, pairs)):
                counter[0] += 1
                yield line
        try:
            write_atomic(path, lines(), tally)
            return counter[0]
        except UnsortedPart:
            continue


def write_ordered_parts(path, part_paths, make_headers, block=1 << 22, tally=None):
    """The profile of local parts whose key ranges do not overlap, checked and written a block
    of lines at a time (no per-line merge). Returns the line count, or None when the ranges
    overlap (hash-partitioned parts: the merge decides); raises UnsortedPart when a part is not
    strictly sorted. The bytes are those of the merge."""
    spans = []
    for p in part_paths:
        first, last = _first_last_keys(p)
        if first is not None:
            spans.append((first, last, p))
    spans.sort()
    if any(a[1] >= b[0] for a, b in zip(spans, spans[1:])):
        return None
    meta = None
    if spans and spans[0][0] == META_KEY:
        with open(spans[0][2], "rb") as f:
            meta = jsonnum.loads(f.readline().rstrip(b"\n").partition(b"\t")[2])
    count = [0]

    def write(out):
        if tally is not None:
            out = tally.over(out)
        headers = list(make_headers(meta))
        for line in headers:
            out.write(line + b"\n")
        count[0] += len(headers)
        previous = [None]
        for _, _, p in spans:
            with open(p, "rb") as f:
                for data in whole_lines(iter(lambda: f.read(block), b"")):
                    _write_block(out, data if data.endswith(b"\n") else data + b"\n", previous, count)
    _atomically(path, write)
    return count[0]


def _write_block(out, data, previous, count):
    """Whole lines data (key<TAB>value, each with its newline) as profile lines, checked to be in
    strictly increasing key order after previous[0] (the compiled ordered_lines() when there is one)."""
    if previous[0] is None and data.startswith(META_KEY + b"\t"):
        data = data[data.index(b"\n") + 1:]            # the job's !meta record: read before, in the headers
    module = fast.load()
    if module is None:
        return _write_lines(out, data[:-1].split(b"\n") if data else [], previous, count)
    done = module.ordered_lines(data, previous[0])
    if done is None:
        raise UnsortedPart(previous[0])
    text, n, previous[0] = done
    out.write(text)
    count[0] += n


def _write_lines(out, lines, previous, count):
    keys = [line.partition(b"\t")[0] for line in lines]
    if not keys:
        return
    if previous[0] is not None and keys[0] <= previous[0] or any(map(operator.ge, keys, keys[1:])):
        raise UnsortedPart(keys[0])
    if keys:
        previous[0] = keys[-1]
        out.write(b"\n".join([line.replace(b"\t", b" ", 1) for line in lines]) + b"\n")   # the key's TAB
        count[0] += len(keys)


def _first_last_keys(path, window=1 << 16):
    """The keys of the first and the last line of a part file (None, None if it is empty)."""
    size = os.path.getsize(path)
    if size == 0:
        return None, None
    with open(path, "rb") as f:
        first = f.readline().partition(b"\t")[0].rstrip(b"\n")
        end = size
        while True:
            start = max(0, end - window)
            f.seek(start)
            data = f.read(size - start).rstrip(b"\n")
            i = data.rfind(b"\n")
            if i >= 0 or start == 0:
                return first, data[i + 1:].partition(b"\t")[0]
            end = start


def _chain(first, rest):
    yield first
    yield from rest


def header_lines(archive_uri, policy_dict, inputs, meta, skipped_files, resolve_revisits, created=None,
                 duplicate_inputs=(), language_detection=None):
    """The '!' lines, in byte order (so ``LC_ALL=C sort -c`` passes on the whole file).
    ``duplicate_inputs``: [{'path', 'same_as'}] of the paths dropped as another's same file;
    ``language_detection``: the detector of --detect-language (profiler.model.detect.meta)."""
    from profiler.io.names import display_name
    created = created or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    meta = meta or {}
    skipped = dict(meta.get("skipped", {}))
    for item in skipped_files:
        skipped["unusable_file"] = skipped.get("unusable_file", 0) + 1
    run_meta = {"inputs": [display_name(p) for p in inputs], "captures": meta.get("captures", 0),
                "skipped": dict(sorted(skipped.items()))}
    if skipped_files:
        run_meta["skipped_files"] = [dict(i, path=display_name(i["path"])) for i in skipped_files]
    if duplicate_inputs:
        run_meta["duplicate_inputs"] = [{"path": display_name(d["path"]), "same_as": display_name(d["same_as"])}
                                        for d in duplicate_inputs]
    about = {"type": "ArchiveProfile", "generator": GENERATOR, "created": created,
             "policy": policy_dict, "revisits": "resolved" if resolve_revisits else "unresolved"}
    keys = keys_of(policy_dict)
    if criteria.LANG.name in keys:
        from profiler.model.language import mapping_version
        about["languages"] = mapping_version()
        if language_detection:
            about["language_detection"] = language_detection
    if policy_dict.get("registered_domains"):
        from profiler.model.domains import list_meta
        about["public_suffix_list"] = list_meta()
    lines = [
        b"!context " + jsonnum.dumps(CONTEXT),
        b"!id " + jsonnum.dumps({"uri": archive_uri}),
        b"!keys " + jsonnum.dumps(keys),
        b"!meta " + jsonnum.dumps(run_meta),
        b"!meta " + jsonnum.dumps(about),
    ]
    return sorted(lines)


def write_atomic(path, lines, tally=None):
    """Write byte lines to path through a temp file and a rename; on failure path is untouched.
    tally: a Tally that counts them."""
    def write(f):
        if tally is not None:
            f = tally.over(f)
        for line in lines:
            f.write(line)
            f.write(b"\n")
    _atomically(path, write)


def copy_atomic(src, dst):
    """Copy the file src to dst through a temp file beside dst and a rename; on failure dst is
    untouched."""
    with open(src, "rb") as f:
        _atomically(dst, lambda out: shutil.copyfileobj(f, out, 1 << 20))


def write_bytes_atomic(path, data):
    """Write bytes (a PNG, a page) to path through a temp file and a rename."""
    _atomically(path, lambda f: f.write(data))


def _atomically(path, write):
    """Write through profiler.files.outfiles: '-' is standard output; links are written through;
    anything but a regular file is refused; temp file beside the target, fsync, rename."""
    outfiles.write(path, write)


def profile_lines(headers, pairs):
    """Header lines, then 'key {json}' lines."""
    yield from headers
    for key, value in pairs:
        yield key + b" " + value
