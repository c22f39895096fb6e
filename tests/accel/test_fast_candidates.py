"""Where a task finds the compiled kernels when `profiler` comes from a zip (profiler.accel.fast):
a shipped build in its working directory or in a folder on sys.path (Spark's files), else one
installed on the node; a build that cannot load (another architecture) is passed over."""

import importlib.machinery
import os
import shutil
import subprocess
import sys

import pytest

from profiler.accel import fast

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = "_apfast" + importlib.machinery.EXTENSION_SUFFIXES[0]

PROBE = """
import os, sys
sys.modules["profiler.accel._apfast"] = None        # not importable from the package itself (a zip)
from profiler.accel import fast
# no folder of this machine's own build on sys.path: only the test's
sys.path[:] = [p for p in sys.path if not os.path.isdir(os.path.join(p or ".", "profiler", "accel"))] + sys.argv[2:]
os.chdir(sys.argv[1])
module = fast.load()
print(fast.kind(), module.__file__ if module else "")
"""


@pytest.fixture
def built():
    files = fast.shipped_files()
    if not files:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("the compiled extension is not built")
        pytest.skip("the compiled extension is not built")
    return files[0]


def _probe(cwd, *path):
    done = subprocess.run([sys.executable, "-c", PROBE, str(cwd)] + [str(p) for p in path], capture_output=True,
                          text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_shipped_in_the_working_directory_or_on_sys_path(built, tmp_path):
    work, files = tmp_path / "work", tmp_path / "spark-files"
    work.mkdir()
    files.mkdir()
    shutil.copy(built, work / NAME)
    assert _probe(work) == ["compiled", str(work / NAME)]
    shutil.copy(built, files / NAME)
    assert _probe(tmp_path, files) == ["compiled", str(files / NAME)]
    assert _probe(tmp_path) == ["pure", "Python"]


def test_a_build_that_does_not_load_is_passed_over(built, tmp_path):
    work, node = tmp_path / "work", tmp_path / "site-packages"
    work.mkdir()
    (work / NAME).write_bytes(b"\x7fELF not for this machine")        # shipped from another architecture
    installed = node / "profiler" / "accel"
    installed.mkdir(parents=True)
    shutil.copy(built, installed / NAME)                                 # built on the node by its bootstrap
    assert _probe(work, node) == ["compiled", str(installed / NAME)]
    assert _probe(work) == ["pure", "Python"]
