"""The local runner without mrjob: the job's three steps as tasks forked from the client.

A local run that asks nothing of mrjob (no mrjob config, no mrjob options after '--': what
``usable`` checks) runs here. It runs the same task functions as mrjob's local runner does
(profiler.runtime.localrunner, through profiler.runtime.task), with the same shuffle between
steps: map outputs in a few long sorted runs (a sorted index's; every step's output) are merged
by each reduce task over its range of keys (profiler.runtime.presorted), others sorted by GNU
``sort`` and cut at key boundaries; the map tasks' digest filters are merged for step 1's
reduce tasks (profiler.runtime.digestfilter); step 2's parts are cut to equal work; step 3's
parts hold ranges of keys in order, which the client writes one after another. The profile is
the same bytes.

What it leaves out is the cost of mrjob's runner in the client (its imports, the package zip,
setup wrappers, a task server started as a new Python): a task is a fork of the client, which
has imported the task code and read what the policy's tasks read before the first fork; it names
itself (``ap-map1-0``, ``ap-red2-1``), writes its records to a file and its counters (Hadoop
streaming's ``reporter:counter:`` lines) and any traceback to another, and ends with
``os._exit``. At most ``cores`` tasks run at once; a failed task ends its phase's others and
fails the run (TaskFailed), and so does ^C or SIGTERM in the client (KeyboardInterrupt), after
the running tasks are killed.
"""

import errno
import gc
import logging
import os
import select
import shutil
import signal
import subprocess

import orjson

from profiler import contract
from profiler.job.progress import ReduceProgress
from profiler.runtime import cpulog, digestfilter, forkserver, presorted, task

log = logging.getLogger("archive-profiler.localjob")

#: the job's steps
STEPS = 3
#: what a runner tells its tasks in their environment: only as this run sets them, never from the
#: client's environment
INTERNAL_ENV = (contract.RANGE_ENV, contract.MERGE_ENV, digestfilter.FILTER_ENV, digestfilter.SHARED_ENV) + \
    contract.TASK_PARTITION_ENVS
#: memory of GNU sort, when the map outputs must be sorted (mrjob's local runner: the same)
SORT_BUFFER = "256M"
#: the most map records (bytes) one step-1 reduce task reads, when there are more than one task
#: of them per core: its memory stays bounded whatever the input's size
STEP1_PART_BYTES = 64 << 20
#: the fewest bytes of input a reduce task is given when a step's input is small (a task costs
#: about as much CPU as reducing this much)
MIN_PART_BYTES = 1 << 20
#: bytes of the buffers a reduce task reads its input in (its output per buffer grows with it)
CHUNK = 1 << 20
#: where mrjob looks for a config when none is given (mrjob.conf.find_mrjob_conf): a run with one
#: runs through mrjob, whose options it may set
MRJOB_CONFS = ("~/.mrjob.conf", "/etc/mrjob.conf")


class TaskFailed(RuntimeError):
    """A task of the run failed (one line: the step, the task, its exit status, its last words)."""


def usable(conf_paths=(), extra_args=(), environ=os.environ):
    """Whether a local run with these mrjob configs and arguments after '--' can run here: none of
    either (and none found where mrjob looks by itself), a system that forks, and GNU sort (for
    map outputs that are not in sorted runs)."""
    if conf_paths or extra_args or not hasattr(os, "fork"):
        return False
    if environ.get("MRJOB_CONF") or any(os.path.exists(os.path.expanduser(p)) for p in MRJOB_CONFS):
        return False
    return shutil.which("sort") is not None


class _Task:
    """One task: its name, what it runs in the child (run(write, count)), its output file."""

    def __init__(self, name, run, out):
        self.name, self.run, self.out = name, run, out
        self.err = out + ".err"
        self.pid = self.status = None


