"""A run leaves nothing in the temp folder, on success, failure, Ctrl-C and SIGTERM: not mrjob's
temp folder, not the setup wrapper's lock file, not its own work folder; an interrupted local
run ends its tasks. (The Spark runner's `<job key>-spark` folder: tests/runtime/test_spark.py.)"""

import glob
import os
import signal
import subprocess
import sys
import time

import pytest

from profiler.runtime import leftovers as runner_leftovers
from profiler.testing import synthetic
from profiler.errors import Terminated
from profiler.run.profile import JobFailed, run_profile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def lock_of(job_key):
    """The setup wrapper's lock file of the run with this job key. Other runs' locks (other
    users of the shared /tmp run mrjob too) are none of these tests' business."""
    return os.path.join(runner_leftovers.WRAPPER_LOCK_DIR, "wrapper.lock." + job_key)


@pytest.fixture
def job_keys(monkeypatch):
    """The job keys of the runs this test makes in its process."""
    keys = []
    removed_at_exit = runner_leftovers.removed_at_exit

    def recording(runner):
        keys.append(runner._job_key)
        return removed_at_exit(runner)
    monkeypatch.setattr(runner_leftovers, "removed_at_exit", recording)
    return keys


def task_processes():
    """Running forked tasks of this test's runs (they name themselves ap-map1-0, ap-red2-1, ...;
    their environment has this test's TMPDIR: others' runs on the machine are not counted)."""
    names = []
    mine = ("TMPDIR=" + os.environ["TMPDIR"]).encode()
    for path in glob.glob("/proc/[0-9]*/comm"):
        try:
            with open(path) as f:
                name = f.read().strip()
            if not name.startswith(("ap-map", "ap-red")):
                continue
            with open(os.path.join(os.path.dirname(path), "environ"), "rb") as f:
                if mine not in f.read().split(b"\0"):
                    continue
        except OSError:
            continue
        names.append(name)
    return names


@pytest.mark.parametrize("runner, extra", [("inline", []), ("local", ["--num-cores", "1"]), ("local", [])])
def test_success_leaves_nothing(tmp_path, runner, extra, job_keys):
    """A local run with an mrjob option goes through mrjob; one without runs without it
    (profiler.runtime.localjob): no mrjob runner, no job key."""
    run_profile([SAMPLE], str(tmp_path / "out.cdxj"), runner=runner, extra_args=extra)
    assert os.listdir(os.environ["TMPDIR"]) == []
    assert len(job_keys) == (0 if runner == "local" and not extra else 1)
    assert not [k for k in job_keys if os.path.lexists(lock_of(k))]


def test_failure_leaves_nothing(tmp_path, job_keys):
    with pytest.raises(JobFailed):
        run_profile([SAMPLE], str(tmp_path / "out.cdxj"), runner="local", extra_args=["--python-bin", "false"])
    assert os.listdir(os.environ["TMPDIR"]) == []
    assert job_keys and not [k for k in job_keys if os.path.lexists(lock_of(k))]
    assert not (tmp_path / "out.cdxj").exists()


@pytest.mark.parametrize("signum, error", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)])
@pytest.mark.parametrize("runner, extra", [("inline", []), ("local", [])])
def test_a_signal_while_a_run_removes_its_temp_folders_leaves_nothing(tmp_path, monkeypatch, signum, error,
                                                                      runner, extra):
    """A Ctrl-C or SIGTERM that comes while the run removes its temp folders (mrjob's cleanup,
    the run's work folder): held until they are gone, then the run ends as interrupted (the rest
    of the folder was left behind)."""
    import shutil
    import threading
    from mrjob.runner import MRJobRunner
    from profiler.cli.main import _raise_on_sigterm, _restore_sigterm
    real_rmtree, real_cleanup = shutil.rmtree, MRJobRunner._cleanup_local_tmp
    sent = []

    def interrupting(call):
        def wrapped(*args, **kwargs):
            if not sent:
                sent.append(1)
                signal.pthread_kill(threading.main_thread().ident, signum)
                time.sleep(0.05)
            return call(*args, **kwargs)
        return wrapped
    monkeypatch.setattr(MRJobRunner, "_cleanup_local_tmp", interrupting(real_cleanup))
    monkeypatch.setattr(shutil, "rmtree", interrupting(real_rmtree))
    previous = _raise_on_sigterm()
    try:
        with pytest.raises(error):
            run_profile([SAMPLE], str(tmp_path / "out.cdxj"), runner=runner, extra_args=extra)
    finally:
        _restore_sigterm(previous)
    assert sent and os.listdir(os.environ["TMPDIR"]) == []


def test_other_users_locks_are_left_alone(tmp_path, job_keys):
    """A lock file of another run in the shared /tmp (another user's, made while this run goes)
    is neither removed nor mistaken for this run's (a run through mrjob: an mrjob option)."""
    other = lock_of("profile_job.someone.%d" % os.getpid())
    with open(other, "w"):
        pass
    try:
        run_profile([SAMPLE], str(tmp_path / "out.cdxj"), runner="local", extra_args=["--num-cores", "1"])
        assert os.path.exists(other) and job_keys and not os.path.lexists(lock_of(job_keys[0]))
    finally:
        os.unlink(other)


def test_leftovers_are_only_this_runs():
    assert runner_leftovers.paths("../x") == [] and runner_leftovers.paths("") == []
    assert runner_leftovers.remove(None) == []


#: a map task's output file as each local path writes it: mrjob's (an mrjob option after '--'
#: makes the run take it; its temp folder inside the run's work folder) and the one without
#: mrjob (profiler.runtime.localjob)
MAP_OUTPUTS = {"mrjob": ("archive-profiler-*", "profile_job.*", "step", "000", "mapper", "*"),
               "direct": ("archive-profiler-*", "job", "map-*")}


@pytest.mark.parametrize("path", sorted(MAP_OUTPUTS))
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_a_local_run(tmp_path, signum, code, path):
    data = tmp_path / "in.cdx"
    synthetic.write_cdx(str(data), 150000, seed=3)
    tmp = os.environ["TMPDIR"]
    extra = ["--", "--num-cores", "2"] if path == "mrjob" else []
    proc = subprocess.Popen([sys.executable, "-m", "profiler.cli", "profile", str(data), "-o",
                             str(tmp_path / "out.cdxj"), "-r", "local", "--cores", "2", "--split-size", "1M"] + extra,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=ROOT))
    deadline = time.monotonic() + 120
    while not glob.glob(os.path.join(tmp, *MAP_OUTPUTS[path])):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.005)
    # its temp folder's name (a run without mrjob has none)
    job_keys = [os.path.basename(p) for p in glob.glob(os.path.join(tmp, "archive-profiler-*", "profile_job.*"))]
    assert len(job_keys) == (1 if path == "mrjob" else 0)
    proc.send_signal(signum)                   # to the run only, not its process group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err and ("terminated" if code == 143 else "interrupted") in err
    deadline = time.monotonic() + 30                # a loaded machine ends them slowly
    while task_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert task_processes() == []
    assert os.listdir(tmp) == []
    assert not [k for k in job_keys if os.path.lexists(lock_of(k))]
    assert not (tmp_path / "out.cdxj").exists()
