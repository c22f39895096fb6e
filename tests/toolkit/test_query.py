"""query: answers from a profile's lines by binary search, checked against a full scan."""

import math
import os
import shutil
import subprocess
import sys

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.testing import synthetic
from profiler.run.profile import run_profile
from profiler.model.policy import load as load_policy
from profiler.files.profilefile import flatten, iter_data
from profiler.model.emitted import not_emitted
from profiler.toolkit.query import Caveat, QueryError, SortedProfile, query, surt_level
from profiler.files.ukvs import profile_to_map

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")

#: a data line's value of the spec's shape
VALUE = (b'{"urim":{"total":1,"min":1,"max":1},"urir":1,"bytes":5,"digests":1,"dedup_bytes":5,'
         b'"first":"20130101000000","last":"20130101000000"}')


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    d = tmp_path_factory.mktemp("query")
    out = {"default": str(d / "sample.cdxj"), "full": str(d / "full.cdxj")}
    run_profile([SAMPLE], out["default"], "default")
    synthetic.write_cdx(str(d / "small.cdx"), 300, seed=2)
    run_profile([str(d / "small.cdx")], out["full"], "full")
    return out


def scan(path):
    return [(k.decode(), flatten(v)) for k, v in iter_data(path)]


def brute(path, test):
    return [(k, f) for k, f in scan(path) if test(k.split(" "))]


def test_every_kth_key_is_found_by_binary_search(profiles):
    for path in profiles.values():
        lines = scan(path)
        limit = 2 * math.ceil(math.log2(os.path.getsize(path))) + 4
        for key, flat in lines[::97] + lines[-1:]:
            surt, dt, mime, status = key.split(" ")
            found, note, seeks = query(path, {"surt": surt, "datetime": dt, "mime": mime, "status": status})
            assert found == [(key, flat)] and note is None
            assert seeks <= limit


def test_facet_questions(profiles):
    path = profiles["default"]
    found, _, _ = query(path, {"surt": "com,*", "datetime": "2013"}, group=["mime"])
    assert found == brute(path, lambda f: f[0] == "com,*" and f[1] == "2013" and f[2] != "-" and f[3] == "-")
    assert len(found) > 1
    found, _, _ = query(path, {"mime": "text/html", "status": "2xx"}, group=["datetime"])
    assert found == brute(path, lambda f: f[0] == "*" and f[1] != "-" and f[2:] == ["text/html", "2xx"])


def test_rankings(profiles):
    path = profiles["default"]
    # biggest sites by bytes
    found, _, _ = query(path, {}, level="host", top=5, by="bytes")
    hosts = brute(path, lambda f: f[0].endswith(")/*") and f[1:] == ["-", "-", "-"])
    assert found == sorted(hosts, key=lambda kv: -kv[1]["bytes"])[:5]
    # which type takes most bytes under com
    found, _, _ = query(path, {"surt": "com,*"}, group=["mime"], top=1, by="bytes")
    types = brute(path, lambda f: f[0] == "com,*" and f[1] == "-" and f[2] != "-" and f[3] == "-")
    assert found[0][1]["bytes"] == max(f["bytes"] for _, f in types)
    # hosts under a prefix, all ranked by a derived feature
    found, _, _ = query(path, {}, under="uk,co,", level="host", by="avg_bytes")
    expected = brute(path, lambda f: f[0].startswith("uk,co,") and f[0].endswith(")/*") and f[1:] == ["-"] * 3)
    assert sorted(found) == sorted(expected) and found
    averages = [f["bytes"] / f["urim.total"] for _, f in found]
    assert averages == sorted(averages, reverse=True)


def test_path_and_url_levels(profiles):
    path = profiles["full"]
    for level in ("path", "url", "domain", "tld"):
        found, _, _ = query(path, {}, level=level)
        assert found == brute(path, lambda f: surt_level(f[0]) == level and f[1:] == ["-"] * 3)
        assert found, level


