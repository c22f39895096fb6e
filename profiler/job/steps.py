"""The profile job's steps, each defined once, over lines: every runner runs these.

1. map (``map_step``): manifest lines -> one record per URI-R and split (profiler.job.mapside);
   reduce by URI-R (``uri_r_step``): revisits resolved, the URI-R's key records and one record
   per (URI-R, digest) (profiler.job.expand).
2. ``digest_step``: key records summed per key; the corrections of digests that several URI-Rs
   hold (profiler.job.digests), or the per-key shares of a digest whose records step 1 spread
   over several groups (profiler.job.hotdigests).
3. ``profile_step``: each key's records (and the corrections its shares add up to) summed into
   its profile line ``key<TAB>{json}``.

Records are ``key<TAB>JSON`` lines (profiler.job.lines). A reduce step reads its sorted input as
buffers of bytes; the compiled kernels read most lines themselves and leave the runs they do not
take (!meta, JSON with escapes or non-ASCII text) to the Python code, which gives the same
records. Which kernels run is chosen once (profiler.job.kernels).
"""

import itertools

from profiler import jsonnum
from profiler.io.readers import lines_of_chunks
from profiler.job import digests, hotdigests, mapside
from profiler.job.kernels import Kernels
from profiler.job.lines import (LONG_RUN, META, key_of, lines_of, map_records, meta_line, no_cycle_collection,
                                runs_left, value_of)
from profiler.model import stats


def counted(records, count):
    """The map side's records, the skip reasons and captures of their !meta records counted."""
    for key, value in records:
        if key == META:
            for reason, n in value["skipped"].items():
                count("skipped", reason, n)
            count("profile", "captures", value["captures"])
        yield key, value


def map_step(manifest_lines, policy, resolve_revisits, write, count, kernels=None, opener=open, sketch=None):
    """Map: the splits of manifest lines -> record lines, a batch per write. ``sketch``: a digest
    filter the records' digests go into (profiler.runtime.digestfilter), or None."""
    kernels = kernels or Kernels(policy)
    records = (pair for line in manifest_lines
               for pair in counted(mapside.map_split(line.rstrip(b"\r\n"), policy, kernels, resolve_revisits,
                                                     opener, True, sketch), count))
    with no_cycle_collection():
        map_records(records, write)


def uri_r_step(chunks, expander, write):
    """Reduce by URI-R over sorted buffers: every URI-R's cell lists through the expander
    (profiler.job.expand's, or the compiled one, which reads the buffers itself and leaves the
    runs of lines it does not take), merged !meta records; writes key and digest record lines."""
    feed = getattr(expander, "feed", None)
    with no_cycle_collection():
        if feed is None:
            return uri_r_lines(lines_of_chunks(chunks), expander, write)
        for lines in runs_left(chunks, feed, write):
            _add_uri_rs(lines, expander.add_raw, write)
        write(expander.close_raw())


def uri_r_lines(lines, expander, write):
    """Reduce by URI-R on sorted lines (uri_r_step, a line at a time)."""
    add_raw = getattr(expander, "add_raw", None)
    if add_raw is None:
        _add_uri_rs(lines, lambda urlkey, values: lines_of(expander.add(urlkey, values)), write)
        write(lines_of(expander.close()))
    else:
        _add_uri_rs(lines, add_raw, write)
        write(expander.close_raw())


def _add_uri_rs(lines, add_raw, write):
    loads = jsonnum.loads
    for key, group in itertools.groupby(lines, key_of):
        start = len(key) + 1
        values = [loads(line[start:]) for line in group]
        if key == META:
            write(meta_line(values))
        else:
            write(add_raw(key.decode("utf-8"), values))


def digest_step(chunks, policy, table_limit, write, kernels, count=None):
    """Step 2 over sorted buffers: a compiled Expander's skim_digests() drops the lone digest
    records, copies the lone key records, sums a key's several and reads the groups of digests
    several URI-Rs hold into their corrections, in its own table (almost all lines); the other
    runs of lines (!meta, salted digests' groups, JSON that is not plain) go through digest_lines,
    which reads them with another (it reads a run while the first reads on)."""
    with no_cycle_collection():
        if not kernels.compiled:
            return digest_lines(lines_of_chunks(chunks), policy, table_limit, write, kernels, count)
        skimmer = kernels.expander(table_limit)
        runs = runs_left(chunks, skimmer.skim_digests, write, LONG_RUN)
        digest_lines(itertools.chain.from_iterable(runs), policy, table_limit, write, kernels, count)
        write(skimmer.close_raw())


