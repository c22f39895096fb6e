"""Arguments shared by the subcommands: argparse types, and one option per criterion."""

import argparse

from profiler.errors import UserError
from profiler.model import criteria


def positive_int(text):
    """A count of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a whole number: %r" % text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive whole number, not %d" % value)
    return value


def cores(text):
    """A number of processes: a count of at least 1 and at most MAX_CORES."""
    from profiler.runtime.preflight import MAX_CORES
    value = positive_int(text)
    if value > MAX_CORES:
        raise argparse.ArgumentTypeError("must be at most %d, not %d" % (MAX_CORES, value))
    return value


def add_criteria_options(p, help, only=None):
    """An option --NAME for each criterion of the registry (profiler.model.criteria) that only(c)
    takes (None: every one), its help help(c): a subcommand takes every criterion the registry
    has, whatever it holds when the parser is built."""
    for c in criteria.CRITERIA:
        if only is None or only(c):
            p.add_argument("--" + c.name, default=None, metavar=c.name.upper(), help=help(c))


def needs_keys(c):
    """'; needs a profile whose keys have NAME' for an optional criterion, '' for a core one."""
    return "; needs a profile whose keys have %s" % c.name if c.optional else ""


def criteria_values(args, only=None):
    """{criterion name: its key field, or None when its option is not given} of the options
    add_criteria_options added (the same only): each value as the criterion reads what a person
    gives (Criterion.query: 'ar-EG' -> 'ara'); a UserError when one names no value of it."""
    out = {}
    for c in criteria.CRITERIA:
        if only is None or only(c):
            out[c.name] = asked(c, getattr(args, c.name, None))
    return out


def asked(c, text):
    """A criterion's key field of a value a person gives (None stays None); a UserError when it
    names none."""
    if text is None:
        return None
    try:
        return c.query(text)
    except ValueError as e:
        raise UserError("--%s: %s" % (c.name, e))
