"""Build hook for the optional C extension; everything else is in setup.cfg.

profiler/accel/_apfast.c (with the parts it includes) holds the compiled kernels of the profile
job. They are optional: without a C compiler the build goes on and the pure-Python kernels give
the same bytes (profiler/job/kernels.py).
"""

import glob

from setuptools import Extension, setup

PARTS = sorted(glob.glob("profiler/accel/*.h") + [p for p in glob.glob("profiler/accel/*.c")
                                                   if not p.endswith("_apfast.c")])

setup(data_files=[("share/archive-profiler/policies", sorted(glob.glob("conf/policies/*.yaml")))],
      ext_modules=[Extension("profiler.accel._apfast", ["profiler/accel/_apfast.c"], depends=PARTS, optional=True,
                             extra_compile_args=["-O2"])])
