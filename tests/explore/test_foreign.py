"""The explorer over other producers' profiles (a ``@keys`` of other names holding some of the
criteria; lines in our style, the CDXJ blog's or the frequency style), through the real HTTP API:
the CDXJ blog's example answered with its own numbers, missing features null; a profile made
from one of ours (its keys renamed, criteria and features dropped) answered side by side with
the original, every feature a line has equal to the original's; damaged lines refused at start."""

import os
import random
import subprocess
import sys

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.explore import tree
from profiler.explore.answers import SHOWN
from profiler.files.profilefile import flatten, iter_data
from profiler.toolkit.query import feature_value

from helpers.explore import BLOG, answer, everything, get, random_caps, serving, write_profile
from helpers.random_archives import random_policy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def blog_numbers():
    """{key: {feature: value}} of the blog example, read from its text (not through the toolkit)."""
    out = {}
    for line in BLOG.decode().splitlines()[4:]:
        key, _, raw = line.partition(" {")
        value = orjson.loads("{" + raw)
        if "frequency" in value:
            out[key] = {"urim.total": value["frequency"]}
        else:
            out[key] = {"urim." + n: v for n, v in value["urim"].items()}
            out[key]["urir"] = value["urir"]
    return out


def expect_features(a, numbers):
    """Every feature of an answer or row is the line's number, or null when the line lacks it."""
    for name in SHOWN:
        assert a["features"][name] == numbers.get(name), (name, a["features"], numbers)


@pytest.fixture(scope="module")
def blog(tmp_path_factory):
    path = tmp_path_factory.mktemp("blog") / "blog.cdxj"
    path.write_bytes(BLOG)
    return str(path)


def test_the_blog_example_through_the_api(blog):
    numbers = blog_numbers()
    with serving(blog) as (url, _):
        status, _, body = get(url, "/api/profiles")
        described = orjson.loads(body)["profiles"][0]
        assert status == 200 and described["name"] == "http://archive.example.org/"
        assert described["keys"] == ["surt", "datetime"]
        assert [c["name"] for c in described["criteria"]] == ["datetime"]
        for key in numbers:
            surt, when = key.split(" ")
            a = answer(url, surt=surt, datetime=when)
            assert a["key"] == key and a["status"] == "answered"
            expect_features(a, numbers[key])
            assert sorted(a["missing"] + a["exact"]) == sorted(SHOWN)
            assert set(a["missing"]) == {n for n in SHOWN if n not in numbers[key]}
            assert [b["field"] for b in a["breakdowns"]] == ["surt", "datetime"]
        root = answer(url)
        children = root["breakdowns"][0]["rows"]
        assert [r["key"] for r in children] == ["com,* -"]
        expect_features(children[0], numbers["com,* -"])
        years = root["breakdowns"][1]
        assert years["order"] == "time" and [r["value"] for r in years["rows"]] == ["2013"]
        expect_features(years["rows"][0], numbers["* 2013"])
        world = answer(url, surt="com,cnn)/world")["breakdowns"][1]["rows"]
        assert [r["key"] for r in world] == ["com,cnn)/world 2013"]
        expect_features(world[0], numbers["com,cnn)/world 2013"])
        # ranked by a feature: only the rows that have it, the others counted
        com = answer(url, surt="com,*")["breakdowns"][0]
        assert [r["key"] for r in com["rows"]] == ["com,cnn)/world -", "com,nyt)/ -"]
        for row in com["rows"]:
            expect_features(row, numbers[row["key"]])
        by_urir = answer(url, surt="com,*", sort="urir")["breakdowns"][0]
        assert [r["key"] for r in by_urir["rows"]] == ["com,cnn)/world -"]
        assert by_urir["unranked"] == 1 and "1 of the rows have no urir" in by_urir["note"]
        by_bytes = answer(url, surt="com,*", sort="bytes")["breakdowns"][0]
        assert by_bytes["rows"] == [] and by_bytes["unranked"] == 2
        # no first and last capture: a range is not answered, never guessed
        over = answer(url, **{"from": "2013", "to": "2013"})
        assert over["status"] == "unanswerable" and over["features"] is None
        assert "no first and last capture" in over["note"]
        # criteria the file does not have are not offered
        for name, value in (("mime", "text/html"), ("status", "200")):
            status, _, body = get(url, "/api/answer", {name: value})
            assert status == 400 and b"\n" not in body.strip()


