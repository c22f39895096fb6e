"""UKVS maps carry the status and MIME breakdowns a router needs ({"status": {...}}, {"mime":
{...}}, like the language blocks): ukvs writes them from a profile that has the lines, merge
adds them up, validate checks them, lookup shows them, and serve's /route ranks an archive
whose captures of a URI are mostly 5xx after the others (profiler.serve.answers)."""

import os
import subprocess
import sys

from profiler.files.profilefile import flatten, iter_data
from profiler.files.ukvs import profile_to_map
from profiler.files.validate import validate
from profiler.run.profile import run_profile
from profiler.serve import answers
from profiler.serve.archives import Archive
from profiler.testing import synthetic
from profiler.toolkit.lookup import Lookup
from profiler.toolkit.merge import merge

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cdx_line(host, path, ts, status, n):
    return "com,%s)/%s %s http://%s.com/%s text/html %s %s - - %d 0 x.warc.gz\n" % (
        host, path, ts, host, path, status, "D%030d" % n, 500 + n)


def profiled(tmp_path, name, lines, policy="full"):
    cdx = tmp_path / ("%s.cdx" % name)
    cdx.write_text(synthetic.LEGEND + "\n" + "".join(sorted(lines)))
    profile = str(tmp_path / ("%s.cdxj" % name))
    run_profile([str(cdx)], profile, policy, archive_uri="https://%s.example.org/" % name)
    out = str(tmp_path / ("%s.ukvs" % name))
    profile_to_map(profile, out)
    return profile, out


def blocks(path):
    """{key: JSON block} of a map's lines."""
    import orjson
    out = {}
    with open(path, "rb") as f:
        for line in f:
            if line[:1] != b"!" and b" {" in line:
                out[line.split(b" ")[0]] = orjson.loads(line[line.index(b" {") + 1:])
    return out


def test_ukvs_writes_status_and_mime_blocks_that_add_up(tmp_path):
    lines = list(synthetic.cdx_lines(1500, seed=3))
    profile, out = profiled(tmp_path, "s", lines)
    assert validate(out).ok, validate(out).problems
    found = blocks(out)
    lines_of = {k: flatten(v) for k, v in iter_data(profile)}
    root = found[b"*"]
    assert set(root["status"]) <= {"1xx", "2xx", "3xx", "4xx", "5xx", "unk"}      # one level: classes
    assert all(m == "unk" or ("/" in m and not m.endswith("/*")) for m in root["mime"])   # one level: types
    for name, at in (("status", 3), ("mime", 2)):
        for field, freq in root[name].items():
            key = ["*", "-", "-", "-"]
            key[at] = field
            assert int(freq.split("/")[0]) == lines_of[" ".join(key).encode()]["urim.total"]
        assert sum(int(f.split("/")[0]) for f in root[name].values()) == lines_of[b"* - - -"]["urim.total"]
    # a broken block is refused by validate
    bad = tmp_path / "bad.ukvs"
    text = open(out).read().replace('"5xx":', '"5zz":', 1).replace('"2xx":', '"2zz":', 1)
    bad.write_text(text)
    assert not validate(str(bad)).ok


def test_merge_adds_them_up_and_lookup_shows_them(tmp_path):
    a = [cdx_line("ex", "p%d" % i, "2015010100000%d" % (i % 10), "503" if i < 6 else "200", i) for i in range(8)]
    b = [cdx_line("ex", "q%d" % i, "2016010100000%d" % (i % 10), "200", 100 + i) for i in range(3)]
    _, ma = profiled(tmp_path, "a", a)
    _, mb = profiled(tmp_path, "b", b)
    out = str(tmp_path / "m.ukvs")
    merge([ma, mb], out, disjoint=["urir"])
    assert validate(out).ok
    host = blocks(out)[b"com,ex)/*"]
    assert host["status"] == {"2xx": "5/5", "5xx": "6/6"} and host["mime"] == {"text/html": "11/11"}
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "lookup", out, "http://ex.com/zzz", "--breakdowns"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    assert r.stdout.rstrip("\n").split("\t")[-1] == '{"status":{"2xx":"5/5","5xx":"6/6"},"mime":{"text/html":"11/11"}}'
    with Lookup(out) as index:
        assert index.lookup("http://ex.com/zzz").breakdowns["status"]["5xx"].urim == 6


