"""mrjob's local runner, with the client's work between steps done in large copies.

Between steps, mrjob 0.7.4's local runner cuts files in the client, one Python line at a time:
each step's output into input files of map tasks (even for a step without a mapper, where
they are only sorted), and each sorted reducer input into 2 x cores reduce tasks at key
boundaries: serial work while the other cores wait, and twice the reduce tasks to start.
Here a step without a mapper or combiner takes the previous step's output files as they are
(symlinks), and a sorted reducer input is cut into one reduce task per core where mrjob would
cut it (the first key change at or after each multiple of the split size) by seeking; each
reduce task reads its part of the sorted file in place (its byte range in its environment,
profiler.contract.RANGE_ENV), so nothing is copied. When the map outputs are a few long sorted
runs (those of a sorted index; step 1's output), nothing is sorted at all: each reduce task reads
its part of every run merged (profiler.runtime.presorted; contract.MERGE_ENV). Step 1's map tasks set
filters of their records' digests, which the runner merges for step 1's reducers: they write
digest records only for digests of two or more records (profiler.runtime.digestfilter), and step 2's
parts are cut to equal work. A phase's tasks run in the threads of one pool kept for the run
(mrjob forks a pool of processes per phase), the job's own task command lines are forked from a
server that has imported their code (profiler.runtime.forkserver), and files no task reads any more are
deleted while the next tasks run. The tasks get the same
lines, keys never straddle two reduce tasks, and the profile is the same bytes. Tasks that run
this Python use the installed mrjob instead of a zip of it, and the task wrapper skips mrjob's
setup lock when the setup only sets PYTHONPATH (see _bootstrap_mrjob, _setup_cmd_content).
"""

import concurrent.futures
import logging
import os
import sys
import threading
from os.path import dirname

import orjson

from profiler import contract
from profiler.runtime import digestfilter, forkserver, presorted, task
from profiler.runtime.presorted import key_bounds
from profiler.runtime.startup import import_mrjob_bin

import_mrjob_bin()      # without pyspark, which it imports only to find spark-submit

from mrjob.local import LocalMRJobRunner, _TaskFailedException  # noqa: E402
from mrjob.sim import _symlink_or_copy  # noqa: E402

log = logging.getLogger(__name__)

#: what the runner tells its tasks in their environment
INTERNAL_ENV = (contract.RANGE_ENV, contract.MERGE_ENV, digestfilter.FILTER_ENV, digestfilter.SHARED_ENV)


