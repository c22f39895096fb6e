"""Policies for tests that need one by the length of period it cuts timestamps to."""

from profiler.model.policy import load

#: a bundled policy whose cells hold years (4) or months (6)
_BY_PERIOD = {4: "hosts", 6: "default"}


def by_period(period_len):
    """A policy whose datetime values are period_len characters of the timestamp."""
    policy = load(_BY_PERIOD[period_len])
    assert policy.period_len == period_len
    return policy
