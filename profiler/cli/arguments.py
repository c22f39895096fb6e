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
