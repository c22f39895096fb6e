"""Sums of lengths past 63 bits: exact, by running the job again with the Python kernels.

The compiled kernels (profiler/accel/_apfast.c) hold every count and sum in a signed 64-bit integer.
A run gives each split a share of 2^63 - 1 (``max_bytes`` in its manifest line): while every
split keeps to its share, no sum of lengths in any step can pass 2^63 - 1 and the compiled
kernels are exact. A split past its share stops its task with ``SumsPastBudget``, after leaving
a mark in the run's signal folder; the client then runs the job again with the pure-Python
kernels (``ARCHIVE_PROFILER_PURE_PYTHON=1``), whose integers have no bound and which have no
budget. Profiles and job records hold such integers as plain JSON (profiler.jsonnum).
"""

import os

from profiler.accel import fast
from profiler import contract

#: the environment variable naming the run's signal folder (tasks leave marks there)
ENV = contract.SIGNALS_ENV
#: the most all lengths of a compiled run may add up to
MAX_TOTAL = (1 << 63) - 1
#: the mark a task leaves, and the text its error carries (for runners whose tasks write
#: elsewhere: the client finds it in the error)
MARK = "sums-past-63-bits"


class SumsPastBudget(RuntimeError):
    """A split's lengths passed its share of 2^63 - 1: the run must go again in Python."""


def budget(split, environ=os.environ):
    """The most the lengths of this split may add up to, or None (no bound: pure Python)."""
    if environ.get(fast.PURE_ENV):
        return None
    return split.get("max_bytes", MAX_TOTAL)


def past_budget(environ=os.environ):
    """Leave the mark for the client and stop the task."""
    folder = environ.get(ENV)
    if folder:
        try:
            with open(os.path.join(folder, MARK), "w"):
                pass
        except OSError:
            pass
    raise SumsPastBudget("%s: lengths add up past 2^63 - 1; the run goes again with the Python kernels"
                         % MARK)


def signalled(folder, error=None):
    """Whether a task of the run stopped for sums past its budget (its mark, or its error text)."""
    if folder and os.path.exists(os.path.join(folder, MARK)):
        return True
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, SumsPastBudget) or MARK in str(error):
            return True
        error = error.__cause__ or error.__context__
    return False
