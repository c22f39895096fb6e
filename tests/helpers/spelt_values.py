"""A test plugin whose criterion's values may be spelt as the fields of its other levels: ``sp``,
the path of a capture's urlkey without its first '/' (profiler.plugins:
ARCHIVE_PROFILER_PLUGINS=helpers.spelt_values). It has a level of each projection: ``family`` (a
CATEGORY: 'a/b' -> 'a/*'), ``group`` (a CLASS: '200' -> '2xx'), ``kind`` (a MIME_CLASS:
'text/html' -> 'html'), ``pre`` (a PREFIX of 2: 'abc' -> 'ab') and ``name`` (the value).

A value whose field at one level is what another level writes for other values ('a/*', '2xx',
'html', 'ab') would make one key count two sets of captures: it is a counted skip, 'bad_sp'
(profiler.model.criteria.shares_a_key). A prefix keeps characters, not bytes ('éab' -> 'éa').
"""

from profiler.model import criteria


def path_of(urlkey):
    """'com,example)/a/b' -> 'a/b'."""
    return urlkey.partition(")/")[2] or "-"


def _levels(field):
    """The levels a field is a line of: the family's are those a CATEGORY gives itself ('a/*', and a
    field without a '/' after its first character: 'abc', '/x')."""
    out = [name for name, fits in (("family", criteria.project(field, criteria.CATEGORY) == field), ("group", field.endswith("xx") or field == "unk"),
                                   ("kind", field in criteria.MIME_CLASSES or field == "unk"), ("pre", len(field) <= 2))
           if fits]
    return tuple(out + ["name"])


SP = criteria.Criterion(
    "sp", "urlkey", (criteria.Level("family", criteria.CATEGORY), criteria.Level("group", criteria.CLASS),
                     criteria.Level("kind", criteria.MIME_CLASS), criteria.Level("pre", criteria.PREFIX, 2),
                     criteria.Level("name", criteria.IDENTITY)),
    ("name",), _levels, ("a/*", "2xx", "html", "ab", "abc"), r"[^ \t\n]+", "a path", optional=True,
    derive=path_of)


def register():
    criteria.register(SP)


POLICY = {
    "name": "sp",
    "host_depth": 1,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"],
               "sp": ["family", "group", "kind", "pre", "name"]},
    "emit": {"root": {"sp": ["any", "family", "group", "kind", "pre", "name"]}, "tld": "none", "domain": "none",
             "host": "none", "path": "none"},
}
