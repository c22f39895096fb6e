"""A throwaway criterion and a throwaway input format, added at run time as a plugin
(profiler.plugins: ARCHIVE_PROFILER_PLUGINS=helpers.throwaway), to prove that a new key field
and a new format reach every command through the registries alone.

- ``scheme``: an optional criterion, the URI scheme of a capture's original URL (one level,
  ``name``, the value itself; a revisit keeps its own), read from the capture field ``scheme``
  (default 'unk'), which only the format below gives.
- ``urllist``: a plain list of captures, ``TIMESTAMP URL`` a line (a line format, cut into byte
  ranges like any index): urlkey and timestamp from the line, the scheme from the URL, every
  other field its default.

What a real addition would change instead of registering: capture.py's DEFAULTS (one line),
criteria.py's CRITERIA (the entry), the readers that know the scheme (one keyword each), a
policy in conf/policies/, the oracle's field_values (tests/helpers/oracle.py); for the format,
its module in profiler/formats/ and one entry in registry.FORMATS.
"""

import re

from profiler.formats import registry
from profiler.formats.cdx import urlkey
from profiler.model import capture, criteria, normalise

SCHEME = criteria.Criterion(
    "scheme", "scheme", (criteria.Level("name", criteria.IDENTITY),), ("name",),
    lambda field: ("name",), ("https",),
    r"-|[a-z][a-z0-9+.-]*", "'-', a URI scheme (lower case) or 'unk'", optional=True,
    example="a URI scheme, e.g. https")

_LINE = re.compile(rb"\A([0-9]{4,14}) +([A-Za-z][A-Za-z0-9+.-]*):(//)?[^ ]+\Z")


def scheme_of(url):
    """'HTTPS://x/' -> 'https'; 'unk' when it has none."""
    head, sep, _ = url.partition(b":")
    text = head.decode("ascii", "replace").lower()
    return text if sep and re.fullmatch(r"[a-z][a-z0-9+.-]*", text) else normalise.UNKNOWN


def sniff(sample):
    """{} when the first data line is 'TIMESTAMP URL', else None."""
    first = sample.first
    return {} if first is not None and _LINE.match(first.rstrip(b"\r")) else None


def parse(line):
    """One 'TIMESTAMP URL' line -> Capture or a skip reason."""
    fields = line.split()
    if len(fields) != 2:
        return "bad_field_count"
    ts = normalise.timestamp(fields[0])
    if ts is None:
        return "bad_timestamp"
    key = urlkey(None, fields[1])
    if key is None:
        return "bad_url"
    return capture.new(urlkey=key, timestamp=ts, scheme=scheme_of(fields[1]))


def captures_of_lines(lines, split=None):
    for line in lines:
        if line.strip() and not line.startswith((b"!", b"@")):
            yield parse(line)


URLLIST = registry.Format("urllist", "URL list", "a plain list of captures, 'TIMESTAMP URL' a line", True,
                          sniff, captures_of_lines)


def register():
    """Add the capture field, the criterion and the format (profiler.plugins calls it)."""
    capture.add_field("scheme", normalise.UNKNOWN)
    criteria.register(SCHEME)
    registry.register(URLLIST)


#: a policy of the criterion: year x mime x status x scheme at '*', year x scheme below it
POLICY = {
    "name": "scheme",
    "host_depth": 3,
    "registered_domains": True,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "scheme": ["name"]},
    "emit": {
        "root": {"datetime": ["any", "year"], "mime": ["any", "type"], "status": ["any", "class"],
                 "scheme": ["any", "name"]},
        "tld": {"datetime": ["any", "year"], "scheme": ["any", "name"]},
        "suffix": {"datetime": ["any", "year"], "scheme": ["any", "name"]},
        "domain": {"datetime": ["any", "year"], "scheme": ["any", "name"]},
        "subdomain": "none",
        "host": {"datetime": ["any"], "scheme": ["any", "name"]},
        "path": "none",
    },
}
