"""The `archive-profiler` command line (profiler.cli.main) and its commands."""

import sys as _sys

PROG = "archive-profiler"


def _interrupted_in_one_line(kind, value, tb, previous=_sys.excepthook):
    """A Ctrl-C that no command catches (while Python imports the command line's modules, before
    main() runs, or after it returns): one line, not a traceback; Python still ends by the signal.
    Every other exception goes to the hook before."""
    if issubclass(kind, KeyboardInterrupt):
        try:
            _sys.stderr.write("%s: interrupted (the previous output, if any, is unchanged)\n" % PROG)
            _sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass
        return
    previous(kind, value, tb)


_sys.excepthook = _interrupted_in_one_line
