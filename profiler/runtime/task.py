"""A task of the profile job as its runner starts it: its command line, input and environment.

mrjob's local and Hadoop runners start a task as ``profile_job.py --step-num=N --mapper|--reducer
--policy-json ...``; ``main`` runs it without importing mrjob.job (its import and argument
parser were most of a task's start). What the runner tells a task beyond its command line (the
byte range or merge plan of its input, the digest filters) comes through the environment
(profiler.contract); this module turns it into plain arguments of the job's steps
(profiler.job.steps). A command line ``main`` does not know is left to mrjob. Counters are
written to stderr as mrjob's increment_counter writes them (Hadoop streaming's
``reporter:counter:`` lines).
"""

import functools
import os
import stat
import sys

import orjson

from profiler.accel import fast
from profiler.job import hotdigests, steps
from profiler.job.progress import ReduceProgress
from profiler.job.kernels import Kernels
from profiler.model.policy import Policy
from profiler import contract, plugins
from profiler.runtime import digestfilter, remote


def run_mapper(manifest_lines, policy, resolve_revisits, write, count, environ=os.environ):
    """A map task: its splits' records, and the digest filter of its records when the runner
    asks for one."""
    fast.tune_allocator()
    kernels = Kernels(policy)
    wanted = digestfilter.task_filter(environ) if kernels.compiled else None
    steps.map_step(manifest_lines, policy, resolve_revisits, write, count, kernels, remote.open_input,
                   wanted[0] if wanted else None)
    if wanted:
        digestfilter.write_filter(*wanted)


def run_reducer(step_num, chunks, policy, table_limit, write, count, environ=os.environ, salt_after=0):
    """A reduce task of step step_num over its sorted input in buffers; step 1 writes digest
    records only for the digests of the runner's bitmap, when it names one, and with salt_after
    salts the later records of a digest once it has written salt_after of them (its task number
    the salt: profiler.job.hotdigests)."""
    fast.tune_allocator()
    kernels = Kernels(policy)
    shared = digestfilter.load_shared(environ) if step_num == 0 and kernels.compiled else None
    salter = hotdigests.TaskSalter(write, task_number(environ), salt_after) if step_num == 0 and salt_after else None
    steps.reduce_step(step_num, chunks, policy, table_limit, write, count, kernels, shared, salter)


def salt_after(opts):
    """The records of one digest a step-1 reduce task writes before it salts the rest, of the
    job's options ({dest: value}, profiler.contract); 0: it salts none."""
    if opts["hot_digests"] != "local":
        return 0
    return opts["hot_digest_records"] or contract.TASK_HOT_DIGEST_RECORDS


def task_number(environ):
    """The task's number among its step's reduce tasks, as the runner sets it (0 when it does not)."""
    for name in contract.TASK_PARTITION_ENVS:
        value = environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 0


def input_chunks(paths, stdin, size=4 << 20, environ=os.environ, progress=None, stage="merge"):
    """A task's input in buffers of bytes, read as mrjob's MRJob._read_input reads its lines:
    stdin for '-' (or no path), .gz and .bz2 files decompressed; of stdin only the byte range
    RANGE_ENV gives, when it is set, or the merged lines of the plan stdin holds, when
    MERGE_ENV is set (its CPU logged under stage: profiler.runtime.cpulog). progress (a
    profiler.job.progress.ReduceProgress) reports the bytes read where their total is known."""
    report = progress.chunks if progress is not None else (lambda chunks, total: chunks)
    span = environ.get(contract.RANGE_ENV)
    for path in paths or ["-"]:
        if path == "-":
            if environ.get(contract.MERGE_ENV):
                from profiler.runtime import cpulog, presorted
                plan = presorted.loads(stdin.read())
                total = sum(s[2] for s in plan.streams) + sum(len(line) + 1 for line in plan.tail)
                yield from report(cpulog.timed_chunks(presorted.merged_chunks(plan, size), stage, environ), total)
            elif span:
                start, end = map(int, span.split())
                stdin.seek(start)
                yield from report(read_upto(stdin, end - start, size), end - start)
            else:
                yield from report(iter(functools.partial(stdin.read, size), b""), _left(stdin))
            continue
        with open(path, "rb") as f:
            if path.endswith((".gz", ".bz2")):
                from mrjob.cat import decompress
                yield from decompress(f, path)
            else:
                yield from report(iter(functools.partial(f.read, size), b""), _left(f))


def _left(f):
    """Bytes of a regular file from its position to its end (None: a pipe, or not known)."""
    try:
        st = os.fstat(f.fileno())
        return st.st_size - f.tell() if stat.S_ISREG(st.st_mode) else None
    except (OSError, AttributeError, ValueError):
        return None


def read_upto(f, left, size):
    """At most left bytes of f from its position, in buffers of at most size bytes."""
    while left > 0:
        data = f.read(min(size, left))
        if not data:
            return
        left -= len(data)
        yield data


def parse(argv):
    """The options of a task command line ProfileJob's mrjob would run, or None for any other."""
    try:
        opts, rest = contract.parse_options(argv)
    except ValueError:
        return None
    opts.update(step_num=None, task=None)
    args = iter(rest)
    try:
        for arg in args:
            name, eq, value = arg.partition("=")
            if name == "--step-num":
                opts["step_num"] = int(value if eq else next(args))
            elif arg in ("--mapper", "--reducer"):
                if opts["task"]:
                    return None
                opts["task"] = arg[2:]
            else:
                return None
    except (StopIteration, ValueError):
        return None
    known = {"mapper": (0,), "reducer": (0, 1, 2)}
    if opts["step_num"] not in known.get(opts["task"], ()):
        return None
    return opts


def counter_writer(stream):
    """count(group, counter, amount) writing Hadoop streaming's counter lines to stream."""
    def count(group, counter, amount=1):
        stream.write(("reporter:counter:%s,%s,%d\n" % (group.replace(",", ";"), counter.replace(",", ";"),
                                                        amount)).encode("utf-8"))
        stream.flush()
    return count


def main(argv, stdin=None, stdout=None, stderr=None):
    """Run the task of a command line; False when it is not one of the job's task lines."""
    opts = parse(argv)
    if opts is None:
        return False
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    count = counter_writer(stderr or sys.stderr.buffer)
    plugins.load()
    policy = Policy.from_dict(orjson.loads(opts["policy_json"]), "--policy-json")
    if opts["task"] == "mapper":
        run_mapper(stdin, policy, opts["resolve_revisits"], stdout.write, count)
    else:
        progress = ReduceProgress(opts["step_num"], task_number(os.environ))
        chunks = input_chunks([], stdin, progress=progress, stage="merge%d" % (opts["step_num"] + 1))
        run_reducer(opts["step_num"], chunks, policy, opts["table_limit"], stdout.write, count,
                    salt_after=salt_after(opts))
    stdout.flush()
    return True
