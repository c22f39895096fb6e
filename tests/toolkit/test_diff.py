"""diff and overlap: one pass over two sorted files, checked against dictionaries of both."""

import os
import subprocess
import sys

import orjson
import pytest

from profiler.testing import synthetic
from profiler.toolkit.diff import DiffError, classify, diff, join, overlap, overlap_summary
from profiler.run.profile import run_profile
from profiler.files.profilefile import FEATURES, flatten, iter_data
from profiler.toolkit.query import surt_level
from profiler.files.ukvs import profile_to_map

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_cdx(path, lines):
    with open(path, "w") as f:
        f.write(synthetic.LEGEND + "\n")
        f.writelines(lines)
    return str(path)


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    """Last year's holdings (before 2016, without one host) and this year's (everything)."""
    d = tmp_path_factory.mktemp("diff")
    lines = list(synthetic.cdx_lines(2000, seed=8))
    old = [l for l in lines if l.split()[1] < "2016" or l.startswith("com,cnn)")]
    new = [l for l in lines if not l.startswith("com,cnn)")]
    out = {}
    for name, ls in (("old", old), ("new", new)):
        out[name] = str(d / (name + ".cdxj"))
        run_profile([write_cdx(d / (name + ".cdx"), ls)], out[name], "default", resolve_revisits=False)
        out[name + "_map"] = str(d / (name + ".ukvs"))
        profile_to_map(out[name], out[name + "_map"])
    paths = [str(d / "a.cdx"), str(d / "b.cdx")]
    synthetic.write_cdx_parts(paths, 2000, seed=9)
    for name, p in zip("ab", paths):
        out[name] = str(d / (name + ".cdxj"))
        run_profile([p], out[name], "hosts")
    return out


def table(path):
    return {k.decode(): flatten(v) for k, v in iter_data(path)}


def test_diff_matches_dictionaries(archives):
    old, new = table(archives["old"]), table(archives["new"])
    changes, summary = diff(archives["old"], archives["new"])
    got = {k.decode(): (c, o, n) for k, c, o, n in changes}
    expected = {}
    for key in set(old) | set(new):
        o, n = old.get(key), new.get(key)
        change = ("appeared" if o is None else "vanished" if n is None else
                  "grew" if n["urim.total"] > o["urim.total"] else "shrank" if n["urim.total"] < o["urim.total"]
                  else "changed" if n != o else None)
        if change:
            expected[key] = (change, o, n)
    assert got == expected
    changed_in_both = sum(c not in ("appeared", "vanished") for c, _, _ in expected.values())
    assert summary["same"] == len(set(old) & set(new)) - changed_in_both
    assert summary["vanished"] > 0 and summary["appeared"] > 0 and summary["grew"] > 0
    assert got["com,cnn)/* - - -"][0] == "vanished"
    assert sum(summary.values()) == len(set(old) | set(new))


def test_diff_of_maps_agrees_with_profiles(archives):
    changes, summary = diff(archives["old_map"], archives["new_map"])
    by_map = {k: c for k, c, _, _ in changes}
    changes, _ = diff(archives["old"], archives["new"], features=["urim.total", "urir"])
    by_profile = {k[:-6]: c for k, c, _, _ in changes if k.endswith(b" - - -")}
    assert by_map == by_profile and by_map


def test_overlap_matches_sets(archives):
    pairs, levels = overlap(archives["a"], archives["b"])
    lines = list(pairs)
    a = {k: v for k, v in table(archives["a"]).items() if k.endswith(" - - -")}
    b = {k: v for k, v in table(archives["b"]).items() if k.endswith(" - - -")}
    assert sorted(k.decode() for k, _, _, _ in lines) == sorted(set(a) | set(b))
    rows = {r["level"]: r for r in overlap_summary(levels)}
    for level in ("root", "tld", "domain", "host"):
        ka = {k for k in a if surt_level(k.split()[0]) == level}
        kb = {k for k in b if surt_level(k.split()[0]) == level}
        r = rows[level]
        assert (r["only_a"], r["only_b"], r["both"]) == (len(ka - kb), len(kb - ka), len(ka & kb))
        assert r["shared_captures_a"] == sum(a[k]["urim.total"] for k in ka & kb)
        assert r["captures_b"] == sum(b[k]["urim.total"] for k in kb)
    assert rows["root"]["jaccard"] == 1.0 and 0 < rows["host"]["jaccard"] < 1


