"""Reading CDXJ archive profiles: header lines, then `KEY {json}` data lines, byte-wise sorted."""

import logging

from profiler import jsonnum
from profiler.errors import UserError

log = logging.getLogger("archive-profiler")


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
                yield key, jsonnum.loads(value)
            except jsonnum.JSONDecodeError as e:
                raise ProfileFormatError("bad JSON on line %d of %s: %s" % (lineno, path, e))


def iter_raw(path, tolerant=False):
    """Yield (line number, key bytes, JSON bytes) for every data line, without parsing the JSON.
    ``tolerant``: a malformed line (no ` {`, or a JSON block that does not start and end as an
    object) is skipped and counted, with one warning naming the first one's line number, as the
    ORS/CDXJ format asks of parsers (validate stays strict)."""
    skipped = []
    with open(path, "rb") as f:
        for lineno, line in enumerate(f, 1):
            if is_header(line):
                continue
            if not line.strip():
                continue
            if tolerant:
                stripped = line.rstrip(b"\r\n")
                i = stripped.find(b" {")
                if i <= 0 or not stripped.endswith(b"}"):
                    if not skipped:
                        log.warning("%s line %d: not a profile line, skipped (further ones are counted)",
                                    path, lineno)
                    skipped.append(lineno)
                    continue
            key, value = split_line(line, lineno)
            yield lineno, key, value
    if len(skipped) > 1:
        log.warning("%s: %d malformed lines skipped", path, len(skipped))


def load_value(value, lineno, path):
    """Parse the JSON block of a data line; a bad one is a ProfileFormatError naming the line."""
    try:
        return jsonnum.loads(value)
    except jsonnum.JSONDecodeError as e:
        raise ProfileFormatError("bad JSON on line %d of %s: %s" % (lineno, path, e))


def read_header(path):
    """The header lines of a profile, as a list of (name, parsed JSON or raw bytes)."""
    out = []
    with open(path, "rb") as f:
        for line in f:
            if not is_header(line):
                break
            name, _, rest = line.rstrip(b"\r\n").partition(b" ")
            name = name.decode("ascii", "replace")
            name = "!" + name[1:] if name.startswith("@") else name    # '@' headers: the same lines
            try:
                out.append((name, jsonnum.loads(rest)))
            except jsonnum.JSONDecodeError:
                out.append((name, rest))
    return out


# ---------------------------------------------------------------- toolkit helpers

#: the features of a data line, flattened ("urim.total"), in the spec's order
FEATURES = ("urim.total", "urim.min", "urim.max", "urir", "bytes", "digests", "dedup_bytes", "first", "last")


def flatten(value):
    """A data line's parsed JSON -> {"urim.total": ..., "urir": ..., ...} (only the features present)."""
    out = {}
    urim = value.get("urim")
    if isinstance(urim, dict):
        for name in ("total", "min", "max"):
            if name in urim:
                out["urim." + name] = urim[name]
    for name in FEATURES[3:]:
        if name in value:
            out[name] = value[name]
    return out


#: the JSON names a profile line's value may hold besides its extra attributes
KNOWN_NAMES = frozenset(("urim", "bounds") + FEATURES[3:])


def extras(value):
    """A data line's extra attributes (anything but the features and bounds), in their order:
    the format lets a line carry more without changing the existing data."""
    return {k: v for k, v in value.items() if k not in KNOWN_NAMES}


def unflatten(flat, bounds=None, extra=None):
    """The inverse of flatten, keys in the spec's order; ``bounds`` ({feature: [low, high]}) after
    the features, then ``extra`` attributes."""
    out = {"urim": {n: flat["urim." + n] for n in ("total", "min", "max") if "urim." + n in flat}}
    for name in FEATURES[3:]:
        if name in flat:
            out[name] = flat[name]
    if bounds:
        out["bounds"] = {n: list(bounds[n]) for n in FEATURES if n in bounds}
    if extra:
        out.update(extra)
    return out


def data_offset(path):
    """Byte offset of the first data line (just after the leading header lines)."""
    offset = 0
    with open(path, "rb") as f:
        for line in f:
            if not is_header(line):
                break
            offset += len(line)
    return offset


def sniff_kind(path):
    """'cdxj' (an archive profile) or 'ukvs' (a MementoMap), from the headers or the first data line."""
    first = None
    with open(path, "rb") as f:
        for line in f:
            if not is_header(line):
                first = line
                break
            name, _, rest = line.partition(b" ")
            if name[1:] == b"fields":
                return "ukvs"
            if name[1:] == b"keys":
                return "cdxj"
            if name[1:] == b"context":
                if b"ukvs" in rest:
                    return "ukvs"
                if b"archiveprofiles" in rest:
                    return "cdxj"
    if first is not None:
        i = first.find(b" {")
        if i < 0 or b'"urim"' not in first[i:]:
            return "ukvs"
    return "cdxj"
