"""The Spark runner's own choices, without starting Spark (profiler.runtime.sparkrunner): file:///
paths without a hadoop binary, where a spark:// master keeps its temp folder, what it removes,
the local master's spark-submit settings and its driver's class archive."""

import os
import stat

from jobs.profile_job import ProfileJob
from profiler.runtime import sparklaunch, sparkrunner


def _runner(*args):
    # --cleanup-on-failure as profiler.job.pipeline runs it (a runner that has not run counts as failed)
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


def _fake_spark(tmp_path, java_version):
    java_home = tmp_path / "jdk"
    (java_home / "bin").mkdir(parents=True)
    java = java_home / "bin" / "java"
    java.write_text('#!/bin/sh\necho \'openjdk version "%s" 2025-04-15\' >&2\n' % java_version)
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    spark = tmp_path / "spark"
    (spark / "bin").mkdir(parents=True)
    (spark / "jars").mkdir()
    (spark / "jars" / "spark-core.jar").write_bytes(b"jar")
    return str(spark / "bin" / "spark-submit"), {"JAVA_HOME": str(java_home), "XDG_CACHE_HOME": str(tmp_path / "cache")}


def test_class_archive_written_once_then_mapped(tmp_path):
    spark_submit, env = _fake_spark(tmp_path, "17.0.15")
    first = sparklaunch.ClassArchive.for_spark(spark_submit, env)
    assert first.option() == "-XX:ArchiveClassesAtExit=" + first.writing
    with open(first.writing, "wb") as f:         # what the JVM writes when it exits
        f.write(b"archive")
    first.finish(True)
    assert os.path.isfile(first.path) and first.writing is None
    later = sparklaunch.ClassArchive.for_spark(spark_submit, env)
    assert later.option() == "-XX:SharedArchiveFile=" + first.path
    failed = sparklaunch.ClassArchive(str(tmp_path / "other.jsa"))
    with open(failed.writing, "wb") as f:
        f.write(b"partial")
    failed.finish(False)                          # a run that failed: its partial archive is removed
    assert not os.path.exists(str(tmp_path / "other.jsa")) and os.listdir(str(tmp_path)).count("other.jsa") == 0


def test_no_class_archive_before_java_13_or_when_turned_off(tmp_path):
    spark_submit, env = _fake_spark(tmp_path, "11.0.2")
    assert sparklaunch.ClassArchive.for_spark(spark_submit, env) is False
    spark_submit, env = _fake_spark(tmp_path / "b", "17.0.15")
    assert sparklaunch.ClassArchive.for_spark(spark_submit, dict(env, **{sparklaunch.CDS_ENV: "0"})) is False
