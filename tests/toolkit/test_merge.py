"""merge: the union of captures, checked against a profile of the union made from scratch."""

import os
import re
import subprocess
import sys
import zlib

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.model import stats
from profiler.testing import synthetic
from profiler.files.datalines import DamagedFile
from profiler.files.sortedfile import UnsortedFile
from profiler.toolkit.merge import MergeError, combine, combine_frequencies, combine_marks, merge
from profiler.toolkit.query import query
from profiler.files.output import header_lines, write_atomic
from profiler.run.profile import run_profile
from profiler.model.policy import load as load_policy
from profiler.files.profilefile import FEATURES, flatten, iter_data, read_header
from profiler.files.ukvs import Frequency, profile_to_map, read_map
from profiler.files.validate import validate

from helpers.oracle import profile as oracle_profile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CREATED = "2026-01-01T00:00:00Z"
N_LINES = 2500


# ---------------------------------------------------------------- helpers

def write_cdx(path, lines):
    with open(path, "w") as f:
        f.write(synthetic.LEGEND + "\n")
        f.writelines(lines)
    return str(path)


def profile(cdx_paths, out, resolve=True, policy="default"):
    run_profile([str(p) for p in cdx_paths], str(out), policy, resolve_revisits=resolve, created=CREATED)
    return str(out)


def data(path):
    """{key: (flat features, bounds)} of a profile."""
    return {k: (flatten(v), v.get("bounds", {})) for k, v in iter_data(path)}


