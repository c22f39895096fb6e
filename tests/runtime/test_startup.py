"""profiler.runtime.startup: the client imports neither setuptools nor pyspark to run the local runner."""

import importlib.util
import json
import subprocess
import sys

import pytest


def _run(code):
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None, reason="pyspark is not installed")
def test_the_local_runner_loads_without_pyspark_and_mrjob_bin_still_finds_it():
    got = _run("import json, os, sys\n"
               "from profiler.runtime import localrunner\n"
               "import mrjob.bin\n"
               "loaded = 'pyspark' in sys.modules\n"
               "seen = mrjob.bin.pyspark.__file__\n"
               "import pyspark\n"
               "print(json.dumps([loaded, seen, pyspark.__file__]))")
    loaded, seen, real = got
    assert not loaded
    assert seen == real


def test_pyspark_already_imported_is_left_to_mrjob_bin():
    pytest.importorskip("pyspark")
    got = _run("import json, pyspark\n"
               "from profiler.runtime.startup import import_mrjob_bin\n"
               "print(json.dumps(import_mrjob_bin().pyspark is pyspark))")
    assert got is True


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12+ has no distutils of its own")
def test_console_start_imports_mrjob_without_setuptools():
    code = ("import json, sys\n"
            "from profiler.runtime import startup\n"
            "took = startup.use_stdlib_distutils()\n"
            "import mrjob.job\n"
            "print(json.dumps([took, 'setuptools' in sys.modules]))")
    took, setuptools_loaded = _run(code)
    assert not setuptools_loaded
    if importlib.util.find_spec("setuptools") is not None:
        assert took


def test_console_script_is_console_main():
    from profiler.cli import main as cli
    with pytest.raises(SystemExit) as e:
        sys.argv, saved = ["archive-profiler", "--version"], sys.argv
        try:
            cli.console_main()
        finally:
            sys.argv = saved
    assert e.value.code == 0
