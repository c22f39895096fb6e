"""The progress display: drawn on a terminal (a pseudo-terminal, and tmux as a person would see
it), ended cleanly before the summary, never on a pipe; the tasks' reports add up to the run."""

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from profiler.job import progress as task_progress
from profiler.run import progress
from profiler.testing import synthetic

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = [sys.executable, "-m", "profiler.cli"]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    path = tmp_path_factory.mktemp("progress") / "i.cdx"
    with open(path, "w") as f:
        f.write(synthetic.LEGEND + "\n")
        for line in synthetic.cdx_lines(150000, seed=3):
            f.write(line + "\n")
    return str(path)


def _env():
    return dict(os.environ, PYTHONPATH=ROOT, COLUMNS="120")


def run_on_terminal(args, timeout=300):
    """Run the CLI with stderr on a pseudo-terminal: (exit status, everything written to it)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(CLI + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave,
                            env=_env(), cwd=ROOT)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:         # EIO: the process closed the terminal
                break
            if not data:
                break
            out += data
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=30), out.decode("utf-8", "replace")


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_bar_on_a_terminal_ends_cleanly(index, tmp_path, runner):
    out = tmp_path / "p.cdxj"
    status, text = run_on_terminal(["profile", index, "-o", str(out), "-r", runner, "--cores", "2"])
    assert status == 0, text
    assert "step 1/3" in text and "step 3/3 reduce" in text and "%|" in text
    assert "150,000 captures" in text.split("archive-profiler: 150,000 captures")[0]   # the bar counted them
    # the bar's last state is a whole line, and the summary lines follow it intact
    summary = text.index("archive-profiler: 150,000 captures")
    assert text[summary - 1] == "\n"
    assert "\r" not in text[summary:].replace("\r\n", "\n")
    assert "mrjob" not in text
    last_bar = text[:summary].replace("\r\n", "\n").split("\n")[-2].split("\r")[-1]
    assert last_bar.startswith("done") and "100%" in last_bar and "150,000 captures" in last_bar, last_bar


def test_no_bar_on_a_pipe_or_with_q(index, tmp_path):
    out = tmp_path / "p.cdxj"
    r = subprocess.run(CLI + ["profile", index, "-o", str(out), "-r", "local"], capture_output=True, env=_env(),
                       cwd=ROOT)
    assert r.returncode == 0
    err = r.stderr.decode()
    assert "\r" not in err and "%|" not in err and "mrjob" not in err
    status, text = run_on_terminal(["profile", index, "-o", str(out), "-q"])
    assert status == 0 and text == ""


def test_verbose_lines_go_above_the_bar(index, tmp_path):
    status, text = run_on_terminal(["profile", index, "-o", str(tmp_path / "p.cdxj"), "-r", "local", "-v"])
    assert status == 0
    # the runner's lines appear with -v, each a whole line, never glued to a bar's redraw (mrjob's,
    # or those of the local runner without mrjob: profiler.runtime.localjob)
    lines = [line.split("\r")[-1] for line in text.replace("\r\n", "\n").split("\n")]
    runner_lines = ("mrjob.sim: Running step 2 of 3", "archive-profiler.localjob: Running step 2 of 3")
    assert any(line.startswith(runner_lines) for line in lines), text
    assert not [line for line in lines if "%|" in line and ("mrjob" in line or "localjob" in line)]


def test_profile_unchanged_by_the_bar(index, tmp_path):
    a, b = tmp_path / "a.cdxj", tmp_path / "b.cdxj"
    assert run_on_terminal(["profile", index, "-o", str(a), "-r", "local"])[0] == 0
    assert subprocess.run(CLI + ["profile", index, "-o", str(b), "-r", "local", "-q"], env=_env(),
                          cwd=ROOT).returncode == 0
    strip = re.compile(rb'"created":"[^"]*"')
    assert strip.sub(b"", a.read_bytes()) == strip.sub(b"", b.read_bytes())


def test_task_reports(tmp_path):
    """A map task's reports: bytes read of its range, captures, and done; nothing without ENV."""
    assert not task_progress.TaskProgress({"path": "x", "start": 0, "end": 10}, environ={})
    folder = tmp_path / "reports"
    folder.mkdir()
    data = tmp_path / "d"
    data.write_bytes(b"x" * 1000)
    split = {"path": str(data), "start": 100, "end": 600}
    task = task_progress.TaskProgress(split, environ={task_progress.ENV: str(folder)})
    with task.opener(open)(str(data)) as f:
        f.seek(400)
        task.update(7)
        f.seek(900)                     # past the range's end: counts the range only
        task._next = 0
        task.update(9)
        [name] = [n for n in os.listdir(folder) if not n.endswith(".tmp")]
        assert (folder / name).read_bytes() == b"500 9 0"
    task.done(10)
    assert (folder / name).read_bytes() == b"0 10 1"
    run = progress.RunProgress([split], {str(data): 1000}, str(folder), "local", enabled=False)
    assert run.total == 500 and run.env() == {}


