"""`merge` reads an archive profile of oduwsdl's archive_profiler (one JSON document per
archive), converting the keys whose meaning is exactly one of ours (profiler.files.oduprofile):
a one-label suburi key, a month, a media type in our normal form. A CDX is profiled here by a
brute-force computation of archive_profiler's algorithm (host_depth 3, path_depth 1) and by our
profiler: the converted lines equal ours; the other keys are skipped and counted exactly; a
hostile document is refused in one line; the merged output is served and looked up."""

import json
import os
import random
import subprocess
import sys
import urllib.parse

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.files import oduprofile
from profiler.files.datalines import DamagedFile
from profiler.files.profilefile import iter_data
from profiler.model import normalise
from profiler.run.profile import run_profile
from profiler.toolkit.merge import merge

from helpers.damage import one_line_error
from helpers.odu_documents import GOOD, HOSTILE, MESSAGES, doc_with, odu_stats, write_odu
from helpers.paths import ROOT, shared_data
from helpers.serving import Server

LEGEND = " CDX N b a m s k r M S V g"
HOSTS = ["com,example)", "com,example,www)", "com,example,news,eu)", "org,wiki,en)", "org,wiki)",
         "uk,co,bbc)", "uk,co,bbc,news)", "net,a,b,c,d)"]
PATHS = ["/", "/a", "/about", "/about/us", "/b/c?x=1", "/img.png"]
MIMES = ["text/html", "image/png", "application/pdf", "Text/HTML", "text/html; charset=utf-8", "unk", "-"]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)


def random_caps(rng, n, mimes=MIMES):
    """(SURT, 14-digit timestamp, raw mime) of n captures."""
    return [(rng.choice(HOSTS) + rng.choice(PATHS),
             "%04d%02d%02d120000" % (rng.randint(2012, 2014), rng.randint(1, 12), rng.randint(1, 28)),
             rng.choice(mimes)) for _ in range(n)]


def write_cdx(path, caps):
    """An 11-field CDX of the captures, sorted."""
    lines = []
    for i, (surt, ts, mime) in enumerate(caps):
        host, _, rest = surt.partition(")")
        url = "http://" + ".".join(reversed(host.split(","))) + rest
        lines.append("%s %s %s %s 200 SHA1%05d - - 100 %d a.warc.gz\n" % (surt, ts, url, mime.replace(" ", ""), i, i))
    with open(path, "w") as f:
        f.write(LEGEND + "\n" + "".join(sorted(lines)))
    return str(path)


def expected_skips(stats):
    """{kind: count} of the keys the conversion must skip, by the rules of the module's docstring."""
    out = {}

    def add(kind):
        out[kind] = out.get(kind, 0) + 1

    for key in stats["suburi"]:
        host, _, path = key.partition(")/")
        if path:
            add("path_prefix")
        elif "," in host:
            add("host_with_subdomains")
    normal = [normalise.mime(k.encode()) for k in stats["mediatype"]]
    for k, n in zip(stats["mediatype"], normal):
        if n != k or normal.count(n) > 1:
            add("mime_not_normal")
    return dict(sorted(out.items()))


def data(path):
    return {(key.decode() if isinstance(key, bytes) else key): value if isinstance(value, dict) else json.loads(value)
            for key, value in iter_data(path)}


def features(value):
    return (value["urim"]["total"], value["urim"]["min"], value["urim"]["max"], value["urir"])


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    d = tmp_path_factory.mktemp("odu")
    caps = random_caps(random.Random(7), 400)
    cdx = write_cdx(d / "a.cdx", caps)
    stats = odu_stats(caps)
    ours = str(d / "ours.cdxj")
    run_profile([cdx], ours, created="2026-01-01T00:00:00Z")
    return {"dir": d, "caps": caps, "cdx": cdx, "stats": stats, "odu": write_odu(d / "odu.json", stats),
            "ours": ours}


def converted_alone(odu, out):
    r = cli("merge", odu, "-o", out)
    assert r.returncode == 0, r.stderr
    return r


