"""The collection field (spec section 2): the first group of the run's pattern in each capture's
WARC file name (CDX g, CDXJ filename, a WARC file's own name), else its input's label, else the
run's, else unk; equal to the oracle's, compiled, pure Python and cut into byte ranges; a pattern
that could backtrack without bound is refused or runs in linear time."""

import json
import os
import random
import re
import shutil
import subprocess
import sys

import pytest

from profiler.model.policy import load as load_policy
from profiler.run.profile import run_profile

from helpers.exactness import assert_same_profile, pure_python, varied_lines
from helpers.fixtures import path as fixture
from helpers.oracle import profile as oracle_profile, read_captures, read_profile, resolve_revisits
from helpers.policies import write_policy

PATTERN = r"^([A-Za-z]+)-(?:\d+-)?[A-Z]*"
NAMES = ["ARCHIVEIT-1234-CRAWL-2013.warc.gz", "WEB-20130402-00001.warc.gz", "web-x.arc.gz", "-", "nomatch.warc.gz",
         "12345-only-digits.warc", "Fr%C3%A9-accent.warc.gz"]

POLICY = {
    "name": "collections",
    "host_depth": 2,
    "levels": {"datetime": ["year"], "mime": ["type", "class"], "status": ["class"], "collection": ["id"]},
    "emit": {"root": "all", "tld": {"collection": ["any", "id"], "mime": ["any", "class"]},
             "domain": {"collection": ["id"]}, "host": "none"},
}


def oracle_collection(name, label):
    """The oracle's reading: Python's re on the name's first 1,000 bytes, then the label."""
    if name in ("-", ""):
        return label
    m = re.search(PATTERN, name.encode()[:1000].decode("utf-8", "surrogateescape"))
    found = m.group(1) if m else None
    if not found:
        return label
    return {"-": "%2D", "unk": "%75nk"}.get(found, found)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("collections")
    rng = random.Random(3)

    def name_file(f):
        f[10] = rng.choice(NAMES)
    lines = varied_lines(5, 250, name_file)
    paths = []
    for k in range(2):
        path = folder / ("part%d.cdx" % k)
        path.write_text(" CDX N b a m s k r M S V g\n" + "\n".join(sorted(lines[k::2])) + "\n")
        paths.append(str(path))
    return paths, write_policy(folder / "collections.yaml", POLICY), folder


def expected_profile(paths, policy, labels):
    caps = []
    for path in paths:
        names = [line.split()[10] for line in open(path) if not line.startswith(" CDX")]
        found = read_captures([path])
        assert len(found) == len(names)
        for cap, name in zip(found, names):
            caps.append(cap + [{"collection": oracle_collection(name, labels.get(path, "unk"))}])
    return oracle_profile(resolve_revisits(caps), load_policy(policy))


@pytest.mark.parametrize("runner, pure, split_size", [("inline", False, None), ("inline", True, None),
                                                      ("local", False, 1 << 20)])
def test_the_pattern_then_the_labels_equal_the_oracle(made, runner, pure, split_size):
    paths, policy, folder = made
    out = str(folder / ("out-%s-%s.cdxj" % (runner, pure)))
    collections = {"pattern": PATTERN, "label": "run-label", "input_labels": [("first", paths[0])]}
    kw = dict(policy=policy, runner=runner, cores=2, collections=collections)
    if split_size:
        kw["split_size"] = split_size
    if pure:
        with pure_python():
            run_profile(paths, out, **kw)
    else:
        run_profile(paths, out, **kw)
    got = read_profile(out)
    assert_same_profile(got, expected_profile(paths, policy, {paths[0]: "first", paths[1]: "run-label"}))
    fields = {k.split()[4] for k in got}
    assert {"ARCHIVEIT", "WEB", "web", "first", "run-label"} <= fields and "unk" not in fields


def test_without_a_pattern_or_label_every_capture_is_unk(made):
    paths, policy, folder = made
    out = str(folder / "plain.cdxj")
    run_profile(paths, out, policy=policy)
    assert {k.split()[4] for k in read_profile(out)} == {"-", "unk"}


def test_a_warc_file_is_named_by_its_own_file_name(tmp_path):
    warc = tmp_path / "CRAWLA-20190101-00000.warc.gz"
    shutil.copy(fixture("warc-commoncrawl.warc.gz"), warc)
    policy = write_policy(tmp_path / "p.yaml", POLICY)
    out = str(tmp_path / "w.cdxj")
    run_profile([str(warc)], out, policy=policy, collections={"pattern": PATTERN})
    got = read_profile(out)
    assert {k.split()[4] for k in got} == {"-", "CRAWLA"}
    assert got["* - - - CRAWLA"] == got["* - - - -"]


