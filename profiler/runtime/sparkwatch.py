"""The driver's watch over a cluster's executors: a job that no worker can serve says so, and gives
up after a time when asked.

A standalone, YARN or Kubernetes master whose workers cannot give what each executor asks (memory,
cores), or whose workers are all gone, leaves the job waiting with no executor: Spark's way on a busy
shared cluster, where one frees up in time, but an unattended run waits forever. The watch (a thread
of the driver program, polling Spark's status tracker) warns once after ``WARN_SECONDS`` without an
executor, with what to change; with ``spark.archiveProfiler.executorTimeout`` (seconds, a
``--jobconf``) it cancels the job's Spark jobs after that long without one, and the driver ends with
one line starting ``GAVE_UP``, which the client reports as the run's error
(profiler.runtime.sparkrunner). Local masters run their tasks in the driver: they are not watched.
"""

import logging
import threading
import time

log = logging.getLogger(__name__)

#: the Spark setting: seconds without an executor after which the job gives up (unset or 0: it waits)
TIMEOUT_SETTING = "spark.archiveProfiler.executorTimeout"
#: seconds without an executor after which the driver says what to change (once)
WARN_SECONDS = 30
#: seconds between two looks at the executors
POLL_SECONDS = 1.0
#: how the driver's last line starts when the job gave up (the client finds it in the driver's log)
GAVE_UP = "archive-profiler spark: gave up: "


def timeout_of(conf):
    """The seconds of TIMEOUT_SETTING in a SparkConf (0: none); ValueError for a value that is
    not a number of seconds at least 0."""
    text = conf.get(TIMEOUT_SETTING, "0") or "0"
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1
    if not seconds >= 0 or seconds == float("inf"):
        raise ValueError("%s must be a number of seconds (0: wait), not %r" % (TIMEOUT_SETTING, text))
    return seconds


def executors(sc):
    """The executors registered with the driver now (the driver itself not counted)."""
    return max(0, sc._jsc.sc().getExecutorMemoryStatus().size() - 1)


def asked(sc):
    """What each executor asks of a worker, as Spark's settings."""
    conf = sc.getConf()
    return "spark.executor.memory=%s, spark.executor.cores=%s" % (
        conf.get("spark.executor.memory", "1g"), conf.get("spark.executor.cores", "all of a worker's"))


def advice(sc, seconds):
    """What the driver says after seconds without an executor."""
    return ("no executor for %d s on %s: no worker can give what an executor asks (%s), or every worker is "
            "gone; ask for less (--jobconf spark.executor.memory=512m) or start workers with more (--memory, "
            "--cores); --jobconf %s=SECONDS gives up after that long" % (seconds, sc.master, asked(sc), TIMEOUT_SETTING))


def reason(sc, seconds):
    """The one line of a job that gave up after seconds without an executor."""
    return "no executor for %d s (%s) on %s: no worker can give %s, or none is left" % (
        seconds, TIMEOUT_SETTING, sc.master, asked(sc))


class ExecutorWatch:
    """``with ExecutorWatch(sc, timeout):`` the block's Spark jobs watched; ``gave_up`` holds the
    reason once it cancelled them."""

    def __init__(self, sc, timeout, warn=WARN_SECONDS, poll=POLL_SECONDS, clock=time.monotonic):
        self.sc, self.timeout, self.warn, self.poll, self.clock = sc, timeout, warn, poll, clock
        self.gave_up = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="executor-watch", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()
        return False

    def _run(self):
        since, warned = self.clock(), False
        while not self._done.wait(self.poll):
            try:
                found = executors(self.sc)
            except Exception:           # the context stopping: nothing left to watch
                return
            now = self.clock()
            if found:
                since, warned = now, False
                continue
            if not warned and now - since >= self.warn:
                log.warning("%s", advice(self.sc, now - since))
                warned = True
            if self.timeout and now - since >= self.timeout:
                self.gave_up = reason(self.sc, now - since)
                self.sc.cancelAllJobs()
                return