def test_not_emitted_and_not_held(profiles):
    with pytest.raises(QueryError, match=r"policy \(default\) does not emit.*host keys come as: any\); "
                                         r"to ask it, profile again with a policy file whose emit writes it"):
        query(profiles["default"], {"surt": "com,cnn)/*", "datetime": "2013"})
    with pytest.raises(QueryError, match=r"writes no url keys\); the host is 'com,cnn\)/\*', and lookup answers"):
        query(profiles["default"], {"surt": "com,cnn)/"})       # a host's SURT without its '*'
    found, note, _ = query(profiles["default"], {"surt": "com,nosuchsite)/*"})
    assert found == [] and "none are held" in note
    policy = load_policy("default")
    assert not_emitted(policy, ["com,*", "2013", "text/html", "2xx"]) is None
    assert "host_depth" in not_emitted(policy, ["a,b,c,d,e)/*", "-", "-", "-"])


def test_not_emitted_names_each_level_with_its_criterion():
    """Levels of one name in two criteria (mime class, status class) are told apart."""
    from profiler.model.policy import Policy
    policy = Policy({"levels": {"datetime": ["year"], "mime": ["class"], "status": ["class"]},
                     "emit": {"root": [{"mime": ["any", "class"]}, {"status": ["class"]}], "tld": "none"}})
    why = not_emitted(policy, ["*", "2013", "-", "-"])
    assert why.startswith("root keys come as: ") and set(why.split(": ", 1)[1].split(", ")) == {
        "any", "mime class", "status class"}, why


def test_maps_are_refused(profiles, tmp_path):
    profile_to_map(profiles["default"], str(tmp_path / "m.ukvs"))
    with pytest.raises(QueryError, match="UKVS map"):
        query(str(tmp_path / "m.ukvs"), {})


def test_cli(profiles):
    env = dict(os.environ, PYTHONPATH=ROOT)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "profiler.cli", "query", profiles["default"]] + list(args),
                              capture_output=True, text=True, env=env)
    r = run("--surt", "com,cnn)/*", "--feature", "urim", "--feature", "avg_bytes")
    expected = dict(scan(profiles["default"]))["com,cnn)/* - - -"]
    assert r.returncode == 0, r.stderr
    assert r.stdout == "com,cnn)/* - - - %s\n" % orjson.dumps(
        {"urim.total": expected["urim.total"],
         "avg_bytes": round(expected["bytes"] / expected["urim.total"], 2)}).decode()
    r = run("--level", "host", "--top", "3", "--by", "bytes")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 3
    r = run("--surt", "com,nosuchsite)/*")
    assert r.returncode == 1 and r.stdout == "" and "none are held" in r.stderr
    r = run("--mime", "image/jpeg", "--surt", "com,cnn)/*")
    assert r.returncode == 2 and "does not emit" in r.stderr and "Traceback" not in r.stderr
    r = run("--feature", "nope")
    assert r.returncode == 2 and "unknown feature 'nope'" in r.stderr


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=st.lists(st.text("ab,)/*", min_size=1, max_size=5), unique=True, max_size=40),
       prefix=st.text("ab,)/* ", max_size=4), headers=st.integers(0, 3))
def test_property_prefix_range_is_a_full_scan(tmp_path, keys, prefix, headers):
    path = tmp_path / "p.cdxj"
    lines = ([b'!keys ["surt","datetime","mime","status"]'] + [b"!meta {}"] * headers
             + [k.encode() + b" - - - " + VALUE for k in sorted(keys)])
    path.write_bytes(b"".join(l + b"\n" for l in lines))
    with SortedProfile(str(path)) as p:
        got = [" ".join(f) for f, _ in p.lines(prefix.encode())]
    assert got == [k + " - - -" for k in sorted(keys) if (k + " - - - {").startswith(prefix)]


