"""nightly removes only what it can prove it wrote, refuses an output another config publishes,
rebuilds a missing published profile, never reads its own outputs or state as inputs, and
names the field of a state.json with wrong types."""

import os

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.cli import main as cli

from helpers.nightly_archive import Archive, assert_same_profile, captures_by_host, run_meta

GROUPS = captures_by_host(2000, seed=11)


def hosts(part, parts=4):
    return [c for group in GROUPS[part::parts] for c in group]


def _output(capsys):
    captured = capsys.readouterr()
    return captured.out + captured.err


def published(archive):
    return os.path.join(archive.out, os.readlink(archive.latest))


def test_foreign_files_in_the_state_folder_survive(tmp_path, capsys):
    a = Archive(tmp_path)
    foreign = {}
    for sub in ("work", "sets", ".work-mine", ""):
        folder = os.path.join(a.state_dir, sub)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "urirs-20200101T000000Z.gz" if sub == "sets" else "notes.txt")
        with open(path, "w") as f:
            f.write("not nightly's")
        foreign[path] = "not nightly's"
    for night in range(3):
        a.add_cdx("n%d.cdx" % night, hosts(night), tag="N%d" % night)
        status, line = a.night(capsys)
        assert status == 0, line
    for path, text in foreign.items():
        assert open(path).read() == text
    # its own old sets are pruned: only the current ones and the foreign one remain
    sets = sorted(os.listdir(os.path.join(a.state_dir, "sets")))
    assert len(sets) == 3 and "urirs-20200101T000000Z.gz" in sets
    # no work folder of its own is left
    assert not [e for e in os.listdir(a.state_dir) if e.startswith(".work-") and e != ".work-mine"]


def test_two_configs_sharing_an_output_are_refused(tmp_path, capsys):
    a = Archive(tmp_path / "a")
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    b = Archive(tmp_path / "b", output_dir=str(tmp_path / "a" / "out"),
                state_dir=str(tmp_path / "b" / "state"))
    b.add_cdx("b.cdx", hosts(1))
    before = sorted(os.listdir(a.out))
    status = cli.main(["nightly", "--config", b.config, "-q"])
    err = _output(capsys)
    assert status == 2 and "belongs to the nightly config" in err and ".archive.owner" in err
    assert sorted(os.listdir(a.out)) == before
    a.add_cdx("a2.cdx", hosts(2), tag="A2")
    assert a.night(capsys)[0] == 0                      # the owner goes on


def test_two_configs_sharing_a_state_folder_are_refused(tmp_path, capsys):
    """Two names in one output folder share its default state folder (OUTPUT_DIR/.nightly): each
    took the other's inputs for removed and rebuilt every night, saying inputs were removed. The
    second config is refused in one line naming the first and its marker; the first goes on, and
    so does it renamed in its own file; a config file moved and renamed once the old marker goes."""
    a = Archive(tmp_path / "a", name="alpha")
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    b = Archive(tmp_path / "b", name="beta", output_dir=str(tmp_path / "a" / "out"))
    b.add_cdx("b.cdx", hosts(1), tag="B")
    state_json = os.path.join(a.state_dir, "state.json")
    before, state_before = sorted(os.listdir(a.out)), open(state_json, "rb").read()
    status = cli.main(["nightly", "--config", b.config, "-q"])
    err = _output(capsys).strip()
    marker = os.path.join(a.out, ".alpha.owner")
    assert status == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "holds the state of the nightly config %s, publishing 'alpha'" % a.config in err, err
    assert "remove %s" % marker in err
    assert sorted(os.listdir(a.out)) == before and open(state_json, "rb").read() == state_before
    status, line = a.night(capsys)                      # the owner goes on: nothing was removed
    assert status == 0 and "nothing new in 1 input(s)" in line, line
    a.configure(name="gamma")                           # renamed in its own file: goes on
    a.add_cdx("a2.cdx", hosts(2), tag="A2")
    status, line = a.night(capsys)
    assert status == 0 and "published gamma-" in line, line
    moved = str(tmp_path / "a" / "moved.yaml")          # its file moved, then renamed: another config
    os.rename(a.config, moved)
    with open(moved, "a") as f:
        f.write("name: delta\n")
    gamma = os.path.join(a.out, ".gamma.owner")
    assert cli.main(["nightly", "--config", moved, "-q"]) == 2 and "remove %s" % gamma in _output(capsys)
    os.unlink(gamma)                                    # until the marker goes
    a.add_cdx("a3.cdx", hosts(3), tag="A3")
    assert cli.main(["nightly", "--config", moved, "-q"]) == 0 and "published delta-" in _output(capsys)
    assert_same_profile(os.path.join(a.out, "delta-latest.cdxj"), a.scratch())


