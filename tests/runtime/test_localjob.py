"""profiler.runtime.localjob: a local run that asks nothing of mrjob runs without it, its tasks
forked from the client, and writes the profile and counters of mrjob's local runner."""

import os
import random
import subprocess
import sys

import pytest

from profiler.files import output
from profiler.run.profile import JobFailed, run_profile
from profiler.runtime import localjob, presorted, task
from profiler.testing import synthetic
from helpers import localpaths
from helpers.exactness import without_created
from helpers.paths import ROOT

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")


def test_only_a_run_that_asks_nothing_of_mrjob_runs_without_it(tmp_path, monkeypatch):
    monkeypatch.delenv("MRJOB_CONF", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert localjob.usable()
    assert not localjob.usable(conf_paths=["conf/mrjob-local.conf"])
    assert not localjob.usable(extra_args=["--num-cores", "2"])
    assert not localjob.usable(environ={"MRJOB_CONF": "/etc/elsewhere.conf"})
    (tmp_path / ".mrjob.conf").write_text("runners: {local: {cmdenv: {X: '1'}}}\n")
    assert not localjob.usable()            # mrjob would read it


def _index(tmp_path, n=4000, seed=3, shuffled=False):
    cdx = tmp_path / "in.cdx"
    synthetic.write_cdx(str(cdx), n, seed=seed)
    if shuffled:
        legend, *lines = cdx.read_bytes().splitlines(keepends=True)
        random.Random(seed).shuffle(lines)
        cdx.write_bytes(legend + b"".join(lines))
    return str(cdx)


@pytest.mark.parametrize("shuffled", [False, True])
def test_the_profile_and_counters_are_those_of_mrjob_s_local_runner(tmp_path, monkeypatch, shuffled):
    """A sorted index's map outputs are merged at every step, an unsorted one's sorted by GNU
    sort; either way the profile is the inline runner's and mrjob's local runner's, step 3's
    parts follow each other in key order (no merge when the profile is written), and the
    counters of each step are mrjob's local runner's."""
    cdx = _index(tmp_path, shuffled=shuffled)
    inline = str(tmp_path / "inline.cdxj")
    run_profile([cdx], inline, runner="inline", split_size=100000)
    made = localpaths.runs(monkeypatch)
    if shuffled:                # not sorted in memory: by GNU sort
        monkeypatch.setattr(presorted, "SHORT_LIMIT", 1000)

    def no_merge(*args):
        raise AssertionError("the parts are in key order: no merge")
    monkeypatch.setattr(output, "_merged", no_merge)
    monkeypatch.setattr(localjob, "MIN_PART_BYTES", 1)     # as many reduce tasks as mrjob's runner
    direct = str(tmp_path / "direct.cdxj")
    summary = run_profile([cdx], direct, runner="local", split_size=100000, cores=2)
    job = made[-1]
    assert isinstance(job, localjob.LocalJob)
    assert (0 not in job.merged_steps) if shuffled else job.merged_steps == [0, 1, 2]
    assert job.digest_filter["tasks"] == summary["splits"]
    assert without_created(direct) == without_created(inline)
    monkeypatch.undo()
    through_mrjob = str(tmp_path / "mrjob.cdxj")
    reference = run_profile([cdx], through_mrjob, runner="local", split_size=100000, cores=2,
                            extra_args=["--num-cores", "2"])
    assert without_created(through_mrjob) == without_created(direct)
    assert summary["counters"] == reference["counters"]
    assert summary["counters"][0]["tasks"] == {"step-1 reducers (compiled)": 2}


def test_a_small_input_is_reduced_in_fewer_tasks_to_the_same_profile(tmp_path, monkeypatch):
    """A step's input of less than MIN_PART_BYTES per core goes to fewer reduce tasks (one per
    MIN_PART_BYTES, at least one; on one core, step 2's one): the same profile, whatever their
    number."""
    from profiler.job import progress
    cdx = _index(tmp_path, 3000)
    inline = str(tmp_path / "inline.cdxj")
    run_profile([cdx], inline, runner="inline", split_size=100000)
    runs = {}
    for cores in (1, 2):
        for min_part in (1, 30000, localjob.MIN_PART_BYTES):
            monkeypatch.setattr(localjob, "MIN_PART_BYTES", min_part)
            reports = tmp_path / ("reports-%d-%d" % (cores, min_part))
            reports.mkdir()
            monkeypatch.setenv(progress.ENV, str(reports))
            out = str(tmp_path / ("%d-%d.cdxj" % (cores, min_part)))
            summary = run_profile([cdx], out, runner="local", split_size=100000, cores=cores)
            assert without_created(out) == without_created(inline), (cores, min_part)
            tasks = [sum(1 for n in os.listdir(reports) if n.startswith("reduce-%d-" % step)) for step in range(3)]
            runs[cores, min_part] = tasks, summary["counters"]
    assert runs[2, 1][0] == [2, 4, 2] and runs[1, 1][0] == [1, 1, 1]
    assert runs[2, localjob.MIN_PART_BYTES][0] == [1, 1, 1]
    assert max(runs[2, 30000][0]) > 1
    for (cores, min_part), (tasks, counters) in runs.items():
        assert counters[0]["tasks"] == {"step-1 reducers (compiled)": tasks[0]}
        assert counters[0]["profile"] == {"captures": 3000}


def test_a_run_without_mrjob_does_not_import_it(tmp_path):
    """The client of such a run never imports mrjob (its import is a good part of a small run)."""
    cdx = _index(tmp_path, 500)
    code = ("import sys; from profiler.run.profile import run_profile; "
            "run_profile([%r], %r, runner='local', cores=2); "
            "print(sorted(m for m in sys.modules if m == 'mrjob' or m.startswith('mrjob.')))"
            % (cdx, str(tmp_path / "out.cdxj")))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(tmp_path),
                         env=dict(os.environ, PYTHONPATH=ROOT), check=True).stdout
    assert out.strip() == "[]"