def test_mixed_kinds_refuse(archives):
    with pytest.raises(DiffError, match="cannot compare a profile with a map"):
        diff(archives["old"], archives["new_map"])


def test_join_and_classify():
    assert list(join([(b"a", 1), (b"c", 3)], [(b"b", 2), (b"c", 4)])) == [
        (b"a", 1, None), (b"b", None, 2), (b"c", 3, 4)]
    assert classify(None, {"urim.total": 1}, FEATURES) == "appeared"
    assert classify({"urim.total": 2, "urir": 1}, {"urim.total": 2, "urir": 2}, FEATURES) == "changed"
    assert classify({"urim.total": 2, "urir": 1}, {"urim.total": 2, "urir": 2}, ["urim.total"]) is None


def test_cli(archives):
    env = dict(os.environ, PYTHONPATH=ROOT)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True,
                              text=True, env=env)
    r = run("diff", archives["old"], archives["new"], "--summary")
    assert r.returncode == 0
    summary = orjson.loads(r.stdout)
    r = run("diff", archives["old"], archives["new"], "--only", "vanished", "--feature", "urim")
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and len(lines) == summary["vanished"]
    key, _, value = lines[0].partition(" {")
    assert orjson.loads("{" + value)["change"] == "vanished" and set(orjson.loads("{" + value)["old"]) == {"urim.total"}
    assert "vanished=%d" % summary["vanished"] in r.stderr
    r = run("overlap", archives["a"], archives["b"])
    assert r.returncode == 0
    assert [orjson.loads(l)["level"] for l in r.stdout.splitlines()] == ["root", "tld", "domain", "host"]
    r = run("overlap", archives["old_map"], archives["new_map"], "--lines")
    assert r.returncode == 0 and '"in":"a"' in r.stdout and '"in":"both"' in r.stdout


def test_overlap_of_dated_maps_and_other_fields(archives, tmp_path):
    maps = []
    for name in ("old", "new"):
        maps.append(str(tmp_path / (name + "-dt.ukvs")))
        profile_to_map(archives[name], maps[-1], ("surt", "datetime"))
    pairs, plain = overlap(archives["old_map"], archives["new_map"])
    list(pairs)
    pairs, dated = overlap(maps[0], maps[1])
    list(pairs)
    assert dated == plain and plain  # the ':' (all time) lines of a dated map are the plain map's lines
    pairs, y2013 = overlap(archives["old"], archives["new"], {"datetime": "2013"})
    keys = [k for k, _, _, _ in pairs]
    assert keys and all(k.endswith(b" 2013 - -") for k in keys)
    with pytest.raises(DiffError, match="no mime key field"):
        overlap(maps[0], maps[1], {"mime": "text/html"})


def test_overlap_ignores_not_held_lines(tmp_path):
    head = b'!context ["http://oduwsdl.github.io/contexts/ukvs"]\n!fields {"keys":["surt"],"values":["frequency"]}\n'
    (tmp_path / "a.ukvs").write_bytes(head + b"* 10/4\ncom,a)/* 6/2\ncom,b)/* 4/2\n")
    (tmp_path / "b.ukvs").write_bytes(head + b"* 5/3\ncom,a)/* 0/0\ncom,b)/* 5/3\n")
    pairs, levels = overlap(str(tmp_path / "a.ukvs"), str(tmp_path / "b.ukvs"))
    assert [(k, w) for k, w, _, _ in pairs] == [(b"*", "both"), (b"com,a)/*", "a"), (b"com,b)/*", "both")]
    host = [r for r in overlap_summary(levels) if r["level"] == "host"][0]
    assert (host["only_a"], host["both"], host["shared_share_a"]) == (1, 1, 0.4)


