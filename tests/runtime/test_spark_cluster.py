"""The Spark runner on a real standalone cluster: a master and two workers started from pyspark's
own scripts on 127.0.0.1 (profiler.testing.spark_cluster), one per module, stopped however the
tests end.

`profile -r spark -- --spark-master spark://...` runs without a `hadoop` binary, its executors
import `profiler` only from the shipped zip and run the shipped compiled kernels, and its
profile equals the inline runner's byte for byte; so does the profile of a run whose executor
is killed (SIGKILL) while it runs tasks, through Spark's task retry (its temp folder a file:///
one, as on a shared filesystem); so does the profile of a run whose worker is SIGKILLed, or whose
master is SIGSTOPped, while its tasks run. A job no worker can serve gives up when asked, in one
line; hdfs://, s3:// and gs:// inputs without Hadoop are one line. Under CI=true a missing
pyspark or Java fails; elsewhere the tests skip with a message.
"""

import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from profiler.accel import fast
from profiler.run.profile import run_profile
from profiler.testing import synthetic
from profiler.testing.spark_cluster import StandaloneCluster, descendants

from helpers.spark import only_shipped_python, require_spark

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")
CREATED = "2026-01-01T00:00:00Z"
#: a run may take this long here (JVM start-ups on a shared 2-core machine), a kill's recovery included
RUN_TIMEOUT = 240
#: the executors' JVMs compile little: these jobs are short
EXECUTOR_JAVA = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
#: a profile run in a process of its own (its keyword arguments as JSON), printing its counters
RUN = """import json, sys
from profiler.run.profile import run_profile
summary = run_profile(**json.loads(sys.argv[1]))
print("COUNTERS " + json.dumps(summary["counters"]))
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    require_spark()
    folder = tmp_path_factory.mktemp("spark-cluster")
    env = dict(os.environ, SPARK_LOCAL_DIRS=str(folder / "local"))
    env.pop("PYTHONPATH", None)
    with StandaloneCluster(folder, workers=2, cores=1, memory="1g", env=env) as started:
        yield started


@pytest.fixture
def spark_env(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return only_shipped_python(tmp_path, tmp_path / "python-calls.log")


def _cluster_args(cluster, python, events=None):
    args = ["--spark-master", cluster.url, "--python-bin", python,
            "--jobconf", "spark.executor.memory=512m", "--jobconf", "spark.executor.extraJavaOptions=" + EXECUTOR_JAVA]
    if events:
        args += ["--jobconf", "spark.eventLog.enabled=true", "--jobconf", "spark.eventLog.dir=file://" + events]
    return args


def _start(**kwargs):
    """A profile run (run_profile's keyword arguments) in a process of its own."""
    return subprocess.Popen([sys.executable, "-c", RUN, json.dumps(dict(kwargs, created=CREATED))],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)


def _finish(proc, deadline):
    """(exit status, output, counters) of a run; every process it started is ended when it does
    not finish by deadline (time.monotonic())."""
    try:
        out, _ = proc.communicate(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        for pid in sorted(descendants([proc.pid]), reverse=True):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        out, _ = proc.communicate()
        pytest.fail("the Spark run did not finish in time:\n" + out.decode("utf-8", "replace")[-3000:])
    out = out.decode("utf-8", "replace")
    counters = [json.loads(line[len("COUNTERS "):]) for line in out.splitlines() if line.startswith("COUNTERS ")]
    return proc.returncode, out, counters[0] if counters else None


def test_standalone_cluster_profile_equals_inline_runner(cluster, spark_env, tmp_path):
    out, inline = tmp_path / "cluster.cdxj", tmp_path / "inline.cdxj"
    proc = _start(input_args=[SAMPLE], out_path=str(out), runner="spark", extra_args=_cluster_args(cluster, spark_env))
    code, log, counters = _finish(proc, time.monotonic() + RUN_TIMEOUT)
    assert code == 0, log[-3000:]
    run_profile([SAMPLE], str(inline), runner="inline", created=CREATED)
    assert out.read_bytes() == inline.read_bytes()
    calls = (tmp_path / "python-calls.log").read_text().splitlines()
    assert "-m pyspark.daemon" in calls                                  # executors' Python workers
    if fast.load() is not None:     # the shipped extension ran on the executors
        assert set(counters[0]["tasks"]) == {"step-1 reducers (compiled)"}
    assert os.listdir(os.environ["TMPDIR"]) == []       # the job's temp folders are gone


def _task_failures(events):
    """(executors removed, tasks that ended with an executor lost) in Spark's event logs."""
    removed, lost = 0, 0
    for path in glob.glob(os.path.join(events, "*")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                event = json.loads(line)
                if event.get("Event") == "SparkListenerExecutorRemoved":
                    removed += 1
                elif event.get("Event") == "SparkListenerTaskEnd":
                    reason = (event.get("Task End Reason") or {}).get("Reason")
                    lost += reason in ("ExecutorLostFailure", "FetchFailed")
    return removed, lost


def test_executor_killed_mid_job_profile_equals_inline_runner(cluster, spark_env, tmp_path):
    cdx = tmp_path / "archive.cdx"
    synthetic.write_cdx(str(cdx), 150000, seed=22)
    events = tmp_path / "events"
    events.mkdir()
    shared = tmp_path / "shared"          # the job's temp folder on a "shared filesystem", as file:///
    shared.mkdir()
    out, inline = tmp_path / "cluster.cdxj", tmp_path / "inline.cdxj"
    deadline = time.monotonic() + RUN_TIMEOUT
    proc = _start(input_args=[str(cdx)], out_path=str(out), runner="spark", split_size=2 << 20,
                  extra_args=_cluster_args(cluster, spark_env, str(events)) + ["--spark-tmp-dir", "file://%s" % shared])
    killed = None
    while killed is None and proc.poll() is None and time.monotonic() < deadline:
        for executor in cluster.executors(0):
            if len(cluster.python_workers(executor)) >= 2:      # pyspark's daemon forked a worker: a task runs
                os.kill(executor, signal.SIGKILL)
                killed = executor
                break
        time.sleep(0.02)
    code, log, counters = _finish(proc, deadline)
    assert killed is not None, "no task ran on worker 0's executor:\n" + log[-3000:]
    assert code == 0, log[-3000:]
    removed, lost = _task_failures(str(events))
    assert removed >= 1 and lost >= 1, (removed, lost)
    run_profile([str(cdx)], str(inline), runner="inline", created=CREATED)
    assert out.read_bytes() == inline.read_bytes()
    assert counters[0]["profile"]["captures"] == 150000         # a task run again is counted once
    assert os.listdir(shared) == []                                 # the job's folder there is gone


#: a profile command line in a process of its own
CLI = "import sys; from profiler.cli.main import main; sys.exit(main(sys.argv[1:]))"


def _start_cli(args):
    return subprocess.Popen([sys.executable, "-c", CLI] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)


def test_a_job_no_worker_can_serve_gives_up_when_asked(cluster, spark_env, tmp_path):
    """Executors asking more memory than any worker has: Spark waits for ever ("Initial job has not
    accepted any resources"); with spark.archiveProfiler.executorTimeout the run ends in one line
    naming what it asked, exit status 1, with its temp folders, spark-submit and driver gone."""
    out = tmp_path / "never.cdxj"
    started = time.monotonic()
    proc = _start_cli(["profile", SAMPLE, "-o", str(out), "-r", "spark", "--",
                       "--spark-master", cluster.url, "--python-bin", spark_env,
                       "--jobconf", "spark.executor.memory=4g",
                       "--jobconf", "spark.archiveProfiler.executorTimeout=15"])
    code, log, _ = _finish(proc, started + RUN_TIMEOUT)
    assert code == 1, log[-3000:]
    last = log.strip().splitlines()[-1]
    assert "gave up: no executor for 15 s (spark.archiveProfiler.executorTimeout)" in last, log[-3000:]
    assert "spark.executor.memory=4g" in last
    assert not out.exists()
    assert os.listdir(os.environ["TMPDIR"]) == []
    assert not [pid for pid in descendants([proc.pid]) if pid != proc.pid]


def test_a_bad_executor_timeout_is_one_line(spark_env, tmp_path):
    """Refused before any JVM starts (no master needed)."""
    proc = _start_cli(["profile", SAMPLE, "-o", str(tmp_path / "p.cdxj"), "-r", "spark", "--",
                       "--spark-master", "spark://127.0.0.1:1", "--python-bin", spark_env,
                       "--jobconf", "spark.archiveProfiler.executorTimeout=soon"])
    code, log, _ = _finish(proc, time.monotonic() + 60)
    assert code == 2 and log.strip().splitlines() == [
        "archive-profiler: error: spark.archiveProfiler.executorTimeout must be a number of seconds (0: wait), "
        "not 'soon'"], log


# -- a cluster that misbehaves mid-job (last: the worker killed leaves the cluster one worker)

def _archive(tmp_path):
    cdx = tmp_path / "archive.cdx"
    synthetic.write_cdx(str(cdx), 150000, seed=23)
    return cdx


def _when_a_task_runs(cluster, proc, deadline, worker=0):
    """Waits until worker's executor runs a task (pyspark's daemon forked a worker); its pid, or
    None when the run ended first."""
    while proc.poll() is None and time.monotonic() < deadline:
        for executor in cluster.executors(worker):
            if len(cluster.python_workers(executor)) >= 2:
                return executor
        time.sleep(0.02)
    return None


def _same_as_inline(cdx, out, tmp_path, counters):
    inline = tmp_path / "inline.cdxj"
    run_profile([str(cdx)], str(inline), runner="inline", created=CREATED)
    assert out.read_bytes() == inline.read_bytes()
    assert counters[0]["profile"]["captures"] == 150000
    if fast.load() is not None:             # the shipped extension ran on the executors
        assert set(counters[0]["tasks"]) == {"step-1 reducers (compiled)"}
    assert os.listdir(os.environ["TMPDIR"]) == []


@pytest.mark.parametrize("uri", ["hdfs:///archive/a.cdx", "s3://bucket/a.cdx", "gs://bucket/a.cdx"])
def test_remote_inputs_without_hadoop_are_one_line(cluster, spark_env, tmp_path, uri):
    for runner, extra in (("local", []), ("spark", ["--spark-master", cluster.url, "--python-bin", spark_env])):
        proc = _start_cli(["profile", uri, "-o", str(tmp_path / "p.cdxj"), "-r", runner, "--"] + extra)
        code, log, _ = _finish(proc, time.monotonic() + 120)
        lines = log.strip().splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("archive-profiler: error: cannot list %s: " % uri), \
            (runner, log)
        assert not (tmp_path / "p.cdxj").exists()


def test_master_stopped_mid_job(cluster, spark_env, tmp_path):
    """The master SIGSTOPped while a task runs (and until the run ends): the driver and executors do
    not need it to finish the job; the run ends in bounded time with the inline runner's bytes."""
    cdx, out = _archive(tmp_path), tmp_path / "cluster.cdxj"
    deadline = time.monotonic() + RUN_TIMEOUT
    proc = _start(input_args=[str(cdx)], out_path=str(out), runner="spark", split_size=2 << 20,
                  extra_args=_cluster_args(cluster, spark_env))
    master = cluster.procs["master"].pid
    stopped = False
    try:
        stopped = _when_a_task_runs(cluster, proc, deadline) is not None
        if stopped:
            os.kill(master, signal.SIGSTOP)
        code, log, counters = _finish(proc, deadline)
    finally:
        os.kill(master, signal.SIGCONT)
    assert stopped, "no task ran on worker 0's executor:\n" + log[-3000:]
    assert code == 0, log[-3000:]
    _same_as_inline(cdx, out, tmp_path, counters)


def test_worker_killed_mid_job(cluster, spark_env, tmp_path):
    """A worker's JVM SIGKILLed while its executor runs a task (its executor ends with it): the job
    completes on the other worker with the inline runner's bytes. Last in the module: the cluster
    has one worker after it."""
    cdx, out = _archive(tmp_path), tmp_path / "cluster.cdxj"
    shared = tmp_path / "shared"
    shared.mkdir()
    deadline = time.monotonic() + RUN_TIMEOUT
    proc = _start(input_args=[str(cdx)], out_path=str(out), runner="spark", split_size=2 << 20,
                  extra_args=_cluster_args(cluster, spark_env) + ["--spark-tmp-dir", "file://%s" % shared])
    killed = _when_a_task_runs(cluster, proc, deadline)
    if killed is not None:
        os.kill(cluster.procs["worker-0"].pid, signal.SIGKILL)
    code, log, counters = _finish(proc, deadline)
    assert killed is not None, "no task ran on worker 0's executor:\n" + log[-3000:]
    assert code == 0, log[-3000:]
    _same_as_inline(cdx, out, tmp_path, counters)
    assert os.listdir(shared) == []
