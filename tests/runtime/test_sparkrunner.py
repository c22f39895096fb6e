"""The Spark runner's own choices, without starting Spark (profiler.runtime.sparkrunner): file:///
paths without a hadoop binary, where a spark:// master keeps its temp folder, what it removes,
the local master's spark-submit settings and its daemon."""

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from profiler.runtime.profile_job import ProfileJob
from profiler.runtime import sparklaunch, sparkrunner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _runner(*args):
    # --cleanup-on-failure as profiler.run.profile runs it (a runner that has not run counts as failed)
    job = ProfileJob(["-r", "spark", "--no-conf", "--python-bin", "python3", "--cleanup-on-failure", "LOCAL_TMP"]
                     + list(args))
    return job.make_runner()


def test_file_uris_need_no_hadoop(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))          # no hadoop command anywhere
    shared = tmp_path / "shared"
    shared.mkdir()
    with _runner("--spark-master", "spark://127.0.0.1:7077", "--spark-tmp-dir", "file://%s" % shared) as r:
        assert isinstance(r, sparkrunner.SparkRunner)
        assert r._spark_tmp_dir == "file://%s/%s" % (shared, r._job_key)
        r.fs.mkdir(r._spark_tmp_dir)
        r.fs.put(__file__, r._spark_tmp_dir + "/x.py")            # the local filesystem, not `hadoop fs`
        assert r.fs.exists(r._spark_tmp_dir + "/x.py")
        (shared / "someone-else").mkdir()
    assert os.listdir(shared) == ["someone-else"]                   # only this run's folder removed


def test_standalone_master_without_hadoop_keeps_a_local_temp_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    for var in ("HADOOP_HOME", "HADOOP_PREFIX", "HADOOP_INSTALL"):
        monkeypatch.delenv(var, raising=False)
    with _runner("--spark-master", "spark://127.0.0.1:7077") as r:
        assert r._spark_tmp_dir == os.path.join(os.environ["TMPDIR"], r._job_key + "-spark")
    with _runner("--spark-master", "yarn") as r:                    # YARN: HDFS, as mrjob does
        assert r._spark_tmp_dir.startswith("hdfs:///")


def test_local_master_settings_unless_the_configuration_has_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv(sparklaunch.CDS_ENV, "0")
    with _runner("--spark-master", "local[2]") as r:
        args = r._spark_submit_args(0)
        assert args[args.index("--driver-java-options") + 1] == sparkrunner.LOCAL_DRIVER_JAVA_OPTIONS
        assert "spark.shuffle.compress=false" in args
        assert "spark.python.daemon.module=" + sparkrunner.DAEMON_MODULE in args
        assert "--files" not in args or r._opts["upload_files"]
    with _runner("--spark-master", "local[2]", "--jobconf", "spark.shuffle.compress=true",
                 "--jobconf", "spark.driver.extraJavaOptions=-Xmx1g") as r:
        args = r._spark_submit_args(0)
        assert "--driver-java-options" not in args and "spark.shuffle.compress=false" not in args
    with _runner("--spark-master", "spark://127.0.0.1:7077") as r:
        args = r._spark_submit_args(0)
        assert "--driver-java-options" not in args and not any("daemon.module" in a for a in args)


def test_local_master_daemon_preloads_the_shipped_package(tmp_path, monkeypatch):
    monkeypatch.setenv(sparklaunch.CDS_ENV, "0")
    zip_path = tmp_path / "profiler.zip"
    zip_path.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    with _runner("--spark-master", "local[2]", "--py-files", str(zip_path), "--policy-json", '{"name":"x"}') as r:
        args = r._spark_submit_args(0)
        folder = next(a.split("=", 1)[1] for a in args if a.startswith("spark.executorEnv.PYTHONPATH="))
        with open(os.path.join(folder, sparkrunner.DAEMON_MODULE + ".py")) as f:
            daemon = f.read()
    assert "sys.path[:0] = [%r]" % str(zip_path) in daemon      # the shipped zip, not the client's import path
    assert "spark.preload(%r)" % '{"name":"x"}' in daemon
    compile(daemon, "daemon", "exec")


#: a spark-submit whose driver program, on the hangup of its terminal (mrjob runs it on a pty),
#: writes the job's counter folder a moment later, as profiler.runtime.spark.main's finally does
FAKE_SUBMIT = """#!%s
import os, signal, sys, time
args = sys.argv[1:]
folder = args[args.index("--counter-output-dir") + 1].replace("file://", "")

def hangup(*_):
    time.sleep(1)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "part-00000"), "w") as f:
        f.write("[{}, {}, {}]")
    os._exit(1)

signal.signal(signal.SIGHUP, hangup)
with open(os.environ["FAKE_SUBMIT_STARTED"], "w") as f:
    f.write(str(os.getpid()))
time.sleep(120)
"""


def test_an_interrupted_run_ends_spark_submit_before_it_cleans_up(tmp_path):
    fake = tmp_path / "spark-submit"
    fake.write_text(FAKE_SUBMIT % sys.executable)
    fake.chmod(0o755)
    started, tmp = tmp_path / "started", os.environ["TMPDIR"]
    with socket.socket() as master:                 # a standalone master the client's check reaches
        master.bind(("127.0.0.1", 0))
        master.listen()
        proc = subprocess.Popen(
            [sys.executable, "-m", "profiler.cli", "profile", os.path.join(ROOT, "tests", "data", "cdx11-legend.cdx"),
             "-o", str(tmp_path / "out.cdxj"), "-r", "spark", "--", "--spark-master",
             "spark://127.0.0.1:%d" % master.getsockname()[1], "--spark-submit-bin", str(fake),
             "--python-bin", sys.executable],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
            env=dict(os.environ, FAKE_SUBMIT_STARTED=str(started), PYTHONPATH=ROOT))
        deadline = time.monotonic() + 60
        while not started.exists() or not started.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    with pytest.raises(ProcessLookupError):         # spark-submit ended with the run
        os.kill(int(started.read_text()), 0)
    time.sleep(1.5)                                 # what it would have written by now
    assert os.listdir(tmp) == []
    assert not (tmp_path / "out.cdxj").exists()