class LocalRunner(LocalMRJobRunner):
    """The local runner (alias 'local') with fast splits; everything else is mrjob's."""

    #: reduce tasks per core and step (mrjob: 2; each task has a start-up cost)
    parts_per_core = 1

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._reduce_ranges = {}    # step -> [(start, end) of each reduce task's part of the sorted file]
        self._pool = self._deleter = self._forks = None
        self._forks_lock = threading.Lock()
        self._ending = False        # interrupted or cleaned up: no task is forked any more
        self._merge_plans = {}      # step -> (presorted.Plan of its map outputs, those outputs)
        self.merged_steps = []      # steps whose reducer input is merged, not sorted (presorted)
        self._filter_bytes = None   # bytes of a bitmap of step 1's digest filters (digestfilter)
        self.digest_filter = None   # the merged filter's figures, when step 1's reducers have one

    def _run_multiple(self, funcs, num_processes=None):
        """A phase's tasks in the threads of one pool kept for the run, each waiting for its task's
        process (mrjob forks a new pool of processes for each of the six phases). After a failed task the others of its phase end before the error is raised."""
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(self._opts["num_cores"] or os.cpu_count() or 1)
        futures = [self._pool.submit(func) for func in funcs]
        try:
            for future in futures:
                future.result()
        except BaseException as e:
            for future in futures:
                future.cancel()
            if isinstance(e, KeyboardInterrupt):        # Ctrl-C or SIGTERM: end the running tasks
                self._kill_tasks()
            concurrent.futures.wait(futures)
            raise

    def _kill_tasks(self):
        with self._forks_lock:
            self._ending = True
            forks, self._forks = self._forks, None
        if forks is not None:
            forks.kill()

    def _invoke_task_func(self, task_type, step_num, task_num):
        """The job's own task command lines forked from a server that has imported their code
        (profiler.runtime.forkserver: no Python start and no imports per task); other tasks as
        mrjob runs them."""
        argv = self._forkable_task_argv(step_num, task_type)
        if argv is None:
            return super()._invoke_task_func(task_type, step_num, task_num)
        name = "ap-%s%d-%d" % ("map" if task_type == "mapper" else "red", step_num + 1, task_num)

        def invoke(stdin, stdout, stderr, wd, env):
            code = self._fork_server().run(argv, wd, env, stdin, stdout, stderr, name)
            if code != 0:
                raise _TaskFailedException(reason="task exited with status %d" % code, step_num=step_num,
                                           num_steps=self._num_steps(), task_type=task_type, task_num=task_num)
        return invoke

    def _forkable_task_argv(self, step_num, task_type):
        """The task's arguments after the job script when a forked child can run it: one of the
        job's task command lines (profiler.runtime.task.parse), on this very Python, whose setup only puts
        the shipped package on PYTHONPATH; else None."""
        if not forkserver.available() or self._task_python_bin() != [sys.executable]:
            return None
        if not all(_is_py_files_export(cmd) for cmd in self._setup + self._py_files_setup()):
            return None
        args = self._substep_args(step_num, task_type)
        script = os.path.basename(self._script_path or "")
        if script not in args:
            return None
        argv = args[args.index(script) + 1:]
        return argv if task.parse(argv) is not None else None

    def _fork_server(self):
        with self._forks_lock:
            if self._ending:        # a pool thread after Ctrl-C or the cleanup: no new server, no new task
                raise RuntimeError("the run is ending")
            if self._forks is None:
                self._forks = forkserver.take_prestarted() or forkserver.ForkServer()
            return self._forks

    def cleanup(self, mode=None):
        with self._forks_lock:
            self._ending = True
            forks, self._forks = self._forks, None
        if forks is not None:
            forks.close()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        if self._deleter is not None:
            self._deleter.shutdown()
            self._deleter = None
        super().cleanup(mode)

    def _sort_reducer_input(self, step_num, num_map_tasks):
        if step_num == 0:
            self._merge_digest_filters(num_map_tasks)
        prev_task_type = "combiner" if self._get_step(step_num).get("combiner") else "mapper"
        inputs = [self._task_output_path(prev_task_type, step_num, n) for n in range(num_map_tasks)]
        plan = self._merge_plan(inputs)
        if plan is not None:        # the reduce tasks read the map outputs merged: nothing to sort
            self._merge_plans[step_num] = (plan, inputs)
            self.merged_steps.append(step_num)
            return
        super()._sort_reducer_input(step_num, num_map_tasks)
        # sorted into one file: the map outputs, and the previous step's output files they link to
        self._delete_soon(inputs)

    def _digest_filter_path(self, name):
        return os.path.join(self._get_local_tmp_dir(), "digest-filters", name)

    def _digest_filter_bytes(self):
        """Bytes of one bitmap of step 1's digest filters, sized for all of step 1's input (0: no
        filters; the input is not a profile's manifests, or a split's size is unknown)."""
        if self._filter_bytes is None:
            total = 0
            try:
                for path in self._input_paths_for_step(0):
                    with open(path, "rb") as f:
                        total += sum(digestfilter.split_bytes(orjson.loads(line)) for line in f if line.strip())
            except (OSError, ValueError, TypeError, AttributeError):   # not the manifests of a profile
                self._filter_bytes = 0
            else:
                self._filter_bytes = digestfilter.bitmap_bytes(total)
        return self._filter_bytes

    def _merge_digest_filters(self, num_map_tasks):
        """Step 1's map tasks' digest filters -> the bitmap its reducers read (profiler.runtime.digestfilter)."""
        paths = [self._digest_filter_path("map-%05d" % n) for n in range(num_map_tasks)]
        out = self._digest_filter_path("shared")
        self.digest_filter = digestfilter.merge(paths, out)
        if self.digest_filter:
            log.info("digest filter of %(tasks)d map tasks: %(bytes)d bytes, %(set).1f%% of its bits set",
                     dict(self.digest_filter, set=100 * self.digest_filter["set"]))
        self._delete_soon([p for p in paths if os.path.exists(p)])

    def _merge_plan(self, inputs):
        """A plan to merge the map outputs when they are in a few long sorted runs (map outputs of a
        sorted index, step 1's output: profiler.runtime.presorted), or None. Only where the sort is GNU sort
        of whole lines, whose order the merge gives (mrjob runs it with LC_ALL=C)."""
        if not _whole_line_sort(self._sort_bin()):
            return None
        return presorted.plan(inputs, threads=self._opts["num_cores"] or os.cpu_count() or 1)

    def _run_reducers(self, step_num, num_reducer_tasks):
        super()._run_reducers(step_num, num_reducer_tasks)
        _, merged = self._merge_plans.get(step_num, (None, []))
        shared = [self._digest_filter_path("shared")] if step_num == 0 and self.digest_filter else []
        self._delete_soon([self._task_input_path("reducer", step_num, n) for n in range(num_reducer_tasks)]
                          + [self._sorted_reducer_input_path(step_num)] + merged + shared)

    def _delete_soon(self, paths):
        """Delete files of this run's temp dir no task reads any more (and the files they link to
        there), in a thread of their own, while the next tasks run: the run's largest files are gone
        before the cleanup at the end, and never on disk all at once. Not when the temp dir is kept
        after the run (--cleanup NONE, for instance: mrjob's _cleanup_mode() says what happens
        after a failure until the job has run, and by default that keeps everything)."""
        if not any(choice in self._opts["cleanup"] for choice in ("ALL", "TMP", "LOCAL_TMP")):
            return
        tmp = os.path.realpath(self._get_local_tmp_dir()) + os.sep
        doomed = set()
        for path in paths:
            target = os.path.realpath(path)
            if target.startswith(tmp):
                doomed.update((path, target))
        if self._deleter is None:
            self._deleter = concurrent.futures.ThreadPoolExecutor(1)
        self._deleter.submit(_unlink_all, doomed)

    def _bootstrap_mrjob(self):
        """mrjob zips itself for every run and puts the zip first on the tasks' PYTHONPATH, for
        clusters without mrjob; from the zip every task compiled the mrjob modules it imported
        (zipimport keeps no bytecode). Tasks that run this very Python (mrjob's default for the
        local runner) have this mrjob installed, with its bytecode: they use it, unless
        --bootstrap-mrjob asks for the zip."""
        if self._opts["bootstrap_mrjob"] is None and self._task_python_bin() == [sys.executable]:
            return False
        return super()._bootstrap_mrjob()

    def _setup_cmd_content(self, setup):
        """mrjob's setup lines, without its file lock when the setup only puts --py-files on
        PYTHONPATH: the lock (one more Python start before each task) keeps
        setup commands of tasks from running at once, and these change no shared file."""
        lines = super()._setup_cmd_content(setup)
        if not all(_is_py_files_export(cmd) for cmd in setup):
            return lines
        return [line for line in lines if not (line.startswith("exec 9>") or "fcntl.flock" in line
                                               or line in ("# obtain exclusive file lock",
                                                           "# release exclusive file lock"))]

    def _split_mapper_input(self, input_paths, step_num):
        step = self._get_step(step_num)
        input_paths = list(input_paths)
        if (step_num == 0 or "mapper" in step or "combiner" in step
                or any(p.endswith((".gz", ".bz2", ".bz")) for p in input_paths)):
            return super()._split_mapper_input(input_paths, step_num)
        # no task reads these: the lines only go to the sort, in any cut
        results = []
        for task_num, path in enumerate(input_paths):
            dest = self._task_input_path("mapper", step_num, task_num)
            self.fs.mkdir(dirname(dest))
            _symlink_or_copy(os.path.abspath(path), dest)
            results.append(dict(file=path, start=0, length=os.path.getsize(path)))
        if not results:
            return super()._split_mapper_input(input_paths, step_num)
        return results

    def _split_reducer_input(self, step_num):
        """No copies: every reduce task's input is a link to the sorted file, and its byte range
        of it is in its environment (contract.RANGE_ENV, see _env_for_task); or, when the step's
        input is merged, its part of the merge plan (contract.MERGE_ENV)."""
        parts = self._num_reducers(step_num) * self.parts_per_core
        if step_num in self._merge_plans:
            cost = None
            if step_num == 1 and self.digest_filter:
                # step 2's work is in its digest records, and one digest may hold most of it: parts
                # of equal work, twice as many, go to whichever core is free
                cost, parts = digestfilter.step2_cost, 2 * parts
            plans = presorted.split(self._merge_plans[step_num][0], parts, cost)
            for task_num, plan in enumerate(plans):
                dest = self._task_input_path("reducer", step_num, task_num)
                self.fs.mkdir(dirname(dest))
                with open(dest, "wb") as f:
                    f.write(presorted.dumps(plan))
            return len(plans)
        path = self._sorted_reducer_input_path(step_num)
        size = os.path.getsize(path)
        bounds = key_bounds(path, size // parts)
        self._reduce_ranges[step_num] = list(zip(bounds, bounds[1:]))
        for task_num in range(len(bounds) - 1):
            dest = self._task_input_path("reducer", step_num, task_num)
            self.fs.mkdir(dirname(dest))
            _symlink_or_copy(os.path.abspath(path), dest)
        return len(bounds) - 1

    def _env_for_task(self, task_type, step_num, task_num, map_split=None):
        env = super()._env_for_task(task_type, step_num, task_num, map_split)
        for name in INTERNAL_ENV:       # only as this run sets them, never from the client's environment
            env.pop(name, None)
        if step_num == 0 and task_type == "mapper" and self._digest_filter_bytes():
            path = self._digest_filter_path("map-%05d" % task_num)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            env[digestfilter.FILTER_ENV] = "%d %s" % (self._digest_filter_bytes(), path)
        elif step_num == 0 and task_type == "reducer" and self.digest_filter:
            env[digestfilter.SHARED_ENV] = self._digest_filter_path("shared")
        ranges = self._reduce_ranges.get(step_num)
        if task_type == "reducer" and step_num in self._merge_plans:
            env[contract.MERGE_ENV] = "1"
        elif task_type == "reducer" and ranges:
            env[contract.RANGE_ENV] = "%d %d" % ranges[task_num]
        return env


def _unlink_all(paths):
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass


def _whole_line_sort(sort_bin):
    """True when sort_bin is GNU sort of whole lines: ``sort`` with at most a buffer size, a
    number of threads or a temporary directory (what the profile job passes is ``sort -S 256M``)."""
    if not sort_bin or os.path.basename(sort_bin[0]) != "sort":
        return False
    args = iter(sort_bin[1:])
    for arg in args:
        if arg in ("-S", "-T", "--buffer-size", "--parallel", "--temporary-directory"):
            if next(args, None) is None:
                return False
        elif not arg.startswith(("-S", "-T", "--buffer-size=", "--parallel=", "--temporary-directory=")):
            return False
    return True


def _is_py_files_export(cmd):
    """True for the setup command mrjob writes for a --py-files path (it sets PYTHONPATH only)."""
    return (len(cmd) == 3 and cmd[0] == "export PYTHONPATH=" and isinstance(cmd[1], dict)
            and cmd[2] == ":$PYTHONPATH")