def test_a_damaged_foreign_profile_is_refused_at_start(tmp_path):
    head = BLOG.split(b"* -")[0]
    env = dict(os.environ, PYTHONPATH=ROOT)
    for name, line in (("negative", b'* - {"frequency": -5}\n'), ("fraction", b'* - {"urim": {"total": 1.5}}\n'),
                       ("neither", b'* - {"count": 3}\n'), ("json", b'* - {"urim": {"total": 3}\n'),
                       ("urir", b'* - {"urim": {"total": 3}, "urir": "2"}\n')):
        bad = tmp_path / (name + ".cdxj")
        bad.write_bytes(head + line)
        r = subprocess.run([sys.executable, "-m", "profiler.cli", "explore", str(bad), "--port", "0"],
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 2, (name, r.stderr)
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, (name, r.stderr)


def test_query_refuses_a_range_over_lines_without_first_and_last(blog):
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "query", blog, "--from", "2013", "--to", "2014"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no first and last capture" in r.stderr, r.stderr


def test_a_profile_keyed_by_the_surt_alone(tmp_path):
    path = tmp_path / "surts.cdxj"
    path.write_bytes(b'@keys ["urlkey"]\n* {"frequency": 7}\ncom,* {"urim": {"total": 5}, "urir": 2}\n'
                     b'com,a)/ {"frequency": 5, "spread": 1}\n')
    with serving(str(path)) as (url, _):
        root = answer(url)
        assert root["key"] == "*" and root["features"]["urim.total"] == 7 and root["features"]["urir"] is None
        assert [b["field"] for b in root["breakdowns"]] == ["surt"]
        assert [(r["key"], r["features"]["urir"]) for r in root["breakdowns"][0]["rows"]] == [("com,*", 2)]
        com = answer(url, surt="com,*", sort="urir")["breakdowns"][0]
        assert com["rows"] == [] and com["unranked"] == 1 and com["total"] == 1
        assert [r["key"] for r in answer(url, surt="com,*")["breakdowns"][0]["rows"]] == ["com,a)/"]
        for params in ({"from": "2013"}, {"datetime": "2013"}):
            status, _, body = get(url, "/api/answer", params)
            assert status == 400 and b"datetime" in body


# ---------------------------------------------------------------- side by side with ours

#: the value styles a foreign line is written in, and the features each keeps
STYLES = {
    "ours": SHOWN,
    "blog": ("urim.total", "urim.min", "urim.max", "urir"),
    "frequency": ("urim.total",),
    "urim": ("urim.total", "urim.min", "urim.max"),
    "span": ("urim.total", "urir", "dedup_bytes", "first", "last", "avg_size"),
}
ALIASES = {"surt": "surt_uri", "datetime": "year", "mime": "mimetype", "status": "statuscode"}


def styled(value, style):
    flat = flatten(value)
    if style == "ours":
        return value
    if style == "frequency":
        return {"frequency": flat["urim.total"], "spread": 1}
    out = {"urim": {n: flat["urim." + n] for n in ("total", "min", "max") if "urim." + n in STYLES[style]}}
    out.update((n, flat[n]) for n in STYLES[style] if "." not in n and n != "avg_size")
    return out


def foreign_of(path, out, kept, rng):
    """A foreign profile made from ours: the lines whose dropped criteria are '-', keys of the
    kept criteria, named as others do; each value in a random style. Returns {foreign key:
    (original key, style)}: one style for every line, or a style a line."""
    names = ["surt", "datetime", "mime", "status"]
    every = rng.choice(sorted(STYLES) + [None] * len(STYLES))
    at = [0] + [names.index(k) for k in kept]
    lines, made = [], {}
    for key, value in iter_data(path):
        fields = key.decode().split(" ")
        if any(f != "-" for i, f in enumerate(fields) if i not in at):
            continue
        style = every or rng.choice(sorted(STYLES))
        short = " ".join(fields[i] for i in at)
        made[short] = (key.decode(), style)
        lines.append(short.encode() + b" " + orjson.dumps(styled(value, style)))
    head = [b'@context ["http://oduwsdl.github.io/contexts/archiveprofiles"]', b'@id {"uri": "http://x.example/"}',
            b"@keys " + orjson.dumps([ALIASES[n] for n in ["surt"] + kept]), b'@meta {"name": "X"}']
    out.write_bytes(b"\n".join(head + sorted(lines)) + b"\n")
    return made


def shown(flat):
    return {name: feature_value(flat, name) for name in SHOWN}


def assert_same_present(got, want, style):
    """A foreign answer's or row's features: the original's where the style keeps them, else null."""
    for name in SHOWN:
        if name in STYLES[style]:
            assert got["features"][name] == want["features"][name], (name, style, got, want)
        else:
            assert got["features"][name] is None, (name, style, got)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6))
