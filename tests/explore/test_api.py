"""The explorer's JSON API against query's answers, on random profiles: every number of every
answer and of every breakdown row equal to the profile's line (query), or over a range to
query's range answer and holding the brute-force oracle's count; every breakdown lists exactly
the lines that refine the question by its field (or, for a SURT node the start-up index ranks,
the largest of them)."""

import random

from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.explore import index as explore_index, tree
from profiler.explore.answers import SHOWN
from profiler.files.profilefile import FEATURES, flatten, iter_data
from profiler.model import criteria
from profiler.toolkit import ranges
from profiler.toolkit.query import SortedProfile, feature_value, query

from helpers.explore import answer, everything, random_caps, serving, write_profile
from helpers.oracle import profile as oracle_profile
from helpers.random_archives import random_policy

ALL = 500


def line_of(path, key):
    """query's answer for one key: its flat features, or None."""
    fields = key.split(" ")
    with SortedProfile(path) as p:
        names = p.layout.fields
    found, _, _ = query(path, dict(zip(names, fields)))
    assert len(found) <= 1
    return found[0][1] if found else None


def shown(flat):
    return {name: feature_value(flat, name) for name in SHOWN}


def lines_of(path):
    return {k.decode(): flatten(v) for k, v in iter_data(path)}


def check_row(path, row, lines):
    flat = lines.get(row["key"])
    assert flat is not None, row["key"]
    assert row["features"] == shown(flat), row["key"]
    assert line_of(path, row["key"]) == flat
    assert row["bounds"] == {}


def expected_rows(b, fields, lines, layout):
    """The keys a breakdown of this question lists, read from every line of the file."""
    keys = [k.split(" ") for k in lines]
    if b["field"] == "surt":
        node = fields[0]
        surts = sorted({k[0] for k in keys if tree.under(node, k[0])})
        children = tree.children(node, surts)
        return {" ".join([c] + fields[1:]) for c in children if " ".join([c] + fields[1:]) in lines}
    i = layout.fields.index(b["field"])
    c = layout.criteria[i - 1]
    out = set()
    for k in keys:
        if k[:i] + k[i + 1:] != fields[:i] + fields[i + 1:] or k[i] == "-" or k[i] == fields[i]:
            continue
        if b["level"] not in c.field_levels(k[i]):
            continue
        if fields[i] != "-" and not any(c.level(n).field(k[i]) == fields[i] for n in c.field_levels(fields[i])):
            continue
        out.add(" ".join(k))
    return out


def random_question(rng, lines, layout):
    key = rng.choice(sorted(lines)).split(" ")
    params = {name: value for name, value in zip(layout.fields, key) if value != "-"}
    if rng.random() < 0.3:
        params.pop("surt", None)
    params["limit"] = str(ALL)
    params["sort"] = rng.choice(["urim.total", "bytes", "urir", "avg_size", "first"])
    return params


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6))
def test_property_answers_and_breakdowns_equal_query(tmp_path, small_index, seed):
    rng = random.Random(seed)
    small_index(rng)
    languages = rng.random() < 0.3
    policy = random_policy(rng, optional=("lang",) if languages else ())
    caps = random_caps(rng, languages)
    path = write_profile(tmp_path / "p.cdxj", caps, policy)
    lines = lines_of(path)
    if not lines:
        return                              # a policy that writes nothing
    with SortedProfile(path) as p:
        layout = p.layout
    with serving(path) as (url, server):
        for _ in range(8):
            params = random_question(rng, lines, layout)
            a = answer(url, **params)
            fields = [params.get(f) or ("*" if f == "surt" else "-") for f in layout.fields]
            assert a["key"] == " ".join(fields)
            flat = lines.get(a["key"])
            if flat is None:
                assert a["status"] in ("none", "unanswerable") and a["features"] is None
            else:
                assert a["status"] == "answered" and a["features"] == shown(flat) and a["bounds"] == {}
            for b in a["breakdowns"]:
                for row in b["rows"]:
                    check_row(path, row, lines)
                if b["field"] == "datetime" or not b["level"]:
                    continue
                expected = expected_rows(b, fields, lines, layout)
                got = [row["key"] for row in b["rows"]]
                assert len(got) == len(set(got))
                if b["complete"]:
                    assert set(got) == expected, (b["field"], params)
                elif not got and "start-up index" in b["note"]:
                    continue                # a key suffix the index does not rank
                else:               # a node the index ranks: the largest of its children
                    assert set(got) <= expected and b["total"] == len(expected)
                    sort = params["sort"] if params["sort"] in explore_index.RANKED else "urim.total"
                    values = sorted((feature_value(lines[k], sort) for k in expected), reverse=True)
                    assert [row["features"][sort] for row in b["rows"]] == values[:len(got)]
                    assert len(got) == min(len(expected), explore_index.TOP)


