"""Local-runner tasks import profiler from the shipped zip, not from the installed package."""

import importlib.util
import os
import stat
import subprocess
import sys
import zipfile

import pytest

from profiler.run.profile import JobFailed, run_profile
from profiler.runtime import shipping
from profiler.runtime.shipping import NOT_SHIPPED, package_zip

from helpers.pythons import python_without_profiler
from helpers.shipped import ONLY_SHIPPED

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def test_package_zip_holds_every_module(tmp_path):
    with zipfile.ZipFile(package_zip(str(tmp_path))) as z:
        names = set(z.namelist())
        stored = {info.compress_type for info in z.infolist()}
    modules = {os.path.relpath(os.path.join(d, n), ROOT) for d, _, files in os.walk(os.path.join(ROOT, "profiler"))
               for n in files if n.endswith(".py")}
    shipped = {m for m in modules if m.split("/")[1] not in NOT_SHIPPED}
    assert shipped <= names and "profiler/__init__.py" in names and "profiler/job/mapside.py" in names
    assert not any(n.split("/")[1] in NOT_SHIPPED for n in names)      # the generators, the tools
    assert stored == {zipfile.ZIP_STORED}       # made for every run: not compressed (0.025 s of 0.03)


def _import_from(zip_path, module, tmp_path):
    """(__file__, the file its code was compiled from) of module imported by a new Python from zip_path."""
    code = "import %s as m; print(m.__file__); print(m.of_uri_r.__code__.co_filename)" % module
    env = dict(os.environ, PYTHONPATH=zip_path)
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(tmp_path), capture_output=True,
                         text=True, check=True).stdout.split("\n")
    return out[0], out[1]


def test_package_zip_holds_current_bytecode_that_tasks_load(tmp_path):
    path = package_zip(str(tmp_path))
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
    sources = {n for n in names if n.endswith(".py")}
    assert {n[:-3] + ".pyc" for n in sources} == {n for n in names if n.endswith(".pyc")}
    where, compiled_from = _import_from(path, "profiler.model.stats", tmp_path)
    assert where.startswith(path) and where.endswith("stats.pyc")
    assert compiled_from == os.path.join(ROOT, "profiler", "model", "stats.py")   # not compiled in the task


def test_bytecode_of_another_python_is_ignored(tmp_path):
    """A .pyc with another magic number (a task on another Python) falls back to the .py."""
    path = str(tmp_path / "other.zip")
    with zipfile.ZipFile(package_zip(str(tmp_path))) as src, zipfile.ZipFile(path, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info, b"\0\0\r\n" + data[4:] if info.filename.endswith(".pyc") else data)
    where, compiled_from = _import_from(path, "profiler.model.stats", tmp_path)
    assert where.endswith("stats.py") and compiled_from == where


def test_stale_or_missing_bytecode_is_not_shipped(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text("X = 1\n")
    assert shipping.bytecode(str(source))[:4] == importlib.util.MAGIC_NUMBER    # compiled into its cache
    os.utime(source, (1_700_000_000, 1_700_000_000))
    assert shipping._cached(str(source)) is None                           # stale: another mtime
    assert shipping.bytecode(str(source)) == shipping._cached(str(source))  # recompiled
    bad = tmp_path / "bad.py"
    bad.write_text("def (:\n")
    assert shipping.bytecode(str(bad)) is None


def test_local_tasks_need_and_get_the_shipped_package(tmp_path, monkeypatch, caplog):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    python = python_without_profiler(tmp_path)
    out = str(tmp_path / "p.cdxj")
    # control: without the zip the tasks cannot import profiler
    with pytest.raises(JobFailed):
        run_profile([SAMPLE], out, runner="local", cores=1, ship_package=False,
                    extra_args=["--python-bin", python])
    assert not os.path.exists(out)
    assert "No module named 'profiler' (not shipped)" in caplog.text
    summary = run_profile([SAMPLE], out, runner="local", cores=1, extra_args=["--python-bin", python])
    assert summary["lines"] > 1000


def test_the_zip_carries_the_pure_python_packages_tasks_import(tmp_path):
    """A node's Python may lack langcodes and publicsuffixlist: a task that has only the zip (no
    site-packages, python -S) still maps languages and finds registered domains."""
    import subprocess
    import sys
    from profiler.runtime.shipping import DEPENDENCIES, package_zip
    path = package_zip(str(tmp_path))
    import zipfile
    names = zipfile.ZipFile(path).namelist()
    for package in DEPENDENCIES:
        assert any(n.startswith(package + "/") for n in names), package
    code = ("import sys; sys.path[:] = [%r] + [p for p in sys.path if 'site-packages' not in p]; "
            "from profiler.model import language, domains; "
            "assert '.zip' in language.__file__ and '.zip' in domains.__file__; "
            "print(language.normalise_language('ar-EG'), domains.registered_domain_labels('uk,co,bbc,news'))" % path)
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ara", "3"]
