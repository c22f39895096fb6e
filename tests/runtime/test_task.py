"""A task's command line run without mrjob (profiler.runtime.task): the same output and counters as mrjob's run of it."""

import io
import os
import subprocess
import sys

import orjson
import pytest

from profiler.runtime.profile_job import ProfileJob
from profiler.formats import inputs
from profiler import contract
from profiler.runtime import task as tasks
from profiler.testing import synthetic
from profiler.model.policy import load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = os.path.join(ROOT, "profiler", "runtime", "profile_job.py")
POLICY = orjson.dumps(load("default").to_dict()).decode()


@pytest.mark.parametrize("argv, expected", [
    (["--step-num=0", "--mapper", "--policy-json", "{}"], (0, "mapper", "{}", True, contract.TABLE_LIMIT)),
    (["--step-num", "2", "--reducer", "--policy-json={}", "--table-limit", "7", "--no-resolve-revisits"],
     (2, "reducer", "{}", False, 7)),
    (["--reducer", "--step-num=1", "--table-limit=3"], (1, "reducer", "{}", True, 3)),
])
def test_task_command_lines(argv, expected):
    opts = tasks.parse(argv)
    assert (opts["step_num"], opts["task"], opts["policy_json"], opts["resolve_revisits"],
            opts["table_limit"]) == expected


@pytest.mark.parametrize("argv", [
    [], ["--step-num=0"], ["--mapper"], ["--step-num=1", "--mapper"], ["--step-num=3", "--reducer"],
    ["--step-num=0", "--combiner"], ["--step-num=0", "--mapper", "--reducer"], ["--step-num=x", "--mapper"],
    ["--step-num=0", "--mapper", "--policy-json"], ["--step-num=0", "--mapper", "input.txt"],
    ["--step-num=0", "--mapper", "-r", "local"], ["--steps"], ["--help"],
])
def test_other_command_lines_are_mrjob_s(argv):
    assert tasks.parse(argv) is None
    assert tasks.main(argv) is False


def _manifest(tmp_path, n=3000):
    cdx = str(tmp_path / "in.cdx")
    synthetic.write_cdx(cdx, n, seed=4)
    splits = inputs.plan_splits([inputs.sniff(cdx)], 40000)
    return b"".join(orjson.dumps(s) + b"\n" for s in splits)


def _mrjob_task(argv, data):
    """The task run by mrjob's MRJob (run_mapper/run_reducer), as ProfileJob.run() would."""
    job = ProfileJob(argv)
    job.sandbox(stdin=io.BytesIO(data))
    job.execute()
    return job.stdout.getvalue(), job.stderr.getvalue()


def _task(argv, data):
    out, err = io.BytesIO(), io.BytesIO()
    assert tasks.main(argv, io.BytesIO(data), out, err) is True
    return out.getvalue(), err.getvalue()


def test_a_job_s_tasks_without_mrjob_write_what_mrjob_s_write(tmp_path):
    """Map, then each step's reduce over the sorted output of the one before: the same lines and
    counters as through mrjob."""
    data = _manifest(tmp_path)
    argv = ["--step-num=0", "--mapper", "--policy-json", POLICY]
    got, expected = _task(argv, data), _mrjob_task(argv, data)
    assert got == expected
    assert sum(int(line.rsplit(b",", 1)[1]) for line in got[1].splitlines()
               if line.startswith(b"reporter:counter:profile,captures,")) == 3000
    for step in (0, 1, 2):
        data = b"".join(sorted(got[0].splitlines(keepends=True)))
        argv = ["--step-num=%d" % step, "--reducer", "--policy-json", POLICY, "--table-limit", "50"]
        got, expected = _task(argv, data), _mrjob_task(argv, data)
        assert got == expected and got[0]
    assert b"\n* - - -\t" in b"\n" + got[0]


def test_a_task_s_command_line_imports_neither_mrjob_job_nor_warcio_nor_yaml(tmp_path):
    """What the local runner runs: the job script as __main__, with a task's arguments."""
    code = ("import runpy, sys\n"
            "sys.argv = [%r, '--step-num=2', '--reducer', '--policy-json', %r]\n"
            "try:\n    runpy.run_path(%r, run_name='__main__')\n"
            "except SystemExit as e:\n    assert not e.code\n"
            "print([m in sys.modules for m in ('mrjob.job', 'warcio', 'yaml')], file=sys.stderr)\n") % (JOB, POLICY, JOB)
    line = b'K * - - -\t[1,1,1,1,10,1,10,"20100101000000","20100101000000"]\n'
    r = subprocess.run([sys.executable, "-c", code], input=line, capture_output=True, cwd=str(tmp_path),
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    # neither mrjob.job nor what only WARC inputs or policy files need (a task's imports were 0.046 s)
    assert r.stdout.startswith(b"* - - -\t{") and r.stderr.strip().endswith(b"[False, False, False]")
    r = subprocess.run([sys.executable, JOB, "--help"], capture_output=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0 and b"--policy-json" in r.stdout    # other command lines: mrjob's