def test_reduce_task_reports(tmp_path):
    """A reduce task reports the bytes of its input read, of its range, a plain file, or a
    merge plan; nothing from a pipe or without ENV."""
    from profiler import contract
    from profiler.runtime import presorted, task
    folder = tmp_path / "reports"
    folder.mkdir()
    data = tmp_path / "sorted"
    data.write_bytes(b"".join(b"k%05d\t1\n" for k in range(2000)))
    env = {task_progress.ENV: str(folder)}

    def report(step, number):
        return (folder / task_progress.reduce_report_name(step, number)).read_bytes()
    with open(data, "rb") as f:
        r = task_progress.ReduceProgress(0, 1, env)
        assert b"".join(task.input_chunks([], f, 100, dict(env, **{contract.RANGE_ENV: "800 1600"}), r)) \
            == data.read_bytes()[800:1600]
    assert report(0, 1) == b"800 800 1"
    with open(data, "rb") as f:
        r = task_progress.ReduceProgress(2, 0, env)
        assert len(b"".join(task.input_chunks([], f, 4096, env, r))) == data.stat().st_size
    assert report(2, 0) == b"%d %d 1" % (data.stat().st_size, data.stat().st_size)
    plan = tmp_path / "plan"
    plan.write_bytes(presorted.dumps(presorted.Plan([(str(data), 0, 160)], [b"z\t1"])))
    with open(plan, "rb") as f:
        r = task_progress.ReduceProgress(1, 3, env)
        assert b"".join(task.input_chunks([], f, 4096, dict(env, **{contract.MERGE_ENV: "1"}), r)).endswith(b"z\t1\n")
    assert report(1, 3) == b"164 164 1"
    read, write = os.pipe()
    os.write(write, b"a\t1\n")
    os.close(write)
    with os.fdopen(read, "rb") as f:
        assert b"".join(task.input_chunks([], f, 4096, env, task_progress.ReduceProgress(1, 9, env))) == b"a\t1\n"
    assert not (folder / task_progress.reduce_report_name(1, 9)).exists()
    assert not task_progress.ReduceProgress(0, 0, {}).path


@pytest.mark.skipif(shutil.which("tmux") is None and os.environ.get("CI") != "true", reason="needs tmux")
def test_seen_in_tmux(index, tmp_path):
    """As a person sees it: tmux runs the command; the pane while it runs and after."""
    socket = "ap-%s" % uuid.uuid4().hex[:8]
    tmux = ["tmux", "-L", socket]
    out = tmp_path / "p.cdxj"
    script = tmp_path / "run.sh"
    script.write_text("cd %s && PYTHONPATH=%s %s -m profiler.cli profile %s -o %s -r local --cores 2; "
                      "echo EXIT=$?; sleep 600\n" % (ROOT, ROOT, sys.executable, index, out))
    subprocess.run(tmux + ["new-session", "-d", "-s", "t", "-x", "150", "-y", "30", "bash %s" % script], check=True)
    try:
        panes = []
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            pane = subprocess.run(tmux + ["capture-pane", "-p", "-t", "t"], capture_output=True,
                                  text=True).stdout
            panes.append(pane)
            if "EXIT=" in pane:
                break
            time.sleep(0.2)
        final = panes[-1]
        assert "EXIT=0" in final, final
        assert any("%|" in p and "EXIT=" not in p for p in panes), panes     # drawn while it ran
        lines = [line for line in final.splitlines() if line.strip()]
        bars = [line for line in lines if "%|" in line]
        assert len(bars) == 1 and "100%" in bars[0] and "150,000 captures" in bars[0], final
        assert lines[lines.index(bars[0]) + 1].startswith("archive-profiler: 150,000 captures"), final
        assert "mrjob" not in final
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)


