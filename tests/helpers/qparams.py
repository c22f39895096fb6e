"""A test plugin whose criterion has a hierarchy of levels: ``query``, the query of a capture's
URL (profiler.plugins: ARCHIVE_PROFILER_PLUGINS=helpers.qparams). Its value is derived from the
``urlkey`` every capture has, so every input format gives it:

- ``none``: the URL has no query;
- ``q/NAMES``: the names of its parameters, sorted, unique, comma-separated, each
  percent-encoded but for ``[a-z0-9_.~-]`` (``q/`` for an empty query, ``,+`` after the
  first MAX_NAMES when there are more).

Its levels: ``presence`` (a CATEGORY: ``none`` or ``q/*``) and ``names`` (the value itself),
so a key at ``presence`` counts every capture of the keys at ``names`` below it.
"""

import re

from profiler.model import criteria

#: the parameter names a value lists before ',+'
MAX_NAMES = 6
_KEEP = re.compile(r"[a-z0-9_.~-]")


def _encode(name):
    return "".join(ch if _KEEP.fullmatch(ch) else "".join("%%%02X" % b for b in ch.encode("utf-8", "surrogateescape"))
                   for ch in name)


def query_names(urlkey):
    """'com,example)/a?b=1&a=2&b=3' -> 'q/a,b'; 'com,example)/' -> 'none'."""
    head, sep, query = urlkey.partition("?")
    if not sep:
        return "none"
    names = sorted({_encode(part.partition("=")[0]) for part in query.split("&") if part})
    more = len(names) > MAX_NAMES
    return "q/" + ",".join(names[:MAX_NAMES]) + (",+" if more else "")


def _levels(field):
    if field == "q/*":
        return ("presence",)
    if field == "none":
        return ("presence", "names")
    return ("names",)


QUERY = criteria.Criterion(
    "query", "urlkey", (criteria.Level("presence", criteria.CATEGORY), criteria.Level("names", criteria.IDENTITY)),
    ("names",), _levels, ("q/*", "q/a,b"), r"-|none|q/\*|q/[a-z0-9_.~%,+-]*",
    "'-', none, q/* or q/ and the parameter names (comma-separated, percent-encoded)", optional=True,
    example="none, q/* (any query) or q/NAME,NAME (its parameter names, sorted)", derive=query_names)


def register():
    """Add the criterion (profiler.plugins calls it)."""
    criteria.register(QUERY)


#: a policy of the criterion: at '*' year x status class x both levels; per TLD presence; per
#: domain year x the names; per host presence
POLICY = {
    "name": "query",
    "host_depth": 3,
    "registered_domains": True,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "query": ["presence", "names"]},
    "emit": {
        "root": {"datetime": ["any", "year"], "status": ["any", "class"], "query": ["any", "presence", "names"]},
        "tld": {"datetime": ["any", "year"], "query": ["any", "presence"]},
        "suffix": {"datetime": ["any", "year"]},
        "domain": {"datetime": ["any", "year"], "status": ["any", "class"], "query": ["any", "names"]},
        "subdomain": "none",
        "host": {"datetime": ["any"], "query": ["any", "presence"]},
        "path": "none",
    },
}
