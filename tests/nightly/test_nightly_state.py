import os

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.nightly.state import State, StateError, compare_inputs, fingerprint


def test_fingerprints_and_what_changed(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"one")
    b.write_bytes(b"two")
    known = {str(a): fingerprint(str(a)), str(b): fingerprint(str(b)), "/gone": {"size": 1, "mtime_ns": 1}}
    b.write_bytes(b"TWO")                          # same size
    os.utime(b, ns=(5, 5))
    c = tmp_path / "c"
    c.write_bytes(b"new")
    current = {str(p): fingerprint(str(p)) for p in (a, b, c)}
    assert compare_inputs(known, current) == ([str(c)], [str(b)], ["/gone"])
    sums = {str(p): fingerprint(str(p), checksum=True) for p in (a, b)}
    os.utime(a, ns=(9, 9))                         # touched, same bytes: not changed by checksum
    again = {str(p): fingerprint(str(p), checksum=True) for p in (a, b)}
    assert compare_inputs(sums, again) == ([], [], [])
    assert len(again[str(a)]["sha256"]) == 64


def test_commit_is_atomic_and_checked_on_load(tmp_path):
    state = State(str(tmp_path)).load()
    assert state.data is None and state.current is None and state.inputs == {}
    current = {"stamp": "20261122T030000Z", "profile": "p.cdxj", "urirs": "u.gz", "digests": "d.gz"}
    state.commit({"current": current, "inputs": {}, "versions": ["20261122T030000Z"]})
    assert State(str(tmp_path)).load().current == current
    assert [n for n in os.listdir(tmp_path) if n != "tmp"] == ["state.json"]   # no temp file left
    (tmp_path / "state.json").write_text("{broken")
    with pytest.raises(StateError, match="unreadable"):
        State(str(tmp_path)).load()
    (tmp_path / "state.json").write_text('{"format": 99}')
    with pytest.raises(StateError, match="format 99"):
        State(str(tmp_path)).load()


def test_a_fifo_input_is_never_read_for_its_checksum(tmp_path):
    """A FIFO among the inputs (the profile job skips it) once blocked the checksum forever."""
    import threading
    fifo = str(tmp_path / "in.cdx")
    os.mkfifo(fifo)
    done = {}
    worker = threading.Thread(target=lambda: done.update(fp=fingerprint(fifo, checksum=True)), daemon=True)
    worker.start()
    worker.join(30)
    blocked = worker.is_alive()
    if blocked:                                 # let the blocked open() return
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    assert not blocked and "sha256" not in done["fp"] and done["fp"]["size"] == 0


JSON = st.recursive(st.none() | st.booleans() | st.integers(-2 ** 63, 2 ** 63 - 1) | st.floats(allow_nan=False) |
                    st.text(max_size=10) | st.sampled_from(["20261122T030000Z", "../x", "a/b", "p.cdxj", ""]),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(["format", "inputs", "current", "versions", "nights", "stamp", "profile",
                                         "urirs", "digests", "map", "exact", "approximate_nights", "mode", "size",
                                         "mtime_ns", "sha256", "/in/a.cdx"]), inner, max_size=6),
                    max_leaves=16)
STATES = st.one_of(JSON.map(lambda v: orjson.dumps({"format": 1, **v} if isinstance(v, dict) else v)),
                   JSON.map(orjson.dumps), st.binary(max_size=100))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=STATES)
def test_a_state_file_of_any_shape_loads_or_is_a_one_line_state_error(tmp_path, data):
    (tmp_path / "state.json").write_bytes(data)
    try:
        state = State(str(tmp_path)).load()
    except StateError as e:
        assert "\n" not in str(e)
        return
    current = state.current
    if current:                                 # what loads names plain files of its own folders
        for key in ("profile", "urirs", "digests"):
            assert "/" not in current[key] and current[key] not in ("", ".", "..")
    assert all(isinstance(v, str) for v in state.versions)