BAR = re.compile(r"^(?P<label>\S.*?)\s+(?P<pct>\d+)%\|(?P<bar>[^|]*)\| (?P<captures>[\d,]+) captures (?P<rate>\S+)/s")


@pytest.mark.skipif(shutil.which("tmux") is None and os.environ.get("CI") != "true", reason="needs tmux")
@pytest.mark.parametrize("runner", ["local", "inline"])
def test_whole_run_at_80_columns_in_tmux(index, tmp_path, runner):
    """At 80 columns, as a person watches it: the bar is readable (a bar of at least 15
    characters), shows the phases in order (step 1's map and reduce, steps 2 and 3, done), its
    percentage keeps rising and is below 100 % until the run is done, and the rate is redrawn
    as the run goes."""
    socket = "ap-%s" % uuid.uuid4().hex[:8]
    tmux = ["tmux", "-L", socket]
    script = tmp_path / "run.sh"
    script.write_text("cd %s && PYTHONPATH=%s %s -m profiler.cli profile %s -o %s -r %s --cores 2; "
                      "echo EXIT=$?; sleep 600\n" % (ROOT, ROOT, sys.executable, index, tmp_path / "p.cdxj", runner))
    subprocess.run(tmux + ["new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "bash %s" % script], check=True)
    seen = []
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            pane = subprocess.run(tmux + ["capture-pane", "-p", "-t", "t"], capture_output=True, text=True).stdout
            bars = [m for m in map(BAR.match, pane.splitlines()) if m]
            if bars and (not seen or bars[-1].group(0) != seen[-1].group(0)):
                seen.append(bars[-1])
            if "EXIT=" in pane:
                break
            time.sleep(0.05)
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)
    assert "EXIT=0" in pane, pane
    labels = [m.group("label") for m in seen]
    order = ["step 1/3 map", "step 1/3 reduce", "step 2/3 reduce", "step 3/3 reduce", "writing profile", "done"]
    assert all(label in order for label in labels), labels
    ranks = [order.index(label) for label in labels]
    assert ranks == sorted(ranks), labels                                   # the phases in order
    # the screen is sampled every 50 ms: a step of a few ms may fall between two samples (that
    # every step is drawn, test_bar_on_a_terminal_ends_cleanly reads in the whole transcript)
    assert {"step 1/3 reduce", "step 2/3 reduce", "step 3/3 reduce"} & set(labels) and "done" in labels, labels
    percents = [int(m.group("pct")) for m in seen]
    assert percents == sorted(percents), list(zip(labels, percents))       # never back
    assert all(p < 100 for label, p in zip(labels, percents) if label != "done"), list(zip(labels, percents))
    assert labels[-1] == "done" and percents[-1] == 100
    assert all(len(m.group("bar")) >= 15 for m in seen), [m.group(0) for m in seen]   # readable at 80
    reduces = [m for m in seen if "reduce" in m.group("label")]
    if len(reduces) > 1:                # two redraws of the reduce caught (a quick run may show one)
        assert len({m.group("rate") for m in reduces}) > 1, [m.group(0) for m in seen]   # live, not frozen


def test_nightly_draws_the_bar_too(index, tmp_path):
    config = tmp_path / "n.yaml"
    config.write_text("inputs: [%s]\noutput_dir: %s\nname: a\nrunner: local\ncores: 2\n" % (index, tmp_path / "out"))
    status, text = run_on_terminal(["nightly", "--config", str(config)])
    assert status == 0, text
    assert "step 1/3" in text and "%|" in text and "150,000 captures" in text
    status, text = run_on_terminal(["nightly", "--config", str(config), "-q"])
    assert "%|" not in text
