"""The profile job's map and reduce tasks over raw lines, without mrjob's per-line protocol.

mrjob's run_mapper/run_reducer decode every input line into a (key, value) pair, group the
pairs with Python generators and write every output pair with two writes. On 1M captures
that was about half of the step-1 and step-2 reducers' time. These functions do what the
job's mapper and reducer methods do (profile_job.py wires both; the Spark harness calls the
methods through mrjob's reduce_pairs), on lines ``key<TAB>JSON`` read as bytes:

- the map side's records are joined into one write per flush;
- step 1 hands each URI-R's cell lists to the expander, whose records come back as lines;
- step 2 parses only what it uses: a digest held by one URI-R (almost all of them) needs no
  correction and is skipped unread, a key record with no other record of its key is copied;
  the corrections of a shared digest are made by the compiled Expander when there is one.

Records are the same as the methods', so the profile is the same bytes.
"""

import itertools

import orjson

from profiler import digests, fast, stats
from profiler.keys import SuffixTable

META = b"!meta"


def key_of(line):
    """The raw key of a key<TAB>value line (mrjob's, for grouping)."""
    return line.partition(b"\t")[0]


def value_of(line):
    """The decoded JSON value of a key<TAB>value line."""
    return orjson.loads(line.partition(b"\t")[2])


def lines_of(pairs):
    """key<TAB>value lines of (key, value) pairs; a bytes value is JSON already."""
    return b"".join([key + b"\t" + (value if value.__class__ is bytes else orjson.dumps(value)) + b"\n"
                     for key, value in pairs])


def merge_meta(values):
    """The task counts (captures, skip reasons) of several !meta records, summed."""
    total = {}
    for value in values:
        stats.merge_counts(total, value)
    return total


def meta_line(values):
    return META + b"\t" + orjson.dumps(merge_meta(values)) + b"\n"


def map_records(records, write, batch=50000):
    """Write (key, value) records as lines, a batch per write."""
    while True:
        chunk = list(itertools.islice(records, batch))
        if not chunk:
            return
        write(lines_of(chunk))


def reduce_uri_rs(lines, expander, write):
    """Step 1 on sorted lines: every URI-R's cell lists through the expander (profiler.expand
    or the compiled one), merged !meta records; writes key and digest record lines."""
    add_raw = getattr(expander, "add_raw", None)
    close_raw = getattr(expander, "close_raw", None)
    if add_raw is None:
        def add_raw(urlkey, values):
            return lines_of(expander.add(urlkey, values))

        def close_raw():
            return lines_of(expander.close())
    loads = orjson.loads
    for key, group in itertools.groupby(lines, key_of):
        start = len(key) + 1
        values = [loads(line[start:]) for line in group]
        if key == META:
            write(meta_line(values))
        else:
            write(add_raw(key.decode("utf-8"), values))
    write(close_raw())


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
            write(key + b"\t" + orjson.dumps(stats.sum_all(records)) + b"\n")
    write(table_lines(table))
    if compiled is not None:
        write(compiled.close_raw())


def table_lines(table):
    """Lines of a table of corrections: K profile-key<TAB>record."""
    return b"".join([b"K " + key.encode("utf-8") + b"\t" + orjson.dumps(record) + b"\n"
                     for key, record in table.items()])
