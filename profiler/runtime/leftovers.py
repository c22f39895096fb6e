"""What mrjob's runners leave outside the temp folder they clean up, removed when a run ends
(success, failure or signal): the setup wrapper's lock file and the Spark runner's local
``<job key>-spark`` folder (its step outputs). Both are named by the run's unique job key, so
only this run's are ever removed."""

import contextlib
import os
import shutil
import tempfile

#: where mrjob's setup wrapper script takes its lock (a literal /tmp in mrjob.bin)
WRAPPER_LOCK_DIR = "/tmp"


def paths(job_key):
    """The leftover paths a run with this job key may have made."""
    if not job_key or os.sep in job_key or job_key.startswith("."):
        return []
    return [os.path.join(WRAPPER_LOCK_DIR, "wrapper.lock." + job_key),
            os.path.join(tempfile.gettempdir(), job_key + "-spark")]


def remove(job_key):
    """Remove this run's leftovers; returns the paths removed."""
    removed = []
    for path in paths(job_key):
        try:
            if os.path.islink(path):
                continue
            if os.path.isdir(path):
                shutil.rmtree(path)
            elif os.path.isfile(path):
                os.unlink(path)
            else:
                continue
        except OSError:
            continue
        removed.append(path)
    return removed


@contextlib.contextmanager
def removed_at_exit(runner):
    """Remove the runner's leftovers when the block ends, however it ends."""
    try:
        yield
    finally:
        remove(getattr(runner, "_job_key", None))