def test_converted_lines_equal_ours(archive):
    out = str(archive["dir"] / "converted.cdxj")
    converted_alone(archive["odu"], out)
    got, ours = data(out), data(archive["ours"])
    assert got, "nothing converted"
    kinds = set()
    for key, value in got.items():
        assert key + " -" in ours, key          # ours: surt datetime mime status
        assert features(value) == features(ours[key + " -"]), key
        surt, dt, mime = key.split(" ")
        kinds.add("tld" if surt.endswith(",*") else "month" if dt != "-" else "mime")
    assert kinds == {"tld", "month", "mime"}
    # every TLD, month and normal lone media type of the document is there
    stats = archive["stats"]
    assert {k for k in got if k.endswith(",* - -")} == {k[:-2] + ",* - -" for k in stats["suburi"]
                                                        if k.count(",") == 0 and k.endswith(")/")}
    assert {k.split()[1] for k in got if k.split()[1] != "-"} == set(stats["time"])
    assert {k.split()[2] for k in got if k.split()[2] != "-"} == {"image/png", "application/pdf"}


def test_a_real_index_converts_to_our_profile_of_its_http_captures(tmp_path):
    """archive_profiler's own sample index (Archive-It, 10 fields, dns: records among the lines):
    its algorithm on the file (HTTP(S) lines only, their URL key put through the surt library as
    cdx_profiler.py does), converted, equals our profile of its HTTP(S) lines."""
    from urllib.parse import urlparse
    from surt import surt
    index = shared_data("archive_profiler", "index-2.cdx")
    caps, http = [], []
    with open(index) as f:
        for n, line in enumerate(f):
            segs = line.strip().split(" ")
            if n == 0 or (len(segs) == 10 and urlparse(segs[2]).scheme.startswith("http")):
                http.append(line)
            if len(segs) == 10 and urlparse(segs[2]).scheme.startswith("http"):
                caps.append((surt(segs[0]), segs[1], segs[3]))
    assert len(caps) < sum(1 for _ in open(index)) - 1        # there are dns: records left out
    (tmp_path / "http.cdx").write_text("".join(http))
    ours = str(tmp_path / "ours.cdxj")
    run_profile([str(tmp_path / "http.cdx")], ours, created="2026-01-01T00:00:00Z")
    out = str(tmp_path / "real.cdxj")
    merge([write_odu(tmp_path / "real.json", odu_stats(caps, path_depth=0))], out)
    got, want = data(out), data(ours)
    assert len(got) >= 10 and {k.split()[1] for k in got} > {"-"}
    for key, value in got.items():
        assert features(value) == features(want[key + " -"]), key
    assert '"captures":"HTTP(S) captures only' in open(out).read()


def test_skipped_keys_are_counted_exactly(archive):
    out = str(archive["dir"] / "counted.cdxj")
    r = converted_alone(archive["odu"], out)
    want = expected_skips(archive["stats"])
    assert want.get("path_prefix") and want.get("host_with_subdomains") and want.get("mime_not_normal")
    header = open(out, "rb").read().split(b"\n")
    meta = [json.loads(line[6:]) for line in header if line.startswith(b"!meta ")]
    converted = next(m["merge"]["converted_inputs"] for m in meta if "merge" in m)
    assert list(converted.values())[0]["skipped"] == want
    total = sum(len(archive["stats"][k]) for k in ("suburi", "time", "mediatype"))
    assert list(converted.values())[0]["keys"] == total - sum(want.values()) == len(data(out))
    notes = [line for line in r.stderr.splitlines() if "skipped (converted" in line]
    assert len(notes) == len(want)
    for kind, n in want.items():
        assert any(("%d %s" % (n, oduprofile.SKIPPED[kind])) in line for line in notes), (kind, notes)
    assert not [p for p in os.listdir(archive["dir"]) if p.startswith(oduprofile.PREFIX)]


def test_revisits_leave_out_the_media_types(tmp_path):
    caps = random_caps(random.Random(3), 60, ["text/html", "image/png", "warc/revisit"])
    stats = odu_stats(caps)
    odu = write_odu(tmp_path / "r.json", stats)
    out = str(tmp_path / "r.cdxj")
    converted_alone(odu, out)
    assert not [k for k in data(out) if k.split()[2] != "-"]
    meta = open(out).read()
    assert '"mime_revisits":%d' % len(stats["mediatype"]) in meta