def test_a_setup_moved_elsewhere_is_told_to_remove_the_old_owner_marker(tmp_path, capsys):
    """`mv` of a whole nightly setup: the output folder's marker names the state folder where it
    was. Refused (the advice was to rename the config, which does not help); the line names the
    marker to remove, and with it removed the moved setup goes on from its state."""
    a = Archive(tmp_path / "a")
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    os.rename(str(tmp_path / "a"), str(tmp_path / "moved"))
    moved = Archive(tmp_path / "moved")
    moved.add_cdx("b.cdx", hosts(1), tag="B")
    status = cli.main(["nightly", "--config", moved.config, "-q"])
    err = _output(capsys)
    marker = os.path.join(moved.out, ".archive.owner")
    assert status == 2 and "which is not there any more" in err and "remove %s" % marker in err, err
    os.unlink(marker)
    assert moved.night(capsys)[0] == 0


def test_missing_published_profile_is_rebuilt(tmp_path, capsys):
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    os.unlink(published(a))
    for _ in range(2):                                  # nothing new, yet it must come back
        status, line = a.night(capsys)
        assert status == 0, line
        assert os.path.isfile(published(a))
    assert_same_profile(a.latest, a.scratch())


def test_outputs_inside_the_inputs_are_not_read(tmp_path, capsys):
    a = Archive(tmp_path, inputs=["."], output_dir="out")
    a.add_cdx("a.cdx", hosts(0))
    for night in range(3):
        if night:
            a.add_cdx("n%d.cdx" % night, hosts(night), tag="N%d" % night)
        status, line = a.night(capsys)
        assert status == 0, line
    scratch = a.scratch()
    with open(a.latest, "rb") as f, open(scratch, "rb") as g:
        assert [x for x in f if x[:1] != b"!"] == [x for x in g if x[:1] != b"!"]
    meta = run_meta(a.latest)
    named = [i["path"] if isinstance(i, dict) else i for i in meta.get("inputs", [])] + \
        [i["path"] for i in meta.get("skipped_files", [])]
    assert named and not [p for p in named if "out" + os.sep in p or p.endswith(".cdxj")], named


@pytest.mark.parametrize("change, field", [
    (lambda s: s["current"].update(urirs=7), "current.urirs"),
    (lambda s: s.update(versions="abc"), "versions"),
    (lambda s: s["inputs"][next(iter(s["inputs"]))].update(size="big"), ".size"),
    (lambda s: s.update(current=[1]), "current"),
    (lambda s: s.update(owner={"name": 1}), "owner.name"),
    (lambda s: s.update(inputs_hex={"zz": {}}), "inputs_hex"),
    (lambda s: s.update(inputs_hex={"2f61": 1}), "inputs['2f61']"),
])
def test_state_with_wrong_types_names_the_field(tmp_path, capsys, change, field):
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    path = os.path.join(a.state_dir, "state.json")
    data = orjson.loads(open(path, "rb").read())
    change(data)
    open(path, "wb").write(orjson.dumps(data))
    status = cli.main(["nightly", "--config", a.config, "-q"])
    err = _output(capsys)
    assert status == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and path in err and field in err, err


