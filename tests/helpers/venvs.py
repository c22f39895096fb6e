"""Clean virtual environments and copies of the checkout, for the tests that install the
package as a user would (tests/test_packaging.py, tests/test_newcomer.py)."""

import os
import shutil
import subprocess
import sys

from helpers.paths import ROOT

#: variables of this test run that a user's shell would not have
_NOT_A_USERS = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTEST_CURRENT_TEST", "PYTEST_ADDOPTS")


def user_env(path_first=None, **extra):
    """The environment of a user's new shell: this one without the test run's Python settings,
    with path_first (a folder) at the front of PATH."""
    env = {k: v for k, v in os.environ.items() if k not in _NOT_A_USERS and not k.startswith("COV_")}
    if path_first:
        env["PATH"] = str(path_first) + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


def run(args, cwd, env=None, timeout=1800, shell=False):
    """Run a command; an AssertionError with its output when it fails."""
    r = subprocess.run(args, cwd=str(cwd), env=env or user_env(), capture_output=True, text=True,
                       timeout=timeout, shell=shell, executable="/bin/bash" if shell else None,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, "%s exited %d\n--- stdout\n%s\n--- stderr\n%s" % (
        args, r.returncode, r.stdout[-5000:], r.stderr[-5000:])
    return r


def copy_worktree(dest):
    """The checkout's files (tracked and new, not ignored) copied into dest: what a clone of
    this work would hold, without its build products."""
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
    for rel in filter(None, listed.split("\0")):
        src = os.path.join(ROOT, rel)
        if not os.path.isfile(src):         # deleted in the work tree
            continue
        target = os.path.join(str(dest), rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(src, target)
    return dest


def new_venv(folder):
    """A new virtual environment (no system site-packages): its bin folder."""
    run([sys.executable, "-m", "venv", str(folder)], cwd=os.path.dirname(str(folder)))
    return os.path.join(str(folder), "bin")