def components(pairs):
    """For (urlkey, digest) pairs, a component name each: URI-Rs sharing a payload digest share it."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for urlkey, digest in pairs:
        a = find("u:" + urlkey)
        if digest != "-":
            b = find("d:" + digest)
            if a != b:
                parent[a] = b
    return [find("u:" + urlkey) for urlkey, _ in pairs]


def absent_answer(path, key):
    """(flat, bounds) query answers for a key the merged profile has no line for: a zero value
    bounded by the !meta note absent_keys (its SURT and datetime's '-' line), or None."""
    fixed = dict(zip(("surt", "datetime", "mime", "status"), key.decode().split(" ")))
    found, note, _ = query(path, fixed)
    assert found and "absent_keys" in note, (key, note)
    flat = found[0][1]
    return flat, flat["bounds"]


def assert_within_truth(merged, truth, exact, path=None):
    """Every from-scratch value within the merged value and its bounds; a key without a line is
    answered by query within its bounds (only in a merge with the !meta note absent_keys)."""
    for key in set(truth) - set(merged):
        assert path is not None, key
        flat, bounds = absent_answer(path, key)
        for name in FEATURES:
            assert name not in exact
            low, high = bounds.get(name, (flat[name], flat[name]))
            assert low <= truth[key][0][name] <= high, (key, name, low, truth[key][0][name], high)
    for key, (flat, bounds) in merged.items():
        if key not in truth:        # added for revisits that may resolve to it: zero is within bounds
            assert bounds["urim.total"][0] == 0 and "urim.total" not in exact, key
            continue
        true = truth[key][0]
        for name in FEATURES:
            if name in exact:
                assert flat[name] == true[name], (key, name)
                assert name not in bounds, (key, name)
            else:
                low, high = bounds.get(name, (flat[name], flat[name]))
                assert low <= true[name] <= high, (key, name, low, true[name], high)


# ---------------------------------------------------------------- real profiles

@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """One generated index, profiled whole and in parts cut three ways."""
    d = tmp_path_factory.mktemp("merge")
    lines = list(synthetic.cdx_lines(N_LINES, seed=11))
    out = {"whole": profile([write_cdx(d / "all.cdx", lines)], d / "whole.cdxj")}
    out["whole_unresolved"] = profile([d / "all.cdx"], d / "whole-u.cdxj", resolve=False)
    # by URI-R hash: disjoint URI-Rs, shared digests
    parts = [[l for l in lines if zlib.crc32(l.split()[0].encode()) % 3 == i] for i in range(3)]
    out["by_urir"] = [profile([write_cdx(d / ("u%d.cdx" % i), p)], d / ("u%d.cdxj" % i))
                      for i, p in enumerate(parts)]
    # by URI-R/digest component: disjoint URI-Rs and digests
    comp = components([(l.split()[0], l.split()[5]) for l in lines])
    parts = [[l for l, c in zip(lines, comp) if zlib.crc32(c.encode()) % 2 == i] for i in range(2)]
    assert all(parts)
    out["by_component"] = [profile([write_cdx(d / ("c%d.cdx" % i), p)], d / ("c%d.cdxj" % i))
                           for i, p in enumerate(parts)]
    # round-robin runs of lines: URI-Rs cut across the parts (revisits left unresolved)
    paths = [str(d / ("r%d.cdx" % i)) for i in range(2)]
    synthetic.write_cdx_parts(paths, N_LINES, seed=11)
    out["overlapping"] = [profile([p], d / ("r%d.cdxj" % i), resolve=False) for i, p in enumerate(paths)]
    out["dir"] = d
    return out


def test_disjoint_urir_partition_is_exact_but_digests(corpus):
    out = str(corpus["dir"] / "m-urir.cdxj")
    merge(corpus["by_urir"], out, disjoint=["urir"], created=CREATED)
    assert validate(out).ok
    merged, truth = data(out), data(corpus["whole"])
    assert_within_truth(merged, truth, set(FEATURES) - {"digests", "dedup_bytes"})
    # the digests shared between URI-Rs (empty payload, spacer, 404 page) make some lines inexact
    assert any("digests" in b for _, b in merged.values())
    about = [v for n, v in read_header(out) if n == "!meta" and "merge" in v][0]
    assert about["merge"]["exact"] == ["urim.total", "urim.min", "urim.max", "urir", "bytes", "first", "last"]
    assert about["revisits"] == "resolved"


def test_disjoint_urir_and_digests_partition_equals_from_scratch(corpus):
    out = str(corpus["dir"] / "m-comp.cdxj")
    merge(corpus["by_component"], out, disjoint=["urir", "digests"], created=CREATED)
    assert validate(out).ok
    assert_within_truth(data(out), data(corpus["whole"]), set(FEATURES))
    with open(out, "rb") as f, open(corpus["whole"], "rb") as g:
        assert [l for l in f if l[:1] != b"!"] == [l for l in g if l[:1] != b"!"]


def test_overlapping_inputs_lie_within_bounds(corpus):
    out = str(corpus["dir"] / "m-over.cdxj")
    merge(corpus["overlapping"], out, created=CREATED)
    assert validate(out).ok
    merged = data(out)
    assert_within_truth(merged, data(corpus["whole_unresolved"]), {"urim.total", "bytes", "first", "last"})
    assert any("urir" in b for _, b in merged.values())
    header = read_header(out)
    run_meta = [v for n, v in header if n == "!meta" and "inputs" in v][0]
    assert run_meta["captures"] == N_LINES and len(run_meta["inputs"]) == 2
    about = [v for n, v in header if n == "!meta" and "merge" in v][0]
    assert about["merge"]["bounds"] == ["urim.min", "urim.max", "urir", "digests", "dedup_bytes"]
    assert about["merge"]["parts"] == [os.path.abspath(p) for p in corpus["overlapping"]]


def test_nested_merges_keep_bounds_sound(corpus):
    d = corpus["dir"]
    a, b, c = corpus["by_urir"]
    merge([a, b], str(d / "ab.cdxj"), created=CREATED)
    merge([str(d / "ab.cdxj"), c], str(d / "abc.cdxj"), created=CREATED)
    merged = data(str(d / "abc.cdxj"))
    # not declared disjoint: revisits may resolve elsewhere, so keys with a mime or status get
    # bounds; the '- -' lines keep exact captures, bytes, first and last
    assert_within_truth(merged, data(corpus["whole"]), set(), str(d / "abc.cdxj"))
    truth = data(corpus["whole"])
    for key, (flat, bounds) in merged.items():
        if key.endswith(b" - -"):
            assert not {"urim.total", "bytes", "first", "last"} & set(bounds), key
            assert flat["urim.total"] == truth[key][0]["urim.total"]
    about = [v for n, v in read_header(str(d / "abc.cdxj")) if n == "!meta" and "merge" in v][0]
    assert about["merge"]["exact"] == []
    # declared disjoint afterwards: the bounds carried by ab stay, and still hold the truth
    merge([str(d / "ab.cdxj"), c], str(d / "abc2.cdxj"), disjoint=["urir"], created=CREATED)
    assert_within_truth(data(str(d / "abc2.cdxj")), data(corpus["whole"]), set(), str(d / "abc2.cdxj"))


def test_different_policies_refuse(corpus, tmp_path):
    other = profile([corpus["dir"] / "u0.cdx"], tmp_path / "hosts.cdxj", policy="hosts")
    with pytest.raises(MergeError, match="different policies"):
        merge([corpus["by_urir"][0], other], str(tmp_path / "x.cdxj"))
    assert not os.path.exists(tmp_path / "x.cdxj")


def test_unsorted_input_refuses_and_keeps_old_output(corpus, tmp_path):
    bad = tmp_path / "bad.cdxj"
    with open(corpus["by_urir"][0], "rb") as f:
        lines = f.read().splitlines()
    lines[-1], lines[-2] = lines[-2], lines[-1]
    bad.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "out.cdxj"
    out.write_bytes(b"previous\n")
    with pytest.raises(UnsortedFile, match="bad.cdxj is not sorted"):
        merge([str(bad), corpus["by_urir"][1]], str(out))
    assert out.read_bytes() == b"previous\n"


def test_ukvs_maps_merge(corpus, tmp_path):
    maps = []
    for i, p in enumerate(corpus["by_urir"]):
        maps.append(str(tmp_path / ("u%d.ukvs" % i)))
        profile_to_map(p, maps[-1])
    truth = str(tmp_path / "whole.ukvs")
    profile_to_map(corpus["whole"], truth)
    for disjoint, mark in ((["urir"], ""), ([], "-")):
        out = str(tmp_path / "m.ukvs")
        merge(maps, out, disjoint=disjoint)
        assert validate(out).ok
        merged = dict(read_map(out)[1])
        expected = dict(read_map(truth)[1])
        assert set(merged) == set(expected)
        for key, f in merged.items():
            e = expected[key]
            assert f.urim == e.urim and f.urim_mark == ""
            assert f.urir >= e.urir if mark == "-" else f.urir == e.urir
        held_by_several = [f for k, f in merged.items() if k in (b"*", b"com,*")]
        assert all(f.urir_mark == mark for f in held_by_several)
    with pytest.raises(MergeError, match=r"u0\.ukvs is a UKVS map, \S+ a CDXJ profile: merge profiles, or maps"):
        merge([maps[0], corpus["whole"]], str(tmp_path / "x"))


def _paths_policy(tmp_path):
    """The default policy with one level of path lines (com,cnn)/world/*), under another name."""
    policy = load_policy("default").to_dict()
    policy["name"], policy["path_depth"] = "paths", 1
    policy["emit"]["path"] = {"datetime": ["any"]}
    path = tmp_path / "paths.yaml"
    path.write_text(orjson.dumps(policy).decode())
    return str(path)


def test_maps_of_other_policies_or_compacted_are_refused(corpus, tmp_path):
    """A map of a policy with path lines merged with a default map (no path lines), or a
    compacted map merged with another: a key only one map has was copied from it, exact, though
    the other holds captures under it in a coarser line (a path line 6/4 of 11 captures). Refused
    in one line, nothing written; a merged map keeps its parts' policy for the next merge."""
    from profiler.toolkit.compact import compact_file
    maps = []
    for i, policy in enumerate(("default", _paths_policy(tmp_path))):
        p = profile([corpus["dir"] / ("r%d.cdx" % i)], tmp_path / ("r%d.cdxj" % i), policy=policy)
        maps.append(str(tmp_path / ("r%d.ukvs" % i)))
        profile_to_map(p, maps[-1])
    out = tmp_path / "x.ukvs"
    with pytest.raises(MergeError, match=r"maps made from profiles of different policies \(default, paths\)"):
        merge(maps, str(out))
    assert not out.exists()
    same = str(tmp_path / "r1-default.ukvs")
    profile_to_map(profile([corpus["dir"] / "r1.cdx"], tmp_path / "r1d.cdxj"), same)
    merge([maps[0], same], str(tmp_path / "ok.ukvs"))
    with pytest.raises(MergeError, match=r"different policies \(default, paths\)"):
        merge([str(tmp_path / "ok.ukvs"), maps[1]], str(out))
    compacted = str(tmp_path / "c.ukvs")
    compact_file(maps[0], compacted, max_lines=20)
    with pytest.raises(MergeError, match=r"c\.ukvs: a compacted map"):
        merge([compacted, same], str(out))
    assert not out.exists()


def test_cli(corpus, tmp_path):
    out = str(tmp_path / "m.cdxj")
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "merge"] + corpus["by_component"]
                       + ["-o", out, "--disjoint", "urir", "--disjoint", "digests"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    assert "lines from 2 inputs" in r.stderr and "bounds where" not in r.stderr
    assert data(out) == data(corpus["whole"])
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "merge"] + corpus["by_component"]
                       + ["-o", out, "--disjoint", "urir"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0 and re.search(r"lines from 2 inputs \(\d+ keys in more than one: bounds where the "
                                           r"inputs may share digests; --disjoint digests if they share none\)",
                                           r.stderr), r.stderr
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "merge", "nope.cdxj", "-o", out],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "no such file: nope.cdxj" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("spelling", ["same", "dot", "hardlink", "symlink"])
def test_one_file_given_twice_is_refused(corpus, tmp_path, spelling):
    """merge of a file with itself (the same name twice, ./NAME, a hard link, a symlink) added
    its captures twice: every count doubled, exit 0. Refused in one line, nothing written."""
    a = tmp_path / "a.cdxj"
    a.write_bytes(open(corpus["by_urir"][0], "rb").read())
    other = {"same": "a.cdxj", "dot": "./a.cdxj", "hardlink": "hard.cdxj", "symlink": "link.cdxj"}[spelling]
    if spelling == "hardlink":
        os.link(str(a), str(tmp_path / other))
    if spelling == "symlink":
        os.symlink("a.cdxj", str(tmp_path / other))
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "merge", "a.cdxj", corpus["by_urir"][1], other,
                        "-o", "m.cdxj"], capture_output=True, text=True, cwd=str(tmp_path),
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert "a.cdxj and %s are the same file" % other in r.stderr
    assert not os.path.exists(str(tmp_path / "m.cdxj"))
    with pytest.raises(MergeError):
        merge([str(a), str(tmp_path / other)], str(tmp_path / "m.cdxj"))


