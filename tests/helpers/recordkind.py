"""A test plugin whose criterion is derived from a capture field that is not text: ``record``,
whether a capture is a revisit (``revisit``) or not (``response``), from the bool ``revisit``
every reader gives (profiler.plugins: ARCHIVE_PROFILER_PLUGINS=helpers.recordkind). One level,
flat; the compiled map side does not find it, so the Python map side gives its values.
"""

from profiler.model import criteria

KINDS = ("response", "revisit")


def record_kind(revisit):
    """True -> 'revisit', False -> 'response'."""
    return "revisit" if revisit else "response"


RECORD = criteria.Criterion(
    "record", "revisit", (criteria.Level("kind", criteria.IDENTITY),), ("kind",),
    lambda field: ("kind",), ("revisit",), r"-|response|revisit", "'-', response or revisit", optional=True,
    example="response or revisit", derive=record_kind)


def register():
    """Add the criterion (profiler.plugins calls it)."""
    criteria.register(RECORD)


#: a policy of the criterion: year x mime x kind at '*', the kind per TLD and host
POLICY = {
    "name": "record",
    "host_depth": 3,
    "registered_domains": True,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "record": ["kind"]},
    "emit": {
        "root": {"datetime": ["any", "year"], "mime": ["any", "type"], "record": ["any", "kind"]},
        "tld": {"datetime": ["any"], "record": ["any", "kind"]},
        "suffix": {"datetime": ["any", "year"]},
        "domain": {"datetime": ["any", "year"], "record": ["any", "kind"]},
        "subdomain": "none",
        "host": {"datetime": ["any"], "record": ["any", "kind"]},
        "path": "none",
    },
}
