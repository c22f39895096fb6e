"""profiler.runtime.forkserver: a forked task writes what the job script writes for its command line, in
its own environment, and its CPU time counts in the client's (mrjob's local runner forks its tasks
from it; the local runner without mrjob, profiler.runtime.localjob, forks them from the client)."""

import os
import resource
import subprocess
import sys

import orjson
import pytest

from profiler.accel import fast
from profiler import contract
from profiler.runtime import forkserver
from profiler.testing import synthetic
from profiler.runtime.localrunner import LocalRunner
from profiler.run.profile import run_profile
from profiler.model.policy import load
from helpers import localpaths
from helpers.exactness import without_created

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = os.path.join(ROOT, "profiler", "runtime", "profile_job.py")
POLICY = orjson.dumps(load("default").to_dict()).decode()
STEP3 = b"".join(b'K * - - %d\t[1,1,1,1,10,1,10,"20100101000000","20100101000000"]\n' % i for i in range(100))

pytestmark = pytest.mark.skipif(not forkserver.available(), reason="no fork or no Unix packet sockets here")


@pytest.fixture
def server():
    s = forkserver.ForkServer()
    yield s
    s.close()


def _forked(server, tmp_path, argv, data, env=None, name="ap-red3-0"):
    (tmp_path / "in").write_bytes(data)
    with open(tmp_path / "in", "rb") as i, open(tmp_path / "out", "wb") as o, open(tmp_path / "err", "wb") as e:
        code = server.run(argv, str(tmp_path), dict(os.environ, **(env or {})), i, o, e, name)
    return code, (tmp_path / "out").read_bytes(), (tmp_path / "err").read_bytes()


def _script(argv, data, env=None):
    r = subprocess.run([sys.executable, JOB] + argv, input=data, capture_output=True,
                       env=dict(os.environ, PYTHONPATH=ROOT, **(env or {})))
    return r.returncode, r.stdout, r.stderr


def test_a_forked_task_writes_what_the_job_script_writes(server, tmp_path):
    argv = ["--step-num=2", "--reducer", "--policy-json", POLICY]
    got = _forked(server, tmp_path, argv, STEP3)
    assert got == _script(argv, STEP3) and got[1].count(b"\n") == 100


def test_an_environment_of_any_size_reaches_the_task(server, tmp_path):
    """The request goes through a pipe, not the socket's message (about 200 KiB at most)."""
    argv = ["--step-num=2", "--reducer", "--policy-json", POLICY]
    code, out, _ = _forked(server, tmp_path, argv, STEP3, {"ARCHIVE_PROFILER_TEST_BIG": "x" * (3 << 20)})
    assert code == 0 and out.count(b"\n") == 100


def test_the_task_s_environment_is_its_own(server, tmp_path):
    """RANGE_ENV reaches the child: it reads only its byte range; PURE_ENV: the pure-Python code."""
    argv = ["--step-num=2", "--reducer", "--policy-json", POLICY]
    first = STEP3.index(b"\n") + 1
    code, out, _ = _forked(server, tmp_path, argv, STEP3, {contract.RANGE_ENV: "0 %d" % first})
    assert code == 0 and out.count(b"\n") == 1
    cells = b'com,a)/\t[["201001","text/html","200","sha1:X",0,1,10,10,"20100101000000","20100101000000"]]\n'
    for pure, kind in (("1", b"pure Python"), ("", b"compiled" if fast.load() else b"pure Python")):
        code, out, err = _forked(server, tmp_path, ["--step-num=0", "--reducer", "--policy-json", POLICY], cells,
                                 {fast.PURE_ENV: pure})
        assert code == 0 and b"step-1 reducers (" + kind + b")" in err and out


def test_a_failing_task_exits_non_zero_with_its_traceback(server, tmp_path):
    code, out, err = _forked(server, tmp_path, ["--step-num=2", "--reducer", "--policy-json", '{"emit": 3}'], STEP3)
    assert code == 1 and b"Traceback" in err and not out