def test_a_copy_of_an_input_is_warned_of(corpus, tmp_path):
    """A copy of an input (another file, the same bytes: the same run's output) merged with it
    added its captures twice without a word. Inputs whose header lines are the same and say
    when they were made are named in a warning; other inputs are not."""
    a = corpus["by_urir"][0]
    copy = str(tmp_path / "copy.cdxj")
    with open(a, "rb") as f, open(copy, "wb") as out:
        out.write(f.read())

    def run(*inputs):
        return subprocess.run([sys.executable, "-m", "profiler.cli", "merge"] + list(inputs)
                              + ["-o", str(tmp_path / "m.cdxj")], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=ROOT))
    r = run(a, corpus["by_urir"][1], copy)
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and a in warnings[0] and copy in warnings[0] and "twice" in warnings[0], r.stderr
    r = run(*corpus["by_urir"])
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr


def test_profiles_of_one_input_file_are_warned_of(corpus, tmp_path):
    """Two profiles made from the same input file (two runs: other header lines, so not a copy)
    merged added its captures twice without a word; a merge of one of them with a merged profile
    holding the other too. Inputs whose !meta inputs name a file in common are named in one
    warning each pair; inputs of other files are not."""
    again = str(tmp_path / "again.cdxj")
    run_profile([str(corpus["dir"] / "u0.cdx")], again, "default", created="2026-02-02T00:00:00Z")
    merged = str(tmp_path / "u01.cdxj")
    merge(corpus["by_urir"][:2], merged)

    def run(*inputs):
        return subprocess.run([sys.executable, "-m", "profiler.cli", "merge"] + list(inputs)
                              + ["-o", str(tmp_path / "m.cdxj")], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=ROOT))
    for inputs in ([corpus["by_urir"][0], again], [merged, again]):
        r = run(*inputs)
        warnings = [line for line in r.stderr.splitlines() if "warning" in line]
        assert r.returncode == 0 and len(warnings) == 1, r.stderr
        assert inputs[0] in warnings[0] and again in warnings[0] and "u0.cdx" in warnings[0], r.stderr
        assert "same header lines" not in warnings[0] and "twice" in warnings[0], r.stderr
    r = run(corpus["by_urir"][1], again)
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr


