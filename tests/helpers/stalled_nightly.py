"""`archive-profiler nightly` that stops at a stage and waits there to be killed (a test's SIGKILL).

    python tests/helpers/stalled_nightly.py STAGE -- nightly --config NIGHTLY.yaml

Stages: ``profiled`` (the new profile is made, not yet checked), ``placed`` (the version's files
are in the output folder, the state not yet committed), ``committed`` (the state is committed,
NAME-latest not yet moved). It prints ``STALLED STAGE`` when it gets there.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from profiler.cli import main as cli               # noqa: E402
from profiler.nightly import night, state          # noqa: E402

STAGES = ("profiled", "placed", "committed")


def stall(stage):
    print("STALLED %s" % stage, flush=True)
    time.sleep(3600)


def install(stage):
    """Make the night stop at stage."""
    if stage == "profiled":
        check = night.Night._check

        def stalled_check(self, *args):
            stall(stage)
            return check(self, *args)
        night.Night._check = stalled_check
    else:
        commit = state.State.commit

        def stalled_commit(self, *args, **kwargs):
            if stage == "placed":
                stall(stage)
            commit(self, *args, **kwargs)
            stall(stage)
        state.State.commit = stalled_commit


if __name__ == "__main__":
    stage, dashes, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    assert stage in STAGES and dashes == "--", sys.argv
    install(stage)
    sys.exit(cli.main(args))
