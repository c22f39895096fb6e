"""The profile job's tasks as plain functions, and a task's command line run without mrjob.

ProfileJob (jobs/profile_job.py) wires the functions to mrjob's steps. A task's command line,
what mrjob's local and Hadoop runners run (``profile_job.py --step-num=N --mapper|--reducer
--policy-json ...``), is run by ``main`` directly: importing mrjob.job and building its argument
parser were most of a task's start, in every task. A
command line ``main`` does not know is left to mrjob. Counters are written to stderr the way
mrjob's increment_counter writes them (Hadoop streaming's ``reporter:counter:`` lines).
"""

import os
import sys

import orjson

from profiler.accel import fast
from profiler.job import mapside, rawsteps
from profiler.model.policy import Policy
from profiler.runtime import contract, digestfilter, remote

META = rawsteps.META
#: entries per reducer table before it is flushed or spilled (the memory bound of steps 1 and 2)
TABLE_LIMIT = contract.TABLE_LIMIT


def counted(records, count):
    """The map side's records, the skip reasons and captures of their !meta records counted."""
    for key, value in records:
        if key == META:
            for reason, n in value["skipped"].items():
                count("skipped", reason, n)
            count("profile", "captures", value["captures"])
        yield key, value


def map_task(manifest_lines, policy, resolve_revisits, write, count, environ=os.environ):
    """Step 1's map task: the splits of manifest lines -> record lines, a batch per write; and
    the digest filter of its records when the runner asks for one (profiler.runtime.digestfilter)."""
    fast.tune_allocator()
    wanted = digestfilter.task_filter(environ)
    filter_ = wanted[0] if wanted else None
    records = (pair for line in manifest_lines
               for pair in counted(mapside.map_split(line.rstrip(b"\r\n"), policy.period_len, resolve_revisits,
                                                     remote.open_input, True, filter_), count))
    with rawsteps.no_cycle_collection():
        rawsteps.map_records(records, write)
    if wanted:
        digestfilter.write_filter(*wanted)


def step1_expander(policy, table_limit, count):
    """Step 1's reducer logic for a task (profiler.accel.fast.expander), counted by kind."""
    count("tasks", "step-1 reducers (%s)" % fast.kind(), 1)
    return fast.expander(policy, table_limit)


def reduce_task(step_num, chunks, policy, table_limit, write, count, environ=os.environ):
    """Reduce task of step step_num (0, 1, 2) over its sorted input in buffers (rawsteps); step 1
    writes digest records only for the digests of the runner's bitmap, when it names one
    (profiler.runtime.digestfilter)."""
    fast.tune_allocator()
    with rawsteps.no_cycle_collection():
        if step_num == 0:
            expander = step1_expander(policy, table_limit, count)
            shared = digestfilter.load_shared(environ) if hasattr(expander, "set_shared_digests") else None
            if shared is not None:
                expander.set_shared_digests(shared)
            rawsteps.reduce_uri_r_chunks(chunks, expander, write)
            if shared is not None:
                count("digest filter", "digest records not written (one map record)", expander.digests_held_back)
        elif step_num == 1:
            rawsteps.reduce_digests_and_keys_chunks(chunks, policy, table_limit, write)
        else:
            rawsteps.reduce_profile_lines_chunks(chunks, write)


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


def main(argv, stdin=None, stdout=None, stderr=None):
    """Run the task of a command line; False when it is not one of the job's task lines."""
    opts = parse(argv)
    if opts is None:
        return False
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    stderr = stderr or sys.stderr.buffer

    def count(group, counter, amount=1):
        stderr.write(("reporter:counter:%s,%s,%d\n" % (group.replace(",", ";"), counter.replace(",", ";"),
                                                         amount)).encode("utf-8"))
        stderr.flush()

    policy = Policy.from_dict(orjson.loads(opts["policy_json"]), "--policy-json")
    if opts["task"] == "mapper":
        map_task(stdin, policy, opts["resolve_revisits"], stdout.write, count)
    else:
        reduce_task(opts["step_num"], rawsteps.input_chunks([], stdin), policy, opts["table_limit"],
                    stdout.write, count)
    stdout.flush()
    return True