def test_merged_documents_are_served_and_looked_up(archive, tmp_path):
    """Two archives' documents merged (the usual rules: urim.total adds up, urir gets bounds),
    then served by a real `serve` and asked over HTTP."""
    other = odu_stats(random_caps(random.Random(11), 150))
    second = write_odu(tmp_path / "b.json", other)
    out = str(tmp_path / "merged.cdxj")
    r = cli("merge", archive["odu"], second, "-o", out)
    assert r.returncode == 0, r.stderr
    merged = data(out)
    com = archive["stats"]["suburi"]["com)/"]["urim"]["total"] + other["suburi"]["com)/"]["urim"]["total"]
    assert merged["com,* - -"]["urim"]["total"] == com
    assert "bounds" in merged["com,* - -"]          # not declared disjoint: urir within bounds
    assert cli("query", out, "--surt", "com,*").returncode == 0
    looked = cli("lookup", out, "http://example.com/")
    assert looked.returncode == 0 and "com,* - -" in looked.stdout and "\t%d/" % com in looked.stdout
    server = Server([out])
    try:
        status, body = server.get("/lookup?" + urllib.parse.urlencode({"url": "http://www.example.com/x"}))
        assert status == 200, body
        answer = body["archives"][0]
        assert (answer["answer"], answer["key"]) == ("held", "com,* - -")
        assert str(answer["frequency"]).startswith("%d/" % com) or answer["frequency"] == com, answer
    finally:
        server.stop()


def test_the_document_is_never_replaced(archive, tmp_path):
    path = tmp_path / "same.json"
    path.write_bytes(open(archive["odu"], "rb").read())
    link = tmp_path / "link.cdxj"
    os.symlink(str(path), str(link))
    for out in (path, link):
        r = cli("merge", str(path), "-o", str(out))
        assert one_line_error(r.returncode, r.stderr, "is the input"), r.stderr
    assert path.read_bytes() == open(archive["odu"], "rb").read()


def test_merged_with_our_profile_adds_up_on_the_common_fields(archive, tmp_path):
    """Our profile (4 key fields) is projected onto the document's 3 (test_odu_merge has the
    oracle): a key both hold adds up (here the same captures twice, as merge assumes different
    ones)."""
    out = str(tmp_path / "x.cdxj")
    r = cli("merge", archive["odu"], archive["ours"], "-o", out)
    assert r.returncode == 0, r.stderr
    merged, ours = data(out), data(archive["ours"])
    assert merged["com,* - -"]["urim"]["total"] == 2 * ours["com,* - - -"]["urim"]["total"]


@pytest.mark.parametrize("name", ["lookup", "query", "validate", "diff", "ukvs", "export", "split", "report",
                                  "overlap", "compact", "explore"])
def test_other_commands_refuse_it_naming_the_conversion(archive, tmp_path, name):
    odu = archive["odu"]
    argv = {"lookup": ["lookup", odu, "http://example.com/"], "query": ["query", odu], "validate": ["validate", odu],
            "diff": ["diff", archive["ours"], odu], "ukvs": ["ukvs", odu, "-o", str(tmp_path / "m.ukvs")],
            "export": ["export", odu, "-o", str(tmp_path / "e.jsonld")],
            "split": ["split", odu, "--max-lines", "5", "-o", str(tmp_path / "s")],
            "report": ["report", odu, "-o", str(tmp_path / "r.html")], "overlap": ["overlap", odu, archive["ours"]],
            "compact": ["compact", odu, "--max-lines", "5", "-o", str(tmp_path / "c")],
            "explore": ["explore", odu, "--port", "0"]}[name]
    r = cli(*argv)
    assert one_line_error(r.returncode, r.stderr, "oduwsdl archive_profiler", "archive-profiler merge %s -o " % odu,
                          "odu.cdxj"), r.stderr


def test_serve_refuses_it_naming_the_conversion(archive):
    r = cli("serve", archive["odu"], "--port", "0")
    assert one_line_error(r.returncode, r.stderr, "archive-profiler merge"), r.stderr


# ---------------------------------------------------------------- hostile documents

@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_document_is_refused_in_one_line(tmp_path, name):
    path = tmp_path / "h.json"
    path.write_bytes(HOSTILE[name]().encode("utf-8", "surrogateescape"))
    r = cli("merge", str(path), "-o", str(tmp_path / "out.cdxj"))
    assert one_line_error(r.returncode, r.stderr, MESSAGES.get(name, "h.json")), r.stderr
    assert "Traceback" not in r.stderr and not os.path.exists(tmp_path / "out.cdxj")
    assert not [p for p in os.listdir(tmp_path) if p.startswith(oduprofile.PREFIX)]


