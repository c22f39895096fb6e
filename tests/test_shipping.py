"""Local-runner tasks import profiler from the shipped zip, not from the installed package."""

import os
import stat
import sys
import sysconfig
import zipfile

import pytest

from profiler.pipeline import JobFailed, run_profile
from profiler.shipping import package_zip

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def test_package_zip_holds_every_module(tmp_path):
    with zipfile.ZipFile(package_zip(str(tmp_path))) as z:
        names = set(z.namelist())
    modules = {"profiler/" + n for n in os.listdir(os.path.join(ROOT, "profiler")) if n.endswith(".py")}
    assert modules <= names and "profiler/__init__.py" in names


def _python_without_profiler(tmp_path):
    """A python that sees site-packages minus profiler and jobs (installed or editable)."""
    site = tmp_path / "site"
    site.mkdir()
    purelib = sysconfig.get_paths()["purelib"]
    for name in os.listdir(purelib):
        low = name.lower()
        if name in ("profiler", "jobs") or "archive_profiler" in low or "archive-profiler" in low \
                or low.endswith(".pth"):
            continue
        os.symlink(os.path.join(purelib, name), site / name)
    wrapper = tmp_path / "python-no-profiler"
    wrapper.write_text('#!/bin/sh\nPYTHONPATH="%s${PYTHONPATH:+:$PYTHONPATH}" exec "%s" -S "$@"\n'
                       % (site, sys.executable))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper)


def test_local_tasks_need_and_get_the_shipped_package(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    python = _python_without_profiler(tmp_path)
    out = str(tmp_path / "p.cdxj")
    # control: without the zip the tasks cannot import profiler
    with pytest.raises(JobFailed):
        run_profile([SAMPLE], out, runner="local", cores=1, ship_package=False,
                    extra_args=["--python-bin", python])
    assert not os.path.exists(out)
    summary = run_profile([SAMPLE], out, runner="local", cores=1, extra_args=["--python-bin", python])
    assert summary["lines"] > 1000
