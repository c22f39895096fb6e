"""A night never removes or replaces what it cannot prove it wrote.

Files, links, folders, FIFOs and hard links under every name pattern nightly uses (state
files, set files, work folders, versions, reports, maps, NAME-latest, temp files), left before
the first night or between nights: each night leaves every one of them exactly as it was and
writes through none of them. It either publishes (the profile equal to a from-scratch run) or
refuses with exit status 2 and one line naming what is in its way.
"""

import datetime
import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.nightly import publish

from helpers.nightly_archive import Archive, assert_same_profile, captures_by_host
from helpers.plants import KINDS, plant, snapshot, victim as make_victim

GROUPS = captures_by_host(900, seed=31)
NIGHTS = [datetime.datetime(2026, 11, 22 + n, 2, 30, tzinfo=datetime.timezone.utc) for n in range(4)]


def stamp_of(night):
    return NIGHTS[night].strftime("%Y%m%dT%H%M%SZ")


def hosts(part, parts=4):
    return [c for group in GROUPS[part::parts] for c in group]


def names_in_the_way(stamp):
    """(folder, name) of every name pattern a night with this stamp uses or removes (the sets
    folder itself: test_the_sets_name_held_by_something_else_is_refused)."""
    state = [("state", n) for n in ("lock", "state.json", "runs.jsonl", "sets-ledger.json",
                                    "outputs-ledger.json", "work-ledger.json", ".work-abcdefgh",
                                    ".state.json.1234-host.0123abcd.tmp")] + \
        [("sets", n) for n in ("urirs-%s.gz" % stamp, "digests-%s.gz" % stamp, "urirs-20200101T000000Z.gz")]
    out = [("out", n) for n in (".archive.owner", "archive-latest.cdxj", "archive-latest.ukvs",
                                ".archive-latest.123.tmp", ".archive-latest.cdxj.deadbeef.tmp",
                                ".archive-%s.cdxj.1-host.deadbeef.tmp" % stamp, "archive-20200101T000000Z.cdxj",
                                "archive-20200101T000000Z.changes.md")] + \
        [("out", "archive-%s%s" % (stamp, s)) for s in publish.SUFFIXES]
    return state + out


#: the state files nightly uses in place: a regular file there is its own (a lock taken over, a
#: run log appended to); any other kind of object there is refused
IN_PLACE = ("lock", "runs.jsonl")


def folder_of(archive, where):
    return {"state": archive.state_dir, "sets": os.path.join(archive.state_dir, "sets"), "out": archive.out}[where]


def plant_all(archive, items, stamp, victim):
    """Plant (where, name), kind items (STAMP in a name: stamp) where nothing is yet; returns
    {path: snapshot} of those that must survive."""
    plants = {}
    for (where, name), kind in items:
        path = os.path.join(folder_of(archive, where), name.replace("STAMP", stamp))
        parent = os.path.dirname(path)
        if os.path.lexists(path) or (os.path.lexists(parent) and not os.path.isdir(parent)):
            continue
        before = plant(path, kind, victim)
        if not (kind == "file" and name in IN_PLACE):
            plants[path] = before
    return plants


def run_night(archive, capsys, monkeypatch, night):
    monkeypatch.setattr(publish, "utc_now", lambda: NIGHTS[night])
    return archive.night(capsys)


def check_night(archive, status, line, plants, victim, victim_before, compare=True):
    """Nothing planted changed, nothing written through; a refusal names a plant; a published
    profile (compare: checked) equals a full run's."""
    assert snapshot(victim) == victim_before, "wrote through a link to the victim: %s" % line
    for path, before in plants.items():
        assert snapshot(path) == before, "%s was changed or removed: %s" % (path, line)
    assert line and "\n" not in line and "Traceback" not in line
    if status == 2:
        assert any(p in line for p in plants), line
    else:
        assert status == 0, line
        if compare:
            assert_same_profile(archive.latest, archive.scratch())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("when", [0, 1])
def test_everything_in_the_way_survives(tmp_path, capsys, monkeypatch, kind, when):
    """One kind of object under every name at once: before the first night or between nights."""
    victim = make_victim(str(tmp_path))
    victim_before = snapshot(victim)
    a = Archive(tmp_path / "a", mementomap="surt", keep=1)
    a.add_cdx("a.cdx", hosts(0))
    if when:
        assert run_night(a, capsys, monkeypatch, 0)[0] == 0
        a.add_cdx("b.cdx", hosts(1), tag="B")
    plants = plant_all(a, [(item, kind) for item in names_in_the_way("STAMP")], stamp_of(when), victim)
    status, line = run_night(a, capsys, monkeypatch, when)
    check_night(a, status, line, plants, victim, victim_before)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "folder"])
