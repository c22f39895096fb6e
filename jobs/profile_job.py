"""Archive profile job: CDX/CDXJ splits -> exact profile lines, in three steps.

1. map: parse a split, aggregate captures per URI-R; reduce by URI-R: resolve
   revisits, expand keys, emit key records and one record per (URI-R, digest).
2. reduce by key or digest: sum key records, correct digests shared by URI-Rs.
3. reduce by key: sum, write ``key<TAB>{json}``.

The input is a manifest: one JSON split description per line (see profiler.formats.inputs).
Each step is defined once in profiler.job.steps; a task's command line runs it without mrjob
(profiler.runtime.task, below).
"""

import sys

if __name__ == "__main__":
    from profiler.runtime import task
    if task.main(sys.argv[1:]):        # a task: done without importing mrjob.job (a slow import)
        sys.exit(0)

from profiler import jsonnum  # noqa: E402
from mrjob.job import MRJob  # noqa: E402
from mrjob.protocol import BytesValueProtocol  # noqa: E402
from mrjob.step import MRStep  # noqa: E402

from profiler.job import digests, mapside, steps  # noqa: E402
from profiler.job.kernels import Kernels  # noqa: E402
from profiler.job.lines import META, merge_meta  # noqa: E402
from profiler.model import stats  # noqa: E402
from profiler.runtime import contract, remote, task  # noqa: E402
from profiler.model.keys import SuffixTable  # noqa: E402
from profiler.model.policy import Policy  # noqa: E402
from profiler.job.protocol import RawKeyJsonValueProtocol, RawLineProtocol  # noqa: E402

TABLE_LIMIT = steps.TABLE_LIMIT


class ProfileJob(MRJob):
    INPUT_PROTOCOL = BytesValueProtocol
    INTERNAL_PROTOCOL = RawKeyJsonValueProtocol
    OUTPUT_PROTOCOL = RawLineProtocol

    def configure_args(self):
        super().configure_args()
        for option in contract.OPTIONS:
            args, kwargs = option.argparse()
            self.add_passthru_arg(*args, **kwargs)

    def steps(self):
        return [
            MRStep(mapper=self.map_split, reducer_init=self.init_uri_r,
                   reducer=self.reduce_uri_r, reducer_final=self.final_uri_r),
            MRStep(reducer_init=self.init_keys, reducer=self.reduce_digests_and_keys,
                   reducer_final=self.final_keys),
            MRStep(reducer=self.reduce_profile_lines),
        ]

    def run_mapper(self, step_num=0):
        """Step 1's map task writes its records in batches (profiler.job.steps)."""
        if step_num != 0:
            return super().run_mapper(step_num)
        task.run_mapper(self._read_input(), self.policy, self.options.resolve_revisits, self.stdout.write,
                        self.increment_counter)

    def run_reducer(self, step_num=0):
        """The reducers read and write raw lines (profiler.job.steps): the records of the reducer
        methods below (which the Spark harness calls) without mrjob's per-line protocol."""
        task.run_reducer(step_num, task.input_chunks(self.options.args, self.stdin), self.policy,
                         self.options.table_limit, self.stdout.write, self.increment_counter)

    def _runner_class(self):
        # mrjob's local runner, cutting files between steps in large copies (profiler.runtime.localrunner)
        if self.options.runner == "local":
            from profiler.runtime.localrunner import LocalRunner
            return LocalRunner
        if self.options.runner == "spark":      # the job's own Spark program, any master (profiler.runtime.sparkrunner)
            from profiler.runtime.sparkrunner import SparkRunner
            return SparkRunner
        return super()._runner_class()

    @property
    def policy(self):
        if not hasattr(self, "_policy"):
            self._policy = Policy.from_dict(jsonnum.loads(self.options.policy_json), "--policy-json")
        return self._policy

    # step 1
    @property
    def kernels(self):
        if not hasattr(self, "_kernels"):
            self._kernels = Kernels(self.policy)
        return self._kernels

    def map_split(self, _, manifest_line):
        return steps.counted(mapside.map_split(manifest_line, self.policy, self.kernels, self.options.resolve_revisits,
                                               remote.open_input), self.increment_counter)

    def init_uri_r(self):
        self.increment_counter("tasks", "step-1 reducers (%s)" % self.kernels.kind, 1)
        self.expander = self.kernels.expander(self.options.table_limit)

    def reduce_uri_r(self, urlkey, cell_lists):
        if urlkey == META:
            yield META, merge_meta(cell_lists)
            return
        yield from self.expander.add(urlkey.decode("utf-8"), cell_lists)

    def final_uri_r(self):
        yield from self.expander.close()

    # step 2
    def init_keys(self):
        self.table = {}
        self.suffixes = SuffixTable(self.policy)

    def reduce_digests_and_keys(self, key, values):
        if key == META:
            yield META, merge_meta(values)
        elif key.startswith(b"D "):
            # a digest that most hosts hold touches keys in proportion to the archive: the
            # corrections spill past the table limit, and the table is flushed within a digest
            limit = self.options.table_limit
            for profile_key, record in digests.corrections(values, self.policy, self.suffixes, limit):
                stats.add(self.table, profile_key, record)
                if len(self.table) >= limit:
                    yield from self.final_keys()
        else:
            yield key, stats.sum_all(values)

    def final_keys(self):
        table, self.table = self.table, {}
        for profile_key, record in table.items():
            yield b"K " + profile_key.encode("utf-8"), record

    # step 3
    def reduce_profile_lines(self, key, values):
        if key == META:
            yield META, jsonnum.dumps(merge_meta(values))
        else:
            yield key[2:], stats.to_json(stats.sum_all(values))


if __name__ == "__main__":
    ProfileJob.run()
