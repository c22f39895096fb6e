"""An explorer question read from a URL's query string, checked before anything is read.

``surt=com,*`` and one parameter per key field of the profile's ``!keys`` (``datetime``,
``mime``, ``status``, ``lang``, ...: whatever criteria the file has, named as in the registry,
profiler.model.criteria), ``from``/``to`` (a datetime range instead of a datetime), ``sort``
(the feature rows are ranked by), ``limit`` (rows a breakdown shows), ``levels``
(``datetime:month,mime:type``: the level each breakdown shows) and ``profile`` (which profile,
when the explorer has several). Anything else, a parameter twice, a value that does not fit its
field (non-ASCII digits included) is a BadRequest: HTTP 400 with a one-line message.
"""

import urllib.parse

from profiler.model import criteria
from profiler.model.criteria import ANY_FIELD
from profiler.toolkit import ranges

#: the parameters that are not key fields
OWN = ("profile", "surt", "from", "to", "sort", "limit", "levels")
MAX_PARAMS = 40
MAX_SURT = 2048
DEFAULT_SORT = "urim.total"

for _c in criteria.CRITERIA:
    assert _c.name not in OWN, "a criterion named like an explorer parameter: %s" % _c.name


class BadRequest(Exception):
    """A question that cannot be asked (HTTP 400)."""


def parse_query(query):
    """{name: value} of a query string (bytes or str): each name once, ASCII only."""
    if isinstance(query, bytes):
        try:
            query = query.decode("ascii")
        except UnicodeDecodeError:
            raise BadRequest("the query string must be ASCII (percent-encode the rest)")
    try:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, strict_parsing=False, errors="strict",
                                       max_num_fields=MAX_PARAMS)
    except (UnicodeDecodeError, ValueError) as e:
        raise BadRequest("bad query string (%s)" % str(e)[:100])
    out = {}
    for name, value in pairs:
        if name in out:
            raise BadRequest("parameter %r given twice" % name[:40])
        out[name] = value
    return out


class Question:
    """A question about one profile: key fields, an optional Range, how rows are ranked."""

    def __init__(self, values, rng, sort, limit, levels):
        self.values, self.range, self.sort, self.limit, self.levels = values, rng, sort, limit, levels

    def fields(self, layout):
        return [self.values.get(f) or ("*" if f == "surt" else ANY_FIELD) for f in layout.fields]

    def as_dict(self, layout):
        out = dict(zip(layout.fields, self.fields(layout)))
        if self.range is not None:
            first, _, last = self.range.text.partition(":")
            out["from"], out["to"] = first or None, last or None
        out["sort"], out["limit"] = self.sort, self.limit
        out["levels"] = dict(self.levels)
        return out

    def cache_key(self):
        return (tuple(sorted(self.values.items())), self.range, self.sort, self.limit,
                tuple(sorted(self.levels.items())))


def question(params, layout, features, max_rows, rows):
    """The Question of parsed parameters for a profile of this key layout; BadRequest otherwise.
    ``features``: the names rows may be sorted by; ``max_rows``/``rows``: the largest and the
    default ``limit``."""
    known = set(OWN) | set(layout.names)
    for name in params:
        if name not in known:
            others = [n for n in criteria.NAMES if n not in layout.names]
            why = " (this profile's keys have no %s)" % name if name in others else ""
            raise BadRequest("unknown parameter %r%s: ask with %s" % (name[:40], why, ", ".join(
                ["surt"] + list(layout.names) + [o for o in OWN if o != "surt"])))
    values = {}
    surt = params.get("surt") or "*"
    if len(surt) > MAX_SURT or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in surt):
        raise BadRequest("surt must be a SURT key without blanks, at most %d characters" % MAX_SURT)
    values["surt"] = surt
    for c in layout.criteria:
        value = params.get(c.name) or ANY_FIELD
        if not layout.patterns[c.name].match(value.encode("utf-8", "surrogateescape")) or (
                c not in criteria.BUILT_IN and value != ANY_FIELD and not criteria.plain_field(value)):
            raise BadRequest("%s=%r is not %s" % (c.name, value[:40], c.describe))
        if c.name == criteria.DATETIME.name and value != ANY_FIELD and not ranges.valid_period(value):
            raise BadRequest("datetime=%r is not a date" % value[:40])
        values[c.name] = value
    rng = None
    first, last = params.get("from") or None, params.get("to") or None
    if first is not None or last is not None:
        if criteria.DATETIME.name not in layout.names:
            raise BadRequest("from/to: this profile's keys have no datetime (another producer's profile)")
        if values.get(criteria.DATETIME.name, ANY_FIELD) != ANY_FIELD:
            raise BadRequest("give datetime or from/to, not both")
        try:
            rng = ranges.parse_range(first, last)
        except ranges.RangeError as e:
            raise BadRequest(str(e).replace("--", ""))
    sort = params.get("sort") or DEFAULT_SORT
    if sort not in features:
        raise BadRequest("sort=%r is not a feature (%s)" % (sort[:40], ", ".join(features)))
    limit = params.get("limit") or str(rows)
    if not (limit.isascii() and limit.isdigit() and len(limit) <= 6 and 1 <= int(limit) <= max_rows):
        raise BadRequest("limit must be a whole number from 1 to %d" % max_rows)
    levels = {}
    for item in (params.get("levels") or "").split(","):
        if not item:
            continue
        name, _, level = item.partition(":")
        c = criteria.BY_NAME.get(name)
        if c is None or name not in layout.names or level not in c.level_names:
            raise BadRequest("levels=%r: give CRITERION:LEVEL pairs, e.g. datetime:month" % item[:40])
        levels[name] = level
    return Question(values, rng, sort, int(limit), levels)