class LocalJob:
    """The profile job over manifest files (one split each), in folder (made and left to the caller
    to remove). env: variables every task runs with (bigsums, progress, the pure-Python kernels);
    on_step(number, of): called as each step starts (the progress bar)."""

    def __init__(self, manifest_paths, policy, folder, cores=None, resolve_revisits=True,
                 table_limit=contract.TABLE_LIMIT, env=None, on_step=None):
        self.manifests = list(manifest_paths)
        self.policy, self.folder = policy, folder
        self.cores = max(1, cores or os.cpu_count() or 1)
        self.resolve_revisits, self.table_limit = resolve_revisits, table_limit
        self.env = dict(env or {})
        self.on_step = on_step
        self.counters = [{} for _ in range(STEPS)]
        self.digest_filter = None       # the merged filter's figures, when step 1's reducers have one
        self.merged_steps = []          # steps whose reducer input was merged, not sorted

    # ------------------------------------------------------------ the steps

    def run(self):
        """Run the three steps: (the output parts in key order, the counters of each step)."""
        os.makedirs(self.folder, exist_ok=True)
        _prepare_fork(self.policy)
        try:
            inputs = self._map()
            for step in range(STEPS):
                if step:
                    self._starting(step)
                inputs = self._reduce(step, inputs)
        finally:
            gc.unfreeze()           # a long-lived caller's objects are collected again
        return inputs, self.counters

    def _starting(self, step):
        log.debug("Running step %d of %d", step + 1, STEPS)
        if self.on_step:
            self.on_step(step + 1, STEPS)

    def _map(self):
        """Step 1's map tasks, one per manifest (split); their digest filters merged."""
        self._starting(0)
        lines = []
        for path in self.manifests:
            with open(path, "rb") as f:
                lines.append(f.read())
        size = digestfilter.bitmap_bytes(sum(_split_bytes(line) for line in lines)) if _compiled() else 0
        filters = [self._path("filter-%05d" % i) for i in range(len(lines))]
        tasks = [_Task("ap-map1-%d" % i, self._mapper(line, size, filters[i]), self._path("map-%05d" % i))
                 for i, line in enumerate(lines)]
        self._run_phase(0, tasks)
        shared = self._path("shared-digests")
        self.digest_filter = digestfilter.merge(filters, shared) if size else None
        _unlink(f for f in filters if os.path.exists(f))
        return [t.out for t in tasks]

    def _mapper(self, manifest_line, filter_size, filter_path):
        environ = _task_environ()
        if filter_size:
            environ[digestfilter.FILTER_ENV] = "%d %s" % (filter_size, filter_path)

        def run(write, count):
            task.run_mapper([manifest_line], self.policy, self.resolve_revisits, write, count, environ)
        return run

    def _reduce(self, step, inputs):
        """The reduce tasks of a step over the step's input files (deleted after): its output files."""
        cost = None
        parts = self.cores
        size = sum(_size(path) for path in inputs)
        if step == 1 and self.digest_filter:
            # step 2's work is in its digest records, and one digest may hold most of it: parts of
            # equal work, twice as many, go to whichever core is free (one core: one part)
            cost, parts = digestfilter.step2_cost, 2 * self.cores if self.cores > 1 else 1
        # a small input in fewer parts: a task's own cost (its fork and exit) is more than what
        # running its part beside others saves
        parts = max(1, min(parts, -(-size // MIN_PART_BYTES)))
        if step == 0:
            # a step-1 reducer's tables grow with its URI-Rs' hosts: a part of at most
            # STEP1_PART_BYTES of map records each, more parts than cores when the input is large
            parts = max(parts, -(-size // STEP1_PART_BYTES))
        readers = self._shuffle(step, inputs, parts, cost)
        environ = _task_environ()
        shared = self._path("shared-digests")
        if step == 0 and self.digest_filter:
            environ[digestfilter.SHARED_ENV] = shared
        tasks = []
        for n, (reader, total) in enumerate(readers):
            out = self._path("step%d-%05d" % (step + 1, n) if step + 1 < STEPS else "part-%05d" % n)
            tasks.append(_Task("ap-red%d-%d" % (step + 1, n), self._reducer(step, n, reader, total, environ), out))
        self._run_phase(step, tasks)
        _unlink(inputs + [self._path("sorted-%d" % (step + 1))] + ([shared] if step == 0 else []))
        return [t.out for t in tasks]

    def _reducer(self, step, number, reader, total, environ):
        environ = dict(environ, **{contract.TASK_PARTITION_ENVS[0]: str(number)})

        def run(write, count):
            progress = ReduceProgress(step, number)         # the child's environment has the bar's folder
            chunks = progress.chunks(cpulog.timed_chunks(reader(), "merge%d" % (step + 1), environ), total)
            task.run_reducer(step, chunks, self.policy, self.table_limit, write, count, environ)
        return run

    def _shuffle(self, step, inputs, parts, cost=None):
        """What each of at most ``parts`` reduce tasks of a step reads: (a function giving its
        sorted input in buffers, its bytes): its range of a merge of the inputs' sorted runs, or
        of the inputs sorted into one file."""
        plan = presorted.plan(inputs, threads=self.cores)
        if plan is not None:
            self.merged_steps.append(step)
            return [(lambda p=p: presorted.merged_chunks(p, CHUNK),
                     sum(s[2] for s in p.streams) + sum(len(line) + 1 for line in p.tail))
                    for p in presorted.split(plan, parts, cost)]
        path = self._path("sorted-%d" % (step + 1))
        _sort(inputs, path, self.folder)
        bounds = presorted.key_bounds(path, os.path.getsize(path) // parts)
        return [(lambda a=a, b=b: _range_chunks(path, a, b), b - a) for a, b in zip(bounds, bounds[1:])]

    def _path(self, name):
        return os.path.join(self.folder, name)

    # ------------------------------------------------------------ tasks

    def _run_phase(self, step, tasks):
        """Run tasks, at most cores at once, each a fork of this process; their counters added
        to the step's. TaskFailed when one fails (the others are ended first)."""
        waiting, running = list(reversed(tasks)), {}
        try:
            while waiting or running:
                while waiting and len(running) < self.cores:
                    _start(waiting.pop(), self.env, running)
                ready, _, _ = select.select(list(running), [], [])
                for fd in ready:
                    t = running[fd]
                    t.status = _wait(t.pid)         # interrupted, it is still running's: killed and waited
                    del running[fd]
                    told = _read_told(fd)
                    os.close(fd)
                    if t.status != 0:
                        words = _last_words(t.err) or (": " + told if told else "")
                        raise TaskFailed("step %d of %d failed: task %s exited with status %d%s"
                                         % (step + 1, STEPS, t.name, t.status, words))
        except BaseException:
            for fd, t in running.items():
                _kill(t.pid)
                os.close(fd)
            raise
        for t in tasks:
            _add_counters(self.counters[step], t.err)
            _unlink([t.err])


def _task_environ():
    """This process's environment without the variables a runner sets for its tasks."""
    return {name: value for name, value in os.environ.items() if name not in INTERNAL_ENV}


def _compiled():
    from profiler.accel import fast
    return fast.load() is not None


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _split_bytes(manifest_line):
    try:
        return digestfilter.split_bytes(orjson.loads(manifest_line))
    except (ValueError, TypeError, AttributeError):
        return 0


_prepared = []
#: preloads the client makes its own way: the Public Suffix List's rules from the user's cache
#: folder when a run before kept them (profiler.runtime.pslcache)
CLIENT_PRELOADS = {"profiler.model.domains:load": "profiler.runtime.pslcache:load"}


def _prepare_fork(policy):
    """What every task needs, done once in the client before the first fork: the task code and
    the compiled module imported, what the policy's tasks read (the Public Suffix List, the
    language table) read, and the objects so far left out of the collector's passes (a forked
    task touches fewer of the pages it shares)."""
    import importlib
    from profiler.accel import fast
    from profiler.job.kernels import task_preloads
    fast.load()
    for name in task_preloads(policy):
        module, _, function = CLIENT_PRELOADS.get(name, name).partition(":")
        if name not in _prepared:
            getattr(importlib.import_module(module), function)()
            _prepared.append(name)
    gc.freeze()         # no collection first (a pass over every object): garbage frozen now is freed after run()


#: signals held back while a task is forked: Python runs the handler of one that arrives during
#: os.fork() in its at-fork callbacks, where the exception it raises (KeyboardInterrupt) is lost
HELD = {signal.SIGINT, signal.SIGTERM}


def _start(t, env, running):
    """Fork the task's process, recorded in running under the read end of a pipe that closes
    when it ends (and brings its last words when it fails: they need no disk)."""
    if not forkserver._prctl:
        forkserver._load_prctl()
    r, w = os.pipe()
    client = os.getpid()
    held = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        pid = os.fork()
        if pid == 0:                            # the task: never returns
            forkserver._die_with_parent()       # a client killed (SIGKILL) ends its tasks
            if os.getppid() != client:
                os._exit(1)
            _close_inherited(keep=w)
            _child(t, env, held, w)
        t.pid = pid
        running[r] = t
        os.close(w)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _close_inherited(keep):
    """Close every file descriptor of the client past stdin, stdout and stderr but keep: a task
    holds none of its files, locks (a nightly run's) or sockets (those of a service), which
    would outlive the client while the task runs."""
    top = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1 << 16
    os.closerange(3, keep)
    os.closerange(keep + 1, max(keep + 2, top if top > 0 else 1 << 16))


def _child(t, env, mask, status):
    code, told = 1, []
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        gc.disable()
        try:
            with open("/proc/self/comm", "w") as f:
                f.write(t.name[:15])
        except OSError:
            pass
        for name in INTERNAL_ENV:
            os.environ.pop(name, None)
        os.environ.update(env)
        with open(t.out, "wb") as out, open(t.err, "wb") as err:
            try:
                t.run(out.write, task.counter_writer(err))
            except BaseException as e:
                _tell(status, e, told)
                import traceback
                err.write(traceback.format_exc().encode("utf-8", "replace"))
                raise
        code = 0                                # its output whole: flushed and closed
        cpulog.write_process("task:" + t.name.rsplit("-", 1)[0])
    except BaseException as e:
        _tell(status, e, told)
    finally:
        os._exit(code)


def _tell(fd, e, told):
    """Write why a task fails to the client's pipe, once (told), in one write of less than
    PIPE_BUF bytes, which never blocks: a full disk takes its stderr file with it."""
    if told:
        return
    told.append(e)
    text = ("%s: %s" % (type(e).__name__, e) if str(e) else type(e).__name__).replace("\n", " ")
    try:
        os.write(fd, text.encode("utf-8", "replace")[:500])
    except OSError:
        pass


def _wait(pid):
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(status)
        except InterruptedError:
            continue
        except ChildProcessError:
            return -1


def _kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError as e:
        if e.errno != errno.ESRCH:
            raise
    _wait(pid)


def _read_told(fd):
    """What a task wrote to its pipe (why it failed), or ''."""
    try:
        return os.read(fd, 4096).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _last_words(err_path):
    """': ' and the last line a failed task wrote to stderr besides its counters, or ''."""
    try:
        with open(err_path, "rb") as f:
            lines = [line for line in f.read()[-65536:].decode("utf-8", "replace").splitlines()
                     if line.strip() and not line.startswith("reporter:")]
    except OSError:
        return ""
    return ": " + lines[-1].strip() if lines else ""


def _add_counters(counters, err_path):
    """The counter lines of a task's stderr added to counters ({group: {counter: amount}})."""
    try:
        with open(err_path, "rb") as f:
            data = f.read()
    except OSError:
        return
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("reporter:counter:"):
            group, counter, amount = line[len("reporter:counter:"):].rsplit(",", 2)
            group = counters.setdefault(group, {})
            group[counter] = group.get(counter, 0) + int(amount)


def _sort(inputs, out, folder):
    """The lines of inputs in byte order into out: GNU sort, as mrjob's local runner sorts them."""
    env = dict(os.environ, LC_ALL="C")
    subprocess.run(["sort", "-S", SORT_BUFFER, "-T", folder, "-o", out] + (list(inputs) or [os.devnull]),
                   env=env, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


def _range_chunks(path, start, end, size=CHUNK):
    with open(path, "rb") as f:
        f.seek(start)
        yield from task.read_upto(f, end - start, size)


def _unlink(paths):
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass

