"""Reading CDXJ archive profiles: header lines, then `KEY {json}` data lines, byte-wise sorted."""

import orjson

from profiler.errors import UserError


class ProfileFormatError(UserError):
    """A line that is not `KEY {json}` where a CDXJ profile line is expected."""


def is_header(line):
    """True for the special lines (`!context`, `!meta`, ... or `@...`) that precede the data."""
    return line[:1] in (b"!", b"@")


def split_line(line, lineno=None):
    """`b'com,* 2013 - - {...}'` -> (b'com,* 2013 - -', b'{...}')."""
    line = line.rstrip(b"\r\n")
    i = line.find(b" {")
    if i <= 0:
        where = " (line %d)" % lineno if lineno else ""
        raise ProfileFormatError("not a profile line%s: %r" % (where, line[:80]))
    return line[:i], line[i + 1:]


def iter_data(path):
    """Yield (key bytes, value dict) for every data line of a CDXJ profile, in file order."""
    with open(path, "rb") as f:
        for lineno, line in enumerate(f, 1):
            if is_header(line):
                continue
            key, value = split_line(line, lineno)
            try:
                yield key, orjson.loads(value)
            except orjson.JSONDecodeError as e:
                raise ProfileFormatError("bad JSON on line %d of %s: %s" % (lineno, path, e))


def read_header(path):
    """The header lines of a profile, as a list of (name, parsed JSON or raw bytes)."""
    out = []
    with open(path, "rb") as f:
        for line in f:
            if not is_header(line):
                break
            name, _, rest = line.rstrip(b"\r\n").partition(b" ")
            try:
                out.append((name.decode("ascii", "replace"), orjson.loads(rest)))
            except orjson.JSONDecodeError:
                out.append((name.decode("ascii", "replace"), rest))
    return out
