"""profiler.runtime.localrunner: the local runner's fast splits cut where mrjob cuts, and change no byte
(mrjob's local runner: these tests make local runs take it, profiler.runtime.localjob's path aside)."""

import os
import random

import pytest

from mrjob.sim import _split_records

from profiler.files import output
from profiler.testing import synthetic
from profiler.runtime.localrunner import LocalRunner
from profiler.runtime.presorted import key_bounds
from profiler.run.profile import run_profile
from helpers import localpaths
from helpers.exactness import without_created


@pytest.fixture(autouse=True)
def through_mrjob(monkeypatch):
    localpaths.choose(monkeypatch, "mrjob")


def test_key_bounds_cut_where_mrjob_cuts(tmp_path):
    rng = random.Random(1)
    path = tmp_path / "sorted"
    for _ in range(300):
        lines = [b"k%05d\t%s\n" % (k, b"x" * rng.randint(0, 300))
                 for k in sorted(rng.sample(range(10000), rng.randint(1, 60)))
                 for _ in range(rng.choice([1, 1, 2, 5, 40]))]
        data = b"".join(lines)
        path.write_bytes(data)
        split_size = len(data) // rng.choice([1, 2, 4, 8, 50])
        expected = [b"".join(part) for part in _split_records(iter(lines), split_size, lambda l: l.split(b"\t")[0])]
        bounds = key_bounds(str(path), split_size)
        assert [data[a:b] for a, b in zip(bounds, bounds[1:])] == expected


def test_empty_file_is_one_empty_part(tmp_path):
    path = tmp_path / "empty"
    path.write_bytes(b"")
    assert key_bounds(str(path), 0) == [0, 0]


@pytest.mark.parametrize("parts_per_core", [1, 3])
def test_local_runner_with_fast_splits_writes_the_inline_bytes(tmp_path, monkeypatch, parts_per_core):
    monkeypatch.setattr(LocalRunner, "parts_per_core", parts_per_core)
    cdx = str(tmp_path / "in.cdx")
    synthetic.write_cdx(cdx, 4000, seed=3)
    a, b = str(tmp_path / "inline.cdxj"), str(tmp_path / "local.cdxj")
    run_profile([cdx], a, runner="inline", split_size=100000)

    def no_merge(*args):
        raise AssertionError("the local runner's parts are in key order: no merge")
    monkeypatch.setattr(output, "_merged", no_merge)
    summary = run_profile([cdx], b, runner="local", split_size=100000, cores=2)
    assert summary["parts"] == 2 * parts_per_core
    assert without_created(a) == without_created(b)


@pytest.mark.parametrize("sort_bin", ["sort -S 16M", "sort -r -S 16M", "sort -t '\t' -k 1,1 -s -S 16M"])
def test_the_profile_does_not_depend_on_the_order_of_keys_or_values(tmp_path, sort_bin):
    """The local runner sorts whole lines; any order in which a key's lines follow each other,
    keys in reverse and values in any order included, gives the same profile bytes."""
    cdx = str(tmp_path / "in.cdx")
    synthetic.write_cdx(cdx, 4000, seed=5)
    a, b = str(tmp_path / "inline.cdxj"), str(tmp_path / "local.cdxj")
    run_profile([cdx], a, runner="inline", split_size=100000)
    run_profile([cdx], b, runner="local", split_size=100000, cores=2, extra_args=["--sort-bin", sort_bin])
    assert without_created(a) == without_created(b)


def test_map_splits_are_a_multiple_of_cores():
    from profiler.run.profile import balanced_split_size
    mib = 1 << 20
    cdx = [{"path": "/a.cdx", "size": 176 * mib, "format": "cdx", "compression": None}]
    assert balanced_split_size(cdx, 64 * mib, 1) == 64 * mib                # 1 core: as given
    assert balanced_split_size(cdx, 64 * mib, 2) == 88 * mib                # 2.75 splits -> 2
    assert balanced_split_size(cdx, 64 * mib, 4) == 44 * mib                # at least one per core
    assert balanced_split_size(cdx, 200 * mib, 2) == 200 * mib              # one split: as given
    gz = [dict(cdx[0], compression="gzip")]
    assert balanced_split_size(gz, 64 * mib, 2) == 64 * mib                 # compressed files stay whole


