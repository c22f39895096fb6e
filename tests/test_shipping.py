"""Local-runner tasks import profiler from the shipped zip, not from the installed package."""

import os
import stat
import sys
import zipfile

import pytest

from shipped import ONLY_SHIPPED
from profiler.pipeline import JobFailed, run_profile
from profiler.shipping import package_zip

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def test_package_zip_holds_every_module(tmp_path):
    with zipfile.ZipFile(package_zip(str(tmp_path))) as z:
        names = set(z.namelist())
    modules = {"profiler/" + n for n in os.listdir(os.path.join(ROOT, "profiler")) if n.endswith(".py")}
    assert modules <= names and "profiler/__init__.py" in names


WRAPPER = """#!%s
# A task python that imports profiler only from a shipped .zip on PYTHONPATH, never from
# the installed (or editable) package.
import importlib.machinery, os, runpy, sys

if len(sys.argv) < 2 or sys.argv[1].startswith("-"):     # mrjob's own 'python -c ...' calls
    os.execv(sys.executable, [sys.executable] + sys.argv[1:])

""" + ONLY_SHIPPED + """
sys.meta_path.insert(0, OnlyShipped())
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _python_without_profiler(tmp_path):
    wrapper = tmp_path / "python-no-profiler"
    wrapper.write_text(WRAPPER % sys.executable)
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper)


def test_local_tasks_need_and_get_the_shipped_package(tmp_path, monkeypatch, caplog):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    python = _python_without_profiler(tmp_path)
    out = str(tmp_path / "p.cdxj")
    # control: without the zip the tasks cannot import profiler
    with pytest.raises(JobFailed):
        run_profile([SAMPLE], out, runner="local", cores=1, ship_package=False,
                    extra_args=["--python-bin", python])
    assert not os.path.exists(out)
    assert "No module named 'profiler' (not shipped)" in caplog.text
    summary = run_profile([SAMPLE], out, runner="local", cores=1, extra_args=["--python-bin", python])
    assert summary["lines"] > 1000
