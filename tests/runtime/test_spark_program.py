"""Parts of the job's Spark program (profiler.runtime.spark) that need no Spark: the archives a
Python worker takes off its path, and the output parts its tasks write themselves."""

import gzip
import os
import sys
import types

import pytest

pytest.importorskip("pyspark")

from profiler.runtime import spark  # noqa: E402


def test_spark_archives_leave_the_path_unless_an_import_came_from_them(tmp_path, monkeypatch):
    jar, pyspark_zip, py4j_zip, own = (str(tmp_path / n) for n in ("spark-core_2.12.jar", "pyspark.zip",
                                                                      "py4j-0.10.9.7-src.zip", "profiler.zip"))
    monkeypatch.setattr(sys, "path", [own, "/usr/lib/python3", jar, pyspark_zip, py4j_zip])
    cache = {jar: object(), jar + "/org": object(), pyspark_zip + "/pyspark": object(), own: object(),
             own + "/profiler": object(), "/usr/lib/python3": None}
    monkeypatch.setattr(sys, "path_importer_cache", dict(cache))
    spark.forget_archives()                 # pyspark and py4j come from elsewhere (installed)
    assert sys.path == [own, "/usr/lib/python3"]
    assert set(sys.path_importer_cache) == {own, own + "/profiler", "/usr/lib/python3"}
    # a pyspark imported from its zip keeps the zip
    monkeypatch.setattr(sys, "path", [own, pyspark_zip, jar])
    monkeypatch.setattr(sys, "path_importer_cache", dict(cache))
    monkeypatch.setattr(sys.modules["pyspark"], "__file__", pyspark_zip + "/pyspark/__init__.py")
    spark.forget_archives()
    assert sys.path == [own, pyspark_zip] and pyspark_zip + "/pyspark" in sys.path_importer_cache


def _records(n):
    return [b"k%05d\t{}" % i + b"\n" + b"k%05d-b\t{}" % i for i in range(n)]


@pytest.mark.parametrize("gz", [False, True])
def test_a_task_writes_its_part_whole_under_the_final_name(tmp_path, gz):
    folder = str(tmp_path / "out")
    os.makedirs(folder)
    assert spark._write_part(folder, gz, 3, iter(_records(1000))) == [3]
    name = "part-00003" + (".gz" if gz else "")
    assert os.listdir(folder) == [name]                         # no attempt's file left
    with (gzip.open if gz else open)(os.path.join(folder, name), "rb") as f:
        assert f.read() == b"".join(r + b"\n" for r in _records(1000))     # as saveAsTextFile writes records
    spark._write_part(folder, gz, 3, iter(_records(2)))        # a task run again replaces its part
    assert os.listdir(folder) == [name]


def test_a_task_that_fails_leaves_no_part(tmp_path):
    folder = str(tmp_path / "out")
    os.makedirs(folder)

    def failing():
        yield b"k\t{}"
        raise RuntimeError("executor lost")
    with pytest.raises(RuntimeError):
        spark._write_part(folder, False, 0, failing())
    assert os.listdir(folder) == []


def test_local_folders_of_output_uris():
    assert spark.local_folder("file:///tmp/x/output") == "/tmp/x/output"
    assert spark.local_folder("/tmp/x/output") == "/tmp/x/output"
    assert spark.local_folder("hdfs:///user/me/output") is None
    assert spark.local_folder("s3://bucket/output") is None


def test_parts_the_driver_does_not_see_fail_the_run(tmp_path):
    """Executors whose output folder is not the driver's (a --spark-tmp-dir not every node shares)
    write their parts where the driver cannot read them: the run fails with the reason."""
    folder = str(tmp_path / "out")
    spark._write_part(folder, False, 0, iter([b"k\t{}"]))         # the folder made where the task runs
    spark.check_parts("file://" + folder, 1)
    with pytest.raises(RuntimeError, match="1 of 2 output parts are not in .*every node shares"):
        spark.check_parts("file://" + folder, 2)
    spark.check_parts("hdfs:///user/me/out", 2)                     # not this machine's to check


def test_file_uris_with_encoded_names_are_their_paths(tmp_path):
    # mrjob gives local paths as percent-encoded file:// URIs (mrjob.parse.to_uri): a temp folder
    # with a space, a '%' or a non-ASCII letter in its name ($TMPDIR, a home folder)
    from mrjob.parse import to_uri
    folder = tmp_path / "t mp%é"
    folder.mkdir()
    manifest = folder / "split-00000.json"
    manifest.write_bytes(b'{"path": "x"}\n')
    assert to_uri(str(manifest)) != "file://" + str(manifest)
    assert spark.manifest_lines(to_uri(str(manifest))) == [b'{"path": "x"}']       # read here, without Spark
    assert spark.local_folder(to_uri(str(folder / "output"))) == str(folder / "output")


class _Executors:
    """A SparkContext whose executor count follows counts (one a look), then stays at the last."""

    master = "spark://127.0.0.1:7077"

    def __init__(self, counts):
        self.counts, self.cancelled = list(counts), 0
        outer = self

        class Status:
            def size(self):
                return 1 + (outer.counts.pop(0) if len(outer.counts) > 1 else outer.counts[0])
        self._jsc = types.SimpleNamespace(sc=lambda: types.SimpleNamespace(getExecutorMemoryStatus=Status))

    def getConf(self):
        return {"spark.executor.memory": "4g"}

    def cancelAllJobs(self):
        self.cancelled += 1


def test_the_executor_watch_gives_up_after_every_executor_is_gone(caplog):
    """Executors at first, then none (every worker lost): one warning with what to change, then the
    jobs cancelled once the timeout has passed without one; executors meanwhile start the count
    again."""
    import threading
    from profiler.runtime import sparkwatch
    ticks = iter(range(10 ** 6))
    sc = _Executors([2, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0])
    clock = lambda: next(ticks)     # noqa: E731  one second a look
    with sparkwatch.ExecutorWatch(sc, timeout=5, warn=3, poll=0.001, clock=clock) as watch:
        deadline = threading.Event()
        while watch.gave_up is None and not deadline.wait(0.01):
            pass
    assert sc.cancelled == 1
    assert watch.gave_up.startswith("no executor for 5 s (spark.archiveProfiler.executorTimeout) on spark://")
    assert "spark.executor.memory=4g" in watch.gave_up
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "ask for less" in warnings[0]


@pytest.mark.parametrize("value,seconds", [(None, 0), ("0", 0), ("600", 600), ("2.5", 2.5)])
def test_the_executor_timeout_setting(value, seconds):
    from profiler.runtime import sparkwatch
    conf = {} if value is None else {sparkwatch.TIMEOUT_SETTING: value}
    assert sparkwatch.timeout_of(conf) == seconds


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_a_bad_executor_timeout_setting(value):
    from profiler.runtime import sparkwatch
    with pytest.raises(ValueError, match="must be a number of seconds"):
        sparkwatch.timeout_of({sparkwatch.TIMEOUT_SETTING: value})