def test_an_output_folder_that_cannot_be_made(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    a = Archive(tmp_path, output_dir="file/out")
    a.add_cdx("a.cdx", hosts(0))
    status = cli.main(["nightly", "--config", a.config, "-q"])
    err = _output(capsys)
    assert status == 2 and "cannot make the folder" in err and len(err.strip().splitlines()) == 1


def test_a_state_written_before_the_ledgers_is_adopted(tmp_path, capsys):
    """An earlier version's state folder (no outputs or work ledger, a sets ledger of names): the
    versions and sets its state names become this config's, are pruned as before, and the
    published profile is validated before it is folded into."""
    a = Archive(tmp_path, keep=1)
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    first = published(a)
    for name in ("outputs-ledger.json", "work-ledger.json"):
        os.unlink(os.path.join(a.state_dir, name))
    state = orjson.loads(open(os.path.join(a.state_dir, "state.json"), "rb").read())
    with open(os.path.join(a.state_dir, "sets-ledger.json"), "wb") as f:
        f.write(orjson.dumps([state["current"]["urirs"], state["current"]["digests"]]))
    a.add_cdx("b.cdx", hosts(1), tag="B")
    status, line = a.night(capsys)
    assert status == 0 and "(fold:" in line, line
    assert not os.path.exists(first)                            # adopted, then pruned (keep: 1)
    assert len(os.listdir(os.path.join(a.state_dir, "sets"))) == 2
    assert_same_profile(a.latest, a.scratch())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=80), st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 63, 2 ** 63 - 1) | st.text(max_size=8) |
    st.sampled_from(["file", "link", "dir", "../x", "a/b", ".", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["format", "files", "type", "ino", "size", "mtime_ns", "x.cdxj", "..", "a/b"]), inner,
        max_size=4), max_leaves=12).map(orjson.dumps)))
def test_a_ledger_of_any_shape_is_read_or_is_a_one_line_error(tmp_path, data):
    from profiler.nightly.folder import Folder
    from profiler.nightly.ownership import Ledger, LedgerError
    (tmp_path / "ledger.json").write_bytes(data)
    with Folder.open(str(tmp_path)) as folder:
        try:
            entries = Ledger(folder, "ledger.json", folder).entries()
        except LedgerError as e:
            assert "\n" not in str(e)
            return
    assert all("/" not in name and name not in (".", "..") for name in entries)


def test_a_signal_as_the_work_folder_is_made_leaves_none_behind(tmp_path, capsys, monkeypatch):
    """A signal between making the night's work folder and recording it in the work ledger left
    a .work-* folder no ledger names: never removed, one more each time."""
    import signal as signals
    from helpers.nightly_archive import Archive, captures_by_host
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", [c for g in captures_by_host(200, seed=4) for c in g])
    real = os.mkdir

    def made_then_signalled(path, *args, **kw):
        real(path, *args, **kw)
        if str(path).startswith(".work-"):
            os.kill(os.getpid(), signals.SIGINT)
    monkeypatch.setattr(os, "mkdir", made_then_signalled)
    assert a.night(capsys)[0] == 130
    monkeypatch.undo()
    assert a.night(capsys)[0] == 0
    assert [n for n in os.listdir(a.state_dir) if n.startswith(".work-")] == []


def test_a_signal_as_a_staging_folder_is_made_leaves_none_behind(tmp_path, capsys, monkeypatch):
    """The output folder on another filesystem than the work folder: the night finishes its files
    in a staging folder there. A signal between making it and recording it left one no ledger
    names, never removed."""
    import signal as signals
    from helpers.nightly_archive import Archive, captures_by_host
    from profiler.nightly import publish
    from profiler.nightly.folder import Folder
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", [c for g in captures_by_host(200, seed=4) for c in g])
    monkeypatch.setattr(Folder, "device", lambda self: (self.path, None))     # every folder apart
    real = os.mkdir

    def made_then_signalled(path, *args, **kw):
        real(path, *args, **kw)
        if str(path).startswith(publish.STAGING_PREFIX):
            os.kill(os.getpid(), signals.SIGINT)
    monkeypatch.setattr(os, "mkdir", made_then_signalled)
    assert a.night(capsys)[0] == 130
    monkeypatch.setattr(os, "mkdir", real)
    assert a.night(capsys)[0] == 0
    assert [n for n in os.listdir(a.out) if n.startswith(publish.STAGING_PREFIX)] == []


