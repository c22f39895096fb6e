"""The Spark runner for real: pyspark (the `spark` extra), master local[2], conf/mrjob-spark.conf;
its profile must equal the inline runner's byte for byte.

The driver and every executor's Python workers run a python_bin that can import `profiler`
only from a shipped .zip, so the profile proves that --py-files reaches the executors, and its
counters that the shipped compiled kernels ran there, with the digest filter and hot digests
(every digest sampled twice is hot here), and each split reduced where it was mapped (its map
records kept on local disk); a second run, of splits that share URI-Rs, shuffles them from
there. Under CI=true a missing pyspark or Java fails; elsewhere the test skips with a message.
"""

import os
import subprocess

import pytest

from profiler.accel import fast
from profiler.run.profile import run_profile
from profiler.runtime.shipping import package_zip

from helpers.spark import only_shipped_python, require_spark

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")
CREATED = "2026-01-01T00:00:00Z"


@pytest.fixture
def spark_python(tmp_path, monkeypatch):
    require_spark()
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return only_shipped_python(tmp_path, tmp_path / "python-calls.log")


def test_wrapper_refuses_the_installed_package(spark_python, tmp_path):
    """Control, without Spark: the wrapper imports profiler from a zip and from nothing else."""
    probe = tmp_path / "probe.py"
    probe.write_text("import profiler\nprint(profiler.__file__)\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    for argv in ([spark_python, "-m", "probe"], [spark_python, str(probe)]):
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        assert done.returncode != 0 and "(not shipped)" in done.stderr
    env["PYTHONPATH"] += os.pathsep + package_zip(str(tmp_path))
    done = subprocess.run([spark_python, "-m", "probe"], env=env, capture_output=True, text=True)
    shipped = os.path.join("profiler.zip", "profiler", "__init__.py")
    assert done.returncode == 0 and done.stdout.strip().endswith((shipped, shipped + "c"))   # c: its bytecode


def test_spark_profile_equals_inline_runner(spark_python, tmp_path):
    spark_out, local_out = tmp_path / "spark.cdxj", tmp_path / "local.cdxj"
    summary = run_profile([SAMPLE], str(spark_out), runner="spark", created=CREATED,
                          conf_paths=[os.path.join(ROOT, "conf", "mrjob-spark.conf")],
                          extra_args=["--python-bin", spark_python, "--hot-digest-records", "1"])
    run_profile([SAMPLE], str(local_out), runner="inline", created=CREATED)
    assert spark_out.read_bytes() == local_out.read_bytes()
    assert os.listdir(os.environ["TMPDIR"]) == []          # no <job key>-spark folder left
    assert summary["lines"] > 9000
    assert summary["counters"][0]["profile"]["captures"] == 5000
    calls = (tmp_path / "python-calls.log").read_text().splitlines()
    # executors' Python workers, from a daemon that imports the installed pyspark (profiler.runtime.sparkrunner)
    assert "-m archive_profiler_spark_daemon" in calls
    assert any(c.split(" ")[0].endswith("archive_profiler_spark.py") for c in calls)   # driver: the job's program
    if fast.load() is not None:     # the shipped extension reached the executors (profiler only from the zip)
        assert set(summary["counters"][0]["tasks"]) == {"step-1 reducers (compiled)"}
        # the map tasks' digest filters, merged, reached step 1's reducers
        assert summary["counters"][0]["digest filter"]["digest records not written (one map record)"] > 0
    # digests held by two or more sampled records were hot: their records spread, their shares added up
    assert summary["counters"][0]["spark"]["hot digests (records spread over partitions)"] > 0
    assert summary["counters"][1]["hot digests"]["share records written"] > 0
    # one split (a gzip file): step 1 reduced its records where the map task kept them, no shuffle to it
    assert summary["counters"][0]["spark"]["splits reduced where they were mapped"] == 1


def test_splits_that_share_urirs_are_shuffled_to_step_1(spark_python, tmp_path):
    """Two files whose URI-Rs interleave: the kept map records are shuffled to step 1 as ever."""
    import gzip
    with gzip.open(SAMPLE, "rb") as f:
        legend, *lines = f.read().splitlines(keepends=True)
    for name, part in (("a.cdx", lines[0::2]), ("b.cdx", lines[1::2])):
        (tmp_path / name).write_bytes(legend + b"".join(part))
    inputs = [str(tmp_path / "a.cdx"), str(tmp_path / "b.cdx")]
    spark_out, inline_out = tmp_path / "spark.cdxj", tmp_path / "inline.cdxj"
    summary = run_profile(inputs, str(spark_out), runner="spark", created=CREATED,
                          conf_paths=[os.path.join(ROOT, "conf", "mrjob-spark.conf")],
                          extra_args=["--python-bin", spark_python])
    run_profile(inputs, str(inline_out), runner="inline", created=CREATED)
    assert spark_out.read_bytes() == inline_out.read_bytes()
    assert "splits reduced where they were mapped" not in summary["counters"][0].get("spark", {})
    assert os.listdir(os.environ["TMPDIR"]) == []
