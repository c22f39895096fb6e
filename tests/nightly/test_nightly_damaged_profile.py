"""A night that finds its published profile damaged or changed (cut mid-line by a full disk,
unsorted, someone's copy in its place) rebuilds it from the inputs, says so in its summary line
and in runs.jsonl, and never publishes a damaged profile; the damaged file is left alone."""

import os
import random

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.files.validate import validate

from helpers.nightly_archive import Archive, assert_same_profile, captures_by_host

GROUPS = captures_by_host(1500, seed=41)


def hosts(part, parts=3):
    return [c for group in GROUPS[part::parts] for c in group]


def last_run(archive):
    with open(os.path.join(archive.state_dir, "runs.jsonl"), "rb") as f:
        return orjson.loads(f.read().splitlines()[-1])


def damage(path, how, rng):
    with open(path, "rb") as f:
        data = f.read()
    lines = data.splitlines(keepends=True)
    first_data = next(i for i, line in enumerate(lines) if not line.startswith(b"!"))
    if how == "cut mid-line":
        start = sum(map(len, lines[:first_data]))
        cut = rng.randrange(start + 1, len(data) - 1)
        while data[cut - 1:cut] == b"\n":
            cut -= 1
        data = data[:cut]
    elif how == "cut at a line end":
        data = b"".join(lines[:rng.randrange(first_data + 1, len(lines))])
    elif how == "unsorted":
        i = rng.randrange(first_data, len(lines) - 1)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
        data = b"".join(lines)
    elif how == "junk bytes":
        i = rng.randrange(len(data) - 1)
        data = data[:i] + b"\x00\xff{" + data[i + 3:]
    elif how == "emptied":
        data = b""
    with open(path, "r+b") as f:             # in place, as a full disk or a stray copy leaves it
        f.truncate(0)
        f.write(data)


HOW = ["cut mid-line", "cut at a line end", "unsorted", "junk bytes", "emptied"]


def night_after_damage(tmp, capsys, how, seed, new_input):
    a = Archive(tmp, keep=1)
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    published = os.path.join(a.out, os.readlink(a.latest))
    damage(published, how, random.Random(seed))
    damaged = open(published, "rb").read()
    if new_input:
        a.add_cdx("b.cdx", hosts(1), tag="B")
    status, line = a.night(capsys)
    assert status == 0, line
    assert "(rebuild: the published profile %s " % os.path.basename(published) in line, line
    run = last_run(a)
    assert run["mode"] == "rebuild" and os.path.basename(published) in run["reason"]
    assert run["damaged_profile"] == os.path.basename(published)
    assert validate(a.latest).ok
    assert_same_profile(a.latest, a.scratch())
    assert open(published, "rb").read() == damaged          # not this tool's file any more: left alone
    return a, line


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("new_input", [True, False])
def test_a_damaged_published_profile_is_rebuilt_from_the_inputs(tmp_path, capsys, how, new_input):
    a, line = night_after_damage(str(tmp_path), capsys, how, 1, new_input)
    if how != "cut at a line end":
        assert "is damaged" in line
    status, line = a.night(capsys)                       # and the night after is normal again
    assert status == 0 and "nothing new" in line, line


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(how=st.sampled_from(HOW), seed=st.integers(0, 2 ** 32), new_input=st.booleans())
def test_random_damage_is_rebuilt(capsys, how, seed, new_input):
    import tempfile
    night_after_damage(tempfile.mkdtemp(), capsys, how, seed, new_input)


def test_someones_copy_in_place_of_the_published_profile_is_rebuilt(tmp_path, capsys):
    """A valid profile of other inputs copied over the published one: folding into it would give
    wrong numbers that validate; the night sees the file changed and rebuilds."""
    other = Archive(tmp_path / "other")
    other.add_cdx("x.cdx", hosts(2), tag="X")
    assert other.night(capsys)[0] == 0
    a = Archive(tmp_path / "a")
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    published = os.path.join(a.out, os.readlink(a.latest))
    with open(other.latest, "rb") as f, open(published, "wb") as g:
        g.write(f.read())
    a.add_cdx("b.cdx", hosts(1), tag="B")
    status, line = a.night(capsys)
    assert status == 0 and "changed since it was published" in line, line
    assert_same_profile(a.latest, a.scratch())


def test_a_damaged_profile_is_never_published_and_the_report_says_why(tmp_path, capsys):
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    published = os.path.join(a.out, os.readlink(a.latest))
    damage(published, "cut mid-line", random.Random(3))
    a.add_cdx("b.cdx", hosts(1), tag="B")
    assert a.night(capsys)[0] == 0
    report = open(os.path.join(a.out, os.readlink(a.latest))[:-5] + ".changes.md").read()
    assert "Note: the previous profile %s is damaged" % os.path.basename(published) in report
