"""The Spark runner for real: pyspark (the `spark` extra), master local[2], conf/mrjob-spark.conf;
its profile must equal the inline runner's byte for byte.

The driver and every executor's Python workers run a python_bin that can import `profiler`
only from a shipped .zip, so the profile proves that --py-files reaches the executors. One
Spark run (13-15 s of JVM start-up). Under CI=true a missing pyspark or Java fails; elsewhere
the test skips with a message.
"""

import importlib.util
import os
import shutil
import stat
import subprocess
import sys

import pytest

from profiler.accel import fast
from profiler.job.pipeline import run_profile
from profiler.runtime.shipping import package_zip

from helpers.shipped import ONLY_SHIPPED

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")
CREATED = "2026-01-01T00:00:00Z"

WRAPPER = """#!%s
# A Spark python (driver and `-m pyspark.daemon` workers) that imports profiler only from a
# .zip on sys.path (what --py-files gives), never from the installed package.
import importlib.machinery, os, runpy, sys

with open(%r, "a") as log:                 # who runs through this python: driver, workers
    log.write(" ".join(sys.argv[1:3]) + "\\n")

""" + ONLY_SHIPPED + """
if len(sys.argv) > 2 and sys.argv[1] == "-m":
    sys.meta_path.insert(0, OnlyShipped())
    sys.argv = sys.argv[2:]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
elif len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
    sys.meta_path.insert(0, OnlyShipped())
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
    runpy.run_path(sys.argv[0], run_name="__main__")
else:
    os.execv(sys.executable, [sys.executable] + sys.argv[1:])
"""


def _require_spark():
    missing = []
    if importlib.util.find_spec("pyspark") is None:
        missing.append("pyspark (pip install -e '.[spark]')")
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        missing.append("java (a JDK/JRE 17)")
    if missing:
        message = "Spark test needs " + " and ".join(missing)
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def spark_python(tmp_path, monkeypatch):
    _require_spark()
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    path = tmp_path / "python-only-shipped"
    path.write_text(WRAPPER % (sys.executable, str(tmp_path / "python-calls.log")))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


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
                          extra_args=["--python-bin", spark_python])
    run_profile([SAMPLE], str(local_out), runner="inline", created=CREATED)
    assert spark_out.read_bytes() == local_out.read_bytes()
    assert os.listdir(os.environ["TMPDIR"]) == []          # no <job key>-spark folder left
    assert summary["lines"] > 9000
    assert summary["counters"][0]["profile"]["captures"] == 5000
    calls = (tmp_path / "python-calls.log").read_text().splitlines()
    assert "-m pyspark.daemon" in calls                              # executors' Python workers
    assert any(c.split(" ")[0].endswith("archive_profiler_spark.py") for c in calls)   # driver: the job's program
    if fast.load() is not None:     # the shipped extension reached the executors (profiler only from the zip)
        assert set(summary["counters"][0]["tasks"]) == {"step-1 reducers (compiled)"}
