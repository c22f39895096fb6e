"""The package as published: `python -m build` makes an sdist and a wheel of the checkout; each
installs into a clean virtual environment and profiles the bundled sample there, with the
bundled policies found and the compiled kernels (built from the sdist), the same bytes as the
checkout; neither holds the test generators (profiler/testing) or a top-level `jobs`; and the
install hint of a missing extra is a pip command that works."""

import os
import re
import subprocess
import sys
import tarfile
import zipfile

import pytest

from helpers.paths import ROOT
from helpers.venvs import copy_worktree, new_venv, run, user_env

pytestmark = pytest.mark.slow

SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")
POLICIES = sorted(name for name in os.listdir(os.path.join(ROOT, "conf", "policies")) if name.endswith(".yaml"))
CREATED = re.compile(rb'"created":"[^"]*"')


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    """(sdist, wheel) built by `python -m build` from a copy of the checkout."""
    folder = tmp_path_factory.mktemp("packaging")
    source = copy_worktree(folder / "source")
    run([sys.executable, "-m", "build", "--outdir", str(folder / "dist"), str(source)], cwd=folder)
    names = sorted(os.listdir(folder / "dist"))
    [sdist] = [n for n in names if n.endswith(".tar.gz")]
    [wheel] = [n for n in names if n.endswith(".whl")]
    return str(folder / "dist" / sdist), str(folder / "dist" / wheel)


@pytest.fixture(scope="module")
def checkout_profiles(tmp_path_factory):
    """{policy: the profile of the sample} written by the checkout's code."""
    folder = tmp_path_factory.mktemp("checkout-profiles")
    out = {}
    for policy in ("default", "hosts"):
        path = folder / (policy + ".cdxj")
        subprocess.run([sys.executable, "-m", "profiler.cli", "profile", SAMPLE, "-o", str(path), "-q",
                        "--policy", policy], check=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
        out[policy] = CREATED.sub(b"", path.read_bytes())
    return out


def test_wheel_contents(dists):
    names = zipfile.ZipFile(dists[1]).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.startswith("archive_profiler-")} == {"profiler"}, tops     # no jobs/
    assert not [n for n in names if n.startswith("profiler/testing")]
    assert [n for n in names if re.match(r"profiler/accel/_apfast\..*\.so$", n)], "no compiled kernels"
    assert "profiler/report/templates/report.html" in names
    shipped = sorted(os.path.basename(n) for n in names if "/share/archive-profiler/policies/" in n)
    assert shipped == POLICIES


def test_sdist_contents(dists):
    with tarfile.open(dists[0]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ["setup.py", "setup.cfg", "pyproject.toml", "README.md", "profiler/accel/_apfast.c",
                   "profiler/accel/common.h"] + ["conf/policies/" + p for p in POLICIES]:
        assert needed in names, needed
    assert not [n for n in names if n.startswith(("profiler/testing", "jobs/", "tests/"))]


def _install_and_profile(tmp_path, dist, checkout_profiles):
    """A clean venv with dist installed; the sample profiled there from another folder (no
    checkout beside it): the same bytes as the checkout's, the compiled kernels loaded."""
    bin_dir = new_venv(tmp_path / "venv")
    env = user_env(bin_dir)
    run([os.path.join(bin_dir, "pip"), "install", "-q", dist], cwd=tmp_path, env=env)
    work = tmp_path / "work"
    work.mkdir()
    for policy, expected in checkout_profiles.items():
        out = work / (policy + ".cdxj")
        run(["archive-profiler", "profile", SAMPLE, "-o", str(out), "-q", "--policy", policy, "-r", "local",
             "--cores", "2"], cwd=work, env=env)
        assert CREATED.sub(b"", out.read_bytes()) == expected, policy
    probe = ("import importlib.util, sys; from profiler.accel import fast; from profiler.model import policy; "
             "print(fast.kind()); print(importlib.util.find_spec('profiler.testing') is None, "
             "importlib.util.find_spec('jobs') is None); print(policy.POLICY_DIRS[-1])")
    lines = run([os.path.join(bin_dir, "python"), "-c", probe], cwd=work, env=env).stdout.splitlines()
    assert lines[0] == "compiled"
    assert lines[1] == "True True"
    assert sorted(os.listdir(lines[2])) == POLICIES
    return bin_dir, env, work


def test_wheel_installs_and_runs(dists, tmp_path, checkout_profiles):
    bin_dir, env, work = _install_and_profile(tmp_path, dists[1], checkout_profiles)
    # a missing extra names the pip command that adds it to this installation, and it works
    r = subprocess.run(["archive-profiler", "serve", "x.ukvs"], cwd=work, env=env, capture_output=True,
                       text=True)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    command = r.stderr.split("): ", 1)[1].strip()
    assert command == "pip install '%s[serve]'" % dists[1], r.stderr
    run(command, cwd=work, env=env, shell=True)
    run([os.path.join(bin_dir, "python"), "-c", "import uvicorn, httptools"], cwd=work, env=env)


def test_sdist_builds_the_extension(dists, tmp_path, checkout_profiles):
    _install_and_profile(tmp_path, dists[0], checkout_profiles)
