"""The nightly package: a night lives in profiler/nightly/night.py; importing one of its parts
(the lock, the config) does not load the whole night, and production code holds no test hook."""

import os
import subprocess
import sys

from helpers.paths import ROOT


def test_importing_the_lock_loads_neither_the_night_nor_its_tools():
    code = "import sys, profiler.nightly.lock; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    for module in ("profiler.nightly.night", "profiler.nightly.changes", "profiler.files.validate",
                   "profiler.formats.inputs", "profiler.toolkit.merge"):
        assert module not in loaded


def test_production_code_holds_no_stall_hook():
    found = []
    for folder, _, names in os.walk(os.path.join(ROOT, "profiler", "nightly")):
        for name in names:
            if name.endswith(".py"):
                text = open(os.path.join(folder, name), encoding="utf-8").read()
                if "STALL" in text or "sleep(3600)" in text:
                    found.append(name)
    assert not found
