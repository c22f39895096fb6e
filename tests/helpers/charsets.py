"""A test plugin whose criterion an index's JSON field gives: ``charset``, Common Crawl's
``charset`` of a CDXJ line (profiler.formats.registry.index_field;
ARCHIVE_PROFILER_PLUGINS=helpers.charsets). Other formats, and a line without one, give ``unk``.

Its levels: ``name`` (``unicode/utf-8``, ``other/iso-8859-1``) and ``family`` (a CATEGORY:
``unicode/*``, ``other/*``); ``unk`` is at both.
"""

import re

from profiler.formats import registry
from profiler.model import capture, criteria, normalise

_NAME = re.compile(r"[a-z0-9._-]{1,40}")


def charset_of(text):
    """'UTF-8' -> 'unicode/utf-8'; 'windows-1252' -> 'other/windows-1252'; None or junk -> 'unk'."""
    name = (text or "").strip().lower()
    if not _NAME.fullmatch(name):
        return normalise.UNKNOWN
    return ("unicode/" if name.startswith("utf") else "other/") + name


def _levels(field):
    if field == "unk":
        return ("family", "name")
    return ("family",) if field.endswith("/*") else ("name",)


CHARSET = criteria.Criterion(
    "charset", "charset", (criteria.Level("family", criteria.CATEGORY), criteria.Level("name", criteria.IDENTITY)),
    ("name",), _levels, ("unicode/*", "unicode/utf-8"), r"-|unk|(unicode|other)/(\*|[a-z0-9._-]{1,40})",
    "'-', unk, unicode/NAME, other/NAME, unicode/* or other/*", optional=True,
    example="unicode/utf-8, other/*")


def register():
    """Add the field, the criterion and the JSON field read, in that order."""
    capture.add_field("charset", normalise.UNKNOWN)
    criteria.register(CHARSET)
    registry.index_field("charset", "charset", charset_of)
