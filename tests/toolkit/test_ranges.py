"""query over a datetime range and by series: every exact value equals the brute-force oracle's
count over the captures in the range, every bound holds it; a range the profile cannot answer
is refused, never guessed."""

import os
import random
import subprocess
import sys

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from profiler.files.profilefile import FEATURES, flatten, iter_data
from profiler.model.policy import Policy
from profiler.toolkit import ranges
from profiler.model.emitted import not_emitted
from profiler.toolkit.query import SortedProfile, derived_bounds, feature_value, query

from helpers.explore import random_caps, write_profile
from helpers.oracle import profile as oracle_profile
from helpers.paths import ROOT
from helpers.random_archives import random_policy
from helpers.reports import make_profile
ALWAYS_EXACT = ("urim.total", "bytes", "first", "last")


def truth(caps, policy, lo, hi):
    """{key: oracle tuple} of the captures whose timestamp lies in [lo, hi]."""
    inside = [c for c in caps if lo <= c[1] <= hi]
    return oracle_profile(inside, policy) if inside else {}


def check(found, true_tuple):
    """Exact features equal, bounded ones hold the true value (the written value inside too)."""
    flat = found.flat
    bounds = flat.get("bounds", {})
    if true_tuple is None:
        assert flat["urim.total"] == 0 and flat["bytes"] == 0 and flat["first"] is None, found
        return
    true = dict(zip(FEATURES, true_tuple))
    for name in ALWAYS_EXACT:
        assert name not in bounds and flat[name] == true[name], (found, name, true)
    for name in FEATURES[1:]:
        if name in bounds:
            low, high = bounds[name]
            assert low <= true[name] <= high, (found.key, name, low, true[name], high)
            assert low <= flat[name] <= high, (found.key, name, flat[name], bounds[name])
            assert low < high
        else:
            assert flat[name] == true[name], (found.key, name, flat[name], true[name])
    avg = derived_bounds(flat, "avg_size")
    true_avg = true["dedup_bytes"] / true["urir"]
    if avg is None:
        assert feature_value(flat, "avg_size") == round(true_avg, 2)
    else:
        assert avg[0] <= true_avg and (avg[1] is None or true_avg <= avg[1]), (found.key, avg, true_avg)


def random_period(rng, lengths):
    year = rng.choice([2009, 2010, 2011, 2012, 2013])
    text = str(year)
    n = rng.choice(lengths)
    if n >= 6:
        text += "%02d" % rng.choice([1, 2, 6, 7, 12])
    if n >= 8:
        text += "%02d" % rng.choice([1, 14, 15, 28])
    return text


def answerable(policy, fields, at, rng_from, rng_to):
    """Whether the policy writes the key at the levels of both ends of the range."""
    for end in (rng_from, rng_to):
        probe = list(fields)
        probe[at] = end
        if not_emitted(policy, probe) is not None:
            return False
    return True


def ambiguous(profile, fields):
    """Whether a key field's value reads at more than one level of its criterion."""
    return any(len(c.field_levels(v)) > 1 for c, v in zip(profile.layout.criteria, fields[1:]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6))
@example(seed=32517)
def test_property_ranges_hold_against_the_oracle(tmp_path, seed):
    rng = random.Random(seed)
    policy = random_policy(rng, optional=())
    caps = random_caps(rng)
    path = write_profile(tmp_path / "p.cdxj", caps, policy)
    keys = [k.decode().split(" ") for k, _ in iter_data(path)]
    all_time = [k for k in keys if k[1] == "-"]
    with SortedProfile(path) as profile:
        lines = ranges.Lines(profile, budget=float("inf"))
        for _ in range(6):
            first, last = sorted([random_period(rng, [4, 6, 8]), random_period(rng, [4, 6, 8])],
                                 key=lambda p: (ranges.start(p), ranges.end(p)))
            if ranges.start(first) > ranges.end(last):
                first, last = last, first
            if ranges.start(first) > ranges.end(last):
                continue
            window = ranges.parse_range(first, last)
            expected = truth(caps, policy, window.lo, window.hi)
            for fields in all_time:
                values = dict(zip(profile.layout.fields, fields))
                try:
                    found = ranges.answer(lines, values, window)
                except ranges.RangeError:
                    # refused only when the policy does not write the key at an end's level, or
                    # may not: a value that reads at two levels (a mime class 'code', a type 'code')
                    assert not answerable(policy, fields, 1, first, last) or ambiguous(profile, fields), \
                        (fields, first, last)
                    continue
                key = " ".join(fields)
                check(found, expected.get(key))
                if len(found.pieces) == 1 and found.pieces[0] != "-":
                    assert "bounds" not in found.flat


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6), level=st.sampled_from(["year", "month", "day"]))
def test_property_series_rows_hold_against_the_oracle(tmp_path, seed, level):
    rng = random.Random(seed)
    policy = Policy({"levels": {"datetime": ["year", "month", "day"], "mime": ["type"], "status": ["class"]},
                     "emit": {"root": "all", "host": [{"datetime": ["any", "year", "month"]}],
                              "tld": [{"datetime": ["any", "day"]}]}})
    caps = random_caps(rng)
    path = write_profile(tmp_path / "p.cdxj", caps, policy)
    first = random_period(rng, [4, 6])
    window = ranges.parse_range(first, None) if rng.random() < 0.5 else None
    with SortedProfile(path) as profile:
        lines = ranges.Lines(profile, budget=float("inf"))
        for fields in [k.decode().split(" ") for k, _ in iter_data(path)]:
            if fields[1] != "-":
                continue
            values = dict(zip(profile.layout.fields, fields))
            try:
                rows = ranges.series(lines, values, level, window)
            except ranges.RangeError:
                assert fields[0] != "*", fields          # the root has every level
                continue
            n = {"year": 4, "month": 6, "day": 8}[level]
            periods = [row.key.split(" ")[1].split(":")[-1] for row in rows]
            for row, period in zip(rows, periods):
                lo = max(ranges.start(period), window.lo) if window else ranges.start(period)
                check(row, truth(caps, policy, lo, ranges.end(period)).get(" ".join(fields)))
            if fields[0] == "*" and fields[2:] == ["-", "-"]:
                assert periods == sorted({c[1][:n] for c in caps if window is None or c[1] >= window.lo})


