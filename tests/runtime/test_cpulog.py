"""profiler.runtime.cpulog: with its variable set, a local run logs the CPU of its client's phases
and of every task by stage (what scripts/bench --breakdown reads); without it, nothing."""

import os

from profiler import contract
from profiler.run.profile import run_profile
from profiler.runtime import cpulog
from profiler.testing import synthetic


def _entries(path):
    with open(path) as f:
        return [line.split() for line in f]


def test_a_local_run_logs_its_phases_and_tasks(tmp_path, monkeypatch):
    cdx = str(tmp_path / "in.cdx")
    synthetic.write_cdx(cdx, 3000, seed=2)
    log = tmp_path / "cpu.log"
    monkeypatch.setenv(contract.CPU_LOG_ENV, str(log))
    run_profile([cdx], str(tmp_path / "out.cdxj"), runner="local", cores=2, split_size=100000)
    entries = _entries(log)
    assert all(len(e) == 4 and float(e[1]) >= 0 and float(e[2]) >= 0 for e in entries)
    stages = {e[0] for e in entries}
    assert {"client:start", "client:plan", "client:job", "client:write", "client:children"} <= stages
    tasks = [e for e in entries if e[0].startswith("task:")]
    assert {e[0] for e in tasks} >= {"task:ap-map1", "task:ap-red3"}
    children = sum(float(e[1]) + float(e[2]) for e in entries if e[0] == "client:children")
    assert sum(float(e[1]) + float(e[2]) for e in tasks) <= children + 0.05


def test_without_the_variable_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv(contract.CPU_LOG_ENV, raising=False)
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    phases = cpulog.Phases()
    phases.enter("plan")
    phases.close()
    cpulog.write_process("task:x")
    assert os.listdir(tmp_path / "here") == []


def test_an_unwritable_log_does_not_fail_the_caller(tmp_path, monkeypatch):
    monkeypatch.setenv(contract.CPU_LOG_ENV, str(tmp_path / "no" / "such" / "folder" / "log"))
    cpulog.write_process("task:x")
    assert list(cpulog.timed_chunks(iter([b"a", b"b"]), "merge")) == [b"a", b"b"]
