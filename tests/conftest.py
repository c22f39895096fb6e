import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (ROOT, os.path.dirname(os.path.abspath(__file__))):     # the project; tests/ for helpers
    if path not in sys.path:
        sys.path.insert(0, path)


def _slow_tests():
    """The node ids (without parameters) tests/slow.txt lists."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "slow.txt"), encoding="utf-8") as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The tests slow.txt lists get the slow marker (before -m chooses)."""
    slow = _slow_tests()
    for item in items:
        if item.nodeid.split("[", 1)[0] in slow:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _tmpdir_env(tmp_path, monkeypatch):
    """mrjob runs leave temp dirs in the system temp folder: keep them in the test's own."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))


@pytest.fixture(scope="session", autouse=True)
def _no_process_left_at_the_end():
    """Every process the run starts inherits a mark of the run (helpers.processes); those still
    running when it ends (a leak no test's own check caught) are ended, and named."""
    from helpers import processes
    processes.mark_this_run()
    yield
    left = processes.settle(processes.started_by_this_run(), 5)
    if left:
        names = [processes.describe(p) for p in sorted(left)]
        processes.end(left)
        pytest.fail("processes started by the tests were still running at the end (now ended):\n  %s"
                    % "\n  ".join(names), pytrace=False)


@pytest.fixture(autouse=True)
def _no_process_left_by_the_test(_no_process_left_at_the_end):
    """A test (with its function-scoped fixtures) stops every process it started: fake hadoop,
    Spark, servers, tmux, task processes. One still running after it fails that test, and is
    ended. Processes of module- and session-scoped fixtures were running before it: not its."""
    from helpers import processes
    before = processes.pids()
    yield
    leaked = processes.settle(processes.started_by_this_run(processes.pids() - before), 10)
    if leaked:
        names = [processes.describe(p) for p in sorted(leaked)]
        processes.end(leaked)
        pytest.fail("the test left processes running (now ended):\n  %s" % "\n  ".join(names), pytrace=False)