# ---------------------------------------------------------------- rules, unit by unit

def value(total, mn, mx, urir, nbytes, digests, dedup, first="20200101000000", last="20200101000000"):
    return orjson.loads(stats.to_json([total, mn, mx, urir, nbytes, digests, dedup, first, last]))


def test_combine_rules():
    a = value(10, 1, 6, 3, 1000, 8, 900, "20100101000000", "20150101000000")
    b = value(4, 2, 2, 2, 500, 3, 400, "20090101000000", "20120101000000")
    m = combine([a, b])
    assert m["urim"] == {"total": 14, "min": 1, "max": 6}
    assert (m["urir"], m["bytes"], m["digests"], m["dedup_bytes"]) == (5, 1500, 11, 1300)
    assert (m["first"], m["last"]) == ("20090101000000", "20150101000000")
    assert m["bounds"] == {"urim.min": [1, 3], "urim.max": [6, 8], "urir": [3, 5],
                           "digests": [8, 11], "dedup_bytes": [900, 1300]}
    assert list(m) == ["urim", "urir", "bytes", "digests", "dedup_bytes", "first", "last", "bounds"]
    assert combine([a, b], ["urir"])["bounds"] == {"digests": [8, 11], "dedup_bytes": [900, 1300]}
    assert "bounds" not in combine([a, b], ["urir", "digests"])
    assert combine([a]) is a


