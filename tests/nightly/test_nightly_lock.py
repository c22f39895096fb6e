import json
import os
import signal
import subprocess
import sys

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.nightly.lock import LockHeld, RunLock, describe


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


# ---------------------------------------------------------------- whatever the lock file holds


SCALARS = st.none() | st.booleans() | st.integers(-2 ** 63, 2 ** 63 - 1) | st.floats(allow_nan=False) | \
    st.text(max_size=20)
JSON = st.recursive(SCALARS,
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(["pid", "host", "started", "x"]) | st.text(max_size=5), inner, max_size=4),
                    max_leaves=10)
CONTENT = st.one_of(
    JSON.map(orjson.dumps),
    st.binary(max_size=300),
    st.fixed_dictionaries({"pid": JSON, "host": JSON, "started": JSON}).map(orjson.dumps),
    st.integers(min_value=1, max_value=10 ** 6).map(lambda n: b'{"pid": 1, "host": "h", "x": "' + b"y" * n + b'"}'),
    st.just(b"[" * 100000),
    st.just(b'{"pid": 1, "host": "a\\nb\\u0000c", "started": "\\n"}'),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=CONTENT)
def test_a_free_lock_holding_anything_is_stale_and_taken_over(tmp_path, content):
    (tmp_path / "lock").write_bytes(content)
    with RunLock(str(tmp_path)) as lock:
        assert lock.stale is None or isinstance(lock.stale, dict)
        text = describe(lock.stale)
        assert isinstance(text, str) and text.isprintable() and len(text) < 300
        assert json.load(open(tmp_path / "lock"))["pid"] == os.getpid()
    assert (tmp_path / "lock").read_bytes() == b""


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=CONTENT)
def test_a_held_lock_holding_anything_is_respected_in_one_line(tmp_path, content):
    import fcntl
    (tmp_path / "lock").write_bytes(content)
    fd = os.open(str(tmp_path / "lock"), os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)      # a live holder: another open file description
    try:
        with pytest.raises(LockHeld) as info:
            RunLock(str(tmp_path)).acquire()
        message = str(info.value)
        assert message.isprintable() and len(message) < 500 and "another nightly run holds" in message
        assert (tmp_path / "lock").read_bytes() == content          # the holder's lock is left alone
    finally:
        os.close(fd)


@pytest.mark.parametrize("kind", ["symlink", "dangling", "folder", "fifo", "hardlink"])
def test_a_lock_name_held_by_something_else_is_refused(tmp_path, kind):
    from helpers.plants import plant, snapshot, victim
    from profiler.errors import UserError
    target = victim(str(tmp_path))
    before = snapshot(target)
    state = tmp_path / "state"
    state.mkdir()
    planted = plant(str(state / "lock"), kind, target)
    with pytest.raises(UserError, match="lock"):
        RunLock(str(state)).acquire()
    assert snapshot(target) == before and snapshot(str(state / "lock")) == planted
