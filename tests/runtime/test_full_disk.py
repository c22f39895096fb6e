"""A run that meets a full disk, unattended: in the output's folder or in $TMPDIR (the work
folder, the local runner's task files). One line naming why (exit 1), the previous output as it
was, nothing of the run left behind, and the next run, once there is room, writes the same bytes
as a run that never met it."""

import os
import subprocess
import sys

import pytest

from helpers.paths import ROOT
from helpers.small_fs import fill, small_filesystem

SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")
CREATED = "2026-01-01T00:00:00Z"


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, text=True,
                          env=dict(env or os.environ, PYTHONPATH=ROOT), timeout=300)


def without_created(path):
    with open(path, "rb") as f:
        return [line for line in f if b'"created"' not in line]


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_a_full_output_folder_keeps_the_previous_output(tmp_path, runner):
    disk = str(tmp_path / "disk")
    with small_filesystem(disk):
        out = os.path.join(disk, "p.cdxj")
        with open(out, "wb") as f:
            f.write(b"the previous output\n")
        filler = fill(disk, leave=200 << 10)
        r = cli("profile", "-r", runner, SAMPLE, "-o", out, "-q")
        assert r.returncode == 1 and "No space left on device" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert open(out, "rb").read() == b"the previous output\n"
        assert sorted(os.listdir(disk)) == ["fill", "p.cdxj"]
        os.unlink(filler)
        r = cli("profile", "-r", runner, SAMPLE, "-o", out, "-q")
        assert r.returncode == 0, r.stderr
        whole = str(tmp_path / "whole.cdxj")
        assert cli("profile", "-r", runner, SAMPLE, "-o", whole, "-q").returncode == 0
        assert without_created(out) == without_created(whole)


def test_a_full_tmpdir_names_why_a_local_task_failed(tmp_path):
    """A task of the local runner that fails on a full $TMPDIR cannot write why to its stderr
    file there: the run said only `task ap-map1-0 exited with status 1`. Its last words reach
    the client through the pipe it ends on."""
    disk = str(tmp_path / "disk")
    out = str(tmp_path / "p.cdxj")
    with open(out, "wb") as f:
        f.write(b"the previous output\n")
    with small_filesystem(disk, "16m"):
        filler = fill(disk, leave=100 << 10)
        env = dict(os.environ, TMPDIR=disk)
        r = cli("profile", "-r", "local", SAMPLE, "-o", out, "-q", env=env)
        assert r.returncode == 1, r.stderr
        assert "exited with status 1: OSError: [Errno 28] No space left on device" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert open(out, "rb").read() == b"the previous output\n"
        assert sorted(os.listdir(disk)) == ["fill"]
        os.unlink(filler)
        assert cli("profile", "-r", "local", SAMPLE, "-o", out, "-q", env=env).returncode == 0
        assert sorted(os.listdir(disk)) == []


def test_a_full_tmpdir_under_the_inline_runner_is_one_line(tmp_path):
    """mrjob's inline runner logged `Error while reading from` its task's input file (in its
    temp folder, gone by then) on three lines before the error line, even with -q."""
    disk = str(tmp_path / "disk")
    out = str(tmp_path / "p.cdxj")
    with small_filesystem(disk, "16m"):
        filler = fill(disk, leave=100 << 10)
        r = cli("profile", "-r", "inline", SAMPLE, "-o", out, "-q", env=dict(os.environ, TMPDIR=disk))
        assert r.returncode == 1 and "the inline job failed: [Errno 28] No space left on device" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert not os.path.exists(out) and sorted(os.listdir(disk)) == ["fill"]
        os.unlink(filler)
