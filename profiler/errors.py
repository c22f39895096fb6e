"""Errors a user can fix (exit status 2) and errors of a run (exit status 1)."""


class UserError(Exception):
    """A mistake in the command line, a file or a config: reported in one line, exit status 2."""


class RunError(Exception):
    """A run that failed for a reason outside the user's input: one line, exit status 1."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that a run ends as on Ctrl-C (cleaned up)."""

