"""Build hook for the optional C extension; everything else is in setup.cfg.

profiler/accel/_apfast.c is the compiled hot path of the profile job. It is optional: without a
C compiler the build goes on and the pure-Python code gives the same bytes (profiler/accel/fast.py).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("profiler.accel._apfast", ["profiler/accel/_apfast.c"], optional=True,
                             extra_compile_args=["-O2"])])
