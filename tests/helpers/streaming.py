"""The job's three steps through its task functions (profiler.runtime.task), with a shuffle as
Hadoop Streaming's: a task's lines hash-partitioned by key, each partition sorted by key only (a
key's lines in any order), reduce tasks given numbers in their environment as Hadoop gives them,
their input cut into buffers anywhere."""

import zlib

import orjson

from profiler.formats import inputs
from profiler.job.bigsums import MAX_TOTAL
from profiler.job.lines import key_of, split_lines
from profiler.run.profile import encoded_path
from profiler import contract
from profiler.runtime import task


def manifest_lines(paths, split_size):
    """The manifest lines of paths cut into splits of about split_size bytes, as the client writes them."""
    splits = inputs.plan_splits([inputs.sniff(p) for p in paths], split_size, 1)
    return [orjson.dumps(dict(encoded_path(s), max_bytes=MAX_TOTAL // len(splits))) for s in splits]


class Counts(dict):
    """A step's counters, {group: {counter: amount}}, by mrjob's increment_counter signature."""

    def __call__(self, group, counter, amount=1):
        inner = self.setdefault(group, {})
        inner[counter] = inner.get(counter, 0) + amount


def run_streaming(manifest_lines, policy, rng, reducers=3, salt_after=0, table_limit=contract.TABLE_LIMIT,
                  numbers=None):
    """(the profile lines, the counters of each step) of the job over manifest lines (one map
    task each). numbers: the reduce tasks' numbers (rng's when None: some absent, some shared)."""
    counters = [Counts(), Counts(), Counts()]
    outputs = []
    for line in manifest_lines:
        out = []
        task.run_mapper([line], policy, True, out.append, counters[0], {})
        outputs.append(b"".join(out))
    for step in range(3):
        parts = shuffled(outputs, reducers, rng)
        outputs = []
        for i, data in enumerate(parts):
            number = numbers[i] if numbers is not None else rng.choice([i, i, rng.randrange(reducers), None])
            environ = {} if number is None else {rng.choice(contract.TASK_PARTITION_ENVS): str(number)}
            out = []
            task.run_reducer(step, cut(data, rng), policy, table_limit, out.append, counters[step], environ,
                             salt_after if step == 0 else 0)
            outputs.append(b"".join(out))
    return [line for data in outputs for line in split_lines(data)], counters


def shuffled(outputs, reducers, rng):
    """The reduce tasks' inputs of the tasks' outputs: lines by crc32 of their key, sorted by
    key, a key's lines in a random order."""
    parts = [[] for _ in range(reducers)]
    for data in outputs:
        for line in split_lines(data):
            parts[zlib.crc32(key_of(line)) % reducers].append(line)
    for lines in parts:
        rng.shuffle(lines)
        lines.sort(key=key_of)
    return [b"".join(line + b"\n" for line in lines) for lines in parts]


def cut(data, rng):
    """data in buffers of random sizes."""
    pieces, pos = [], 0
    while pos < len(data):
        n = rng.choice([7, 100, 4096, len(data)])
        pieces.append(data[pos:pos + n])
        pos += n
    return pieces
