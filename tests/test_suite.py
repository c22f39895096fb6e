"""The suite's own rules (tests/conftest.py): a daemon a test starts and does not stop is found,
though it left its parent (it carries the run's mark), and ended; tests/slow.txt names tests
that exist."""

import ast
import os
import subprocess
import time

from helpers import processes
from helpers.paths import ROOT


def test_slow_list_names_existing_tests():
    """A renamed or removed test left in slow.txt would mark nothing: each entry is a test
    function of its file."""
    missing = []
    with open(os.path.join(ROOT, "tests", "slow.txt"), encoding="utf-8") as f:
        entries = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    for entry in entries:
        path, _, name = entry.partition("::")
        try:
            tree = ast.parse(open(os.path.join(ROOT, path), encoding="utf-8").read())
        except OSError:
            missing.append(entry)
            continue
        if name not in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}:
            missing.append(entry)
    assert entries and not missing


def test_an_orphaned_daemon_is_found_and_ended(tmp_path):
    before = processes.pids()
    marker = "600.%06d" % (time.monotonic_ns() % 1000000)        # seconds: this test's sleep alone
    # a double fork into a session of its own: the daemon's parent exits at once
    subprocess.run(["bash", "-c", "setsid sleep %s >/dev/null 2>&1 < /dev/null &" % marker], check=True,
                   timeout=30)
    deadline = time.monotonic() + 10
    found = set()
    while not found and time.monotonic() < deadline:
        found = {p for p in processes.started_by_this_run(processes.pids() - before)
                 if marker in processes.describe(p)}
        time.sleep(0.05)
    assert len(found) == 1, "the orphaned daemon was not found among the run's processes"
    processes.end(found)
    assert not processes.settle(found, 5)
