"""`archive-profiler nightly`: the unattended nightly regeneration (cron, systemd timers)."""

import logging
import sys

NAME = "nightly"
HELP = "regenerate an archive's profile from new inputs, unattended (for cron or a systemd timer)"
DESCRIPTION = ("Profile the inputs that are new or changed since the last successful run and publish "
               "a new dated profile version, its change report and NAME-latest.cdxj (see "
               "conf/nightly.yaml). Prints one summary line. Exit status: 0 published or nothing new, "
               "1 the run failed (the published profile and the state are unchanged, or the line names the "
               "version committed), 2 a mistake in "
               "the config or inputs, 75 another run holds the lock.")
EXIT_LOCKED = 75


def add_arguments(p):
    p.add_argument("--config", required=True, metavar="NIGHTLY.yaml", help="the nightly config file")
    p.add_argument("--json", action="store_true", help="print the run record (JSON) instead of the summary line")


def run(args):
    from profiler.errors import RunError, UserError
    from profiler.nightly.night import Night, record_json, summary_line
    from profiler.nightly.config import load
    from profiler.nightly.lock import LockHeld

    from profiler.run.progress import wanted
    night = Night(load(args.config), progress=wanted(args.quiet))
    status = 0
    try:
        night.run()
    except LockHeld:
        status = EXIT_LOCKED
    except UserError:
        status = 2
    except (RunError, OSError):
        status = 1
    except Exception:
        logging.getLogger("archive-profiler").debug("unexpected error", exc_info=True)
        status = 1
    record = night.record
    if args.json:
        sys.stdout.buffer.write(record_json(record) + b"\n")
    else:
        print("archive-profiler nightly: " + summary_line(record))
    sys.stdout.flush()
    return status