def test_datetime_breakdown_lists_the_periods(tmp_path):
    rng = random.Random(3)
    from profiler.model.policy import Policy
    policy = Policy({"levels": {"datetime": ["year", "month", "day"], "mime": ["type"], "status": ["class"]},
                     "emit": {"root": "all", "tld": [{"datetime": ["any", "year"]}]}})
    caps = random_caps(rng) + random_caps(rng)
    path = write_profile(tmp_path / "p.cdxj", caps, policy)
    lines = lines_of(path)
    with serving(path) as (url, _):
        a = answer(url)
        years = [b for b in a["breakdowns"] if b["field"] == "datetime"][0]
        assert years["level"] == "year" and years["levels"] == ["year", "month", "day"]
        assert [r["value"] for r in years["rows"]] == sorted({c[1][:4] for c in caps})
        for row in years["rows"]:
            assert row["features"] == shown(lines["* %s - -" % row["value"]])
        year = years["rows"][0]["value"]
        months = [b for b in answer(url, datetime=year)["breakdowns"] if b["field"] == "datetime"][0]
        assert months["level"] == "month"
        assert [r["value"] for r in months["rows"]] == sorted({c[1][:6] for c in caps if c[1][:4] == year})
        days = [b for b in answer(url, datetime=year, levels="datetime:day")["breakdowns"]
                if b["field"] == "datetime"][0]
        assert [r["value"] for r in days["rows"]] == sorted({c[1][:8] for c in caps if c[1][:4] == year})
        tld = [b for b in answer(url, surt="com,*")["breakdowns"] if b["field"] == "datetime"][0]
        assert tld["levels"] == ["year"]
        assert [b for b in answer(url, surt="com,*", datetime=year)["breakdowns"]
                if b["field"] == "datetime"][0]["note"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6))
def test_property_range_answers_equal_query_and_hold(tmp_path, small_index, seed):
    rng = random.Random(seed)
    small_index(rng)
    policy = random_policy(rng, optional=())
    caps = random_caps(rng)
    path = write_profile(tmp_path / "p.cdxj", caps, policy)
    lines = lines_of(path)
    if not lines or "hour" in policy.levels["datetime"]:
        return      # hour periods: the explorer's budget stops where this unbounded reader goes on
    first = rng.choice(["2010", "2011", "201006", "201102", "20110215"])
    last = rng.choice(["2011", "2012", "201112", "201206", "20120101"])
    if ranges.start(first) > ranges.end(last):
        first, last = last, first
    window = ranges.parse_range(first, last)
    inside = [c for c in caps if window.lo <= c[1] <= window.hi]
    truth = oracle_profile(inside, everything(policy)) if inside else {}
    with SortedProfile(path) as p:
        layout = p.layout
        reader = ranges.Lines(p, budget=float("inf"))
        with serving(path) as (url, _):
            for _ in range(5):
                key = rng.choice(sorted(lines)).split(" ")
                key[1] = "-"
                params = {n: v for n, v in zip(layout.fields, key) if v != "-"}
                params.update({"from": first, "to": last, "limit": str(ALL)})
                a = answer(url, **params)
                try:
                    expected = ranges.answer(reader, dict(zip(layout.fields, key)), window)
                except ranges.RangeError as e:
                    assert a["status"] == "unanswerable" and a["note"] == str(e)
                    expected = None
                if expected is not None:
                    assert a["key"] == expected.key
                    if expected.flat["urim.total"]:
                        values, bounds = _shown_range(expected.flat)
                        assert a["features"] == values and a["bounds"] == bounds
                        _holds(a, truth.get(" ".join(key)))
                    else:
                        assert a["status"] == "none"
                for b in a["breakdowns"]:
                    for row in b["rows"]:
                        fields = row["key"].split(" ")
                        fields[1] = "-"
                        if b["field"] == "datetime":
                            left, _, right = row["value"].partition(":")
                            lo = max(ranges.start(left), window.lo)
                            hi = min(ranges.end(right or left), window.hi)
                            part = [c for c in caps if lo <= c[1] <= hi]
                            _holds(row, oracle_profile(part, everything(policy)).get(" ".join(fields)) if part else None)
                            continue
                        found = ranges.answer(reader, dict(zip(layout.fields, fields)), window)
                        assert row["key"] == found.key
                        assert (row["features"], row["bounds"]) == _shown_range(found.flat)
                        _holds(row, truth.get(" ".join(fields)))


def _shown_range(flat):
    from profiler.explore.answers import features
    return features(flat)


def _holds(a, true_tuple):
    """Exact features equal the oracle's, bounded ones hold it."""
    assert true_tuple is not None, a["key"]
    true = dict(zip(FEATURES, true_tuple))
    for name in FEATURES:
        if name in a["bounds"]:
            low, high = a["bounds"][name]
            assert low <= true[name] <= high, (a["key"], name)
        else:
            assert a["features"][name] == true[name], (a["key"], name)
    avg = true["dedup_bytes"] / true["urir"]
    if "avg_size" in a["bounds"]:
        low, high = a["bounds"]["avg_size"]
        assert low <= avg and (high is None or avg <= high)
    else:
        assert a["features"]["avg_size"] == round(avg, 2)


