"""Client start-up: two imports mrjob makes that an `archive-profiler` run does not need.

- mrjob.util imports distutils. With setuptools installed, setuptools' shim (put in place by
  a .pth file when Python starts) turns that into an import of setuptools and pkg_resources,
  which is slow. Up to Python 3.11 the standard library's distutils serves mrjob as well, so the
  console script takes the shim out before mrjob is imported (tasks are started with
  SETUPTOOLS_USE_DISTUTILS=stdlib instead: profiler.runtime.taskenv).
- mrjob.bin, imported by every runner but inline, imports pyspark only to look for
  spark-submit beside it (``os.path.dirname(pyspark.__file__)``), and pyspark imports numpy. import_mrjob_bin() imports mrjob.bin with pyspark hidden and gives it the one
  thing it uses, the location of pyspark; pyspark is imported when something needs it (the
  Spark runner, the Spark harness).

Both save serial time of every run: the client starts before any task can.
"""

import importlib.util
import os
import sys

from profiler.runtime.taskenv import VAR


def use_stdlib_distutils():
    """Take setuptools' distutils shim out of this process (Python <= 3.11, VAR unset, distutils
    not imported yet). Returns True if it did."""
    if sys.version_info >= (3, 12) or VAR in os.environ or "distutils" in sys.modules:
        return False
    hack = sys.modules.get("_distutils_hack")
    remove = getattr(hack, "remove_shim", None)
    if remove is None:
        return False
    remove()
    return True


class PysparkLocation:
    """What mrjob 0.7.4's mrjob.bin uses of pyspark: its __file__ (spark-submit is in bin/ beside it)."""

    def __init__(self, path):
        self.__file__ = path


def import_mrjob_bin():
    """mrjob.bin, imported without importing pyspark (when pyspark is installed and not imported)."""
    if "mrjob.bin" not in sys.modules and "pyspark" not in sys.modules:
        spec = importlib.util.find_spec("pyspark")
        if spec is not None and spec.origin:
            sys.modules["pyspark"] = None          # `import pyspark` fails while mrjob.bin loads
            try:
                import mrjob.bin
            finally:
                del sys.modules["pyspark"]
            mrjob.bin.pyspark = PysparkLocation(spec.origin)
    import mrjob.bin
    return mrjob.bin