def test_a_damaged_value_is_skipped_and_counted_when_asked(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(doc_with(time={"201401": {"urim": {"total": -1, "min": 1, "max": 2}, "urir": 2},
                                              "201402": GOOD})))
    out = str(tmp_path / "out.cdxj")
    r = cli("merge", str(path), "-o", out, "--skip-bad-lines")
    assert r.returncode == 0, r.stderr
    assert set(data(out)) == {"* 201402 -", "com,* - -"}
    assert "1 damaged values" in r.stderr and '"damaged":1' in open(out).read()


def test_a_document_past_the_size_bound_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc_with(), indent=4))
    monkeypatch.setattr(oduprofile, "MAX_BYTES", 64)
    with pytest.raises(DamagedFile, match="larger than"):
        merge([str(path)], str(tmp_path / "out.cdxj"))
    assert not os.path.exists(tmp_path / "out.cdxj")
    monkeypatch.undo()
    with open(path, "r+b") as f:                # sparse: past the real bound, read no further than its size
        f.truncate(oduprofile.MAX_BYTES + 1)
    r = cli("merge", str(path), "-o", str(tmp_path / "out.cdxj"))
    assert one_line_error(r.returncode, r.stderr, "larger than 256 MiB is not read"), r.stderr


# ---------------------------------------------------------------- random archives

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 40))
def test_conversion_equals_the_oracle_of_our_keys(tmp_path_factory, seed, n):
    """On random small archives the converted lines are the counts of our keys, computed by brute
    force from the captures (a TLD: SURTs starting with it; a month; a normal media type)."""
    caps = random_caps(random.Random(seed), n)
    stats = odu_stats(caps)
    d = tmp_path_factory.mktemp("h")
    out = str(d / "out.cdxj")
    merge([write_odu(d / "x.json", stats)], out)
    got = data(out)
    want = {}
    tlds, months = {c[0].split(",")[0] for c in caps}, {c[1][:6] for c in caps}
    for key, test in [("%s,* - -" % t, lambda c, t=t: c[0].startswith(t + ",")) for t in tlds] \
            + [("* %s -" % m, lambda c, m=m: c[1][:6] == m) for m in months]:
        per = {}
        for c in caps:
            if test(c):
                per[c[0]] = per.get(c[0], 0) + 1
        want[key] = (sum(per.values()), min(per.values()), max(per.values()), len(per))
    normal = [normalise.mime(c[2].replace(" ", "").encode()) for c in caps]
    raw_of = {}
    for c, m in zip(caps, normal):
        raw_of.setdefault(m, set()).add(c[2].replace(" ", ""))
    for m, raws in raw_of.items():
        if raws == {m}:
            per = {}
            for c, x in zip(caps, normal):
                if x == m:
                    per[c[0]] = per.get(c[0], 0) + 1
            want["* - %s" % m] = (sum(per.values()), min(per.values()), max(per.values()), len(per))
    assert {k: features(v) for k, v in got.items()} == want


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=8))
def test_keys_of_any_text_convert_to_a_valid_profile_or_are_skipped(tmp_path_factory, keys):
    """A key of any text (spaces, newlines, ')', lone surrogates) in every section: the output is
    a valid profile, every key converted or counted."""
    d = tmp_path_factory.mktemp("k")
    sections = {name: {k: GOOD for k in keys} for name in ("suburi", "time", "mediatype", "language")}
    path = d / "k.json"
    path.write_bytes(json.dumps(doc_with(**sections)).encode("utf-8"))
    out = str(d / "k.cdxj")
    summary = merge([str(path)], out)
    from profiler.files.validate import validate
    report = validate(out)
    assert report.ok, report.problems
    skipped = sum(dict(summary["converted"])[str(path)].values())
    assert len(data(out)) + skipped == 4 * len(set(keys))


def test_a_killed_merge_s_conversions_are_removed_by_the_next_one(tmp_path):
    """The converted copy a merge killed with SIGKILL left beside its output stayed for ever; the
    next merge that converts there removes it when provably ours, and nothing else."""
    from profiler.files import outfiles
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / ("%s%d-%s.0123abcd.cdxj" % (oduprofile.PREFIX, dead.pid, outfiles._HOST))
    live = tmp_path / ("%s%d-%s.0123abcd.cdxj" % (oduprofile.PREFIX, os.getpid(), outfiles._HOST))
    for p in (stale, live):
        p.write_bytes(b"x\n")
    doc = tmp_path / "odu.json"
    doc.write_text(json.dumps(doc_with()))
    r = cli("merge", str(doc), "-o", str(tmp_path / "m.cdxj"), "-q")
    assert r.returncode == 0, r.stderr
    assert not stale.exists() and live.exists()
