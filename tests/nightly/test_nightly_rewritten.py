"""An input rewritten in place with its size and mtime kept (``touch -r``): nightly rebuilds it.

The hostile case: a CDX rewritten with other content of the same size (or larger), its mtime
put back with ``touch -r``. Size and mtime alone said nothing changed, and the published
profile kept the old counts.
"""

import os
import time

import pytest

from profiler.nightly.state import compare_inputs, fingerprint

from helpers.nightly_archive import Archive, assert_same_profile, captures_by_host

GROUPS = captures_by_host(3000, seed=8)


def _rewrite(path, where, grow, inode=False):
    """Change one byte of path at its start, middle or end (and append with grow), then put its
    mtime back as ``touch -r`` of a copy made before does. inode: write a copy renamed over it."""
    st = os.stat(path)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    at = {"start": 0, "middle": len(data) // 2, "end": len(data) - 2}[where]
    while data[at:at + 1] in (b" ", b"\n"):
        at += 1
    data[at] = ord("q") if data[at] != ord("q") else ord("z")
    if grow:
        data += data[:data.index(b"\n") + 1]
    time.sleep(0.02)                    # a new change time even on a coarse clock
    if inode:
        tmp = path + ".new"
        with open(tmp, "wb") as f:
            f.write(data)
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.rename(tmp, path)
    else:
        with open(path, "r+b") as f:
            f.write(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns


@pytest.mark.parametrize("where", ["start", "middle", "end"])
@pytest.mark.parametrize("grow", [False, True])
@pytest.mark.parametrize("inode", [False, True])
def test_a_rewrite_with_mtime_put_back_is_a_change(tmp_path, where, grow, inode):
    path = str(tmp_path / "a.cdx")
    with open(path, "wb") as f:
        f.write(b"".join(b"com,example%d)/ 20200101000000 http://example%d.com/ text/html 200 D%d - - 10 0 w\n"
                         % (i, i, i) for i in range(20000)))
    known = {path: fingerprint(path)}
    assert compare_inputs(known, {path: fingerprint(path)}) == ([], [], [])
    _rewrite(path, where, grow, inode)
    assert compare_inputs(known, {path: fingerprint(path)}) == ([], [path], [])


def test_a_state_without_the_new_fields_compares_on_size_and_mtime(tmp_path):
    path = str(tmp_path / "a.cdx")
    (tmp_path / "a.cdx").write_bytes(b"x")
    old = {k: v for k, v in fingerprint(path).items() if k in ("size", "mtime_ns")}
    assert compare_inputs({path: old}, {path: fingerprint(path)}) == ([], [], [])


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_nightly_rebuilds_a_cdx_rewritten_with_its_mtime_put_back(tmp_path, capsys, where):
    a = Archive(tmp_path)
    path = a.add_cdx("a.cdx", [c for g in GROUPS for c in g])
    assert a.night(capsys)[0] == 0
    _rewrite(path, where, False)
    status, line = a.night(capsys)
    assert status == 0 and "(rebuild: 1 input(s) changed" in line
    assert_same_profile(a.latest, a.scratch())