def test_merged_profile_answers_carry_bounds(profiles, tmp_path):
    from profiler.toolkit.merge import merge
    out = str(tmp_path / "twice.cdxj")
    copy = shutil.copyfile(profiles["default"], str(tmp_path / "copy.cdxj"))
    merge([profiles["default"], copy], out)
    (key, flat), = query(out, {"surt": "com,*"})[0]
    one = dict(scan(profiles["default"]))["com,* - - -"]
    assert flat["urim.total"] == 2 * one["urim.total"] and flat["urir"] == 2 * one["urir"]
    assert flat["bounds"]["urir"] == [one["urir"], 2 * one["urir"]]


def test_a_compacted_profile_never_says_a_rolled_up_key_holds_none(profiles, tmp_path):
    """compact removes lines whose captures a coarser line keeps counting: a key the original
    profile has but the compacted one lacks is answered with bounds that hold its true counts and
    a note naming the compaction, never 'none are held'; a grouping that finds none says so too."""
    from profiler.toolkit.compact import compact_file
    small = str(tmp_path / "small.cdxj")
    compact_file(profiles["default"], small, max_lines=300)
    kept = dict(scan(small))
    gone = [(k, f) for k, f in scan(profiles["default"]) if k not in kept]
    assert len(gone) > 1000
    for key, truth in gone[::50]:
        surt, dt, mime, status = key.split(" ")
        found, note, _ = query(small, {"surt": surt, "datetime": dt, "mime": mime, "status": status})
        assert "none are held" not in note and "compacted" in note
        [(answered, flat)] = found
        assert answered == key
        for name in ("urim.total", "urir", "bytes", "dedup_bytes"):
            low, high = flat["bounds"][name]
            assert low <= truth[name] <= high, (key, name)
    found, note, _ = query(small, {"surt": "*", "datetime": "2013"}, group=["mime"])
    assert found == [] and "compacted" in note


def test_a_grouping_of_a_compacted_profile_says_rolled_up_keys_are_not_listed(profiles, tmp_path):
    """A grouping that finds lines in a compacted profile lists true lines, but not the keys
    compaction rolled up: it says so (exit 0, the lines stand); in the original, no such note."""
    from profiler.toolkit.compact import compact_file
    small = str(tmp_path / "small.cdxj")
    compact_file(profiles["default"], small, max_lines=300)
    whole, none = query(profiles["default"], {"datetime": "2013"}, group=["surt"])[:2]
    found, note, _ = query(small, {"datetime": "2013"}, group=["surt"])
    assert none is None and 0 < len(found) < len(whole)
    assert {k for k, _ in found} < {k for k, _ in whole}
    assert isinstance(note, Caveat) and "compacted" in note and "not listed" in note
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "query", small, "--datetime", "2013", "--group",
                        "surt"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.count("\n") == len(found), r.stderr
    assert "not listed" in r.stderr


