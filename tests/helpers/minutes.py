"""A test plugin whose criterion reads, with no derivation, a field the compiled map side finds
itself: ``minute``, the capture's time to the ten minutes (``tens``: the first 11 digits of its
timestamp) and to the minute (``minute``: the first 12), two PREFIX levels over the CDX
timestamp (profiler.plugins: ARCHIVE_PROFILER_PLUGINS=helpers.minutes). A revisit keeps its own
time, as datetime's does.
"""

from profiler.model import criteria


def _levels(field):
    return {11: ("tens",), 12: ("minute",)}.get(len(field), ())


MINUTE = criteria.Criterion(
    "minute", "timestamp", (criteria.Level("tens", criteria.PREFIX, 11), criteria.Level("minute", criteria.PREFIX, 12)),
    ("tens",), _levels, ("20130115123", "201301151234"), r"-|[0-9]{11}|[0-9]{12}",
    "'-', YYYYMMDDHHM (ten minutes) or YYYYMMDDHHMM", optional=True,
    example="YYYYMMDDHHM (ten minutes) or YYYYMMDDHHMM")


def register():
    """Add the criterion (profiler.plugins calls it)."""
    criteria.register(MINUTE)


#: a policy of the criterion: year x both levels at '*', the ten minutes per TLD, the minute
#: per domain, ten minutes per host
POLICY = {
    "name": "minute",
    "host_depth": 3,
    "registered_domains": True,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "minute": ["tens", "minute"]},
    "emit": {
        "root": {"datetime": ["any", "year"], "status": ["any", "class"], "minute": ["any", "tens", "minute"]},
        "tld": {"datetime": ["any"], "minute": ["any", "tens"]},
        "suffix": {"datetime": ["any", "year"]},
        "domain": {"datetime": ["any"], "minute": ["any", "minute"]},
        "subdomain": "none",
        "host": {"datetime": ["any"], "minute": ["any", "tens"]},
        "path": "none",
    },
}
