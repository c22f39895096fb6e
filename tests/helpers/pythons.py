"""A task Python that can import profiler only from the shipped zip."""

import importlib.util
import os
import stat
import sys

from helpers.shipped import ONLY_SHIPPED


WRAPPER = """#!%s
# A task python that imports profiler only from a shipped .zip on PYTHONPATH, never from
# the installed (or editable) package.
import importlib.machinery, os, runpy, sys

if len(sys.argv) < 2 or sys.argv[1].startswith("-"):     # mrjob's own 'python -c ...' calls
    os.execv(sys.executable, [sys.executable] + sys.argv[1:])

""" + ONLY_SHIPPED + """
sys.meta_path.insert(0, OnlyShipped())
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def python_without_profiler(tmp_path):
    wrapper = tmp_path / "python-no-profiler"
    wrapper.write_text(WRAPPER % sys.executable)
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper)