def test_the_forked_tasks_cpu_time_counts_in_the_client(tmp_path):
    """The server waits for its children and the client for the server: their CPU time is in
    the client's children's time, what the benchmarks read (not waited for, it would be lost)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    server = forkserver.ForkServer()
    data = STEP3 * 400                                   # 40,000 lines: some CPU in the child
    argv = ["--step-num=2", "--reducer", "--policy-json", POLICY]
    import time
    started = time.process_time()
    code, out, _ = _forked(server, tmp_path, argv, data)
    server.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert code == 0 and out
    child = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert child > 0.05 and time.process_time() - started < child


def test_the_local_runner_forks_its_own_tasks_only(tmp_path, monkeypatch):
    """A local run on this Python forks its tasks (the same profile as the inline runner); with a
    setup command of the user's, or another Python, mrjob runs them."""
    cdx = str(tmp_path / "in.cdx")
    synthetic.write_cdx(cdx, 3000, seed=2)
    localpaths.choose(monkeypatch, "mrjob")
    forked = []
    real = forkserver.ForkServer.run
    monkeypatch.setattr(forkserver.ForkServer, "run", lambda self, *a: forked.append(a[-1]) or real(self, *a))
    run_profile([cdx], str(tmp_path / "inline.cdxj"), runner="inline")
    run_profile([cdx], str(tmp_path / "local.cdxj"), runner="local", cores=2, split_size=100000)
    assert {name.rpartition("-")[0] for name in forked} == {"ap-map1", "ap-red1", "ap-red2", "ap-red3"}
    assert len(forked) == len(set(forked)) > 6
    assert without_created(str(tmp_path / "inline.cdxj")) == without_created(str(tmp_path / "local.cdxj"))
    del forked[:]
    run_profile([cdx], str(tmp_path / "setup.cdxj"), runner="local", cores=2, split_size=100000,
                extra_args=["--setup", "true"])
    assert forked == []
    assert without_created(str(tmp_path / "setup.cdxj")) == without_created(str(tmp_path / "local.cdxj"))


def _servers(monkeypatch):
    """The fork servers started from now on."""
    started = []
    real = forkserver.ForkServer.__init__

    def init(self, *args, **kwargs):
        real(self, *args, **kwargs)
        started.append(self)
    monkeypatch.setattr(forkserver.ForkServer, "__init__", init)
    return started


def test_a_local_run_takes_the_server_started_while_it_reads_its_inputs(tmp_path, monkeypatch):
    """run_profile starts the server before it reads the inputs, the runner forks its tasks from
    that one, and it has ended with the run; so has one no runner took (tasks run by mrjob), and
    one started for a run that fails on its input."""
    cdx = str(tmp_path / "in.cdx")
    synthetic.write_cdx(cdx, 2000, seed=3)
    localpaths.choose(monkeypatch, "mrjob")
    started = _servers(monkeypatch)
    forked_by = []
    real_run = forkserver.ForkServer.run
    monkeypatch.setattr(forkserver.ForkServer, "run", lambda self, *a: forked_by.append(self) or real_run(self, *a))
    run_profile([cdx], str(tmp_path / "a.cdxj"), runner="local", cores=2, split_size=100000)
    assert len(started) == 1 and set(forked_by) == set(started) and len(forked_by) > 6
    run_profile([cdx], str(tmp_path / "b.cdxj"), runner="local", cores=2, split_size=100000,
                extra_args=["--setup", "true"])
    assert len(started) == 2 and set(forked_by) == {started[0]}       # the second one forked nothing
    (tmp_path / "bad.cdx").write_text("not an index\n")
    from profiler.formats.inputs import InputError
    with pytest.raises(InputError):
        run_profile([str(tmp_path / "bad.cdx")], str(tmp_path / "c.cdxj"), runner="local", cores=2)
    assert len(started) == 3
    assert all(s._proc.poll() == 0 for s in started)        # every one ended, and ended well
    assert forkserver.take_prestarted() is None
    assert without_created(str(tmp_path / "a.cdxj")) == without_created(str(tmp_path / "b.cdxj"))


def test_a_task_that_fails_in_a_local_run_fails_the_run(tmp_path, monkeypatch):
    cdx = str(tmp_path / "in.cdx")
    synthetic.write_cdx(cdx, 300, seed=2)
    localpaths.choose(monkeypatch, "mrjob")
    monkeypatch.setattr(LocalRunner, "_forkable_task_argv",
                        lambda self, *a: ["--step-num=2", "--reducer", "--policy-json", '{"emit": 3}'])
    from profiler.run.profile import JobFailed
    with pytest.raises(JobFailed, match="Step 1 of 3 failed: task exited with status 1"):
        run_profile([cdx], str(tmp_path / "out.cdxj"), runner="local", cores=1)
    assert not os.path.exists(tmp_path / "out.cdxj")


def test_the_server_imports_the_client_s_modules_not_the_working_directory_s(tmp_path, monkeypatch):
    """Started in a folder with a package of the same name (a source checkout beside an installed
    package, say), the server and its tasks still run the client's profiler."""
    fake = tmp_path / "cwd" / "profiler"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('the working directory\\'s profiler')\n")
    monkeypatch.chdir(tmp_path / "cwd")
    s = forkserver.ForkServer()
    try:
        argv = ["--step-num=2", "--reducer", "--policy-json", POLICY]
        work = tmp_path / "task"
        work.mkdir()
        code, out, err = _forked(s, work, argv, STEP3)
    finally:
        s.close()
    assert code == 0 and out.count(b"\n") == 100, err
