"""The processes a test run starts (fake hadoop, Spark's JVMs and workers, servers, tmux, task
processes), found by a variable of this run's environment that every process it starts
inherits (MARK), also a daemon that left its parent: so that one a test did not stop is found,
named and ended."""

import os
import signal
import time
import uuid

#: the variable whose value names this test run in the environment of every process it starts
MARK = "ARCHIVE_PROFILER_TEST_RUN"


def mark_this_run():
    """Set MARK for this process (and so for every process it starts); its value."""
    os.environ[MARK] = os.environ.get(MARK) or uuid.uuid4().hex
    return os.environ[MARK]


def pids():
    """{pid} of every process of this machine (that this user may see)."""
    return {int(name) for name in os.listdir("/proc") if name.isdigit()}


def _marked(pid, token):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            return ("%s=%s" % (MARK, token)).encode() in f.read().split(b"\0")
    except OSError:
        return False


def started_by_this_run(candidates=None):
    """{pid} of the running processes (among candidates) this run started, but itself."""
    token = os.environ.get(MARK)
    if not token:
        return set()
    me = os.getpid()
    return {p for p in (pids() if candidates is None else candidates)
            if p != me and _alive(p) and _marked(p, token)}


def _alive(pid):
    """Whether pid runs (not a zombie waiting to be reaped, not gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def describe(pid):
    """A process's command line, shortened, for a message."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            text = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        text = "?"
    return "%d %s" % (pid, text[:160])


def settle(pids, seconds):
    """pids still running after up to seconds (processes being stopped get the time to exit)."""
    deadline = time.monotonic() + seconds
    left = {p for p in pids if _alive(p)}
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = {p for p in left if _alive(p)}
    return left


def end(pids, grace=3.0):
    """SIGTERM, then SIGKILL after grace seconds, to pids (and the process groups they lead)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                if os.getpgid(pid) == pid:
                    os.killpg(pid, sig)
                else:
                    os.kill(pid, sig)
            except OSError:
                continue
        pids = settle(pids, grace)
        if not pids:
            return
