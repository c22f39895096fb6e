"""The nightly run over several simulated nights: CDX and WARC files arriving, a corrupted input,
recrawls, changed and removed files, runs killed with SIGKILL, a held lock, approximate folds.

After every night the published profile equals a profile of the same inputs made from scratch,
or (on_overlap: approximate) is labelled: each number is exact or carries bounds that hold the
from-scratch value.
"""

import glob
import gzip
import json
import os
import signal
import time

import orjson
import pytest

from profiler.nightly import fold as nightly_fold
from profiler.nightly.lock import RunLock
from profiler.files.validate import validate

from helpers.oracle import registered_domain_size
from helpers.nightly_archive import (Archive, about_meta, assert_same_profile, captures_by_host, cdx_text,
                                     check_within_bounds, run_meta)

GROUPS = captures_by_host(4000, seed=5)


def hosts(part, parts=6):
    return [c for group in GROUPS[part::parts] for c in group]


def state(archive):
    with open(os.path.join(archive.state_dir, "state.json"), "rb") as f:
        return orjson.loads(f.read())


def last_run(archive):
    with open(os.path.join(archive.state_dir, "runs.jsonl"), "rb") as f:
        return orjson.loads(f.read().splitlines()[-1])


def published(archive):
    return os.path.join(archive.out, os.readlink(archive.latest))