def test_property_a_foreign_profile_answers_as_the_original(tmp_path, small_index, seed):
    rng = random.Random(seed)
    small_index(rng)
    policy = random_policy(rng, optional=())
    if rng.random() < 0.5:
        policy = everything(policy)         # every combination: breakdowns of many rows
    path = write_profile(tmp_path / "ours.cdxj", random_caps(rng) + random_caps(rng), policy)
    kept = rng.choice([[], ["datetime"], ["mime"], ["status"], ["datetime", "mime"], ["datetime", "status"],
                       ["mime", "status"]])
    foreign = tmp_path / "theirs.cdxj"
    made = foreign_of(path, foreign, kept, rng)
    if not made:
        return                              # a policy that writes no line of these criteria
    lines = {k.decode(): flatten(v) for k, v in iter_data(path)}
    made_of = {original: short for short, (original, _) in made.items()}
    with serving("ours=" + path, "theirs=" + str(foreign)) as (url, _):
        for _ in range(6):
            short = rng.choice(sorted(made)).split(" ")
            if rng.random() < 0.4:
                short = ["*"] + ["-"] * len(kept)   # the whole archive: the widest breakdowns
            elif rng.random() < 0.3:
                short = [short[0]] + ["-"] * len(kept)
            if " ".join(short) not in made:
                continue
            params = dict(zip(kept, short[1:]))
            params = {n: v for n, v in params.items() if v != "-"}
            if short[0] != "*":
                params["surt"] = short[0]
            params["limit"] = "500"
            params["sort"] = rng.choice(["urim.total", "urim.total", "urir", "bytes", "avg_size", "first"])
            theirs = answer(url, profile="theirs", **params)
            ours = answer(url, profile="ours", **params)
            key, style = made[" ".join(short)]
            assert ours["key"] == key and ours["status"] == "answered"
            assert theirs["status"] == "answered"
            assert_same_present(theirs, ours, style)
            assert set(theirs["missing"]) == {n for n in SHOWN if n not in STYLES[style]}
            sort = params["sort"]
            for b in theirs["breakdowns"]:
                mine = [x for x in ours["breakdowns"] if x["field"] == b["field"]][0]
                by_value = {r["value"]: r for r in mine["rows"]} if mine["level"] == b["level"] else {}
                for row in b["rows"]:
                    original, row_style = made[row["key"]]
                    assert_same_present(row, {"features": shown(lines[original])}, row_style)
                    if row["value"] in by_value:
                        assert_same_present(row, by_value[row["value"]], row_style)
                    if b.get("order") != "time":        # ranked: by the index's feature where it ranks
                        assert b.get("sort", sort) in STYLES[row_style], (sort, row_style)
                if b["field"] == "datetime" and b["level"] == mine["level"] and b["complete"] and mine["complete"]:
                    assert [r["value"] for r in b["rows"]] == [r["value"] for r in mine["rows"]]
                if b.get("order") != "time" and b["complete"] and b["total"] < 500:
                    # the rows that have the ranked feature, and those that lack it counted
                    assert len(b["rows"]) + b.get("unranked", 0) == b["total"], b
                    ranked = b.get("sort", sort)
                    listed = {r["key"] for r in b["rows"]}
                    if b["field"] == "surt" and short[0].endswith("*"):
                        # the children of the node that have a line of the question's other fields
                        suffix = short[1:]
                        surts = sorted({k.split(" ")[0] for k in made if tree.under(short[0], k.split(" ")[0])})
                        want = {" ".join([c] + suffix) for c in tree.children(short[0], surts)} & set(made)
                    elif b["field"] != "surt" and b["level"] == mine["level"] and mine["complete"]:
                        want = {made_of[r["key"]] for r in mine["rows"]}
                    else:
                        continue
                    assert listed == {k for k in want if ranked in STYLES[made[k][1]]}, (b, want)
                    assert b.get("unranked", 0) == len(want - listed)
        if "datetime" in kept:
            # over a range: what the lines' first and last captures allow, never a guess
            for first, last in (("2010", "2011"), ("201102", "2012"), ("2011", None)):
                window = {"from": first} if last is None else {"from": first, "to": last}
                theirs = answer(url, profile="theirs", **window)
                ours = answer(url, profile="ours", **window)
                if theirs["status"] == "answered":
                    assert ours["status"] == "answered"
                    for name in ("urim.total", "first", "last"):
                        assert theirs["features"][name] == ours["features"][name], name
                else:
                    assert theirs["status"] in ("unanswerable", "none") and theirs["features"] is None
                    assert theirs["status"] == "unanswerable" or ours["status"] == "none"
