"""Arguments shared by the subcommands: argparse types, one option per criterion, and the
tolerant option of the readers of profiles and maps.

Numbers are ASCII digits only: Python's int() and str.isdigit() also take other scripts'
digits (Arabic-Indic, fullwidth, superscripts), which would reach the files as other bytes.
"""

import argparse
import re
import sys

from profiler.errors import UserError
from profiler.model import criteria

_DIGITS = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")

#: the tolerant option of every command that reads profiles and maps (profiler.files.datalines)
SKIP_BAD_LINES = "--skip-bad-lines"


def ascii_digits(text):
    """Whether text is one or more ASCII digits (nothing else, no sign, no blank)."""
    return isinstance(text, str) and _DIGITS.fullmatch(text) is not None


def whole_number(text):
    """A count of 0 or more, in ASCII digits."""
    if not ascii_digits(text):
        raise argparse.ArgumentTypeError("not a whole number (ASCII digits 0-9): %r" % text[:40])
    return int(text)


def positive_int(text):
    """A count of at least 1, in ASCII digits."""
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive whole number, not %d" % value)
    return value


def seconds(text):
    """A duration in seconds: ASCII digits with an optional fraction (float() also takes other
    scripts' digits, blanks around, '_' between digits, signs, exponents, 'nan' and 'inf')."""
    if not isinstance(text, str) or _DECIMAL.fullmatch(text) is None:
        raise argparse.ArgumentTypeError("not a number of seconds (ASCII digits 0-9, a '.' and a fraction "
                                         "allowed): %r" % text[:40])
    return float(text)


def cores(text):
    """A number of processes: a count of at least 1 and at most MAX_CORES."""
    from profiler.runtime.preflight import MAX_CORES
    value = positive_int(text)
    if value > MAX_CORES:
        raise argparse.ArgumentTypeError("must be at most %d, not %d" % (MAX_CORES, value))
    return value


#: arguments that may be any bytes the system takes: paths (their names are bytes, kept as
#: os.fsdecode gives them), and what is percent-encoded where it is written (a URI looked up, a
#: collection's label or pattern)
ANY_BYTES = {"inputs", "output", "profile", "file", "files", "input", "prefix", "old", "new", "a", "b", "png",
             "conf_path", "manifest", "policy", "config", "input_collection", "uri", "collection",
             "collection_pattern", "extra"}


def not_utf8(args):
    """The first option of args (an argparse Namespace) whose text is not UTF-8, as (its name, its
    value), or None. Bytes of an argument that are not UTF-8 reach Python as lone surrogates,
    which no JSON or HTML output can hold (a traceback where they were written)."""
    for name, value in sorted(vars(args).items()):
        if name in ANY_BYTES:
            continue
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    return "--" + name.replace("_", "-"), text
    return None


def add_criteria_options(p, help, only=None):
    """An option --NAME for each criterion of the registry (profiler.model.criteria) that only(c)
    takes (None: every one), its help help(c): a subcommand takes every criterion the registry
    has, whatever it holds when the parser is built. A name with '_' (a plugin's tld_length) is
    also spelled with '-' as the other options are (--tld-length): the commands' own options,
    either spelling, are criteria.RESERVED, so neither clashes with one."""
    for c in criteria.CRITERIA:
        if only is None or only(c):
            spellings = ["--" + c.name] + (["--" + c.name.replace("_", "-")] if "_" in c.name else [])
            p.add_argument(*spellings, dest=c.name, default=None, metavar=c.name.upper(), help=help(c))


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
        raise UserError("--%s: %s%s" % (c.name, e, _range_hint(c, text)))


#: '2013-2014', '2013:2014', '2013..2014', '2013 to 2014': a range given to --datetime
_RANGE = re.compile(r"\s*([0-9]{4}(?:-?[0-9]{2})*)\s*(?:-|:|\.\.|/|to)\s*([0-9]{4}(?:-?[0-9]{2})*)\s*")


def _range_hint(c, text):
    """'; a range is query's --from A --to B' when a datetime value reads as a range of two periods."""
    m = _RANGE.fullmatch(text) if c is criteria.DATETIME else None
    return "; a range is query's --from %s --to %s" % m.groups() if m else ""


def add_skip_bad_lines(parser):
    """The --skip-bad-lines option of a command that reads profiles or maps."""
    parser.add_argument(SKIP_BAD_LINES, action="store_true",
                        help="skip damaged lines (cut, malformed, of another layout), counted and reported, "
                             "instead of refusing the file; lines out of order are refused either way")


def report_skipped(skipped):
    """One warning line on stderr per file whose damaged lines were skipped (also under -q:
    what an answer leaves out is never silent)."""
    for s in skipped:
        if s is not None and s.count:
            print("archive-profiler: warning: %s" % s.message(), file=sys.stderr)