def test_the_sets_name_held_by_something_else_is_refused(tmp_path, capsys, monkeypatch, kind):
    victim = make_victim(str(tmp_path))
    victim_before = snapshot(victim)
    a = Archive(tmp_path / "a")
    a.add_cdx("a.cdx", hosts(0))
    plants = plant_all(a, [(("state", "sets"), kind)], stamp_of(0), victim)
    status, line = run_night(a, capsys, monkeypatch, 0)
    assert status == 2
    check_night(a, status, line, plants, victim, victim_before)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(st.tuples(st.sampled_from(names_in_the_way("STAMP")), st.sampled_from(KINDS)),
                      min_size=1, max_size=5, unique_by=lambda p: p[0]),
       when=st.sampled_from([0, 1, 2]), keep=st.sampled_from([1, 2]))
def test_random_objects_in_the_way_survive(capsys, monkeypatch, items, when, keep):
    """A few objects under random names, planted before a random night of three."""
    root = tempfile.mkdtemp()
    victim = make_victim(root)
    victim_before = snapshot(victim)
    a = Archive(os.path.join(root, "a"), mementomap="surt", keep=keep)
    plants = {}
    for night in range(3):
        a.add_cdx("n%d.cdx" % night, hosts(night), tag="N%d" % night)
        if night == when:
            plants = plant_all(a, items, stamp_of(night), victim)
        status, line = run_night(a, capsys, monkeypatch, night)
        check_night(a, status, line, plants, victim, victim_before, compare=night == 2)
        if status == 2:
            break


def test_first_night_in_a_used_output_folder_removes_nothing(tmp_path, capsys, monkeypatch):
    """Versions, reports and temp-looking files of the same name pattern that this config did not
    write stay through four nights of keep: 1."""
    a = Archive(tmp_path / "a", keep=1)
    os.makedirs(a.out)
    foreign = {}
    for name in ("archive-20200101T000000Z.cdxj", "archive-20200101T000000Z.changes.md",
                 "archive-20200101T000000Z.changes.json", "archive-20200101T000000Z.ukvs",
                 "archive-%s.cdxj" % stamp_of(2), ".archive-20200101T000000Z.cdxj.99-host.0123abcd.tmp",
                 ".archive-latest.4242.tmp", ".archive-anything.tmp"):
        foreign[os.path.join(a.out, name)] = plant(os.path.join(a.out, name), "file", None)
    for night in range(4):
        a.add_cdx("n%d.cdx" % night, hosts(night), tag="N%d" % night)
        status, line = run_night(a, capsys, monkeypatch, night)
        assert status == 0, line
        for path, before in foreign.items():
            assert snapshot(path) == before, path
    assert_same_profile(a.latest, a.scratch())
    assert os.readlink(a.latest) == "archive-%s.cdxj" % stamp_of(3)
    assert not os.path.lexists(os.path.join(a.out, "archive-%s_02.cdxj" % stamp_of(2)))   # its own: pruned


@pytest.mark.parametrize("suffix", [".cdxj", ".ukvs"])
@pytest.mark.parametrize("when", [0, 1])
def test_a_latest_name_this_config_did_not_write_is_refused(tmp_path, capsys, monkeypatch, suffix, when):
    a = Archive(tmp_path / "a", mementomap="surt")
    a.add_cdx("a.cdx", hosts(0))
    os.makedirs(a.out, exist_ok=True)
    latest = os.path.join(a.out, "archive-latest" + suffix)
    if when:
        assert run_night(a, capsys, monkeypatch, 0)[0] == 0
        with open(latest, "rb") as f:
            data = f.read()
        os.unlink(latest)
        with open(latest, "wb") as f:           # someone's regular copy in place of the link
            f.write(data)
        a.add_cdx("b.cdx", hosts(1), tag="B")
    else:
        with open(latest, "wb") as f:
            f.write(b"someone's own profile\n")
    before = snapshot(latest)
    versions = sorted(n for n in os.listdir(a.out) if n != ".nightly")
    status, line = run_night(a, capsys, monkeypatch, when)
    assert status == 2 and "\n" not in line and latest in line, line
    assert snapshot(latest) == before
    assert sorted(n for n in os.listdir(a.out) if n != ".nightly") == versions     # nothing made, nothing gone


def test_a_link_this_config_wrote_is_replaced_and_its_versions_pruned(tmp_path, capsys, monkeypatch):
    a = Archive(tmp_path / "a", keep=2)
    for night in range(4):
        a.add_cdx("n%d.cdx" % night, hosts(night), tag="N%d" % night)
        assert run_night(a, capsys, monkeypatch, night)[0] == 0
    assert sorted(n for n in os.listdir(a.out) if n.endswith(".cdxj")) == sorted(
        ["archive-%s.cdxj" % stamp_of(n) for n in (2, 3)] + ["archive-latest.cdxj"])
    assert sorted(os.listdir(os.path.join(a.state_dir, "sets"))) == sorted(
        "%s-%s.gz" % (w, stamp_of(3)) for w in ("urirs", "digests"))