@pytest.mark.parametrize("extra, bootstrap", [
    ([], False),                                          # the tasks run this Python: its mrjob
    (["--python-bin", "/opt/other/bin/python3"], True),   # another Python may lack mrjob
    (["--bootstrap-mrjob"], True),                        # asked for
])
def test_mrjob_is_zipped_for_tasks_only_when_they_may_lack_it(extra, bootstrap):
    from profiler.runtime.profile_job import ProfileJob
    from profiler.run.profile import job_args
    from profiler.model.policy import load
    job = ProfileJob(job_args(["m.json"], load("default"), "local", extra=extra))
    with job.make_runner() as runner:
        assert isinstance(runner, LocalRunner)
        assert runner._bootstrap_mrjob() is bootstrap
        assert any(p.endswith("mrjob.zip") for p in runner._py_files()) is bootstrap


def test_setup_lock_only_for_setup_commands_that_may_need_it():
    from profiler.runtime.profile_job import ProfileJob
    from profiler.run.profile import job_args
    from profiler.model.policy import load
    for extra, locked in (([], False), (["--setup", "make -C /tmp/x"], True)):
        job = ProfileJob(job_args(["m.json"], load("default"), "local", py_files=["/tmp/p.zip"], extra=extra))
        with job.make_runner() as runner:
            setup = runner._py_files_setup() + runner._setup
            script = "\n".join(runner._setup_wrapper_script_content(setup))
        assert "export PYTHONPATH=$__mrjob_PWD/p.zip:$PYTHONPATH" in script
        assert ("fcntl.flock" in script) is locked


def test_a_phase_runs_its_tasks_at_once_and_raises_the_first_failure():
    """_run_multiple runs a phase's tasks in up to num_cores threads of one pool kept for the run;
    a failed task's error is raised once the phase's other tasks have ended."""
    import threading
    import types
    runner = types.SimpleNamespace(_opts={"num_cores": 2}, _pool=None)
    barrier = threading.Barrier(2, timeout=10)      # both tasks must run at once to pass it
    ended = []

    def task(n):
        barrier.wait()
        ended.append(n)
    LocalRunner._run_multiple(runner, [lambda: task(1), lambda: task(2)])
    pool = runner._pool
    assert sorted(ended) == [1, 2]

    def failing():
        raise RuntimeError("task failed")

    def slow():
        threading.Event().wait(0.2)
        ended.append(3)
    with pytest.raises(RuntimeError, match="task failed"):
        LocalRunner._run_multiple(runner, [failing, slow])
    assert ended[-1] == 3 and runner._pool is pool
    pool.shutdown()


@pytest.mark.parametrize("mode", ["ALL", "NONE"])
def test_files_no_task_reads_any_more_are_deleted_in_the_run_s_temp_dir_only(tmp_path, mode):
    """_delete_soon deletes the given files and the files they link to, when they are in the run's
    temp dir (never the user's files), and nothing when the temp dir is kept (--cleanup NONE)."""
    import os
    import types
    run_dir, user_dir = tmp_path / "run", tmp_path / "user"
    run_dir.mkdir()
    user_dir.mkdir()
    (run_dir / "part").write_bytes(b"x")
    (run_dir / "link").symlink_to(run_dir / "part")
    (user_dir / "input.cdx").write_bytes(b"y")
    (run_dir / "to-user").symlink_to(user_dir / "input.cdx")
    runner = types.SimpleNamespace(_deleter=None, _opts={"cleanup": [mode]},
                                   _get_local_tmp_dir=lambda: str(run_dir))
    LocalRunner._delete_soon(runner, [str(run_dir / "link"), str(run_dir / "to-user"), str(user_dir / "input.cdx")])
    if runner._deleter:
        runner._deleter.shutdown()
    left = sorted(os.listdir(run_dir))
    assert left == (["link", "part", "to-user"] if mode == "NONE" else ["to-user"])
    assert (user_dir / "input.cdx").read_bytes() == b"y"


@pytest.mark.parametrize("cleanup", [None, "NONE"])
def test_a_run_deletes_the_files_of_finished_steps_while_it_runs(tmp_path, monkeypatch, cleanup):
    """Step 1's map outputs are gone before the run ends (unless the temp dir is to be kept)."""
    from profiler.runtime import localrunner
    deleted = []
    real = localrunner._unlink_all

    def unlink_all(paths):
        deleted.extend(paths)
        real(paths)
    monkeypatch.setattr(localrunner, "_unlink_all", unlink_all)
    cdx = str(tmp_path / "in.cdx")
    synthetic.write_cdx(cdx, 3000, seed=6)
    extra = ["--cleanup", cleanup] if cleanup else []
    summary = run_profile([cdx], str(tmp_path / "p.cdxj"), runner="local", split_size=100000, cores=2,
                          extra_args=extra)
    map_outputs = {p for p in deleted if os.sep.join(("step", "000", "mapper")) in p and p.endswith("output")}
    assert len(map_outputs) == (0 if cleanup else summary["splits"]) and summary["splits"] > 1