def test_an_empty_owner_marker_is_written_again(tmp_path, capsys):
    """A first night killed (or out of disk) just after making the output folder's owner marker
    left it empty; every night after was refused ('not an owner marker this tool wrote')."""
    from helpers.nightly_archive import Archive, captures_by_host
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", [c for g in captures_by_host(200, seed=4) for c in g])
    os.makedirs(a.out)
    marker = os.path.join(a.out, ".archive.owner")
    open(marker, "wb").close()
    status, line = a.night(capsys)
    assert status == 0, line
    with open(marker, "rb") as f:
        assert orjson.loads(f.read())["state_dir"] == os.path.realpath(a.state_dir)


def test_a_file_that_cannot_be_written_whole_is_not_left_made(tmp_path, monkeypatch):
    from profiler.nightly import folder as folder_mod
    from profiler.nightly.folder import Folder

    def full(fd, data):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(folder_mod, "write_all", full)
    (tmp_path / "f").mkdir()
    with Folder.open(str(tmp_path / "f")) as f:
        with pytest.raises(OSError):
            f.create("x", b"data")
    assert os.listdir(tmp_path / "f") == []


def test_a_run_log_cut_mid_line_gets_the_next_record_on_a_line_of_its_own(tmp_path, capsys):
    """runs.jsonl cut mid-record (a full disk): the next night's record was glued to the cut one."""
    from helpers.nightly_archive import Archive, captures_by_host
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", [c for g in captures_by_host(200, seed=4) for c in g])
    assert a.night(capsys)[0] == 0
    log = os.path.join(a.state_dir, "runs.jsonl")
    with open(log, "ab") as f:
        f.write(b'{"started":"2026-')
    assert a.night(capsys)[0] == 0
    with open(log, "rb") as f:
        lines = f.read().split(b"\n")
    assert lines[-1] == b"" and orjson.loads(lines[-2])["status"] == "unchanged" and lines[-3] == b'{"started":"2026-'


def test_a_version_the_system_will_not_remove_is_kept_and_the_nights_go_on(tmp_path, capsys, monkeypatch):
    """An old version that cannot be removed (immutable, a WORM store's retention: EPERM) is kept,
    said in the summary line and runs.jsonl (`not_removed`), and tried again: every night failed
    from then on, exit 1, before any work."""
    from profiler.nightly.folder import Folder
    a = Archive(tmp_path, keep=1)
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    held = os.readlink(a.latest)[:-len(".cdxj")] + ".changes.md"
    remove = Folder.remove

    def refused(self, name, st):
        if name == held:
            raise PermissionError(1, "Operation not permitted")
        return remove(self, name, st)
    monkeypatch.setattr(Folder, "remove", refused)
    for night in (1, 2):
        a.add_cdx("n%d.cdx" % night, hosts(night), tag="N%d" % night)
        status = cli.main(["nightly", "--config", a.config, "-q"])
        out = _output(capsys)
        assert status == 0 and "published archive-" in out and len(out.strip().splitlines()) == 1, out
        assert "; 1 old file(s) could not be removed, kept (first: %s: Operation not permitted)" \
            % os.path.join(a.out, held) in out, out
        with open(os.path.join(a.state_dir, "runs.jsonl"), "rb") as f:
            assert orjson.loads(f.read().splitlines()[-1])["not_removed"] == [
                {"path": os.path.join(a.out, held), "reason": "Operation not permitted"}]
        assert_same_profile(a.latest, a.scratch())
    assert os.path.exists(os.path.join(a.out, held))
    monkeypatch.setattr(Folder, "remove", remove)       # removable again: the next run removes it
    status, line = a.night(capsys)
    assert status == 0 and not os.path.exists(os.path.join(a.out, held)), line
