"""What the Spark tests share: the requirement check and a Spark Python that imports `profiler`
only from a shipped .zip."""

import importlib.util
import os
import shutil
import stat
import sys

import pytest

from helpers.shipped import ONLY_SHIPPED

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


def require_spark():
    """Skip (fail under CI=true) without pyspark or Java."""
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


def only_shipped_python(folder, calls_log):
    """Path of a Spark python that imports profiler only from a shipped .zip and logs how it is
    called (its first two arguments) to calls_log."""
    path = os.path.join(str(folder), "python-only-shipped")
    with open(path, "w") as f:
        f.write(WRAPPER % (sys.executable, str(calls_log)))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path
