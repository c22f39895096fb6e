"""Errors a user can fix (exit status 2) and errors of a run (exit status 1), and how they are shown."""

import re


class UserError(Exception):
    """A mistake in the command line, a file or a config: reported in one line, exit status 2."""


class RunError(Exception):
    """A run that failed for a reason outside the user's input: one line, exit status 1."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that a run ends as on Ctrl-C (cleaned up)."""


class HungUp(Terminated):
    """SIGHUP (the terminal closed), ending a run as SIGTERM does."""



_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\udc80-\udcff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text):
    """text with its control characters escaped (a newline as \\n, an escape as \\x1b): what it
    quotes (a file name) keeps an error on one line and sends the terminal nothing to obey. A
    byte of a name that is not UTF-8 (read as a surrogate escape) shows as that byte, \\xff."""
    return _CONTROL.sub(lambda m: _NAMED.get(m.group(), "\\x%02x" % (ord(m.group()) & 0xff)), text)