def test_combine_caps_bounds_at_the_highs_of_bounded_totals():
    """A merged input's total may be the low of its bounds (revisits resolved elsewhere): the
    URI-Rs, digests and dedup bytes of the merge are capped by the highs, not the written totals."""
    a = value(2, 1, 1, 2, 100, 2, 100)
    a["bounds"] = {"urim.total": [2, 10], "urir": [2, 10], "bytes": [100, 900], "digests": [2, 10],
                   "dedup_bytes": [100, 900]}
    b = value(1, 1, 1, 1, 50, 1, 50)
    m = combine([a, b])
    # the truth can be a: 10 captures of 10 URI-Rs and digests, 900 bytes; b: one more of each
    assert m["bounds"]["urim.total"] == [3, 11] and m["bounds"]["bytes"] == [150, 950]
    assert m["bounds"]["urir"] == [2, 11] and m["bounds"]["digests"] == [2, 11]
    assert m["bounds"]["dedup_bytes"] == [100, 950]


def test_combine_marks_and_frequencies():
    assert combine_marks(["", ""]) == ""
    assert combine_marks(["+", ""]) == "+"
    assert combine_marks(["+", "-"]) == "~"
    f = combine_frequencies([Frequency(5, "", 2, ""), Frequency(3, "", 3, "")])
    assert f == Frequency(8, "", 5, "-")
    assert combine_frequencies([Frequency(5, "", 2, ""), Frequency(3, "", 3, "")], ["urir"]) == Frequency(8, "", 5, "")
    assert combine_frequencies([Frequency(5, "+", 2, "+"), Frequency(3, "", None, "")]) == Frequency(8, "+", 2, "~")


# ---------------------------------------------------------------- property: merge of random partitions

URLKEYS = ["com,a)/", "com,a)/x/y", "com,b)/", "com,b,c)/p/q", "org,d)/", "dns:e"]
TIMESTAMPS = ["20120304050607", "20121111000000", "20130101120000", "20130615000000"]
POLICY = load_policy("full")

capture = st.tuples(st.sampled_from(URLKEYS), st.sampled_from(TIMESTAMPS),
                    st.sampled_from(["text/html", "image/png"]), st.sampled_from(["200", "404"]),
                    st.sampled_from(["AAAA", "BBBB", "CCCC", "-"]), st.integers(0, 1000))


