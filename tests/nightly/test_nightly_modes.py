"""Modes and owners: a file nightly replaces keeps the replaced file's mode (and owner, where the
user may set it); new published files get 0644 (or file_mode), new state files 0644, whatever
the umask."""

import os
import stat

import pytest

from helpers.nightly_archive import Archive, captures_by_host

GROUPS = captures_by_host(900, seed=51)
STATE = ("state.json", "sets-ledger.json", "outputs-ledger.json", "runs.jsonl", "lock")


def hosts(part, parts=3):
    return [c for group in GROUPS[part::parts] for c in group]


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def published_files(a):
    return [os.path.join(a.out, n) for n in os.listdir(a.out)
            if n.startswith("archive-") and "latest" not in n]


@pytest.fixture
def umask_077():
    old = os.umask(0o077)
    yield
    os.umask(old)


def test_new_files_get_0644_whatever_the_umask(tmp_path, capsys, umask_077):
    a = Archive(tmp_path, mementomap="surt")
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    files = published_files(a)
    assert len(files) == 5                      # profile, map, report (.json, .md, .svg)
    assert {os.path.basename(f): mode(f) for f in files} == {os.path.basename(f): 0o644 for f in files}
    for name in STATE:
        assert mode(os.path.join(a.state_dir, name)) == 0o644, name
    for name in os.listdir(os.path.join(a.state_dir, "sets")):
        assert mode(os.path.join(a.state_dir, "sets", name)) == 0o644


def test_file_mode_sets_the_published_files_mode(tmp_path, capsys):
    a = Archive(tmp_path, mementomap="surt", file_mode="0640")
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    assert {mode(f) for f in published_files(a)} == {0o640}


def test_replaced_state_files_keep_their_mode(tmp_path, capsys):
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    modes = {"state.json": 0o600, "sets-ledger.json": 0o640, "outputs-ledger.json": 0o600,
             "runs.jsonl": 0o640, "lock": 0o600}
    for name, m in modes.items():
        os.chmod(os.path.join(a.state_dir, name), m)
    inode = os.stat(os.path.join(a.state_dir, "state.json")).st_ino
    a.add_cdx("b.cdx", hosts(1), tag="B")
    assert a.night(capsys)[0] == 0
    assert os.stat(os.path.join(a.state_dir, "state.json")).st_ino != inode      # replaced
    for name, m in modes.items():
        assert mode(os.path.join(a.state_dir, name)) == m, name


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another user needs root")
def test_replaced_state_files_and_links_keep_their_owner(tmp_path, capsys):
    a = Archive(tmp_path, trust_folders=True)
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    owned = [os.path.join(a.state_dir, n) for n in ("state.json", "sets-ledger.json", "outputs-ledger.json")]
    for path in owned + [a.latest]:
        os.chown(path, 4321, 4322, follow_symlinks=False)
    a.add_cdx("b.cdx", hosts(1), tag="B")
    status, line = a.night(capsys)
    assert status == 0 and "(fold:" in line, line
    for path in owned + [a.latest]:
        st = os.lstat(path)
        assert (st.st_uid, st.st_gid) == (4321, 4322), path
