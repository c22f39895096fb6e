"""Archive profile job: CDX/CDXJ splits -> exact profile lines, in three steps.

1. map: parse a split, aggregate captures per URI-R; reduce by URI-R: resolve
   revisits, expand keys, emit key records and one record per (URI-R, digest).
2. reduce by key or digest: sum key records, correct digests shared by URI-Rs.
3. reduce by key: sum, write ``key<TAB>{json}``.

The input is a manifest: one JSON split description per line (see profiler.formats.inputs).
Each step is defined once in profiler.job.steps; a task's command line runs it without mrjob
(profiler.runtime.task, below).
"""

import os
import sys

if __name__ == "__main__":
    from profiler.runtime import task
    if task.main(sys.argv[1:]):        # a task: done without importing mrjob.job (a slow import)
        sys.exit(0)

from profiler import jsonnum  # noqa: E402
from mrjob.job import MRJob  # noqa: E402
from mrjob.protocol import BytesValueProtocol  # noqa: E402
from mrjob.step import MRStep  # noqa: E402

from profiler.job.progress import ReduceProgress  # noqa: E402
from profiler.job.protocol import RawKeyJsonValueProtocol, RawLineProtocol  # noqa: E402
from profiler.model.policy import Policy  # noqa: E402
from profiler import contract, plugins
from profiler.runtime import task  # noqa: E402


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
        """Three steps: map and reduce by URI-R, reduce by key or digest, reduce by key. Every
        task runs through run_mapper/run_reducer (profiler.job.steps, over raw lines); the
        per-record methods only tell mrjob which tasks each step has."""
        return [MRStep(mapper=self.mapper, reducer=self.reducer), MRStep(reducer=self.reducer),
                MRStep(reducer=self.reducer)]

    def mapper(self, key, value):
        raise NotImplementedError("the profile job's tasks run through run_mapper (profiler.job.steps)")

    def reducer(self, key, values):
        raise NotImplementedError("the profile job's tasks run through run_reducer (profiler.job.steps)")

    def run_mapper(self, step_num=0):
        """Step 1's map task writes its records in batches (profiler.job.steps)."""
        if step_num != 0:
            return super().run_mapper(step_num)
        task.run_mapper(self._read_input(), self.policy, self.options.resolve_revisits, self.stdout.write,
                        self.increment_counter)

    def run_reducer(self, step_num=0):
        """The reducers read and write raw lines (profiler.job.steps), without mrjob's per-line
        protocol."""
        progress = ReduceProgress(step_num, task.task_number(os.environ))
        task.run_reducer(step_num, task.input_chunks(self.options.args, self.stdin, progress=progress), self.policy,
                         self.options.table_limit, self.stdout.write, self.increment_counter,
                         salt_after=task.salt_after(vars(self.options)))

    def _runner_class(self):
        # mrjob's local runner, cutting files between steps in large copies (profiler.runtime.localrunner)
        if self.options.runner == "local":
            from profiler.runtime.localrunner import LocalRunner
            return LocalRunner
        if self.options.runner == "spark":      # the job's own Spark program, any master (profiler.runtime.sparkrunner)
            from profiler.runtime.sparkrunner import SparkRunner
            return SparkRunner
        if self.options.runner in ("emr", "dataproc"):     # the source archive of this version (profiler.runtime.cloudrunners)
            from profiler.runtime import cloudrunners
            return {"emr": cloudrunners.EMRRunner, "dataproc": cloudrunners.DataprocRunner}[self.options.runner]
        return super()._runner_class()

    @property
    def policy(self):
        if not hasattr(self, "_policy"):
            plugins.load()
            self._policy = Policy.from_dict(jsonnum.loads(self.options.policy_json), "--policy-json")
        return self._policy


if __name__ == "__main__":
    ProfileJob.run()
