"""Reading CDXJ archive profiles: header lines, then `KEY {json}` data lines, byte-wise sorted
(every line checked: profiler.files.datalines); the features of a line's value."""


def iter_data(path, skipped=None):
    """Yield (key bytes, value dict) for every data line of a CDXJ profile, in file order, each
    line checked (profiler.files.datalines: a damaged line is a one-line error, or with
    ``skipped`` counted there and left out)."""
    from profiler.files.datalines import DataFile
    for record in DataFile(path, "cdxj").records(skipped):
        yield record.key, record.value


def iter_raw(path):
    """Yield (line number, key bytes, JSON bytes) for every data line, each checked
    (profiler.files.datalines: a damaged line is a one-line error)."""
    from profiler.files.datalines import DataFile
    for record in DataFile(path, "cdxj").records(parse=False):
        yield record.lineno, record.key, record.json


def read_header(path):
    """The header lines of a profile (or map), as a list of (name, parsed JSON or raw bytes),
    '@' names read as '!'; the file checked to be one (profiler.files.datalines.DataFile)."""
    from profiler.files.datalines import DataFile
    return DataFile(path).headers


# ---------------------------------------------------------------- toolkit helpers

#: the features of a data line, flattened ("urim.total"), in the spec's order
FEATURES = ("urim.total", "urim.min", "urim.max", "urir", "bytes", "digests", "dedup_bytes", "first", "last")


def ratio(num, den, digits):
    """num / den rounded to digits decimals, as the derived features (avg_size, avg_bytes, ...)
    give it; a quotient past a float's range (counts have no bound) as its integer part, exact
    (a float division of such counts raised OverflowError)."""
    try:
        return round(num / den, digits)
    except OverflowError:
        return num // den


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


#: what the features of one line must satisfy whatever the archive: (the features it reads, the
#: test, what a line that fails it has); a bounded feature (merge's and compact's "bounds") is left
#: out of every test that reads it
CONSISTENCY = (
    (("urim.min", "urim.max"), lambda v: v["urim.min"] <= v["urim.max"], "urim.min > urim.max"),
    (("urim.max", "urim.total"), lambda v: v["urim.max"] <= v["urim.total"], "urim.max > urim.total"),
    (("urim.min", "urim.total"), lambda v: v["urim.total"] == 0 or v["urim.min"] >= 1, "urim.min < 1"),
    (("urir", "urim.total"), lambda v: v["urir"] <= v["urim.total"], "urir > urim.total"),
    (("urir", "urim.total"), lambda v: v["urim.total"] == 0 or v["urir"] >= 1, "urir < 1"),
    (("urir", "urim.min", "urim.total"), lambda v: v["urir"] * v["urim.min"] <= v["urim.total"],
     "urir * urim.min > urim.total"),
    (("urir", "urim.max", "urim.total"), lambda v: v["urim.total"] <= v["urir"] * v["urim.max"],
     "urim.total > urir * urim.max"),
    (("digests", "urim.total"), lambda v: v["digests"] <= v["urim.total"], "digests > urim.total"),
    (("dedup_bytes", "bytes"), lambda v: v["dedup_bytes"] <= v["bytes"], "dedup_bytes > bytes"),
    (("first", "last"), lambda v: v["first"] <= v["last"], "first > last"),
)


def inconsistencies(flat, bounded=()):
    """What a line's features (flatten: whole numbers and timestamps already checked) have that
    no archive can give, by CONSISTENCY; bounded: the names of its bounded features."""
    for names, test, message in CONSISTENCY:
        if all(n in flat and n not in bounded for n in names) and not test(flat):
            yield message


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
