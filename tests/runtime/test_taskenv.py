"""profiler.runtime.taskenv: the local runner's tasks import the standard library's distutils on 3.11."""

import os
import subprocess
import sys

import pytest

from profiler.run import profile as pipeline
from profiler.runtime import taskenv
from profiler.model.policy import load


def test_set_on_311_when_the_task_python_is_this_one():
    assert taskenv.local_task_env((), (3, 11, 7), {}) == {"SETUPTOOLS_USE_DISTUTILS": "stdlib"}


@pytest.mark.parametrize("version, environ, extra", [
    ((3, 12, 0), {}, ()),                                        # no distutils in the standard library
    ((3, 13, 1), {}, ()),
    ((3, 11, 7), {"SETUPTOOLS_USE_DISTUTILS": "local"}, ()),     # the user's choice wins
    ((3, 11, 7), {}, ("--python-bin", "/opt/py312/bin/python")),  # another Python runs the tasks
    ((3, 11, 7), {}, ("--python-bin=/opt/py312/bin/python",)),
])
def test_left_alone(version, environ, extra):
    assert taskenv.local_task_env(extra, version, environ) == {}


def test_local_job_args_carry_it_as_cmdenv(monkeypatch):
    monkeypatch.delenv("SETUPTOOLS_USE_DISTUTILS", raising=False)
    args = pipeline.job_args(["m.json"], load("default"), "local")
    expected = ["--cmdenv", "SETUPTOOLS_USE_DISTUTILS=stdlib"] if sys.version_info < (3, 12) else []
    found = [args[i:i + 2] for i, a in enumerate(args) if a == "--cmdenv"]
    assert found == ([expected] if expected else [])
    assert "--cmdenv" not in pipeline.job_args(["m.json"], load("default"), "hadoop")


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12+ has no distutils of its own")
def test_a_task_with_it_imports_mrjob_without_setuptools():
    code = "import sys, mrjob.job; print('setuptools' in sys.modules, 'pkg_resources' in sys.modules)"
    env = dict(os.environ, **taskenv.local_task_env((), environ={}))
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["False", "False"]

