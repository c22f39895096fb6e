"""The profile job's map and reduce tasks over raw lines, without mrjob's per-line protocol.

mrjob's run_mapper/run_reducer decode every input line into a (key, value) pair, group the
pairs with Python generators and write every output pair with two writes, which costs more
than the reducers' own work. These functions do what the
job's mapper and reducer methods do (profile_job.py wires both; the Spark harness calls the
methods through mrjob's reduce_pairs), on lines ``key<TAB>JSON`` read as bytes:

- the map side's records are joined into one write per flush (the compiled aggregator writes
  its lines itself);
- step 1 hands each URI-R's cell lists to the expander, whose records come back as lines; the
  compiled Expander reads the input buffers itself (feed()) and leaves Python the runs of
  lines it does not take (!meta, JSON with escapes or non-ASCII text);
- step 2 parses only what it uses: a digest held by one URI-R (almost all of them) needs no
  correction and is skipped unread, a key record with no other record of its key is copied,
  several are summed (all by the compiled skim() when there is one); the corrections of a
  shared digest are made by the compiled Expander when there is one;
- step 3 sums each key's records into its profile line (in C by profile_lines() when there is
  one).

Records are the same as the methods', so the profile is the same bytes.
"""

import contextlib
import functools
import gc
import itertools
import os

from mrjob.cat import decompress

from profiler import jsonnum
from profiler.accel import fast
from profiler.formats.readers import lines_of_chunks
from profiler.job import digests
from profiler.model import stats
from profiler.model.keys import SuffixTable
from profiler.runtime import contract

META = b"!meta"


def key_of(line):
    """The raw key of a key<TAB>value line (mrjob's, for grouping)."""
    return line.partition(b"\t")[0]


def value_of(line):
    """The decoded JSON value of a key<TAB>value line."""
    return jsonnum.loads(line.partition(b"\t")[2])


def lines_of(pairs):
    """key<TAB>value lines of (key, value) pairs; a bytes value is JSON already."""
    return b"".join([key + b"\t" + (value if value.__class__ is bytes else jsonnum.dumps(value)) + b"\n"
                     for key, value in pairs])


def merge_meta(values):
    """The task counts (captures, skip reasons) of several !meta records, summed."""
    total = {}
    for value in values:
        stats.merge_counts(total, value)
    return total


def meta_line(values):
    return META + b"\t" + jsonnum.dumps(merge_meta(values)) + b"\n"