def test_a_cdxj_filename_field_is_read(tmp_path):
    for _, got in _profiles_of_file_names(tmp_path, ["SITEA-1.warc.gz", "SITEB-2.warc.gz", "SITEA-3.warc.gz"], PATTERN):
        assert got["* - - - SITEA"][0] == 2 and got["* - - - SITEB"][0] == 1


def _profiles_of_file_names(tmp_path, names, pattern):
    """(path, lines) of the profiles, compiled and pure Python, of a CDXJ index of one capture in each WARC file
    named, its collection by pattern."""
    lines = ['com,example)/%d 2013010100000%d {"url": "http://example.com/%d", "mime": "image/png", "status": "200", '
             '"digest": "D%d", "length": "10", "filename": "%s"}' % (i, i, i, i, name) for i, name in enumerate(names)]
    index = tmp_path / "i.cdxj"
    index.write_text("\n".join(lines) + "\n")
    policy = write_policy(tmp_path / "p.yaml", POLICY)
    for pure in (False, True):
        out = str(tmp_path / ("c%s.cdxj" % pure))
        if pure:
            with pure_python():
                run_profile([str(index)], out, policy=policy, collections={"pattern": pattern})
        else:
            run_profile([str(index)], out, policy=policy, collections={"pattern": pattern})
        yield out, read_profile(out)


def test_names_that_differ_by_a_percent_escape_are_two_collections(tmp_path):
    """'a b' and 'a%20b' (WARC file names are written percent-encoded by some tools, as they are)
    are two collections, 'a%20b' and 'a%2520b', and '100%' is '100%25': one was taken for the
    other, their captures counted as one collection's. query takes a field as the profile
    writes it, or a name."""
    names = ["a b-1.warc.gz", "a%20b-2.warc.gz", "100%-3.warc.gz"]
    for out, got in _profiles_of_file_names(tmp_path, names, r"^(.*)-\d"):
        assert {k.split()[4] for k in got if k.startswith("* - - - ")} == {"-", "a%20b", "a%2520b", "100%25"}
        assert all(got["* - - - " + c][0] == 1 for c in ("a%20b", "a%2520b", "100%25"))
    for asked, field in (("a b", "a%20b"), ("a%20b", "a%20b"), ("a%2520b", "a%2520b"), ("100%", "100%25"),
                         ("100%25", "100%25")):
        run = cli("query", out, "--collection", asked)
        assert run.returncode == 0 and run.stdout.split()[4] == field, (asked, run.stdout, run.stderr)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "profiler.cli", *args], capture_output=True, text=True)


@pytest.mark.parametrize("pattern, reason", [
    (r"(a)\1", "back-references"), (r"(?=a)(b)", "look-around"), (r"(a*)*b", "can match nothing"),
    (r"abc", "needs a group"), (r"(", "not a regular expression"), ("(a)" * 3000, "at most"),
])
def test_a_pattern_that_could_backtrack_is_refused_in_one_line(made, pattern, reason):
    paths, policy, folder = made
    done = cli("profile", paths[0], "--policy", policy, "-o", str(folder / "x.cdxj"), "-q",
               "--collection-pattern", pattern)
    assert done.returncode == 2 and reason in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not os.path.exists(folder / "x.cdxj")


def test_a_pattern_that_backtracks_in_python_runs_in_linear_time(tmp_path):
    """(a+)+$ against a name of a's and a last b backtracks exponentially in Python's re."""
    policy = write_policy(tmp_path / "p.yaml", POLICY)
    for name, pattern, field in [("a" * 998 + "b", r"^(a+)+$", "L"),           # no match: the label
                                 ("a" * 3000, r"^((a+)+)", "a" * 1000)]:       # the name's first 1,000 bytes
        index = tmp_path / "i.cdx"
        index.write_text(" CDX N b a m s k r M S V g\ncom,example)/ 20130101000000 http://example.com/ text/html 200 "
                         "D - - 10 0 %s\n" % name)
        out = str(tmp_path / "o.cdxj")
        run_profile([str(index)], out, policy=policy, collections={"pattern": pattern, "label": "L"})
        assert read_profile(out)["* - - - " + field][0] == 1


def test_the_options_reach_local_tasks_through_the_command_line(made):
    paths, policy, folder = made
    out = str(folder / "cli.cdxj")
    done = cli("profile", *paths, "--policy", policy, "-o", out, "-q", "-r", "local", "--cores", "2",
               "--collection-pattern", PATTERN, "--collection", "run-label", "--input-collection",
               "first=" + paths[0])
    assert done.returncode == 0, done.stderr
    assert_same_profile(read_profile(out), expected_profile(paths, policy, {paths[0]: "first",
                                                                            paths[1]: "run-label"}))
    with open(out) as f:
        assert json.loads(f.readline().split(" ", 1)[1]) is not None
