"""An input that vanishes between nights (docs/nightly.md, "What a night does").

- Deleted from a listed folder (or its name now a folder): the night rebuilds without it, as the
  docs promise (captures cannot be subtracted), and the summary line and runs.jsonl name it.
- A path the config names itself that is gone: the night fails, exit 2, one line naming it; the
  published profile and the state stay as they were.
- There but unreadable (a link to nothing, a FIFO in the file's place, a file that cannot be
  opened): the night fails, exit 2, one line naming it and why, runs.jsonl lists it; nothing is
  built, the published profile and the state stay as they were (the rebuild published a profile
  without its captures, the summary saying only "1 input(s) changed", or the night ended in a
  bare "[Errno 2]", exit 1). Once it can be read again the next night publishes.
"""

import json
import os

import pytest

from helpers.nightly_archive import Archive, assert_same_profile, captures_by_host, cdx_text

GROUPS = captures_by_host(600, seed=5)


def two_files(tmp_path, listed):
    a = Archive(tmp_path, **({"inputs": ["in/a.cdx", "in/b.cdx"]} if listed else {}))
    a.add_cdx("a.cdx", [c for g in GROUPS[0::2] for c in g])
    a.add_cdx("b.cdx", [c for g in GROUPS[1::2] for c in g], tag="B")
    return a


def last_run(a):
    with open(os.path.join(a.state_dir, "runs.jsonl"), "rb") as f:
        return json.loads(f.read().splitlines()[-1])


def snapshot(a):
    """What a failed night must leave as it was: the state, the published version and its bytes."""
    with open(os.path.join(a.state_dir, "state.json"), "rb") as f:
        state = f.read()
    with open(a.latest, "rb") as f:
        return state, os.readlink(a.latest), f.read(), a.versions()


@pytest.mark.parametrize("how", ["deleted", "folder"])
def test_a_file_gone_from_a_listed_folder_is_rebuilt_without_and_named(tmp_path, capsys, how):
    a = two_files(tmp_path, listed=False)
    assert a.night(capsys)[0] == 0
    b = os.path.join(a.inputs, "b.cdx")
    os.unlink(b)
    if how == "folder":
        os.mkdir(b)
    status, line = a.night(capsys)
    assert status == 0 and "(rebuild: 1 input(s) removed: %s;" % b in line, line
    assert last_run(a)["removed"] == [b] and last_run(a)["removed_inputs"] == 1
    assert_same_profile(a.latest, a.scratch())


def test_a_removed_file_whose_name_holds_a_line_end_is_named_on_one_line(tmp_path, capsys):
    """The summary line is one line for cron mail whatever a file's name holds: a newline in the
    name of a removed input is shown as \\n (the line broke in two)."""
    a = two_files(tmp_path, listed=False)
    odd = a.add_cdx("odd\nname\x1b.cdx", [c for g in GROUPS[2::3] for c in g], tag="O")
    assert a.night(capsys)[0] == 0
    os.unlink(odd)
    status, line = a.night(capsys)
    assert status == 0 and len(line.splitlines()) == 1, line
    assert "1 input(s) removed: %s;" % odd.replace("\n", "\\n").replace("\x1b", "\\x1b") in line, line
    assert last_run(a)["removed"] == [odd]
    assert_same_profile(a.latest, a.scratch())


def test_an_unreadable_input_whose_name_holds_a_line_end_is_named_whole(tmp_path, capsys):
    """The failure line names the whole path, escaped: it was cut at the line end (naming
    ``in/odd``, no file), in the summary line and the run log."""
    a = two_files(tmp_path, listed=False)
    assert a.night(capsys)[0] == 0
    before = snapshot(a)
    fifo = os.path.join(a.inputs, "odd\nname.cdx")
    os.mkfifo(fifo)
    status, line = a.night(capsys)
    shown = fifo.replace("\n", "\\n")
    assert status == 2 and len(line.splitlines()) == 1, line
    assert "input cannot be read: %s (not a regular file (a FIFO))" % shown in line, line
    assert last_run(a)["error"].startswith("input cannot be read: %s (" % shown)
    assert snapshot(a) == before