@contextlib.contextmanager
def no_cycle_collection():
    """The cyclic garbage collector off for a task's run: its records make no reference cycles,
    and its passes over the many short-lived tuples and lists cost time for nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def map_records(records, write, batch=50000):
    """Write (key, value) records as lines, a batch per write; a record (None, lines) holds
    lines already and is written as it is."""
    chunk = []
    for key, value in records:
        if key is None:
            if chunk:
                write(lines_of(chunk))
                chunk = []
            write(value)
            continue
        chunk.append((key, value))
        if len(chunk) >= batch:
            write(lines_of(chunk))
            chunk = []
    if chunk:
        write(lines_of(chunk))


def reduce_uri_rs(lines, expander, write):
    """Step 1 on sorted lines: every URI-R's cell lists through the expander (profiler.job.expand
    or the compiled one), merged !meta records; writes key and digest record lines."""
    add_raw = getattr(expander, "add_raw", None)
    close_raw = getattr(expander, "close_raw", None)
    if add_raw is None:
        def add_raw(urlkey, values):
            return lines_of(expander.add(urlkey, values))

        def close_raw():
            return lines_of(expander.close())
    _reduce_uri_r_lines(lines, add_raw, write)
    write(close_raw())


def reduce_uri_r_chunks(chunks, expander, write):
    """reduce_uri_rs over the input as buffers of bytes: the compiled expander reads the lines
    itself (feed()); the runs of lines it leaves (!meta, cells with escapes) go through the
    expander as reduce_uri_rs hands them. A pure-Python expander gets the lines."""
    feed = getattr(expander, "feed", None)
    if feed is None:
        return reduce_uri_rs(lines_of_chunks(chunks), expander, write)
    for lines in runs_left(chunks, feed, write):
        _reduce_uri_r_lines(lines, expander.add_raw, write)
    write(expander.close_raw())


#: bytes of one key's lines held back for a compiled reader before they go to Python in parts
#: (step 2, whose groups stream through Python: a digest most URI-Rs hold is one long run)
LONG_RUN = 4 << 20


def runs_left(chunks, read, write, long_run=None):
    """Buffers of sorted lines through a compiled reader read(buf, pos, final) -> (state, pos,
    end, lines) (profiler/accel/_apfast.c): its lines are written; yields the runs of lines of one key
    it leaves to Python (state 1), as lists of lines without their newlines. A key's lines that
    may go on in the next buffer are held back; with long_run, past long_run bytes they go to
    Python in parts instead (and the key's next lines after them), so that memory does not grow
    with the longest run: only for a consumer that groups consecutive runs of one key."""
    tail = b""
    carry = None        # the key of lines given to Python in part: its next lines go there too
    for chunk in itertools.chain(chunks, (None,)):
        final = chunk is None
        buf = tail if final else (tail + chunk if tail else chunk)
        pos = 0
        if carry is not None:
            pos, done = _key_lines_end(buf, carry, final)
            if pos:
                yield split_lines(buf[:pos])
            if not done:
                tail = buf[pos:]
                continue
            carry = None
        while True:
            state, pos, end, out = read(buf, pos, final)
            write(out)
            if state == 0:
                break
            yield split_lines(buf[pos:end])
            pos = end
        tail = buf[pos:]
        if long_run and not final and len(tail) > long_run:
            cut = tail.rfind(b"\n") + 1        # the whole lines held back: one key's
            if cut:
                lines = split_lines(tail[:cut])
                carry = key_of(lines[-1])
                yield lines
                tail = tail[cut:]


def _key_lines_end(buf, key, final):
    """(end of the whole lines of key at the start of buf, whether another key's line or the end
    of the input follows them)."""
    prefix = key + b"\t"
    pos = 0
    while True:
        nl = buf.find(b"\n", pos)
        end = len(buf) if nl < 0 else nl
        if nl < 0 and not final:
            return pos, False                   # a line the next buffer completes
        if pos >= len(buf):
            return pos, True
        if not (buf.startswith(prefix, pos) or buf[pos:end] == key):
            return pos, True
        pos = end + 1 if nl >= 0 else end


def _reduce_uri_r_lines(lines, add_raw, write):
    loads = jsonnum.loads
    for key, group in itertools.groupby(lines, key_of):
        start = len(key) + 1
        values = [loads(line[start:]) for line in group]
        if key == META:
            write(meta_line(values))
        else:
            write(add_raw(key.decode("utf-8"), values))


def split_lines(data):
    """The lines of data, without their newlines (bytes.splitlines would split at a CR too)."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


#: "start end": the byte range of a reduce task's input file that is its own (the local runner
#: lets its reduce tasks read their parts of one sorted file in place: profiler.runtime.localrunner)
RANGE_ENV = contract.RANGE_ENV


#: set when a reduce task's input file is a plan of sorted runs to merge (profiler.runtime.presorted: the
#: local runner's reduce tasks read their parts of the map outputs merged, nothing sorted)
MERGE_ENV = contract.MERGE_ENV


def input_chunks(paths, stdin, size=4 << 20, environ=os.environ):
    """A task's input in buffers of bytes, read as mrjob's MRJob._read_input reads its lines:
    stdin for '-' (or no path), .gz and .bz2 files decompressed; of stdin only the byte range
    RANGE_ENV gives, when it is set, or the merged lines of the plan stdin holds, when
    MERGE_ENV is set."""
    span = environ.get(RANGE_ENV)
    for path in paths or ["-"]:
        if path == "-":
            if environ.get(MERGE_ENV):
                from profiler.runtime import presorted
                yield from presorted.merged_chunks(presorted.loads(stdin.read()), size)
            elif span:
                start, end = map(int, span.split())
                stdin.seek(start)
                yield from _read_upto(stdin, end - start, size)
            else:
                yield from iter(functools.partial(stdin.read, size), b"")
            continue
        with open(path, "rb") as f:
            if path.endswith((".gz", ".bz2")):
                yield from decompress(f, path)
            else:
                yield from iter(functools.partial(f.read, size), b"")


def _read_upto(f, left, size):
    while left > 0:
        data = f.read(min(size, left))
        if not data:
            return
        left -= len(data)
        yield data


def reduce_digests_and_keys(lines, policy, limit, write):
    """Step 2 on sorted lines: corrections of digests held by several URI-Rs (summed in a table
    of at most limit keys, flushed when full), key records summed per key, !meta merged."""
    table = {}
    suffixes = SuffixTable(policy)
    compiled = fast.compiled_expander(policy, limit)
    for key, group in itertools.groupby(lines, key_of):
        first = next(group)
        second = next(group, None)
        if second is None:
            if key.startswith(b"D "):
                continue            # one URI-R holds this digest: nothing was counted twice
            if key != META:
                write(first if first.endswith(b"\n") else first + b"\n")
                continue
            records = map(value_of, (first,))
        else:
            records = map(value_of, itertools.chain((first, second), group))
        if key.startswith(b"D "):
            if compiled is not None:
                found = digests.compiled_corrections(records, compiled, limit, write)
            else:
                found = digests.corrections(records, policy, suffixes, limit)
            for profile_key, record in found:
                stats.add(table, profile_key, record)
                if len(table) >= limit:
                    write(table_lines(table))
                    table = {}
        elif key == META:
            write(meta_line(records))
        else:
            write(key + b"\t" + jsonnum.dumps(stats.sum_all(records)) + b"\n")
    write(table_lines(table))
    if compiled is not None:
        write(compiled.close_raw())


def reduce_digests_and_keys_chunks(chunks, policy, limit, write):
    """reduce_digests_and_keys over the input as buffers of bytes: the compiled skim() drops the
    lone digest records, copies the lone key records and sums a key's several (almost all
    lines); the other runs of lines go through reduce_digests_and_keys."""
    module = fast.load()
    if module is None:
        return reduce_digests_and_keys(lines_of_chunks(chunks), policy, limit, write)
    runs = runs_left(chunks, module.skim, write, LONG_RUN)
    reduce_digests_and_keys(itertools.chain.from_iterable(runs), policy, limit, write)


def reduce_profile_lines(lines, write, batch=10000):
    """Step 3 on sorted lines: each key's records summed into its profile line
    (``profile-key<TAB>{json}``, the key without 'K '), !meta records merged."""
    out = []
    for key, group in itertools.groupby(lines, key_of):
        records = [value_of(line) for line in group]
        if key == META:
            out.append(meta_line(records))
        else:
            out.append(key[2:] + b"\t" + stats.to_json(stats.sum_all(records)) + b"\n")
        if len(out) >= batch:
            write(b"".join(out))
            out = []
    write(b"".join(out))


def reduce_profile_lines_chunks(chunks, write):
    """reduce_profile_lines over the input as buffers of bytes: the compiled profile_lines()
    writes each key's profile line (its records summed); the other runs of lines go through
    reduce_profile_lines, each written before the lines after it, so that the output is in key
    order as the input is (the client writes ordered parts without a merge)."""
    module = fast.load()
    if module is None:
        return reduce_profile_lines(lines_of_chunks(chunks), write)
    for lines in runs_left(chunks, module.profile_lines, write):
        reduce_profile_lines(lines, write)      # written at once: the output stays in key order


def table_lines(table):
    """Lines of a table of corrections: K profile-key<TAB>record."""
    return b"".join([b"K " + key.encode("utf-8") + b"\t" + jsonnum.dumps(record) + b"\n"
                     for key, record in table.items()])