def test_several_nights_equal_from_scratch(tmp_path, capsys):
    a = Archive(tmp_path)
    # night 1: an index and a crawl's WARC
    a.add_cdx("a.cdx", hosts(0))
    a.add_warc("crawl-1.warc.gz", 80, seed=11)
    status, line = a.night(capsys)
    assert status == 0 and line.startswith("archive-profiler nightly: published archive-")
    assert last_run(a)["mode"] == "rebuild" and last_run(a)["reason"] == "first run"
    assert_same_profile(a.latest, a.scratch())

    # night 2: new hosts with new digests: folded, exact
    a.add_cdx("b.cdx", hosts(1), tag="N2")
    status, line = a.night(capsys)
    assert status == 0 and "(fold: new URI-Rs and digests only;" in line and "; exact)" in line
    assert_same_profile(a.latest, a.scratch())
    assert validate(a.latest).ok

    # night 3: nothing new
    before = a.versions()
    status, line = a.night(capsys)
    assert status == 0 and line.startswith("archive-profiler nightly: nothing new in 3 input(s)")
    assert a.versions() == before

    # night 4: a gzip index, a truncated gzip index and a file that is no index at all
    a.add_cdx("c.cdx.gz", hosts(2), tag="N4")
    whole = gzip.compress(cdx_text(hosts(3), tag="N4").encode("ascii"))
    a.add_bytes("d.cdx.gz", whole[: len(whole) * 2 // 3])
    a.add_bytes("notes.txt", b"this is not an index\n" * 20)
    status, line = a.night(capsys)
    assert status == 0 and "(fold:" in line
    meta = run_meta(a.latest)
    assert meta["skipped"]["truncated_file"] == 1 and meta["skipped"]["unusable_file"] == 1
    assert [f["path"].endswith("notes.txt") for f in meta["skipped_files"]] == [True]
    assert_same_profile(a.latest, a.scratch())

    # night 5: another WARC (shares digests and URI-Rs with the first crawl): rebuilt
    a.add_warc("crawl-2.warc.gz", 80, seed=12)
    status, line = a.night(capsys)
    assert status == 0 and "(rebuild:" in line and "seen on earlier nights" in line
    assert_same_profile(a.latest, a.scratch())

    # night 6: a recrawl of known URI-Rs
    a.add_cdx("e.cdx", [c[:1] + ("2025" + c[1][4:],) + c[2:] for c in hosts(0)[::7]])
    status, line = a.night(capsys)
    assert status == 0 and "(rebuild:" in line
    assert_same_profile(a.latest, a.scratch())

    # night 7: a file changed in place; night 8: a file removed
    a.add_cdx("b.cdx", hosts(1)[:-5], tag="N2")
    os.utime(os.path.join(a.inputs, "b.cdx"), ns=(1, 1))
    status, line = a.night(capsys)
    assert status == 0 and "1 input(s) changed" in line
    assert_same_profile(a.latest, a.scratch())
    os.unlink(os.path.join(a.inputs, "c.cdx.gz"))
    status, line = a.night(capsys)
    assert status == 0 and "1 input(s) removed" in line
    assert_same_profile(a.latest, a.scratch())

    # versions: the last 3 kept, each with its change report; the link points at the newest
    versions = a.versions()
    assert len(versions) == 3 and os.readlink(a.latest) == versions[-1]
    assert state(a)["versions"] == [v[len("archive-"):-len(".cdxj")] for v in versions]
    for v in versions:
        assert os.path.exists(os.path.join(a.out, v[:-5] + ".changes.md"))
    report = json.load(open(os.path.join(a.out, versions[-1][:-5] + ".changes.json")))
    assert report["keys"]["vanished"] > 0 and report["vanished_hosts"]["count"] > 0
    runs = [json.loads(line) for line in open(os.path.join(a.state_dir, "runs.jsonl"))]
    assert [r["status"] for r in runs].count("published") == 7 and len(runs) == 8


def test_change_report_names_new_hosts_and_growth(tmp_path, capsys):
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    a.night(capsys)
    a.add_cdx("b.cdx", hosts(1), tag="N2")
    a.night(capsys)
    stem = published(a)[:-len(".cdxj")]
    report = json.load(open(stem + ".changes.json"))
    new_hosts = {h["key"] for h in report["new_hosts"]["top"]}
    # the default policy: a line for every host under a registered domain, else of <= 3 labels
    expected = {c[0].split(")")[0] + ")/*" for c in hosts(1)
                if registered_domain_size(c[0].split(")")[0]) or c[0].split(")")[0].count(",") < 3}
    assert report["new_hosts"]["count"] == len(expected) > 5
    assert expected >= new_hosts
    total = report["totals"]["urim.total"]
    assert total == [len(hosts(0)), len(hosts(0)) + len(hosts(1)), len(hosts(1))]
    assert sum(r["urim.total"][2] for r in report["by_year"]) == len(hosts(1))
    assert sum(r["urim.total"][2] for r in report["by_tld"]) == len(hosts(1))
    text = open(stem + ".changes.md").read()
    assert "## New hosts (%d)" % report["new_hosts"]["count"] in text and "## Growth by mime (type)" in text


@pytest.mark.parametrize("stage", ["profiled", "placed", "committed"])
def test_run_killed_at_each_stage_recovers(tmp_path, capsys, stage):
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    a.night(capsys)
    first = published(a)
    state_before = open(os.path.join(a.state_dir, "state.json"), "rb").read()
    a.add_cdx("b.cdx", hosts(1), tag="N2")
    proc = a.start(stall=stage)
    assert proc.stdout.readline().strip() == "STALLED " + stage
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    lock = json.load(open(os.path.join(a.state_dir, "lock")))
    assert lock["pid"] == proc.pid                      # the dead run's lock file is left behind
    if stage == "committed":                            # committed, but the link not yet moved
        assert published(a) == first and state(a)["current"]["profile"] != os.path.basename(first)
    else:                                               # nothing a reader uses has changed
        assert published(a) == first
        assert open(os.path.join(a.state_dir, "state.json"), "rb").read() == state_before
    status, line = a.night(capsys)
    assert status == 0
    run = last_run(a)
    assert run["stale_lock"]["pid"] == proc.pid
    if stage == "committed":
        assert run["status"] == "unchanged" and run.get("recovered_link")
    else:
        assert run["status"] == "published" and run["mode"] == "fold" and run.get("recovered_files", 0) >= (
            stage == "placed")
    assert_same_profile(a.latest, a.scratch())
    assert not [n for n in os.listdir(a.out) if n.endswith(".tmp")]
    assert len(os.listdir(os.path.join(a.state_dir, "sets"))) == 2


def test_a_failure_after_the_commit_says_the_version_was_committed(tmp_path, capsys, monkeypatch):
    """A full disk (or any error) once the state names the new version, while the latest link is
    moved: the summary line says that version was committed, not that the state is unchanged (it
    said so of a state that named the new version); the next run links it."""
    import errno
    from profiler.nightly import publish
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    a.night(capsys)
    first = published(a)
    a.add_cdx("b.cdx", hosts(1), tag="N2")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    with monkeypatch.context() as m:
        m.setattr(publish, "point_latest", full)
        status, line = a.night(capsys)
    committed = state(a)["current"]["profile"]
    assert status == 1 and committed != os.path.basename(first) and published(a) == first
    assert line == ("archive-profiler nightly: FAILED after %.1f s: [Errno 28] No space left on device (%s was "
                    "committed; the next run points the latest link at it)" % (last_run(a)["seconds"], committed))
    assert last_run(a)["committed"] == committed
    status, line = a.night(capsys)
    assert status == 0 and published(a) == os.path.join(a.out, committed)
    assert_same_profile(a.latest, a.scratch())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_right_after_the_commit_waits_for_the_latest_links(tmp_path, capsys, sig):
    """A SIGTERM (Ctrl-C, hang-up) that comes once the state names the new version waits until
    NAME-latest.cdxj (and .ukvs) name it too: the run ends by it, and readers of the links see the
    version the state names (they kept the old one until the next run)."""
    import subprocess
    import sys
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    a.night(capsys)
    a.add_cdx("b.cdx", hosts(1), tag="N2")
    code = ("import os, sys\n"
            "from profiler.nightly import state\n"
            "commit = state.State.commit\n"
            "def signalled(self, *args, **kwargs):\n"
            "    commit(self, *args, **kwargs)\n"
            "    os.kill(os.getpid(), %d)\n"
            "state.State.commit = signalled\n"
            "from profiler.cli.main import main\n"
            "sys.exit(main(sys.argv[1:]))\n" % sig)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", code, "nightly", "--config", a.config, "-q"], capture_output=True,
                          text=True, cwd=root, env=dict(os.environ, PYTHONPATH=root), timeout=300)
    assert done.returncode == 128 + sig, done.stderr
    committed = state(a)["current"]
    assert published(a) == os.path.join(a.out, committed["profile"])
    assert_same_profile(a.latest, a.scratch())


def test_run_killed_inside_the_local_job_recovers(tmp_path, capsys):
    """SIGKILL to the run and its map/reduce processes while the local runner works."""
    a = Archive(tmp_path, runner="local", cores=2)
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    first = published(a)
    state_before = open(os.path.join(a.state_dir, "state.json"), "rb").read()
    a.add_cdx("b.cdx", hosts(1), tag="N2")
    tmp = os.environ["TMPDIR"]
    proc = a.start()
    deadline = time.monotonic() + 120
    # as soon as map tasks run (the whole job takes about a second): mrjob's local runner's, or
    # the one without mrjob (profiler.runtime.localjob)
    while not (glob.glob(os.path.join(tmp, "archive-profiler-*", "profile_job.*", "step", "000", "mapper", "*"))
               or glob.glob(os.path.join(tmp, "archive-profiler-*", "job", "map-*"))):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert published(a) == first
    assert open(os.path.join(a.state_dir, "state.json"), "rb").read() == state_before
    status, line = a.night(capsys)
    assert status == 0 and "(fold:" in line
    assert_same_profile(a.latest, a.scratch())


def test_a_held_lock_stops_a_second_run(tmp_path, capsys):
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    os.makedirs(a.state_dir)
    with RunLock(a.state_dir):
        status, line = a.night(capsys)
    assert status == 75
    assert line.startswith("archive-profiler nightly: not run: another nightly run holds")
    assert "pid %d" % os.getpid() in line
    assert not os.path.exists(a.latest)
    assert last_run(a)["status"] == "locked"
    assert a.night(capsys)[0] == 0 and os.path.exists(a.latest)


def test_approximate_fold_labels_exactly_the_keys_it_cannot_know(tmp_path, capsys):
    a = Archive(tmp_path, on_overlap="approximate", max_approximate_nights=2)
    a.add_cdx("a.cdx", hosts(0) + hosts(1))
    a.night(capsys)
    # a recrawl of some URI-Rs in 2025 with new content (no revisits), plus new hosts
    recrawl = [(u, "2025" + ts[4:], url, mime, status, "R" + digest if digest != "-" else "-", n)
               for u, ts, url, mime, status, digest, n in hosts(0)[::5] if mime != "warc/revisit"]
    a.add_cdx("b.cdx", recrawl + hosts(2), tag="N2")
    status, line = a.night(capsys)
    assert status == 0 and "(approximate:" in line and "key(s) with bounds" in line
    exact, bounded = check_within_bounds(a.latest, a.scratch())
    assert bounded == last_run(a)["bounded_keys"] > 0 and exact > bounded
    about = about_meta(a.latest)
    assert about["merge"]["bounds"] == ["urim.min", "urim.max", "urir"]
    assert validate(a.latest).ok
    # the next night folds exactly, bounds carried over; past max_approximate_nights it rebuilds
    a.add_cdx("c.cdx", hosts(3), tag="N3")
    a.night(capsys)
    assert last_run(a)["mode"] == "fold"
    check_within_bounds(a.latest, a.scratch())
    a.add_cdx("d.cdx", [(u, "2026" + ts[4:]) + tuple(rest) for u, ts, *rest in recrawl], tag="N4")
    status, line = a.night(capsys)
    assert "(rebuild: the profile has carried bounds for 2 night(s)" in line
    assert_same_profile(a.latest, a.scratch())


def test_a_profile_with_bounds_is_rebuilt_once_on_overlap_is_rebuild(tmp_path, capsys):
    """on_overlap changed from approximate to rebuild (exact numbers) between nights: the next night
    rebuilds, nothing new or not. It folded into the profile with bounds, or kept it published."""
    a = Archive(tmp_path, on_overlap="approximate", max_approximate_nights=100)
    a.add_cdx("a.cdx", hosts(0))
    a.night(capsys)
    recrawl = [(u, "2025" + ts[4:], url, mime, status, "R" + digest if digest != "-" else "-", n)
               for u, ts, url, mime, status, digest, n in hosts(0)[::5] if mime != "warc/revisit"]
    a.add_cdx("b.cdx", recrawl, tag="N2")
    status, line = a.night(capsys)
    assert status == 0 and "(approximate:" in line
    a.configure(on_overlap="rebuild")
    status, line = a.night(capsys)
    assert status == 0 and "(rebuild: the profile carries bounds and on_overlap is rebuild" in line, line
    assert line.endswith("exact) in %s" % line.rsplit(" in ", 1)[1])
    assert_same_profile(a.latest, a.scratch())
    a.add_cdx("c.cdx", hosts(1), tag="N3")               # exact again: folds
    status, line = a.night(capsys)
    assert status == 0 and "(fold: new URI-Rs and digests only;" in line and "; exact)" in line, line
    assert_same_profile(a.latest, a.scratch())


def test_a_config_renamed_publishes_under_its_new_name_at_once(tmp_path, capsys):
    """name changed between nights, nothing new: the next night publishes NAME-latest.cdxj of the
    new name (it said the old name's version stayed published, and the new name had no version
    until something new came); the old name's files are left alone."""
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    old = os.readlink(a.latest)
    a.configure(name="renamed")
    status, line = a.night(capsys)
    assert status == 0 and "published renamed-" in line and "(rebuild: the name changed to renamed" in line, line
    latest = os.path.join(a.out, "renamed-latest.cdxj")
    assert_same_profile(latest, a.scratch())
    assert os.readlink(a.latest) == old and os.path.exists(os.path.join(a.out, old))
    status, line = a.night(capsys)
    assert status == 0 and "nothing new in 1 input(s); renamed-" in line, line


def test_approximate_rebuilds_when_a_revisit_may_resolve_across_nights(tmp_path, capsys):
    a = Archive(tmp_path, on_overlap="approximate")
    a.add_cdx("a.cdx", hosts(0))
    a.night(capsys)
    # the same URLs, same content, later: revisits of the originals profiled last night
    revisits = [(u, "2025" + ts[4:], url, "warc/revisit", "-", d, 500)
                for u, ts, url, mime, status, d, n in hosts(0)[::4] if d != "-" and mime != "warc/revisit"]
    a.add_cdx("b.cdx", revisits)
    status, line = a.night(capsys)
    assert "(rebuild:" in line and "a revisit's original may be in an earlier night" in line
    assert_same_profile(a.latest, a.scratch())


def test_language_detection_reaches_rebuilds_and_folds(tmp_path, capsys):
    """detect_language: the profile job and the night's scan (the keys a fold cannot know) detect
    the languages of pages that declare none, and the header records the detector."""
    from profiler.testing import synthetic_warc
    a = Archive(tmp_path, policy="lang", detect_language=True, on_overlap="approximate")
    synthetic_warc.write_language_warc(os.path.join(a.inputs, "n1.warc.gz"), 150, seed=1, declare=False,
                                       revisit_share=0)
    assert a.night(capsys)[0] == 0
    assert_same_profile(a.latest, a.scratch())
    with open(a.latest, "rb") as f:
        assert b" fra {" in f.read()
    # the same sites again: folded, with bounds on the keys of the URI-Rs seen before
    synthetic_warc.write_language_warc(os.path.join(a.inputs, "n2.warc.gz"), 60, seed=2, declare=False,
                                       revisit_share=0)
    status, line = a.night(capsys)
    assert status == 0 and "(approximate:" in line
    exact, bounded = check_within_bounds(a.latest, a.scratch())
    assert bounded > 0 and exact > 0
    assert about_meta(a.latest)["language_detection"]["detector"] == "CLD2"
    # switching detection off changes what the numbers mean: a rebuild
    a.configure(detect_language=False)
    status, line = a.night(capsys)
    assert "(rebuild: policy, revisit handling, language detection or archive URI changed" in line
    assert_same_profile(a.latest, a.scratch())
    assert "language_detection" not in about_meta(a.latest)


def test_a_broken_new_profile_is_never_published(tmp_path, capsys, monkeypatch):
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    a.night(capsys)
    first, state_before = published(a), state(a)
    a.add_cdx("b.cdx", hosts(1), tag="N2")
    real_fold = nightly_fold.fold

    def unsorted_fold(old, delta, out, header, *args):
        counts = real_fold(old, delta, out, header, *args)
        lines = open(out, "rb").read().splitlines(keepends=True)
        open(out, "wb").write(b"".join(lines[:6] + lines[7:8] + lines[6:7] + lines[8:]))
        return counts
    monkeypatch.setattr(nightly_fold, "fold", unsorted_fold)
    status, line = a.night(capsys)
    assert status == 1
    assert "FAILED" in line and "did not validate" in line and "not in byte order" in line
    assert published(a) == first and state(a) == state_before and len(a.versions()) == 1
    monkeypatch.undo()
    assert a.night(capsys)[0] == 0
    assert_same_profile(a.latest, a.scratch())


def test_a_damaged_published_profile_is_rebuilt(tmp_path, capsys):
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    a.night(capsys)
    with open(published(a), "ab") as f:
        f.write(b"* - - - {\"urim\":{}}\n")            # out of order: the file no longer merges
    a.add_cdx("b.cdx", hosts(1), tag="N2")
    damaged = os.path.basename(published(a))
    status, line = a.night(capsys)
    assert status == 0 and "(rebuild: the published profile %s is damaged" % damaged in line, line
    assert_same_profile(a.latest, a.scratch())
    assert "Note: the previous profile %s is damaged" % damaged in open(published(a)[:-5] + ".changes.md").read()


def test_a_damaged_value_in_the_published_profile_is_rebuilt(tmp_path, capsys):
    """A value the fold must combine (the root key, which the night's captures touch too) that
    is not JSON: the night rebuilds from the inputs instead of failing."""
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    a.night(capsys)
    path = os.path.realpath(published(a))
    lines = open(path, "rb").read().splitlines(keepends=True)
    lines = [b"* - - - {\"urim\":\n" if line.startswith(b"* - - - ") else line for line in lines]
    open(path, "wb").write(b"".join(lines))
    a.add_cdx("b.cdx", hosts(1), tag="N2")
    status, line = a.night(capsys)
    assert status == 0 and "(rebuild: the published profile %s is damaged" % os.path.basename(path) in line, line
    assert_same_profile(a.latest, a.scratch())


def test_settling_inputs_wait_for_the_next_run(tmp_path, capsys):
    a = Archive(tmp_path, settle_seconds=3600)
    a.add_cdx("a.cdx", hosts(0))
    old = time.time() - 7200
    os.utime(os.path.join(a.inputs, "a.cdx"), (old, old))
    a.add_cdx("b.cdx", hosts(1), tag="N2")             # still being written
    assert a.night(capsys)[0] == 0
    assert last_run(a)["settling_inputs"] == 1 and last_run(a)["captures"] == len(hosts(0))
    a.add_cdx("a.cdx", hosts(0)[:-3])                  # a known input being rewritten: no rebuild yet
    status, line = a.night(capsys)
    assert status == 0 and "nothing new" in line
    for name in ("a.cdx", "b.cdx"):
        os.utime(os.path.join(a.inputs, name), (old, old))
    status, line = a.night(capsys)
    assert "(rebuild: 1 input(s) changed" in line
    assert_same_profile(a.latest, a.scratch())


@pytest.mark.parametrize("text, message", [
    ("inputs: [in]\n", "output_dir (where profiles are published) is required"),
    ("inputs: [in]\noutput_dir: out\non_overlap: guess\n", "on_overlap must be one of rebuild, approximate"),
    ("inputs: [in]\noutput_dir: out\nkeep: 0\n", "keep must be at least 1"),
    ("inputs: [in]\noutput_dir: out\nkepe: 3\n", "unknown key 'kepe'"),
    ("inputs: [\n", "not YAML"),
])
def test_config_mistakes_are_one_line(tmp_path, capsys, text, message):
    from profiler.cli import main as cli
    config = tmp_path / "n.yaml"
    config.write_text(text)
    assert cli.main(["nightly", "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and err.startswith("archive-profiler: error:")


def test_missing_inputs_is_a_user_error_not_a_traceback(tmp_path, capsys):
    a = Archive(tmp_path, inputs=["nowhere/"])
    status, line = a.night(capsys)
    assert status == 2 and line == "archive-profiler nightly: FAILED after %s: input not found: %s (the " \
        "published profile and the state are unchanged)" % (line.split("after ")[1].split(":")[0],
                                                            os.path.join(str(tmp_path), "nowhere/"))


@pytest.mark.parametrize("text, message", [
    ("inputs: [nowhere/]\noutput_dir: out\n", "input not found: %s"),
    ("inputs: [here/]\noutput_dir: out\npolicy: defualt\n", "policy not found: defualt"),
])
def test_a_first_night_that_cannot_run_makes_no_folder(tmp_path, capsys, text, message):
    """The example config run unedited made /data/archive/profiles (and its .nightly state), then
    failed on the input /data/archive/cdx/: a missing input or policy is found first."""
    from profiler.cli import main as cli
    os.mkdir(str(tmp_path / "here"))
    config = tmp_path / "n.yaml"
    config.write_text(text)
    assert cli.main(["nightly", "--config", str(config)]) == 2
    out = capsys.readouterr().out
    assert (message % (tmp_path / "nowhere/") if "%s" in message else message) in out, out
    assert not (tmp_path / "out").exists()


def test_mementomap_published_beside_each_version(tmp_path, capsys):
    from profiler.files.ukvs import profile_to_map
    a = Archive(tmp_path, mementomap="surt")
    a.add_cdx("a.cdx", hosts(0))
    a.night(capsys)
    a.add_cdx("b.cdx", hosts(1), tag="N2")
    a.night(capsys)
    link = os.path.join(a.out, "archive-latest.ukvs")
    assert os.readlink(link) == os.readlink(a.latest)[:-5] + ".ukvs"
    profile_to_map(a.scratch(), str(tmp_path / "scratch.ukvs"))
    def body(path):
        return [line for line in open(path, "rb") if not line.startswith(b"!")]
    assert body(link) == body(str(tmp_path / "scratch.ukvs"))
    assert state(a)["current"]["map"] == os.readlink(link)
    a.configure(mementomap=None)
    a.add_cdx("c.cdx", hosts(2), tag="N3")
    a.night(capsys)
    assert not os.path.lexists(link)


def test_local_rebuilds_and_inline_nights_give_the_same_profile(tmp_path, capsys):
    a = Archive(tmp_path, runner="local", cores=2, delta_runner="inline")
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    a.add_cdx("b.cdx", hosts(1), tag="N2")
    status, line = a.night(capsys)
    assert status == 0 and "(fold:" in line
    assert_same_profile(a.latest, a.scratch())


@pytest.mark.parametrize("seed", range(6))
def test_random_nights_are_exact_or_bounded(tmp_path, capsys, seed):
    """Random nights (new hosts, recrawls with new or the same content, revisits, shared digests):
    after each, the profile equals the from-scratch one, or every number it does not bound does."""
    import random
    rng = random.Random(seed)
    a = Archive(tmp_path, on_overlap=rng.choice(["approximate", "rebuild"]), max_approximate_nights=3,
                resolve_revisits=rng.random() < 0.8)
    pool = list(range(12))
    rng.shuffle(pool)
    seen = []
    for night in range(4):
        captures = hosts(pool.pop(), 12)
        if seen and rng.random() < 0.7:                     # recaptures of known URLs
            old = rng.sample(seen, min(len(seen), 60))
            year = "%d" % (2025 + night)
            for u, ts, url, mime, status, digest, n in old:
                kind = rng.random()
                if kind < 0.3 and digest != "-":           # unchanged: a revisit of the same payload
                    captures.append((u, year + ts[4:], url, "warc/revisit", "-", digest, 300))
                elif kind < 0.8:                            # new content
                    captures.append((u, year + ts[4:], url, mime, status, "R%d%s" % (night, digest), n))
        tag = "" if rng.random() < 0.5 else "N%d" % night   # untagged: digests shared with other nights
        a.add_cdx("night-%d.cdx" % night, captures, tag=tag)
        seen += [c for c in captures if c[3] != "warc/revisit"]
        status, line = a.night(capsys)
        assert status == 0, line
        scratch = a.scratch()
        if last_run(a)["exact"] == list(nightly_fold.FEATURES):
            assert_same_profile(a.latest, scratch)
        else:
            assert a.settings["on_overlap"] == "approximate"
            check_within_bounds(a.latest, scratch)


def test_an_input_modified_in_the_future_is_profiled_and_said_so(tmp_path, capsys):
    """A modification time past the clock (the clock moved back, a copy from a machine whose
    clock runs ahead) says nothing of whether the file is still being written: it is profiled
    as it is, counted and named in the summary line, never left waiting for that date."""
    a = Archive(tmp_path, settle_seconds=3600)
    a.add_cdx("a.cdx", hosts(0))
    a.add_cdx("b.cdx", hosts(1), tag="N2")
    old, future = time.time() - 7200, time.time() + 400 * 86400
    os.utime(os.path.join(a.inputs, "a.cdx"), (old, old))
    os.utime(os.path.join(a.inputs, "b.cdx"), (future, future))
    status, line = a.night(capsys)
    assert status == 0 and "published" in line, line
    assert "1 input(s) modified in the future (profiled as they are)" in line, line
    run = last_run(a)
    assert run["future_inputs"] == 1 and run["settling_inputs"] == 0
    assert_same_profile(a.latest, a.scratch())
    status, line = a.night(capsys)                      # the same file the next night: nothing new
    assert status == 0 and line.startswith("archive-profiler nightly: nothing new in 2 input(s)"), line
    assert "1 input(s) modified in the future" in line, line


def test_a_folder_on_a_read_only_mount_says_so(tmp_path, capsys, monkeypatch):
    """An output folder on a filesystem mounted read-only: refused in one line that says so, where
    it said the folder's mode (0755) and to chmod it."""
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    real = os.fstatvfs
    out = os.path.realpath(a.out)

    def fstatvfs(fd):
        found = real(fd)
        if os.path.realpath("/proc/self/fd/%d" % fd) == out:
            return os.statvfs_result(found[:8] + (found.f_flag | os.ST_RDONLY,) + found[9:])
        return found
    real_access = os.access
    monkeypatch.setattr(os, "fstatvfs", fstatvfs)
    monkeypatch.setattr(os, "access", lambda path, mode, **k: False if os.path.realpath(path) == out and mode & os.W_OK
                        else real_access(path, mode, **k))
    status, line = a.night(capsys)
    assert status == 2 and "the folder %s is on a filesystem mounted read-only" % a.out in line, line
    assert "chmod" not in line


@pytest.mark.parametrize("which", ["output", "state"])
def test_a_read_only_output_or_state_folder_is_refused(tmp_path, capsys, which):
    """An output or state folder someone made read-only (chmod a-w: frozen while the archive
    moves) was written all the same by a nightly run as root: a new version published and the
    state replaced. It is refused in one line, exit 2, everything as it was; writable again, the
    next night publishes."""
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", hosts(0))
    assert a.night(capsys)[0] == 0
    a.add_cdx("b.cdx", hosts(1), tag="N2")
    folder = a.out if which == "output" else a.state_dir
    before = {p: os.stat(os.path.join(d, p)).st_mtime_ns for d in (a.out, a.state_dir) for p in os.listdir(d)}
    os.chmod(folder, 0o555)
    try:
        status, line = a.night(capsys)
    finally:
        os.chmod(folder, 0o755)
    assert status == 2 and "the folder %s is read-only (mode 0555)" % folder in line, line
    assert {p: os.stat(os.path.join(d, p)).st_mtime_ns for d in (a.out, a.state_dir) for p in os.listdir(d)
            if p != "runs.jsonl"} == {p: t for p, t in before.items() if p != "runs.jsonl"}
    status, line = a.night(capsys)
    assert status == 0 and "published" in line, line
    assert_same_profile(a.latest, a.scratch())