def write_oracle_profile(path, caps):
    table = oracle_profile([[u, t, m, s, d, n, False] for u, t, m, s, d, n in caps], POLICY)
    heads = header_lines(None, POLICY.to_dict(), ["x.cdx"], {"captures": len(caps)}, [], True, CREATED)
    lines = [(k.encode(), stats.to_json(list(v))) for k, v in table.items()]
    write_atomic(str(path), heads + [k + b" " + v for k, v in sorted(lines)])
    return str(path)


def truth_of(caps, tmp_path):
    p = write_oracle_profile(tmp_path / "truth.cdxj", caps)
    return data(p)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(caps=st.lists(capture, min_size=1, max_size=25), k=st.integers(1, 4), data_=st.data(),
       mode=st.sampled_from(["any", "urir", "urir+digests"]))
def test_property_merge_bounds_hold(tmp_path, caps, k, data_, mode):
    if mode == "any":
        where = data_.draw(st.lists(st.integers(0, k - 1), min_size=len(caps), max_size=len(caps)))
    else:
        # disjoint URI-Rs; with digests too, URI-Rs that share a digest go together
        if mode == "urir":
            group = {c[0]: c[0] for c in caps}
        else:
            group = dict(zip((c[0] for c in caps), components([(c[0], c[4]) for c in caps])))
        targets = {g: data_.draw(st.integers(0, k - 1)) for g in sorted(set(group.values()))}
        where = [targets[group[c[0]]] for c in caps]
    parts = [[c for c, w in zip(caps, where) if w == i] for i in range(k)]
    paths = [write_oracle_profile(tmp_path / ("p%d.cdxj" % i), p) for i, p in enumerate(parts) if p]
    disjoint = {"any": [], "urir": ["urir"], "urir+digests": ["urir", "digests"]}[mode]
    out = str(tmp_path / "m.cdxj")
    merge(paths, out, disjoint=disjoint, created=CREATED)
    report = validate(out)
    assert report.ok, report.problems
    # inputs sharing URI-Rs: revisits may resolve elsewhere, keys with a mime or status get bounds
    exact = {"urim.total", "bytes", "first", "last"} if len(paths) == 1 or "urir" in disjoint else set()
    if len(paths) == 1 or "urir" in disjoint:
        exact |= {"urim.min", "urim.max", "urir"}
    if len(paths) == 1 or "digests" in disjoint:
        exact |= {"digests", "dedup_bytes"}
    assert_within_truth(data(out), truth_of(caps, tmp_path), exact, out)
    if len(paths) > 2:   # merging merged files stays sound
        nested = str(tmp_path / "n.cdxj")
        merge(paths[:2], nested, disjoint=disjoint, created=CREATED)
        merge([nested] + paths[2:], out, disjoint=disjoint, created=CREATED)
        assert_within_truth(data(out), truth_of(caps, tmp_path), exact, out)


def test_bad_values_are_one_line_errors(corpus, tmp_path):
    with open(corpus["by_urir"][0], "rb") as f:
        lines = f.read().splitlines()
    # (tests/files/test_damaged_files.py tries every kind of damage on every command)
    for i, broken in enumerate([lines[-1].split(b" {")[0] + b" {\"x\":1}"]):
        bad = tmp_path / ("bad%d.cdxj" % i)
        bad.write_bytes(b"\n".join(lines[:-1] + [broken]) + b"\n")
        with pytest.raises(DamagedFile, match=re.escape("bad%d.cdxj line %d: urim is null" % (i, len(lines)))):
            merge([str(bad), corpus["by_component"][0]], str(tmp_path / "out.cdxj"))
    assert not os.path.exists(tmp_path / "out.cdxj")


def test_map_of_a_merged_profile_marks_inexact_urir(corpus, tmp_path):
    merged = str(tmp_path / "m.cdxj")
    merge(corpus["overlapping"], merged)
    bounded = {k.split(b" ")[0] for k, v in iter_data(merged)
               if k.endswith(b" - - -") and "urir" in v.get("bounds", {})}
    profile_to_map(merged, str(tmp_path / "m.ukvs"))
    freqs = dict(read_map(str(tmp_path / "m.ukvs"))[1])
    assert bounded and {k for k, f in freqs.items() if f.urir_mark == "-"} == bounded
    assert all(f.urir_mark == "" for k, f in freqs.items() if k not in bounded)


