"""A test plugin whose criterion only a WARC header gives: ``truncated``, why a WARC record was
cut short, from its ``WARC-Truncated`` header (profiler.plugins:
ARCHIVE_PROFILER_PLUGINS=helpers.truncated). It adds a capture field (default 'unk', what a CDX,
CDXJ or crawl log gives) read from the header by profiler.formats.registry.warc_header: 'no' for a
record without the header, the reason the WARC standard names ('length', 'time', 'disconnect',
'unspecified'), 'other' for any other text.
"""

from profiler.formats import registry
from profiler.model import capture, criteria, normalise

REASONS = ("length", "time", "disconnect", "unspecified")
VALUES = ("no",) + REASONS + ("other", normalise.UNKNOWN)


def reason(value):
    """A WARC-Truncated header's value (None: no header) -> the field: 'no', a reason or 'other'."""
    if value is None:
        return "no"
    value = value.strip().lower()
    return value if value in REASONS else "other"


TRUNCATED = criteria.Criterion(
    "truncated", "truncated", (criteria.Level("reason", criteria.IDENTITY),), ("reason",),
    lambda field: ("reason",), ("length",), r"-|" + "|".join(VALUES), "'-', " + ", ".join(VALUES),
    optional=True, example="why a WARC record was cut short: " + ", ".join(VALUES))


def register():
    """Add the capture field, the criterion and the header that gives it (profiler.plugins)."""
    capture.add_field("truncated", normalise.UNKNOWN)
    criteria.register(TRUNCATED)
    registry.warc_header("truncated", "WARC-Truncated", reason)


#: a policy of the criterion: year x status class x reason at '*', the reason per TLD, year x
#: reason per host
POLICY = {
    "name": "truncated",
    "host_depth": 3,
    "registered_domains": True,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "truncated": ["reason"]},
    "emit": {
        "root": {"datetime": ["any", "year"], "status": ["any", "class"], "truncated": ["any", "reason"]},
        "tld": {"datetime": ["any"], "truncated": ["any", "reason"]},
        "suffix": {"datetime": ["any", "year"]},
        "domain": {"datetime": ["any", "year"]},
        "subdomain": "none",
        "host": {"datetime": ["any", "year"], "truncated": ["any", "reason"]},
        "path": "none",
    },
}


#: what the generated records' WARC-Truncated headers say (None: no header), and their fields
HEADERS = (None, None, None, "length", "time", "disconnect", "unspecified", "  Length ", "a reason of its own",
           "", "\u00e9t\u00e9 coup\u00e9")


def write_warc(path, n, seed):
    """A gzipped WARC of the synthetic generator's records (profiler.testing.synthetic_warc) with a
    WARC-Truncated header on some responses and revisits, chosen at random from HEADERS; returns
    the field each capture record (response, revisit) should give, in record order."""
    import random
    import zlib
    from profiler.testing import synthetic_warc
    rng = random.Random(seed)
    fields = []
    with open(path, "wb") as f:
        for record in synthetic_warc.warc_records(n, seed):
            head = record[:record.index(b"\r\n\r\n")]
            if b"WARC-Type: response\r\n" in head or b"WARC-Type: revisit\r\n" in head:
                value = rng.choice(HEADERS)
                fields.append(reason(value))
                if value is not None:
                    at = record.index(b"\r\n") + 2
                    record = record[:at] + b"WARC-Truncated: " + value.encode("utf-8") + b"\r\n" + record[at:]
            c = zlib.compressobj(6, zlib.DEFLATED, 31)
            f.write(c.compress(record) + c.flush())
    return fields
