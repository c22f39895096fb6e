import datetime
import os
import shutil
import tempfile

import pytest

from profiler.errors import RunError
from profiler.nightly import ownership, publish
from profiler.nightly.folder import Folder, UnsafeFile

from helpers.nightly_archive import Archive, assert_same_profile, captures_by_host

NOW = datetime.datetime(2026, 11, 22, 3, 0, 0, tzinfo=datetime.timezone.utc)
STAMPS = ("20261120T030000Z", "20261121T030000Z", "20261122T030000Z")


def test_stamps_are_unique_and_sort_in_time_order():
    taken = set()
    stamps = []
    for _ in range(12):
        s = publish.stamp(NOW, taken)
        taken.add(s)
        stamps.append(s)
    assert stamps[0] == "20261122T030000Z" and stamps[1] == "20261122T030000Z_02"
    names = [os.path.basename(publish.version_path("/x", "archive", s)) for s in stamps]
    later = publish.version_path("/x", "archive", publish.stamp(NOW + datetime.timedelta(seconds=1)))
    assert sorted(names + [os.path.basename(later)]) == names + [os.path.basename(later)]


def test_stamps_used_by_any_file_are_taken():
    names = ["archive-20261122T030000Z.changes.md", "archive-20261122T030000Z_02", "other-20261123T030000Z.cdxj",
             "archive-latest.cdxj", ".archive-20261124T030000Z.cdxj.tmp"]
    assert publish.stamps_used(names, "archive-") == {"20261122T030000Z", "20261122T030000Z_02"}


@pytest.fixture
def folders(tmp_path):
    """(output folder, its ledger, a work folder on the same filesystem)."""
    for name in ("out", "state", "state/work"):
        (tmp_path / name).mkdir()
    out, state = Folder.open(str(tmp_path / "out")), Folder.open(str(tmp_path / "state"))
    work = state.sub("work", make=False)
    ledger = ownership.Ledger(state, ownership.OUTPUTS_LEDGER, out, scratch=work)
    yield out, ledger, work
    for folder in (work, state, out):
        folder.close()


def publish_version(out, ledger, staging, work, stamp_):
    for suffix in publish.SUFFIXES:
        path = os.path.join(work.path, "v" + suffix)
        with open(path, "w") as f:
            f.write(stamp_)
        publish.place(staging, publish.stage(path, staging, work), out, ledger,
                      publish.version_name("archive", stamp_, suffix), 0o644)


def test_latest_link_is_replaced_atomically_and_only_proved_versions_pruned(folders):
    out, ledger, work = folders
    for s in STAMPS:
        publish_version(out, ledger, work, work, s)
    publish.point_latest(out, ledger, work, "archive", publish.version_name("archive", STAMPS[1]))
    publish.point_latest(out, ledger, work, "archive", publish.version_name("archive", STAMPS[2]))
    assert publish.latest_target(out, "archive") == "archive-20261122T030000Z.cdxj"
    assert open(publish.latest_path(out.path, "archive")).read() == STAMPS[2]
    # someone edits one file of the oldest version and replaces another: both are left alone
    edited = publish.version_path(out.path, "archive", STAMPS[0], ".changes.md")
    with open(edited, "a") as f:
        f.write("my notes")
    replaced = publish.version_path(out.path, "archive", STAMPS[0], ".ukvs")
    os.unlink(replaced)
    with open(replaced, "w") as f:
        f.write("my map")
    open(os.path.join(out.path, "archive-20200101T000000Z.cdxj"), "w").close()      # never this tool's
    removed = publish.prune(ledger, "archive", {STAMPS[1], STAMPS[2]})
    assert removed == sorted("archive-20261120T030000Z" + s for s in (".cdxj", ".changes.json", ".changes.svg"))
    assert sorted(os.listdir(out.path)) == sorted(
        ["archive-20200101T000000Z.cdxj", "archive-latest.cdxj", os.path.basename(edited), os.path.basename(replaced)]
        + [publish.version_name("archive", s, x) for s in STAMPS[1:] for x in publish.SUFFIXES])
    assert os.listdir(work.path) == []


def test_a_taken_name_is_never_replaced(folders):
    out, ledger, work = folders
    open(os.path.join(out.path, "archive-20261122T030000Z.cdxj"), "w").write("someone's")
    with open(os.path.join(work.path, "p.cdxj"), "w") as f:
        f.write("mine")
    with pytest.raises(RunError, match="appeared while nightly was publishing"):
        publish.place(work, "p.cdxj", out, ledger, "archive-20261122T030000Z.cdxj", 0o644)
    assert open(os.path.join(out.path, "archive-20261122T030000Z.cdxj")).read() == "someone's"
    assert not ledger.owns("archive-20261122T030000Z.cdxj")
    os.symlink("elsewhere", os.path.join(out.path, "archive-latest.cdxj"))
    with pytest.raises(UnsafeFile, match="archive-latest.cdxj is a symbolic link this nightly config did not write"):
        publish.point_latest(out, ledger, work, "archive", "archive-20261122T030000Z.cdxj")
    assert os.readlink(os.path.join(out.path, "archive-latest.cdxj")) == "elsewhere"


def test_a_work_folder_on_another_filesystem_stages_inside_the_output_folder(folders, monkeypatch):
    """The work folder cannot link into the output folder (EXDEV): files are copied into a staging
    folder made (and recorded) inside the output folder, linked from there, and the staging folder
    is removed."""
    out, ledger, work = folders
    monkeypatch.setattr(work, "device", lambda: -1)
    staging = publish.staging_for(out, ledger, work)
    assert staging is not work and os.path.dirname(staging.path) == out.path
    assert ledger.owns(os.path.basename(staging.path))
    publish_version(out, ledger, staging, work, STAMPS[0])
    publish.point_latest(out, ledger, staging, "archive", publish.version_name("archive", STAMPS[0]))
    assert open(publish.latest_path(out.path, "archive")).read() == STAMPS[0]
    publish.remove_staging(out, ledger, staging, work)
    assert sorted(os.listdir(out.path)) == sorted(
        ["archive-latest.cdxj"] + [publish.version_name("archive", STAMPS[0], x) for x in publish.SUFFIXES])


def _shm_elsewhere():
    return os.path.isdir("/dev/shm") and os.stat("/dev/shm").st_dev != os.stat(tempfile.gettempdir()).st_dev


@pytest.mark.skipif(not _shm_elsewhere(), reason="needs /dev/shm on another filesystem than the temp folder")
def test_nights_with_the_state_on_another_filesystem(tmp_path, capsys):
    state = tempfile.mkdtemp(dir="/dev/shm")
    try:
        groups = captures_by_host(600, seed=71)
        a = Archive(tmp_path, state_dir=state, mementomap="surt", keep=1)
        for night in range(3):
            a.add_cdx("n%d.cdx" % night, [c for g in groups[night::3] for c in g], tag="N%d" % night)
            status, line = a.night(capsys)
            assert status == 0, line
        assert_same_profile(a.latest, a.scratch())
        assert len([n for n in os.listdir(a.out) if n.endswith(".cdxj")]) == 2 and \
            not [n for n in os.listdir(a.out) if n.startswith(".nightly-staging-")]
    finally:
        shutil.rmtree(state)
