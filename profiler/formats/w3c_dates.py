"""W3C dates (the ISO 8601 profile of WARC-Date and OpenWayback CDXJ) -> 14-digit UTC timestamps.

A date may be given at any of six granularities (``2015`` ... ``2015-09-03T13:27:52.123Z``); a
time has a zone, ``Z`` or a numeric offset, which is converted to UTC.
"""

import datetime
import re

from profiler.model import normalise

#: a W3C date (ISO 8601 profile) at any of its six granularities; a time has a zone
W3C_DATE = re.compile(rb"([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2})(?:T([0-9]{2}):([0-9]{2})"
                      rb"(?::([0-9]{2})(?:\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2}))?)?)?")
DIGITS_14 = re.compile(rb"[0-9]{14}")


def timestamp(raw):
    """The 14-digit UTC timestamp of a W3C date (or of 14 digits), None when invalid: a
    fraction of a second dropped, a coarser date padded as normalise.timestamp pads it, a
    numeric zone converted to UTC (a leap second kept).

    >>> timestamp(b"2015-09-03T13:27:52.5Z"), timestamp(b"2015-09"), timestamp(b"2015-09-03T01:27+02:00")
    ('20150903132752', '20150901000000', '20150902232700')
    """
    if DIGITS_14.fullmatch(raw):
        return normalise.timestamp(raw)
    match = W3C_DATE.fullmatch(raw)
    if match is None:
        return None
    year, month, day, hour, minute, second, zone = match.groups()
    ts = normalise.timestamp(b"".join(p for p in (year, month, day, hour, minute, second) if p is not None))
    if ts is None or zone is None or zone == b"Z":
        return ts
    sign = 1 if zone[:1] == b"+" else -1
    zone_hours, zone_minutes = int(zone[1:3]), int(zone[4:6])
    if zone_hours > 23 or zone_minutes > 59:
        return None
    leap = ts[12:] == "60"
    try:
        local = datetime.datetime(int(ts[:4]), int(ts[4:6]), int(ts[6:8]), int(ts[8:10]), int(ts[10:12]),
                                  59 if leap else int(ts[12:]))
        utc = local - sign * datetime.timedelta(hours=zone_hours, minutes=zone_minutes)
    except (ValueError, OverflowError):
        return None                             # before year 1 or after 9999 in UTC
    return normalise.timestamp(("%04d%s" % (utc.year, utc.strftime("%m%d%H%M")) +
                                ("60" if leap else "%02d" % utc.second)).encode("ascii"))
