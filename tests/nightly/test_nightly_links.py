"""nightly never follows a link in its folders: a symbolic or hard link named like one of its
state files is refused (exit 2, one line naming it) and the file behind it keeps its bytes; a
state, sets or output folder that is itself a link, or another user's, is refused unless the
config says ``trust_folders: true``."""

import os
import stat

import pytest

from helpers.nightly_archive import Archive, assert_same_profile, captures_by_host
from helpers.plants import plant, snapshot, victim as make_victim

GROUPS = captures_by_host(1200, seed=21)
STATE_FILES = ("lock", "state.json", "runs.jsonl", "sets-ledger.json", "outputs-ledger.json",
               "work-ledger.json")
IN_PLACE = ("lock", "runs.jsonl")       # the files nightly writes in place (not by a rename)


def hosts(part, parts=3):
    return [c for group in GROUPS[part::parts] for c in group]


def one_line(line):
    assert line and "\n" not in line and "Traceback" not in line
    return line


@pytest.mark.parametrize("when", ["first night", "between nights"])
@pytest.mark.parametrize("name, kind", [(n, "symlink") for n in STATE_FILES] + [(n, "hardlink") for n in IN_PLACE])
def test_a_link_named_like_a_state_file_is_refused(tmp_path, capsys, name, when, kind):
    """(A hard link reaches another file only through the files written in place.)"""
    victim = make_victim(str(tmp_path))
    before = snapshot(victim)
    a = Archive(tmp_path / "a")
    a.add_cdx("a.cdx", hosts(0))
    if when == "between nights":
        assert a.night(capsys)[0] == 0
        a.add_cdx("b.cdx", hosts(1), tag="B")
    path = os.path.join(a.state_dir, name)
    if os.path.lexists(path):
        os.unlink(path)
    plant(path, kind, victim)
    status, line = a.night(capsys)
    assert snapshot(victim) == before, "nightly wrote through %s" % name
    assert status == 2, line
    assert path in one_line(line) and ("symbolic link" in line or "hard link" in line)
    assert os.path.lexists(path)


def test_links_to_the_state_folder_and_the_output_folder_are_refused_unless_trusted(tmp_path, capsys):
    real_out, real_state = tmp_path / "real-out", tmp_path / "real-state"
    real_out.mkdir()
    real_state.mkdir()
    os.symlink(real_out, tmp_path / "out-link")
    os.symlink(real_state, tmp_path / "state-link")
    for settings, refused in ((dict(output_dir=str(tmp_path / "out-link")), tmp_path / "out-link"),
                              (dict(state_dir=str(tmp_path / "state-link")), tmp_path / "state-link")):
        a = Archive(tmp_path / "a", **settings)
        a.add_cdx("a.cdx", hosts(0))
        status, line = a.night(capsys)
        assert status == 2 and str(refused) in one_line(line) and "symbolic link" in line
        assert "trust_folders" in line
        assert os.listdir(real_out) == [] and os.listdir(real_state) == []
    a = Archive(tmp_path / "a", output_dir=str(tmp_path / "out-link"), state_dir=str(tmp_path / "state-link"),
                trust_folders=True)
    status, line = a.night(capsys)
    assert status == 0, line
    assert os.path.isfile(os.path.join(real_state, "state.json"))
    assert_same_profile(os.path.join(real_out, "archive-latest.cdxj"), a.scratch())


def test_a_link_as_the_sets_folder_is_refused(tmp_path, capsys):
    a = Archive(tmp_path / "a")
    a.add_cdx("a.cdx", hosts(0))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.makedirs(a.state_dir)
    os.symlink(elsewhere, os.path.join(a.state_dir, "sets"))
    status, line = a.night(capsys)
    assert status == 2 and "sets" in one_line(line) and "symbolic link" in line
    assert os.listdir(elsewhere) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's folder needs root")
def test_another_users_folders_are_refused_unless_trusted(tmp_path, capsys):
    a = Archive(tmp_path / "a")
    a.add_cdx("a.cdx", hosts(0))
    os.makedirs(a.state_dir)
    os.chown(a.out, 4321, 4321)
    status, line = a.night(capsys)
    assert status == 2 and a.out in one_line(line) and "uid 4321" in line and "trust_folders" in line
    a.configure(trust_folders=True)
    status, line = a.night(capsys)
    assert status == 0, line
    assert_same_profile(a.latest, a.scratch())


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's file needs root")
def test_another_users_state_file_is_refused_unless_trusted_and_then_keeps_its_owner(tmp_path, capsys):
    a = Archive(tmp_path / "a")
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    state_json = os.path.join(a.state_dir, "state.json")
    os.chown(state_json, 4321, 4322)
    os.chmod(state_json, 0o640)
    a.add_cdx("b.cdx", hosts(1), tag="B")
    status, line = a.night(capsys)
    assert status == 2 and state_json in one_line(line) and "uid 4321" in line
    a.configure(trust_folders=True)
    status, line = a.night(capsys)
    assert status == 0, line
    st = os.stat(state_json)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4322, 0o640)


def test_state_files_are_replaced_by_a_rename_never_written_in_place(tmp_path, capsys):
    """A reader holding the old state.json or ledger keeps reading the old bytes: each is a new
    inode after a night that changes it."""
    a = Archive(tmp_path / "a")
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    names = ("state.json", "sets-ledger.json", "outputs-ledger.json")
    inodes = {n: os.stat(os.path.join(a.state_dir, n)).st_ino for n in names}
    held = {n: open(os.path.join(a.state_dir, n), "rb") for n in names}
    old = {n: f.read() for n, f in held.items()}
    a.add_cdx("b.cdx", hosts(1), tag="B")
    assert a.night(capsys)[0] == 0
    for n, f in held.items():
        f.seek(0)
        assert f.read() == old[n]
        f.close()
        assert os.stat(os.path.join(a.state_dir, n)).st_ino != inodes[n]
    assert not [e for e in os.listdir(a.state_dir) if e.endswith(".tmp")]


def test_the_profile_link_names_a_version_whose_map_is_already_there(tmp_path, capsys, monkeypatch):
    """The documented order readers rely on: NAME-latest.cdxj moves first, NAME-latest.ukvs after;
    at every moment the version NAME-latest.cdxj names has its map NAME-STAMP.ukvs in place,
    made from it (its !meta source.profile): a reader takes the pair through the profile link."""
    from helpers.nightly_archive import Archive, captures_by_host
    from profiler.files.ukvs import read_map
    from profiler.nightly import publish
    groups = captures_by_host(600, seed=3)
    a = Archive(tmp_path, mementomap="surt")
    seen = []
    real = publish.point_latest

    def checked(folder, ledger, staging, name, target, suffix=".cdxj"):
        real(folder, ledger, staging, name, target, suffix)
        version = os.readlink(a.latest)
        pair = os.path.join(a.out, version[:-len(".cdxj")] + ".ukvs")
        meta = [v for n, v in read_map(pair)[0] if n == "!meta"][0]
        seen.append((suffix, meta["source"]["profile"] == version))
    monkeypatch.setattr(publish, "point_latest", checked)
    for night, part in enumerate((0, 1)):
        a.add_cdx("n%d.cdx" % night, [c for g in groups[part::2] for c in g], tag="N%d" % night)
        assert a.night(capsys)[0] == 0
    assert seen == [(".cdxj", True), (".ukvs", True)] * 2
