"""Argument types shared by the subcommands (argparse's type=)."""

import argparse


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
