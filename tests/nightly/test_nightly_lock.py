import json
import os
import signal
import subprocess
import sys

import pytest

from profiler.nightly.lock import LockHeld, RunLock


def test_one_holder_at_a_time(tmp_path):
    with RunLock(str(tmp_path)) as lock:
        assert lock.stale is None
        assert json.load(open(tmp_path / "lock"))["pid"] == os.getpid()
        with pytest.raises(LockHeld, match="pid %d on " % os.getpid()):
            RunLock(str(tmp_path)).acquire()
    assert (tmp_path / "lock").read_bytes() == b""         # released: nothing stale left
    with RunLock(str(tmp_path)) as lock:
        assert lock.stale is None


def test_a_killed_holders_lock_is_stale_and_taken_over(tmp_path):
    code = ("import sys, time; sys.path.insert(0, %r); from profiler.nightly.lock import RunLock; "
            "RunLock(%r).acquire(); print('held', flush=True); time.sleep(60)"
            % (os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), str(tmp_path)))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    with pytest.raises(LockHeld, match="pid %d" % proc.pid):
        RunLock(str(tmp_path)).acquire()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with RunLock(str(tmp_path)) as lock:
        assert lock.stale["pid"] == proc.pid
