"""A newcomer's first ten minutes: a fresh clone of this checkout's HEAD, then every command of
the README in order (the Quick start's venv, activation and install, then the examples and the
extras they install) in one new bash, as a person types them, with nothing of this test run on
PATH; each must exit as the README says. The commands the README shows but that cannot run here
are helpers.doc_commands.NOT_RUN's (the test suite itself, serve, cron)."""

import os
import shlex
import shutil
import subprocess

import pytest

from helpers import doc_commands
from helpers.paths import ROOT
from helpers.venvs import run, user_env

pytestmark = pytest.mark.slow


def _path_without_the_project():
    """PATH without folders that hold an archive-profiler (this run's venv, an activated one)."""
    folders = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(f for f in folders if f and not os.path.exists(os.path.join(f, "archive-profiler")))


def script(commands):
    """The bash script that types the commands one after the other and stops at the first that
    does not exit as documented."""
    lines = ["command -v archive-profiler && { echo 'archive-profiler is on PATH before the Quick start'; exit 3; }"]
    for c in commands:
        lines += ["echo %s" % shlex.quote(">>> %s: %s" % (c.where, c.text)),
                  c.text,
                  "s=$?; [ $s -eq %d ] || { echo %s \"$s\" >&2; exit 1; }"
                  % (c.expected, shlex.quote("FAILED %s (expected exit %d): exit" % (c.where, c.expected)))]
    return "\n".join(lines) + "\necho NEWCOMER-DONE\n"


def test_readme_from_a_fresh_clone(tmp_path):
    clone = tmp_path / "archive-profiler"
    run(["git", "clone", "-q", ROOT, str(clone)], cwd=tmp_path)
    assert not (clone / ".venv").exists()
    commands = [c for c in doc_commands.commands("README.md") if c.reason is None or c.installs]
    texts = [c.text for c in commands]
    quick_start = texts[:texts.index(next(t for t in texts if t.startswith("archive-profiler ")))]
    assert quick_start and quick_start[0].startswith("python3 -m venv .venv"), quick_start
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "script.sh").write_text(script(commands))
    env = user_env(HOME=str(home), PATH=_path_without_the_project(), TMPDIR=str(tmp_path),
                   PIP_CACHE_DIR=os.path.join(os.path.expanduser("~"), ".cache", "pip"),
                   PIP_DISABLE_PIP_VERSION_CHECK="1")
    r = subprocess.run(["bash", str(tmp_path / "script.sh")], cwd=str(clone), env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=3000)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("NEWCOMER-DONE"), (
        "stdout:\n%s\nstderr:\n%s" % (r.stdout[-6000:], r.stderr[-6000:]))
    # what the README promised is there: the console script in the clone's venv, the profile,
    # the completion script written and loadable
    assert os.path.isfile(clone / ".venv" / "bin" / "archive-profiler")
    assert (clone / "sample.cdxj").read_bytes().count(b"\n") > 9000
    completion = home / ".local" / "share" / "bash-completion" / "completions" / "archive-profiler"
    assert completion.stat().st_size > 1000
    run(["bash", "-c", "source %s && complete -p archive-profiler" % shlex.quote(str(completion))],
        cwd=tmp_path, env=env)
    shutil.rmtree(clone / ".venv")