# ---------------------------------------------------------------- revisits resolved per input

revisit_capture = st.tuples(st.sampled_from(URLKEYS), st.sampled_from(TIMESTAMPS),
                            st.sampled_from(["text/html", "image/png", "warc/revisit"]),
                            st.sampled_from(["200", "404", "301"]), st.sampled_from(["AAAA", "BBBB", "-"]),
                            st.integers(0, 1000))


def _resolved_profile(path, caps):
    from helpers.oracle import resolve_revisits
    rows = resolve_revisits([[u, t, m, s, d, n, m == "warc/revisit"] for u, t, m, s, d, n in caps])
    table = oracle_profile(rows, POLICY)
    heads = header_lines(None, POLICY.to_dict(), ["x.cdx"], {"captures": len(caps)}, [], True, CREATED)
    lines = [(k.encode(), stats.to_json(list(v))) for k, v in table.items()]
    write_atomic(str(path), heads + [k + b" " + v for k, v in sorted(lines)])
    return str(path)


def check_against_scratch(merged_path, truth_path):
    """(from-scratch (key, feature) pairs outside the merged value and its bounds, from-scratch
    keys the merge lacks)."""
    merged, truth = data(merged_path), data(truth_path)
    violations = missing = 0
    for key, (true, _) in truth.items():
        if key in merged:
            flat, bounds = merged[key]
        else:
            try:
                flat, bounds = absent_answer(merged_path, key)
            except AssertionError:
                missing += 1
                continue
        for name in FEATURES:
            low, high = bounds.get(name, (flat[name], flat[name]))
            violations += not (low <= true[name] <= high)
    return violations, missing


