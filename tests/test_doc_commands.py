"""Every command README.md and docs/*.md show runs as the doc writes it and exits as it says
(0, or the status of its `# exit N` marker): in a copy of the checkout (the shipped samples and
configs), with `archive-profiler` on PATH and a home of its own, the README first, then each page.
What cannot run here is in helpers.doc_commands.NOT_RUN, with the reason (reported as skips)."""

import os
import re
import subprocess
import sys

import pytest

from helpers import doc_commands
from helpers.venvs import copy_worktree, user_env

COMMANDS = doc_commands.all_commands()


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """{where: (exit status, output)} of every command to run, run in page order in one folder."""
    folder = tmp_path_factory.mktemp("docs")
    work = copy_worktree(folder / "checkout")
    home = folder / "home"
    home.mkdir()
    env = user_env(os.path.dirname(sys.executable), HOME=str(home), TMPDIR=str(folder),
                   COLUMNS="100", LC_ALL="C.UTF-8")
    out = {}
    for command in COMMANDS:
        if command.reason is not None:
            continue
        r = subprocess.run(["bash", "-c", command.text], cwd=str(work), env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=600)
        out[command.where] = (r.returncode, (r.stdout[-2000:] + r.stderr[-3000:]))
    return out


@pytest.mark.parametrize("command", COMMANDS, ids=[c.where for c in COMMANDS])
def test_doc_command(results, command):
    if command.reason is not None:
        pytest.skip(command.reason)
    status, output = results[command.where]
    assert status == command.expected, "%s\n$ %s\nexit %d, expected %d\n%s" % (
        command.where, command.text, status, command.expected, output)
    assert "Traceback" not in output, output


def test_the_docs_show_commands_to_run():
    """The extraction finds the examples (a change of syntax would silently run nothing)."""
    run = [c for c in COMMANDS if c.reason is None]
    assert {c.page for c in run} >= {"README.md", "docs/toolkit.md", "docs/profile.md"}
    assert any(c.text.startswith("archive-profiler profile samples/sample-5k.cdx.gz") for c in run)
    assert len(run) >= 20


def test_every_exception_still_matches_a_command():
    """An entry of NOT_RUN that no documented command matches any more is stale: remove it."""
    for pattern, reason, _ in doc_commands.NOT_RUN:
        assert any(re.search(pattern, c.text) for c in COMMANDS), "stale NOT_RUN entry: %s (%s)" % (pattern, reason)
