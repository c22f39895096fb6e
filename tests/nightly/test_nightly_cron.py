"""The README's cron line runs the nightly job in cron's minimal environment."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers.nightly_archive import ROOT, Archive, assert_same_profile, captures_by_host


def readme_cron_line():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"```crontab\n(.*?)```", text, re.S)
    lines = [l for b in blocks for l in b.splitlines() if l.strip() and not l.startswith("#")]
    assert len(lines) == 1, "the README should give one cron line"
    return lines[0]


def test_the_readme_cron_line_runs_nightly(tmp_path):
    line = readme_cron_line()
    fields = line.split(None, 5)
    assert len(fields) == 6 and fields[:5] == ["30", "2", "*", "*", "*"]
    command = fields[5]
    script = shutil.which("archive-profiler", path=os.path.dirname(sys.executable))
    if script is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("archive-profiler console script not installed beside %s" % sys.executable)
        pytest.skip("archive-profiler is not installed in this environment (pip install -e .)")
    a = Archive(tmp_path)
    a.add_cdx("a.cdx", [c for g in captures_by_host(800, seed=3) for c in g])
    command = command.replace("/opt/archive-profiler/.venv/bin/archive-profiler", script)
    command = command.replace("/data/archive/nightly.yaml", a.config)
    assert script in command and a.config in command
    # cron's environment: sh, a short PATH, HOME, LOGNAME; nothing of this test's
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LOGNAME": "archive", "SHELL": "/bin/sh",
           "TMPDIR": os.environ["TMPDIR"]}
    done = subprocess.run(["/bin/sh", "-c", command], env=env, capture_output=True, text=True, cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""                       # -q: cron mails only the summary line
    out = done.stdout.splitlines()
    assert len(out) == 1 and out[0].startswith("archive-profiler nightly: published archive-")
    assert_same_profile(a.latest, a.scratch())