@settings(max_examples=int(os.environ.get("MERGE_REVISIT_EXAMPLES", "300")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(caps=st.lists(revisit_capture, min_size=1, max_size=30), k=st.integers(2, 4), data_=st.data())
def test_property_revisits_resolved_per_input_stay_within_bounds(tmp_path_factory, caps, k, data_):
    """Random archives with revisits, cut into random overlapping inputs (captures anywhere: the
    inputs share URI-Rs), each resolved on its own, merged: the from-scratch profile inside."""
    tmp_path = tmp_path_factory.mktemp("rv")
    where = data_.draw(st.lists(st.integers(0, k - 1), min_size=len(caps), max_size=len(caps)))
    parts = [[c for c, w in zip(caps, where) if w == i] for i in range(k)]
    paths = [_resolved_profile(tmp_path / ("p%d.cdxj" % i), p) for i, p in enumerate(parts) if p]
    if len(paths) < 2:
        return
    out = str(tmp_path / "m.cdxj")
    merge(paths, out, created=CREATED)
    assert validate(out).ok, validate(out).problems
    truth = _resolved_profile(tmp_path / "truth.cdxj", caps)
    assert check_against_scratch(out, truth) == (0, 0)
    nested = str(tmp_path / "n.cdxj")                       # merging merged files stays sound
    merge(paths[:2], nested, created=CREATED)
    merge([nested] + paths[2:], out, created=CREATED)
    assert validate(out).ok
    assert check_against_scratch(out, truth) == (0, 0)


# ---------------------------------------------------------------- size and summary

def test_two_halves_merge_near_one_profile_and_true_line_count(corpus, tmp_path):
    """The profiles of an archive's first and second half (in capture time: they share URI-Rs,
    revisits resolved each on its own) merge to at most 1.5x the whole archive's profile lines
    (no zero-count lines for keys only revisits elsewhere would give: the !meta note
    absent_keys carries that once), the from-scratch values within the bounds (query answers a
    key without a line), and the summary's line count is the file's."""
    lines = sorted(synthetic.cdx_lines(N_LINES, seed=11), key=lambda l: l.split(" ", 2)[1])
    halves = [lines[:len(lines) // 2], lines[len(lines) // 2:]]
    parts = [profile([write_cdx(tmp_path / ("h%d.cdx" % i), h)], tmp_path / ("h%d.cdxj" % i))
             for i, h in enumerate(halves)]
    out = str(tmp_path / "m.cdxj")
    summary = merge(parts, out, created=CREATED)
    assert validate(out).ok
    written = sum(1 for _ in iter_data(out))
    whole = sum(1 for _ in iter_data(corpus["whole"]))
    assert summary["lines"] == written
    assert written <= 1.5 * whole, (written, whole)
    about = [v for n, v in read_header(out) if n == "!meta" and "merge" in v][0]
    assert "absent_keys" in about["merge"]
    assert_within_truth(data(out), data(corpus["whole"]), set(), out)


def _with_policy_of(path, donor, out):
    """path's bytes with its !meta policy replaced by donor's (a header that lies)."""
    policy = next(v["policy"] for n, v in read_header(donor) if n == "!meta" and "policy" in v)
    lines = []
    for line in open(path, "rb"):
        if line.startswith(b"!meta ") and b'"policy"' in line:
            value = orjson.loads(line[6:])
            value["policy"] = policy
            line = b"!meta " + orjson.dumps(value) + b"\n"
        lines.append(line)
    with open(out, "wb") as f:
        f.writelines(lines)
    return str(out)


def test_a_map_of_a_header_that_lies_is_refused(tmp_path):
    """ukvs takes the levels a map covers from the profile's policy, and lookup reads a level a map
    covers but has no line for as none of its captures: hosts lines under a default !meta made a
    map that said a year it held was not held. ukvs refuses such a profile in one line."""
    a = profile([os.path.join(ROOT, "tests", "data", "cdx10-archive-it.cdx")], tmp_path / "a.cdxj")
    b = profile([os.path.join(ROOT, "tests", "data", "cdxj-pywb.cdxj")], tmp_path / "b.cdxj", policy="hosts")
    liar = _with_policy_of(b, a, tmp_path / "liar.cdxj")
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "ukvs", liar, "-o", "m.ukvs"],
                       capture_output=True, text=True, cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert "liar.cdxj line " in r.stderr and "its !meta" in r.stderr
    assert not os.path.exists(str(tmp_path / "m.ukvs"))
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "ukvs", b, "-o", "m.ukvs"],
                       capture_output=True, text=True, cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0 and os.path.getsize(str(tmp_path / "m.ukvs")) > 0, r.stderr


@pytest.mark.parametrize("lie", ["finer_lines", "coarser_lines"])
def test_a_header_naming_another_policy_than_its_lines_is_refused(tmp_path, lie):
    """A profile whose !meta names another policy than the one that wrote its lines (a header
    edited or copied) was merged as that policy's: a key its lines lack read as none of its
    captures, so '* - - 200' of a default profile merged with a hosts profile said 4 where the
    union holds more, exit 0. The merge refuses it in one line naming the line, nothing written;
    honest inputs of one policy merge as before."""
    a = profile([os.path.join(ROOT, "tests", "data", "cdx10-archive-it.cdx")], tmp_path / "a.cdxj")
    b = profile([os.path.join(ROOT, "tests", "data", "cdxj-pywb.cdxj")], tmp_path / "b.cdxj", policy="hosts")
    if lie == "finer_lines":       # default lines (status codes, months) under the hosts policy
        liar, other = _with_policy_of(a, b, tmp_path / "liar.cdxj"), b
        said = "is no key of its policy (hosts"
    else:                          # hosts lines (no year lines under a TLD) under the default policy
        liar, other = _with_policy_of(b, a, tmp_path / "liar.cdxj"), a
        said = "add up to 0 captures"
    assert not validate(liar).ok          # it passed
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "merge", other, liar, "-o", "m.cdxj"],
                       capture_output=True, text=True, cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert said in r.stderr and "liar.cdxj line " in r.stderr and "its !meta" in r.stderr
    assert not os.path.exists(str(tmp_path / "m.cdxj"))
    again = subprocess.run([sys.executable, "-m", "profiler.cli", "merge", other, liar, "-o", "m.cdxj"],
                           capture_output=True, text=True, cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=ROOT))
    assert (again.returncode, again.stderr) == (2, r.stderr)      # a refusal is not remembered as a check
    honest = profile([os.path.join(ROOT, "tests", "data", "cdxj-pywb.cdxj")], tmp_path / "honest.cdxj",
                     policy="hosts" if lie == "finer_lines" else "default")
    merge([other, honest], str(tmp_path / "ok.cdxj"))