def _merged_and_sorted_inputs(tmp):
    """Each step's reducer input as its reduce tasks read it in turn (the merged parts of the map
    outputs their plans give), and its map outputs sorted by GNU sort."""
    import glob
    import subprocess
    from profiler.runtime import presorted
    run = glob.glob(str(tmp / "*"))[0]
    out = []
    for step in range(3):
        plans = [presorted.loads(open(p, "rb").read())
                 for p in sorted(glob.glob(os.path.join(run, "step", "%03d" % step, "reducer", "*", "input")))]
        merged = b"".join(b"".join(presorted.merged_chunks(plan, 1000)) for plan in plans)
        inputs = sorted(glob.glob(os.path.join(run, "step", "000", "mapper", "*", "output")) if step == 0 else
                        glob.glob(os.path.join(run, "step-output", "%04d" % (step - 1), "part-*")))
        assert inputs
        expected = subprocess.run(["sort"] + inputs, env=dict(os.environ, LC_ALL="C"), capture_output=True,
                                  check=True).stdout
        out.append((merged, expected))
    return out


@pytest.mark.parametrize("shuffled", [False, True])
def test_reducer_inputs_in_sorted_runs_are_merged_into_the_lines_sort_writes(tmp_path, monkeypatch, shuffled):
    """Map outputs of a sorted index and step 1's outputs come in a few sorted runs: nothing is
    sorted, the reduce tasks read their parts of them merged (profiler.runtime.presorted), and in task
    order these are the lines GNU sort writes, for each step; the profile is the one of a run
    that sorts. Map outputs of an unsorted index are short runs, sorted in memory when small, by
    GNU sort when not."""
    from profiler.runtime import presorted
    if not presorted.available():
        pytest.skip("the C extension is not built (no compiler?)")
    cdx = tmp_path / "in.cdx"
    synthetic.write_cdx(str(cdx), 6000, seed=4)
    if shuffled:
        legend, *lines = cdx.read_bytes().splitlines(keepends=True)
        random.Random(4).shuffle(lines)
        cdx.write_bytes(legend + b"".join(lines))
    merged = []
    real = LocalRunner.__init__

    def init(self, *args, **kwargs):
        real(self, *args, **kwargs)
        merged.append(self.merged_steps)
    monkeypatch.setattr(LocalRunner, "__init__", init)
    run_profile([str(cdx)], str(tmp_path / "merge.cdxj"), runner="local", split_size=150000, cores=2,
                extra_args=["--cleanup", "NONE", "--local-tmp-dir", str(tmp_path / "tmp")])
    assert merged == [[0, 1, 2]]
    for got, expected in _merged_and_sorted_inputs(tmp_path / "tmp"):
        assert got == expected and got
    monkeypatch.setattr(presorted, "available", lambda: False)
    run_profile([str(cdx)], str(tmp_path / "sort.cdxj"), runner="local", split_size=150000, cores=2)
    assert merged[-1] == []
    assert without_created(str(tmp_path / "merge.cdxj")) == without_created(str(tmp_path / "sort.cdxj"))
    if shuffled:
        monkeypatch.setattr(presorted, "available", lambda: True)
        monkeypatch.setattr(presorted, "SHORT_LIMIT", 1000)
        run_profile([str(cdx)], str(tmp_path / "short.cdxj"), runner="local", split_size=150000, cores=2)
        assert 0 not in merged[-1]
        assert without_created(str(tmp_path / "short.cdxj")) == without_created(str(tmp_path / "sort.cdxj"))


def test_only_gnu_sort_of_whole_lines_is_replaced_by_the_merge():
    from profiler.runtime.localrunner import _whole_line_sort
    for sort_bin in (["sort"], ["sort", "-S", "256M"], ["/usr/bin/sort", "-S256M", "--parallel=2"],
                     ["sort", "-T", "/tmp", "--buffer-size=1G"]):
        assert _whole_line_sort(sort_bin), sort_bin
    for sort_bin in ([], ["sort", "-r"], ["sort", "-t", "\t", "-k", "1,1", "-s"], ["sort", "-S"], ["/tmp/sortw"],
                     ["sort", "-u"]):
        assert not _whole_line_sort(sort_bin), sort_bin
