"""A test plugin whose criterion gives hostile values: ``hv``, chosen from VALUES by a hash of
the urlkey (profiler.plugins: ARCHIVE_PROFILER_PLUGINS=helpers.hostile_values). Its pattern
takes anything, so only the map side's check (profiler.model.criteria.is_field) keeps a value
that is no key field (blank, '-', white space, a newline, too long) out of the keys: such a
capture is a counted skip, 'bad_hv'.
"""

import zlib

from profiler.model import criteria

#: the values, and those that are key fields ('/', non-ASCII: kept exactly)
VALUES = ("ok", "a b", "", "x/y", "tab\there", "\u00e9t\u00e9", "z" * (criteria.MAX_FIELD + 1), "-", "new\nline",
          "z" * criteria.MAX_FIELD)
KEPT = ("ok", "x/y", "\u00e9t\u00e9", "z" * criteria.MAX_FIELD)


def pick(urlkey):
    """The value of a urlkey."""
    return VALUES[zlib.crc32(urlkey.encode("utf-8", "surrogateescape")) % len(VALUES)]


HV = criteria.Criterion(
    "hv", "urlkey", (criteria.Level("v", criteria.IDENTITY),), ("v",), lambda field: ("v",), ("ok",),
    r"[\s\S]*", "anything", optional=True, derive=pick)


def register():
    criteria.register(HV)


POLICY = {
    "name": "hv",
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "hv": ["v"]},
    "emit": {"root": {"datetime": ["any", "year"], "hv": ["any", "v"]}, "tld": {"hv": ["any", "v"]},
             "domain": "none", "host": "none", "path": "none"},
}
