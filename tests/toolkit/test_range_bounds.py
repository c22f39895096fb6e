"""query --from/--to over merged profiles: a range's numbers are exact or inside their bounds,
against the brute-force oracle of the union's captures in the range."""

import os
import random

from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.files.output import header_lines, write_atomic
from profiler.files.profilefile import FEATURES
from profiler.model import stats
from profiler.toolkit import ranges
from profiler.toolkit.merge import combine, merge
from profiler.toolkit.query import SortedProfile

from helpers.oracle import profile as oracle_profile, resolve_revisits
from helpers.random_archives import oracle_captures, random_captures, random_languages, random_policy

CREATED = "2026-01-01T00:00:00Z"
LEGEND = " CDX N b a m s k r M S V g\n"
PERIODS = ["2010", "201003", "20100315", "2011", "201106", "2011063012", "2012", "201212", "2010123123"]
NAMES = ("urim.total", "urim.min", "urim.max", "urir", "bytes", "digests", "dedup_bytes", "first", "last")


def test_a_range_counts_a_revisit_resolved_in_another_input(tmp_path, capsys):
    """A 404 and a revisit of it two years earlier in another input: the merged 404 line's first
    is a bound reaching 2010, and a range over 2010 may hold the revisit (it was 'no captures')."""
    import orjson
    from profiler.cli.main import main
    (tmp_path / "p1.cdx").write_text(LEGEND + "com,a)/ 20120601000000 http://a.com/ text/html 404 DDDD - - 100 0 a\n")
    (tmp_path / "p2.cdx").write_text(LEGEND + "com,a)/ 20100101000000 http://a.com/ warc/revisit - DDDD - - 50 0 b\n")
    for name in ("p1", "p2"):
        assert main(["profile", str(tmp_path / (name + ".cdx")), "-o", str(tmp_path / (name + ".cdxj")), "-q"]) == 0
    m = str(tmp_path / "m.cdxj")
    assert main(["merge", str(tmp_path / "p1.cdxj"), str(tmp_path / "p2.cdxj"), "-o", m, "-q"]) == 0
    capsys.readouterr()
    assert main(["query", m, "--status", "404", "--from", "2010", "--to", "2011"]) == 0
    value = orjson.loads(capsys.readouterr().out.split(" ", 4)[4])
    low, high = value["bounds"]["urim.total"]
    assert low <= 1 <= high
    assert value["bounds"]["first"][0] <= "20100101000000" <= value["bounds"]["first"][1]


def test_combine_keeps_bounds_of_first_and_last():
    """An input whose first is a bound (and may hold nothing): the union's first is one too."""
    a = {"urim": {"total": 1, "min": 1, "max": 1}, "urir": 1, "bytes": 5, "digests": 1, "dedup_bytes": 5,
         "first": "20120101000000", "last": "20120101000000",
         "bounds": {"urim.total": [0, 3], "first": ["20100101000000", "20120101000000"],
                    "last": ["20100101000000", "20121231000000"]}}
    b = dict(a, first="20120601000000", last="20120601000000", bounds={})
    out = combine([a, b])
    assert out["bounds"]["first"] == ["20100101000000", "20120601000000"]
    assert out["bounds"]["last"] == ["20120601000000", "20121231000000"]


def test_combine_caps_min_and_max_at_the_high_of_the_total():
    """Written totals 0 bounded [0, 3]: urim.min and urim.max may reach 3, not the written sum 0."""
    zero = {"urim": {"total": 0, "min": 0, "max": 0}, "urir": 0, "bytes": 0, "digests": 0, "dedup_bytes": 0,
            "first": "20110101000000", "last": "20110101000000",
            "bounds": {"urim.total": [0, 3], "urim.min": [0, 3], "urim.max": [0, 3], "urir": [0, 3]}}
    out = combine([zero, zero])
    assert out["bounds"]["urim.max"][1] >= 3 and out["bounds"]["urim.min"][1] >= 3


def _write(path, rows, policy):
    table = oracle_profile(rows, policy)
    heads = header_lines(None, policy.to_dict(), [os.path.basename(path)], {"captures": len(rows)}, [], True,
                         CREATED)
    lines = [(k.encode(), stats.to_json(list(v))) for k, v in table.items()]
    write_atomic(path, heads + [k + b" " + v for k, v in sorted(lines)])
    return path


def _check_ranges(path, rows, policy, rng):
    keys = [k for k in oracle_profile(rows, policy) if k.split(" ")[1] == "-"]
    rng.shuffle(keys)
    with SortedProfile(path, None) as profile:
        for _ in range(3):
            a, b = sorted(rng.sample(PERIODS, 2), key=ranges.start)
            r = ranges.parse_range(a, b if rng.random() < 0.8 else None)
            truth = oracle_profile([c for c in rows if r.lo <= c[1] <= r.hi], policy)
            lines = ranges.Lines(profile, budget=float("inf"))
            for key in keys[:12]:
                fields = key.split(" ")
                if lines.value(fields) is None:
                    continue                    # no all-time line: the CLI says it may hold captures
                try:
                    found = ranges.answer(lines, dict(zip(profile.layout.fields, fields)), r)
                except ranges.RangeError:
                    continue
                true = dict(zip(NAMES, truth[key])) if key in truth else None
                bounds = found.flat.get("bounds") or {}
                if true is None:
                    assert not found.flat["urim.total"] or bounds.get("urim.total", [1])[0] == 0, (key, r)
                    continue
                for name in FEATURES:
                    low, high = bounds.get(name, (found.flat[name], found.flat[name]))
                    assert low <= true[name] <= high, (key, r.text, name, low, true[name], high)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2 ** 32))
def test_property_ranges_of_merges_hold_the_truth(tmp_path_factory, seed):
    """Random policies and archives (revisits, languages, size classes) cut into 2-4 inputs, each
    resolved on its own and merged: every range answer holds the union's true value."""
    tmp = tmp_path_factory.mktemp("rb")
    rng = random.Random(seed)
    policy = random_policy(rng, optional=rng.choice([(), ("lang",), ("size",)]))
    caps = random_captures(rng, wide=True)
    langs = random_languages(rng, caps) if "lang" in policy.names else None
    caps = oracle_captures(caps, langs)
    rows = resolve_revisits([list(c) for c in caps])
    k = rng.randint(2, 4)
    where = [rng.randrange(k) for _ in caps]
    paths = [_write(str(tmp / ("p%d.cdxj" % i)), resolve_revisits([list(c) for c, w in zip(caps, where) if w == i]),
                    policy) for i in range(k) if i in where]
    if len(paths) < 2:
        return
    out = str(tmp / "m.cdxj")
    merge(paths, out, created=CREATED)
    _check_ranges(out, rows, policy, rng)
