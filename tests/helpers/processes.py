"""The processes a test run starts (fake hadoop, Spark's JVMs and workers, servers, tmux, task
processes): found as the descendants of the pytest process, which adopts the orphans of its
descendants (a child subreaper, Linux), so that a daemon a test started and did not stop is
found, named and ended."""

import ctypes
import os
import signal
import time

#: prctl(2) option: orphaned descendants are reparented to this process instead of init
PR_SET_CHILD_SUBREAPER = 36


def adopt_orphans():
    """Make this process the subreaper of its descendants; False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _children(pid):
    out = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            continue
    return out


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


def descendants(root=None):
    """{pid} of the running descendants of root (this process)."""
    root = os.getpid() if root is None else root
    found, todo = set(), [root]
    while todo:
        for child in _children(todo.pop()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return {pid for pid in found if _alive(pid)}


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
