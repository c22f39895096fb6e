"""A test plugin whose criterion has no value for some captures: ``hostdigit``, the first digit
of the host in a capture's SURT, and '' (no key field: a counted skip, bad_hostdigit, when a
policy uses it) for a host without one (profiler.plugins:
ARCHIVE_PROFILER_PLUGINS=helpers.hostdigit). Registered beside a policy that does not use it, it
must change none of that policy's numbers.
"""

from profiler.model import criteria


def host_digit(urlkey):
    """'com,web2)/' -> '2'; 'com,example)/' -> ''."""
    host = urlkey.split(")", 1)[0]
    return next((ch for ch in host if ch.isdigit() and ch.isascii()), "")


HOSTDIGIT = criteria.Criterion(
    "hostdigit", "urlkey", (criteria.Level("digit", criteria.IDENTITY),), ("digit",),
    lambda field: ("digit",), ("2",), r"-|[0-9]", "'-' or a digit", optional=True,
    example="a digit", derive=host_digit)


def register():
    """Add the criterion (profiler.plugins calls it)."""
    criteria.register(HOSTDIGIT)
