"""A module that does not load before the program's own code runs (a broken or missing
dependency, a bad module on PYTHONPATH): one line naming it, exit 2, not a traceback."""

import os
import subprocess
import sys

import pytest

from helpers.paths import ROOT


@pytest.mark.parametrize("source, shown", [
    ('raise ImportError("broken orjson")\n', "ImportError: broken orjson"),
    ('raise RuntimeError("half installed")\n', "RuntimeError: half installed"),
    ("x = (\n", "SyntaxError: '(' was never closed"),
])
@pytest.mark.parametrize("argv", [["profile", "in.cdx", "-o", "out.cdxj"], ["nightly", "--config", "n.yaml"],
                                  ["merge", "a.cdxj", "b.cdxj", "-o", "m.cdxj"]])
def test_a_dependency_that_does_not_load_is_one_line(tmp_path, source, shown, argv):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "orjson.py").write_text(source)
    done = subprocess.run([sys.executable, "-m", "profiler.cli"] + argv, cwd=str(tmp_path), capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(bad), ROOT])), timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert lines[0].startswith("archive-profiler: error: cannot start: a module does not load (%s" % shown)
    assert str(bad / "orjson.py") in lines[0]