def test_a_host_name_or_url_given_as_surt_says_which_surt_to_ask(profiles):
    """A newcomer's --surt cnn.com (or a URL) is one line naming the SURT keys of that host."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    for given in ("cnn.com", "http://www.cnn.com/world/"):
        r = subprocess.run([sys.executable, "-m", "profiler.cli", "query", profiles["default"], "--surt", given],
                           capture_output=True, text=True, env=env)
        assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
        assert "not a SURT key" in r.stderr and "'com,cnn)/*' is the host" in r.stderr
    found, note, _ = query(profiles["default"], {"surt": "com,cnn)/*"})
    assert len(found) == 1 and note is None


@pytest.mark.parametrize("given, words", [
    ("*.cnn.com", ["host name pattern", "'com,cnn)/*' is the host, 'com,cnn,*' its subdomains (all of cnn.com"]),
    (".cnn.com", ["host name pattern", "'com,cnn,*' its subdomains"]),
    ("com,cnn", ["'com,cnn' is not a SURT key", "'com,cnn)/*' is the host, 'com,cnn,*' its subdomains"]),
    ("com,cnn,", ["is not a SURT key", "'com,cnn,*' its subdomains"]),
    ("com", ["'com' is not a SURT key: 'com,*' is every host under it"]),
])
def test_a_host_pattern_or_unfinished_surt_says_which_surt_to_ask(profiles, given, words):
    """--surt '*.gov.uk' was told to ask 'uk,gov,*)/*'; --surt 'uk,gov' that the policy writes no
    URL keys; and 'com,cnn,*' was called the host and its subdomains, though it holds only the
    subdomains (the sample's cnn.com is all in 'com,cnn)/*'). One line naming both keys."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "query", profiles["default"], "--surt", given],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    for word in words:
        assert word in r.stderr, r.stderr


@pytest.mark.parametrize("varying", [["--level", "host"], ["--group", "surt"], ["--under", "com,"]])
def test_a_fixed_surt_with_a_varying_surt_says_to_give_under(profiles, varying):
    """--surt 'com,*' --level host --top 3 --by bytes read as "the biggest hosts under com" gave
    the biggest hosts of the whole archive (the fixed SURT was dropped): one line naming --under."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "query", profiles["default"], "--surt", "com,*",
                        "--top", "3", "--by", "bytes"] + varying, capture_output=True, text=True, env=env)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert "give --under 'com,' instead of --surt" in r.stderr
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "query", profiles["default"], "--under", "com,",
                        "--level", "host", "--top", "3", "--by", "bytes"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and [line.split(" ")[0].startswith("com,") for line in r.stdout.splitlines()] == [True] * 3


def test_a_value_asked_unlike_the_lines_are_written(profiles):
    """A media type in capitals or with parameters is asked as the readers write it; a SURT host
    in capitals, or a mime class of a policy without class levels, has no line for a reason the
    note names, not 'none are held' (the profile holds such captures)."""
    env = dict(os.environ, PYTHONPATH=ROOT)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "profiler.cli", "query", profiles["default"]] + list(args),
                              capture_output=True, text=True, env=env)
    lower = run("--surt", "com,*", "--mime", "text/html")
    assert lower.returncode == 0 and lower.stdout.count("\n") == 1
    for asked in ("TEXT/HTML", "Text/Html; charset=UTF-8"):
        r = run("--surt", "com,*", "--mime", asked)
        assert (r.returncode, r.stdout) == (0, lower.stdout), r.stderr
    r = run("--surt", "COM,*", "--mime", "text/html")
    assert r.returncode == 1 and "none are held" not in r.stderr and "ask 'com,*'" in r.stderr, r.stderr
    r = run("--mime", "html")
    assert r.returncode == 1 and "none are held" not in r.stderr and "no mime class level" in r.stderr, r.stderr


def test_a_period_in_its_iso_form_is_the_same_question_and_a_date_of_no_calendar_is_refused(profiles):
    env = dict(os.environ, PYTHONPATH=ROOT)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "profiler.cli", "query", profiles["default"]] + list(args),
                              capture_output=True, text=True, env=env)
    year = next(k.split()[1] for k, _ in scan(profiles["default"]) if len(k.split()[1]) == 6)
    dashed = "%s-%s" % (year[:4], year[4:])
    digits, iso = run("--datetime", year), run("--datetime", dashed)
    assert digits.returncode == 0 and digits.stdout and iso.stdout == digits.stdout
    digits, iso = run("--from", year, "--to", year), run("--from", dashed, "--to", dashed)
    assert digits.returncode == 0 and digits.stdout == iso.stdout.replace(dashed, year)
    for bad in ("201313", "2013-13", "2013-02-30", "2013022924"):
        for args in (("--datetime", bad), ("--from", bad)):
            r = run(*args)
            assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, (args, r.stderr)
            assert len(r.stderr.strip().splitlines()) == 1 and bad in r.stderr
