"""The job's records as lines: ``key<TAB>JSON value``, with raw byte keys, read in buffers.

Every step reads its sorted input as buffers of bytes and writes lines; a compiled reader
(profiler.accel) takes the runs of lines it can and leaves the others to Python (runs_left).
"""

import contextlib
import gc
import itertools

from profiler import jsonnum
from profiler.model import stats

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


def split_lines(data):
    """The lines of data, without their newlines (bytes.splitlines would split at a CR too)."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines
