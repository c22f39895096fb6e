"""Environment of local task processes: which distutils mrjob 0.7.4 imports when a task starts.

mrjob imports distutils (LooseVersion, find_executable). With setuptools installed, its
distutils shim (a .pth file read when Python starts) makes that import load setuptools and
pkg_resources: importing mrjob.job then costs several times as much, in every task. Up to Python 3.11 the standard library still has distutils, and setuptools leaves it
alone when SETUPTOOLS_USE_DISTUTILS=stdlib is set before Python starts. Python 3.12 removed
it, so there (or when the task Python is not known) nothing is set.
"""

import os
import sys

VAR = "SETUPTOOLS_USE_DISTUTILS"


def local_task_env(extra_args=(), version=None, environ=None):
    """{VAR: 'stdlib'} for the local runner's tasks when they run this Python (no --python-bin
    among extra_args), it is 3.11 or older and the user has not set VAR; else {}."""
    version = sys.version_info if version is None else version
    environ = os.environ if environ is None else environ
    if version >= (3, 12) or VAR in environ or any(a.startswith("--python-bin") for a in extra_args):
        return {}
    return {VAR: "stdlib"}