def test_a_mime_breakdown_keeps_types_and_content_classes_apart(tmp_path):
    """A policy of mime types and content classes at one level (facetredux's): the breakdown by
    type lists types, not the class lines ('html', 'image'), and its rows add up; by class, classes."""
    from profiler.model.policy import Policy
    policy = Policy({"levels": {"datetime": ["year"], "mime": ["type", "class"], "status": ["class"]},
                     "emit": {"root": "all", "tld": "none"}})
    caps = random_caps(random.Random(4)) + random_caps(random.Random(5))
    path = write_profile(tmp_path / "c.cdxj", caps, policy)
    with serving(path) as (url, _):
        for level, fits in (("type", lambda v: "/" in v), ("class", lambda v: v in criteria.MIME_CLASSES)):
            [by] = [b for b in answer(url, levels="mime:" + level, limit=500)["breakdowns"] if b["field"] == "mime"]
            values = [r["value"] for r in by["rows"]]
            assert by["level"] == level and all(v == "unk" or fits(v) for v in values), values
            assert sum(r["features"]["urim.total"] for r in by["rows"]) == len(caps)


def test_criteria_come_from_the_registry_and_the_file(tmp_path):
    """A profile with lang answers by language; one without refuses lang=, naming its keys."""
    from profiler.model.policy import load
    rng = random.Random(5)
    policy = load("lang")
    caps = random_caps(rng, languages=True)
    path = write_profile(tmp_path / "l.cdxj", caps, policy)
    plain = write_profile(tmp_path / "p.cdxj", caps, random_policy(random.Random(6), optional=()))
    from helpers.explore import get
    import orjson
    with serving("L=" + path, "P=" + plain) as (url, _):
        status, _, body = get(url, "/api/profiles")
        described = {p["name"]: p for p in orjson.loads(body)["profiles"]}
        keys = described["L"]["keys"]
        assert [c["name"] for c in described["L"]["criteria"]] == [c.name for c in criteria.CRITERIA if c.name in keys]
        assert "lang" in keys and "lang" not in described["P"]["keys"]
        a = answer(url, profile="L")
        assert [b["field"] for b in a["breakdowns"]] == keys
        assert [b for b in a["breakdowns"] if b["field"] == "lang"][0]["rows"]
        status, _, body = get(url, "/api/answer", {"profile": "P", "lang": "ara"})
        assert status == 400 and b"keys have no lang" in body


def test_a_compacted_profile_answers_a_rolled_up_key_with_bounds(tmp_path):
    """A key compact removed (its captures counted by a coarser line) is answered with bounds that
    hold its true counts and a note naming the compaction, not as 'no captures'."""
    import os
    from profiler.run.profile import run_profile
    from profiler.toolkit.compact import compact_file
    sample = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                          "samples", "sample-5k.cdx.gz")
    full, small = str(tmp_path / "full.cdxj"), str(tmp_path / "small.cdxj")
    run_profile([sample], full, "default")
    compact_file(full, small, max_lines=300)
    kept = lines_of(small)
    gone = [(k, f) for k, f in lines_of(full).items() if k not in kept]
    assert gone
    with serving(small) as (url, server):
        for key, truth in gone[::400]:
            a = answer(url, **dict(zip(("surt", "datetime", "mime", "status"), key.split(" "))))
            assert a["status"] == "answered" and "compacted" in a["note"], a
            for name in ("urim.total", "urir", "bytes"):
                low, high = a["bounds"][name]
                assert low <= truth[name] <= high
    middle = str(tmp_path / "middle.cdxj")
    compact_file(full, middle, max_lines=2000)
    with serving(middle) as (url, server):
        listed = [b for b in answer(url, surt="*", datetime="2013")["breakdowns"] if b["rows"]]
        assert listed and all("not listed" in b["note"] and b["complete"] is False for b in listed)
    with serving(full) as (url, server):
        assert not [b for b in answer(url, surt="*", datetime="2013")["breakdowns"] if b["rows"] and b["note"]]


def test_a_level_the_key_does_not_write_is_not_offered(tmp_path):
    """A policy that writes mime types alone: 'unk' fits the category and class levels too, but
    the breakdown offers only the type level, whose rows add up, where it offered all three and
    listed 'unk' alone (a few captures of all) as the complete breakdown by category."""
    from profiler.model.policy import Policy
    policy = Policy({"levels": {"datetime": ["year"], "mime": ["type", "category", "class"], "status": ["class"]},
                     "emit": {"root": {"mime": ["any", "type"]}, "tld": "none"}})
    caps = random_caps(random.Random(4)) + random_caps(random.Random(5))
    for c in caps[::5]:
        c[2] = "unk"
    path = write_profile(tmp_path / "t.cdxj", caps, policy)
    with serving(path) as (url, _):
        for level in ("category", "class", "type"):
            [by] = [b for b in answer(url, levels="mime:" + level, limit=500)["breakdowns"] if b["field"] == "mime"]
            assert by["levels"] == ["type"] and by["level"] == "type" and by["complete"], by
            assert sum(r["features"]["urim.total"] for r in by["rows"]) == len(caps)