def test_a_failed_task_fails_the_run_and_ends_the_others(tmp_path, monkeypatch):
    """The run fails with the step, the task and its last words; no task is left running and no
    profile is written."""
    cdx = _index(tmp_path, 3000)
    real = task.run_reducer

    def failing(step_num, *args, **kwargs):
        if step_num == 1:
            raise ValueError("a step-2 task broke")
        return real(step_num, *args, **kwargs)
    monkeypatch.setattr(task, "run_reducer", failing)
    out = tmp_path / "out.cdxj"
    with pytest.raises(JobFailed, match=r"step 2 of 3 failed: task ap-red2-\d exited with status 1: "
                                        r"ValueError: a step-2 task broke"):
        run_profile([cdx], str(out), runner="local", split_size=100000, cores=2)
    assert not out.exists()
    assert _tasks_of(os.getpid()) == []


def _tasks_of(pid):
    """The names of the task processes (ap-map1-0, ap-red2-1, ...) that pid started and that run."""
    names = []
    for child in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % child) as f:
                name, rest = f.read().split("(", 1)[1].rsplit(")", 1)
        except (OSError, ValueError, IndexError):
            continue
        if name.startswith("ap-") and int(rest.split()[1]) == pid and rest.split()[0] != "Z":
            names.append(name)
    return names


def test_a_task_holds_none_of_the_client_s_files(tmp_path, monkeypatch):
    """A task closes what it inherits past stdin, stdout and stderr: a lock the client holds (a
    nightly run's) is not held on by a task that outlives it."""
    cdx = _index(tmp_path, 500)
    held = open(tmp_path / "held.lock", "wb")
    seen = tmp_path / "seen"
    real = task.run_reducer

    def recording(step_num, *args, **kwargs):
        targets = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                targets.append(os.readlink("/proc/self/fd/" + fd))
            except OSError:
                pass
        with open(seen, "a") as f:
            f.write("\n".join(targets) + "\n")
        return real(step_num, *args, **kwargs)
    monkeypatch.setattr(task, "run_reducer", recording)
    try:
        run_profile([cdx], str(tmp_path / "out.cdxj"), runner="local", cores=2)
    finally:
        held.close()
    targets = seen.read_text().splitlines()
    assert targets and str(tmp_path / "held.lock") not in targets


