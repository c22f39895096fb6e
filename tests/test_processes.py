"""The run's process check (tests/conftest.py, helpers.processes): a daemon a test starts and
does not stop is found, though it left its parent (the run adopts orphans), and ended."""

import subprocess
import time

from helpers import processes


def test_an_orphaned_daemon_is_found_and_ended(tmp_path):
    before = processes.descendants()
    marker = "600.%06d" % (time.monotonic_ns() % 1000000)        # seconds: this test's sleep alone
    # a double fork into a session of its own: the daemon's parent exits at once
    subprocess.run(["bash", "-c", "setsid sleep %s >/dev/null 2>&1 < /dev/null &" % marker], check=True,
                   timeout=30)
    deadline = time.monotonic() + 10
    found = set()
    while not found and time.monotonic() < deadline:
        found = {p for p in processes.descendants() - before if marker in processes.describe(p)}
        time.sleep(0.05)
    assert len(found) == 1, "the orphaned daemon was not found among the run's descendants"
    processes.end(found)
    assert not processes.settle(found, 5)