def test_an_input_whose_name_is_not_utf8_is_kept_in_the_state_and_the_run_log(tmp_path, capsys):
    """A file named in bytes that are not UTF-8 (a Latin-1 name): state.json keeps it (by the hex
    of its bytes), the run log names it escaped. Every night failed at the commit (``surrogates not
    allowed``, exit 1, nothing published), and a night that found it removed published with exit 1,
    its run record lost."""
    a = two_files(tmp_path, listed=False)
    odd = os.fsdecode(os.path.join(os.fsencode(a.inputs), b"caf\xe9.cdx"))
    with open(odd, "w") as f:
        f.write(cdx_text([c for g in GROUPS[2::3] for c in g], tag="L"))
    status, line = a.night(capsys)
    assert status == 0 and line.startswith("archive-profiler nightly: published"), line
    assert_same_profile(a.latest, a.scratch())
    status, line = a.night(capsys)
    assert status == 0 and "nothing new in 3 input(s)" in line, line
    os.unlink(odd)
    status, line = a.night(capsys)
    assert status == 0 and "1 input(s) removed: %s;" % odd.encode("utf-8", "surrogateescape").decode(
        "utf-8", "backslashreplace") in line, line
    record = last_run(a)
    assert record["status"] == "published" and record["removed"][0].endswith("caf\\xe9.cdx")
    assert_same_profile(a.latest, a.scratch())


def test_a_path_the_config_names_that_is_gone_fails_the_night_and_keeps_the_profile(tmp_path, capsys):
    a = two_files(tmp_path, listed=True)
    assert a.night(capsys)[0] == 0
    before = snapshot(a)
    b = os.path.join(a.inputs, "b.cdx")
    os.unlink(b)
    status, line = a.night(capsys)
    assert status == 2 and "\n" not in line and "input not found: %s" % b in line
    assert "the published profile and the state are unchanged" in line
    assert snapshot(a) == before
    assert last_run(a)["status"] == "failed" and b in last_run(a)["error"]


@pytest.mark.parametrize("listed", [False, True])
@pytest.mark.parametrize("how", ["dangling_link", "fifo", "not_opened"])
def test_an_input_that_cannot_be_read_fails_the_night_and_keeps_the_profile(tmp_path, capsys, monkeypatch, how,
                                                                          listed):
    a = two_files(tmp_path, listed=listed)
    assert a.night(capsys)[0] == 0
    before = snapshot(a)
    b = os.path.join(a.inputs, "b.cdx")
    if how == "not_opened":                     # permission denied (root reads every file: simulated)
        real_open = os.open

        def denied(path, *args, **kwargs):
            if path == b:
                raise PermissionError(13, "Permission denied", path)
            return real_open(path, *args, **kwargs)
        monkeypatch.setattr(os, "open", denied)
        os.utime(b, ns=(1, 1))                   # as a chmod would, its status changed
    else:
        os.rename(b, b + ".moved")
        if how == "fifo":
            os.mkfifo(b)
        elif listed:
            pytest.skip("a listed link to nothing is a path not found (the test above)")
        else:
            os.symlink(os.path.join(a.root, "elsewhere", "b.cdx"), b)
    status, line = a.night(capsys)
    assert status == 2 and "\n" not in line, line
    assert "input cannot be read: %s (" % b in line and "the published profile and the state are unchanged" in line
    assert snapshot(a) == before
    run = last_run(a)
    assert run["status"] == "failed" and [u["path"] for u in run["unreadable_inputs"]] == [b]
    if how == "not_opened":
        monkeypatch.undo()
    else:
        os.unlink(b)
        os.rename(b + ".moved", b)
    status, line = a.night(capsys)             # readable again: published
    assert status == 0 and "published" in line, line
    assert_same_profile(a.latest, a.scratch())