def test_route_ranks_an_archive_of_mostly_5xx_captures_lower(tmp_path):
    """Archive X holds ten captures of the host, eight of them 503; Y holds two, both 200. By
    counts X would come first; its captures being mostly 5xx put it after Y."""
    x = [cdx_line("ex", "page", "2015010100000%d" % i, "503" if i < 8 else "200", i) for i in range(10)]
    y = [cdx_line("ex", "page", "2016010100000%d" % i, "200", 50 + i) for i in range(2)]
    _, mx = profiled(tmp_path, "x", x)
    _, my = profiled(tmp_path, "y", y)
    archives = [Archive(mx), Archive(my)]
    found = answers.route(archives, "http://ex.com/page")
    order = [a["archive"] for a in found["archives"]]
    assert order == ["https://y.example.org/", "https://x.example.org/"], found
    worst = found["archives"][1]
    assert worst["share_5xx"] == 0.8 and worst["status"] == {"2xx": "2/1", "5xx": "8/1"}
    assert found["archives"][0]["score"] > worst["score"]
    # without the status block (a map of a profile with no status lines) the counts decide
    _, plain_x = profiled(tmp_path, "px", x, policy="hosts")
    _, plain_y = profiled(tmp_path, "py", y, policy="hosts")
    order = [a["archive"] for a in answers.route([Archive(plain_x), Archive(plain_y)], "http://ex.com/page")["archives"]]
    assert order == ["https://px.example.org/", "https://py.example.org/"]


def test_mime_classes_beside_the_types_stay_out_of_the_mime_block(tmp_path):
    """A policy of mime types and content classes at one level (facetredux's '*'): the class
    lines ('html', 'image') are not types, so the block keeps the types alone and adds up."""
    lines = list(synthetic.cdx_lines(1500, seed=3))
    profile, out = profiled(tmp_path, "fr", lines, policy="facetredux")
    assert validate(out).ok, validate(out).problems
    root = blocks(out)[b"*"]
    assert all(m == "unk" or ("/" in m and not m.endswith("/*")) for m in root["mime"]), sorted(root["mime"])
    captures = next(flatten(v) for k, v in iter_data(profile) if set(k.split(b" ")) == {b"*", b"-"})["urim.total"]
    assert sum(int(f.split("/")[0]) for f in root["mime"].values()) == captures


def test_a_key_of_status_codes_keeps_its_codes_beside_unk(tmp_path):
    """A policy whose TLD keys have status codes alone: with captures of no status ('unk', which
    fits the class level too) the TLD line's block kept 'unk' alone, its 5xx and every other code
    gone (/route read no 5xx there); it keeps the codes and adds up."""
    policy = tmp_path / "codes.yaml"
    policy.write_text("name: codes\nhost_depth: 1\nlevels: {datetime: [year], mime: [type], status: [class, code]}\n"
                      "emit: {root: {status: [any, class, code]}, tld: {status: [any, code]}, domain: none, "
                      "host: none, path: none}\n")
    lines = [cdx_line("h%d" % i, "p", "2013010100%04d" % i, ("200", "503", "-", "404")[i % 4], i) for i in range(40)]
    profile, out = profiled(tmp_path, "codes", lines, policy=str(policy))
    assert validate(out).ok, validate(out).problems
    tld = blocks(out)[b"com,*"]["status"]
    assert tld == {"200": "10/10", "404": "10/10", "503": "10/10", "unk": "10/10"}, tld
