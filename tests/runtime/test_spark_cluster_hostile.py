"""The Spark runner against a standalone cluster that misbehaves mid-job: a master and two workers
started from pyspark's own scripts (profiler.testing.spark_cluster), one cluster for the module,
stopped however the tests end.

The master stopped (SIGSTOP) while the job's tasks run: the job ends on the executors it has, with
the inline runner's bytes, in bounded time. A worker killed (SIGKILL) while its executor runs a task:
the job ends on the other worker through Spark's retry, with the inline runner's bytes, the shipped
compiled kernels, and nothing left in the temp folder. Inputs given as hdfs://, s3:// or gs:// URIs
to the local and Spark runners without Hadoop: one line, exit 2.
"""

import os
import signal
import time

import pytest

from profiler.accel import fast
from profiler.run.profile import run_profile
from profiler.testing import synthetic
from profiler.testing.spark_cluster import StandaloneCluster

from helpers.spark import only_shipped_python, require_spark
from test_spark_cluster import CREATED, RUN_TIMEOUT, _cluster_args, _finish, _start, _start_cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    require_spark()
    folder = tmp_path_factory.mktemp("spark-cluster-hostile")
    env = dict(os.environ, SPARK_LOCAL_DIRS=str(folder / "local"))
    env.pop("PYTHONPATH", None)
    with StandaloneCluster(folder, workers=2, cores=1, memory="1g", env=env) as started:
        yield started


@pytest.fixture
def spark_env(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return only_shipped_python(tmp_path, tmp_path / "python-calls.log")


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