def test_periods_and_calendar():
    assert ranges.end("201202") == "20120229235959" and ranges.end("2013") == "20131231235959"
    assert ranges.start("201204") == "20120401000000"
    assert list(ranges.periods("20121130000000", "20130201000000", 6)) == ["201211", "201212", "201301", "201302"]
    assert ranges.next_period("20121231") == "20130101"
    for bad in ("2013-01", "201313", "20130230", "٢٠١٣", "123", "２０１３", "", "2013 "):
        assert not ranges.valid_period(bad), bad
    for bad in ("2013-13", "201313", "20130230", "2013-02-30", "٢٠١٣", "123", "２０１３", "", "2013 ", "2013-01-01T24"):
        with pytest.raises(ranges.RangeError):
            ranges.parse_range(bad, "2014")
    # a period in its ISO 8601 form is the same range
    assert ranges.parse_range("2013-01", "2013-02-28T23")[:2] == ranges.parse_range("201301", "2013022823")[:2]
    with pytest.raises(ranges.RangeError, match="after"):
        ranges.parse_range("2014", "2013")


# ---------------------------------------------------------------- the command

@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return make_profile(tmp_path_factory.mktemp("ranges"))


def run(profile, *args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "profiler.cli", "query", profile] + list(args),
                          capture_output=True, text=True, env=env)


def test_cli_range_and_series(sample):
    lines = {k.decode(): flatten(v) for k, v in iter_data(sample)}
    r = run(sample, "--from", "2012", "--to", "2012")
    assert r.returncode == 0, r.stderr
    key, _, value = r.stdout.strip().partition(" {")
    value = orjson.loads("{" + value)
    assert key == "* 2012:2012 - -" and "bounds" not in value
    assert flatten(value) == lines["* 2012 - -"]

    r = run(sample, "--from", "2011", "--to", "2013", "--feature", "urim", "--feature", "urir",
            "--feature", "avg_size", "--feature", "first")
    assert r.returncode == 0, r.stderr
    value = orjson.loads(r.stdout.split(" ", 4)[4])
    years = [lines["* %d - -" % y] for y in (2011, 2012, 2013)]
    assert value["urim.total"] == sum(y["urim.total"] for y in years)
    assert value["first"] == years[0]["first"]
    assert value["bounds"]["urir"] == [max(y["urir"] for y in years), sum(y["urir"] for y in years)]
    assert set(value["bounds"]) == {"urir", "avg_size"}           # urim and first are exact

    r = run(sample, "--series", "year", "--from", "2010", "--to", "2012", "--feature", "urim")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ['* %d - - {"urim.total":%d}' % (y, lines["* %d - -" % y]["urim.total"])
                                     for y in (2010, 2011, 2012)]


def test_cli_refuses_what_the_profile_does_not_have(sample):
    # the default policy writes months at the root only for MIME categories
    r = run(sample, "--from", "201204", "--to", "201304", "--mime", "text/html")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "cuts 2012" in r.stderr and "year lines only" in r.stderr
    r = run(sample, "--from", "201204", "--to", "201304", "--mime", "text/*")
    assert r.returncode == 0 and "bounds" in r.stdout
    for args in (["--from", "2013", "--to", "2012"], ["--from", "٢٠١٣"], ["--from", "2013-13"],
                 ["--from", "2012", "--datetime", "2013"], ["--series", "week"], ["--series", "year", "--top", "3"]):
        r = run(sample, *args)
        last = r.stderr.strip().splitlines()[-1]       # argparse's usage may come before the error line
        assert r.returncode == 2 and "Traceback" not in r.stderr and "error:" in last, (args, r.stderr)
    r = run(sample, "--from", "1980", "--to", "1990")
    assert r.returncode == 1 and r.stdout == "" and "no captures" in r.stderr


def test_cli_groups_over_a_range(sample):
    r = run(sample, "--surt", "com,*", "--group", "mime", "--from", "2012", "--to", "2014", "--top", "3",
            "--by", "bytes", "--feature", "bytes")
    assert r.returncode == 0, r.stderr
    rows = [orjson.loads(line.split(" ", 4)[4])["bytes"] for line in r.stdout.splitlines()]
    assert len(rows) == 3 and rows == sorted(rows, reverse=True)
    found, _, _ = query(sample, {"surt": "com,*"}, ["mime"])
    html = [orjson.loads(line.split(" ", 4)[4]) for line in r.stdout.splitlines() if " text/html " in line]
    lines = {k.decode(): flatten(v) for k, v in iter_data(sample)}
    if html:
        assert html[0]["bytes"] == sum(lines.get("com,* %d text/html -" % y, {"bytes": 0})["bytes"]
                                       for y in (2012, 2013, 2014))
    assert found