@pytest.mark.parametrize("shuffled", [False, True])
def test_reduce_tasks_report_their_input_read(tmp_path, monkeypatch, shuffled):
    """Each reduce task of each step reports the bytes of its input read, of its whole input
    (merged runs or a range of GNU sort's file), ending at all of it: the progress bar's share of
    the reduce side, as through mrjob (profiler.runtime.task.input_chunks)."""
    from profiler.formats import inputs
    from profiler.job import progress
    from profiler.model.policy import load
    from profiler.run.profile import write_manifest
    cdx = _index(tmp_path, shuffled=shuffled)
    if shuffled:                # not sorted in memory: by GNU sort
        monkeypatch.setattr(presorted, "SHORT_LIMIT", 1000)
    splits = inputs.plan_splits([inputs.sniff(cdx)], 100000, 2)
    manifests = write_manifest(splits, str(tmp_path / "manifest"))
    reports = tmp_path / "reports"
    reports.mkdir()
    parts, _ = localjob.LocalJob(manifests, load("default"), str(tmp_path / "job"), cores=2,
                                 env={progress.ENV: str(reports)}).run()
    assert parts
    names = sorted(name for name in os.listdir(reports) if name.startswith("reduce-"))
    assert {name.split("-")[1] for name in names} == {"0", "1", "2"}
    for name in names:
        read, total, done = (reports / name).read_bytes().split()
        assert read == total and int(total) > 0 and done == b"1", name


def test_large_map_outputs_are_reduced_in_bounded_parts(tmp_path, monkeypatch):
    """Step 1's map records are cut into reduce tasks of at most STEP1_PART_BYTES each, more of
    them than cores when there are more records (a task's memory stays bounded), and the output
    is the same bytes as one task's."""
    from profiler.formats import inputs
    from profiler.job import progress
    from profiler.model.policy import load
    from profiler.run.profile import write_manifest
    cdx = _index(tmp_path, n=6000)
    splits = inputs.plan_splits([inputs.sniff(cdx)], 200000, 1)
    manifests = write_manifest(splits, str(tmp_path / "manifest"))

    def run(name, part_bytes):
        monkeypatch.setattr(localjob, "STEP1_PART_BYTES", part_bytes)
        reports = tmp_path / ("reports-" + name)
        reports.mkdir()
        parts, _ = localjob.LocalJob(manifests, load("default"), str(tmp_path / name), cores=1,
                                     env={progress.ENV: str(reports)}).run()
        step1 = [n for n in os.listdir(reports) if n.startswith("reduce-0-")]
        return b"".join(open(p, "rb").read() for p in parts), len(step1)
    whole, one = run("whole", 1 << 40)
    cut, many = run("cut", 50000)
    assert one == 1 and many > 4
    assert cut == whole


def _state(pid):
    """A process's state letter (R, S, T, Z, ...), or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def test_a_client_killed_with_sigkill_takes_its_tasks_with_it(tmp_path):
    """A client killed with SIGKILL (the OOM killer, a timeout's kill -9) cannot end its tasks:
    they ran on to their end, orphans, beside the next run, and one stopped or stuck stayed for
    ever. Each task asks the kernel to kill it when its client dies."""
    import signal
    cdx = _index(tmp_path, 40000)
    client = subprocess.Popen([sys.executable, "-m", "profiler.cli", "profile", "-r", "local", "--cores", "2",
                               cdx, "-o", str(tmp_path / "p.cdxj"), "-q"],
                              env=dict(os.environ, PYTHONPATH=ROOT), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    tasks = []
    try:
        while not tasks and client.poll() is None:
            tasks = [pid for pid in _children(client.pid) if _name(pid).startswith("ap-")]
        assert tasks, "the run ended before a task was seen"
        for pid in tasks:
            os.kill(pid, signal.SIGSTOP)        # a task that would not end by itself
        client.kill()
        client.wait()
        for _ in range(3000):                   # (a bound, not a timing: it goes at once)
            if all(_state(pid) in (None, "Z") for pid in tasks):
                break
            os.sched_yield()
            subprocess.run(["sleep", "0.01"])
        assert all(_state(pid) in (None, "Z") for pid in tasks), [_state(pid) for pid in tasks]
    finally:
        for pid in tasks:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if client.poll() is None:
            client.kill()
            client.wait()


def _children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _name(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""