@pytest.mark.parametrize("verb", ["diff", "overlap"])
@pytest.mark.parametrize("other", ["hosts_policy", "compacted"])
def test_profiles_of_other_policies_or_compacted_are_refused(tmp_path, verb, other):
    """The same captures profiled with the default and the hosts policy: diff said 88 keys
    vanished, overlap that the domain level's holdings were half shared, exit 0; a compacted
    copy: 84 keys vanished (rolled up into coarser lines, their captures still there). Refused
    in one line, exit 2, nothing printed; files of one policy are compared as before."""
    from profiler.toolkit.compact import compact_file
    cdx = os.path.join(ROOT, "tests", "data", "cdx10-archive-it.cdx")
    a = str(tmp_path / "a.cdxj")
    run_profile([cdx], a, created="2026-01-01T00:00:00Z")
    b = str(tmp_path / "b.cdxj")
    if other == "hosts_policy":
        run_profile([cdx], b, "hosts", created="2026-01-01T00:00:00Z")
    else:
        compact_file(a, b, max_lines=60)
    r = subprocess.run([sys.executable, "-m", "profiler.cli", verb, a, b], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, (r.stdout[-300:], r.stderr)
    assert ("different policies (default, hosts)" if other == "hosts_policy" else "b.cdxj is compacted") in r.stderr
    with pytest.raises(DiffError):
        (diff if verb == "diff" else overlap)(a, b)
    c = str(tmp_path / "c.cdxj")
    run_profile([cdx], c, created="2026-01-02T00:00:00Z")
    changes, summary = diff(a, c)
    assert list(changes) == [] and summary["same"] > 0
    renamed = tmp_path / "renamed.yaml"          # a copy of the policy under another name: the same keys
    with open(os.path.join(ROOT, "conf", "policies", "default.yaml")) as f:
        renamed.write_text(f.read().replace("name: default", "name: our-default"))
    d = str(tmp_path / "d.cdxj")
    run_profile([cdx], d, str(renamed), created="2026-01-03T00:00:00Z")
    changes, summary = diff(a, d)
    assert list(changes) == [] and summary["same"] > 0


@pytest.mark.parametrize("verb", ["diff", "overlap"])
def test_maps_of_profiles_of_other_policies_are_refused(tmp_path, verb):
    """Maps of the same captures made from a default and a urls profile: diff said every URL key
    appeared and the host keys vanished, exit 0. Refused in one line, exit 2, nothing printed;
    maps of one policy, and a map that says nothing of its policy, are compared as before."""
    cdx = os.path.join(ROOT, "tests", "data", "cdx10-archive-it.cdx")
    maps = {}
    for policy in ("default", "urls"):
        profile = str(tmp_path / ("%s.cdxj" % policy))
        run_profile([cdx], profile, policy, created="2026-01-01T00:00:00Z")
        maps[policy] = str(tmp_path / ("%s.ukvs" % policy))
        profile_to_map(profile, maps[policy])
    r = subprocess.run([sys.executable, "-m", "profiler.cli", verb, maps["default"], maps["urls"]],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, (r.stdout[-300:], r.stderr)
    assert "maps made from profiles of different policies (default, urls)" in r.stderr
    changes, summary = diff(maps["urls"], maps["urls"])
    assert list(changes) == [] and summary["same"] > 0
    bare = tmp_path / "bare.ukvs"
    with open(maps["urls"], "rb") as f:
        bare.write_bytes(b"".join(x for x in f if not x.startswith(b"!")))
    changes, summary = diff(maps["urls"], str(bare))
    assert list(changes) == [] and summary["same"] > 0