def digest_lines(lines, policy, limit, write, kernels, count=None):
    """Step 2 on sorted lines: corrections of digests held by several URI-Rs (summed in a table
    of at most limit keys, flushed when full), the shares of salted digests
    (profiler.job.hotdigests), key records summed per key, !meta merged."""
    table = {}
    compiled = kernels.expander(limit) if kernels.compiled else None
    read = digests.reader(policy, limit, compiled)

    def correct(profile_key, record):
        nonlocal table
        stats.add(table, profile_key, record)
        if len(table) >= limit:
            write(table_lines(table))
            table = {}
    shares = 0
    for key, group in itertools.groupby(lines, key_of):
        first = next(group)
        second = next(group, None)
        of_digest = key.startswith(b"D ") or key.startswith(hotdigests.SALTED)
        if second is None:
            if key.startswith(b"D "):
                continue            # one URI-R holds this digest (or a marker alone): nothing to correct
            if key != META and not of_digest:
                write(first if first.endswith(b"\n") else first + b"\n")
                continue
            records = map(value_of, (first,))
        else:
            records = map(value_of, itertools.chain((first, second), group))
        if of_digest:
            shares += _digest_group(key, records, read, write, correct)
        elif key == META:
            write(meta_line(records))
        else:
            write(key + b"\t" + jsonnum.dumps(stats.sum_all(records)) + b"\n")
    write(table_lines(table))
    if compiled is not None:
        write(compiled.close_raw())
    if shares and count is not None:
        count("hot digests", "share records written", shares)


def _digest_group(key, records, read, write, correct):
    """A digest's group in step 2: the shares of a salted group, or of a group that holds a
    marker, written; else its corrections to correct(profile key, record). Returns the shares
    written."""
    records = hotdigests.Unmarked(records)
    held = read(records)
    if not (records.marked or key.startswith(hotdigests.SALTED)):
        for profile_key, record in held.corrections(write):
            correct(profile_key, record)
        return 0
    written = 0
    for lines in hotdigests.share_lines(hotdigests.digest_of(key), held.key_stats()):
        written += lines.count(b"\n")
        write(lines)
    return written


def profile_step(chunks, write, kernels):
    """Step 3 over sorted buffers: the compiled profile_lines() writes each key's profile line
    (its records summed); the other runs of lines go through profile_lines, each written before
    the lines after it, so that the output is in key order as the input is (the client writes
    ordered parts without a merge)."""
    with no_cycle_collection():
        if not kernels.compiled:
            return profile_lines(lines_of_chunks(chunks), write)
        for lines in runs_left(chunks, kernels.module.profile_lines, write):
            profile_lines(lines, write)      # written at once: the output stays in key order


def profile_lines(lines, write, batch=10000):
    """Step 3 on sorted lines: each key's records summed into its profile line
    (``profile-key<TAB>{json}``, the key without 'K '), the corrections of its shares of salted
    digests with them (profiler.job.hotdigests), !meta records merged."""
    out = []
    for key, group in itertools.groupby(lines, key_of):
        records = [value_of(line) for line in group]
        if key == META:
            out.append(meta_line(records))
        else:
            out.append(key[2:] + b"\t" + stats.to_json(stats.sum_all(hotdigests.with_corrections(records))) + b"\n")
        if len(out) >= batch:
            write(b"".join(out))
            out = []
    write(b"".join(out))


def reduce_step(step_num, chunks, policy, table_limit, write, count, kernels=None, shared_digests=None,
                salter=None):
    """The reduce task of step step_num (0: by URI-R, 1: digests and keys, 2: profile lines).
    Step 1 writes through salter (a profiler.job.hotdigests.TaskSalter over write) when there is one."""
    kernels = kernels or Kernels(policy)
    if step_num == 0:
        count("tasks", "step-1 reducers (%s)" % kernels.kind, 1)
        expander = kernels.expander(table_limit)
        if shared_digests is not None:
            expander.set_shared_digests(shared_digests)
        uri_r_step(chunks, expander, write if salter is None else salter.write)
        if shared_digests is not None:
            count("digest filter", "digest records not written (one map record)", expander.digests_held_back)
        if salter is not None:
            salter.count(count)
    elif step_num == 1:
        digest_step(chunks, policy, table_limit, write, kernels, count)
    else:
        profile_step(chunks, write, kernels)


def table_lines(table):
    """Lines of a table of corrections: K profile-key<TAB>record."""
    return b"".join([b"K " + key.encode("utf-8") + b"\t" + jsonnum.dumps(record) + b"\n"
                     for key, record in table.items()])

