"""`merge` of an archive_profiler document (converted: keys ``surt datetime mime``) with our profiles
of 4 or 5 key fields: the profile is projected onto the document's fields (its lines whose status
and lang are '-'), and a key one input has no line for is counted as none (a complete profile
whose policy writes it) or bounded (the document's coarser lines: TLD, month, media type, total).

The oracle: a generated CDX cut at a random place into two parts, one part made into a document
by archive_profiler's algorithm (test_odu_profiles.odu_stats), the other profiled by a real
`archive-profiler profile -r inline`; the merge is compared with our profile of the whole CDX
projected onto the same fields: every value equal where exact, inside its bounds otherwise."""

import json
import os
import random
import subprocess
import sys
from urllib.parse import urlparse

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.files.profilefile import flatten, iter_data, read_header
from profiler.model.policy import load
from profiler.run.profile import run_profile
from profiler.testing.synthetic import write_cdx as synthetic_cdx
from profiler.toolkit.merge import UNKNOWN_KEYS, Absence, common_layout
from profiler.model.emitted import not_emitted
from profiler.files import layout as layouts

from helpers.damage import one_line_error
from helpers.odu_documents import HOSTILE, MESSAGES, odu_stats, write_odu
from helpers.paths import ROOT
COUNTS = ("urim.total", "urim.min", "urim.max", "urir")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)


def data(path):
    return {key.decode(): value if isinstance(value, dict) else json.loads(value) for key, value in iter_data(path)}


def cut_archive(folder, seed, n, cut_at, doc_first, at_boundary=False):
    """(whole CDX, the document's CDX lines, our part's CDX, whether the parts hold disjoint URI-Rs):
    a generated archive's HTTP(S) lines cut in two at cut_at (moved to a URI-R's first line when
    at_boundary)."""
    whole = folder / "whole.cdx"
    synthetic_cdx(str(whole), n, seed=seed)
    lines = whole.read_text().splitlines(True)
    head = lines[0]
    body = [x for x in lines[1:] if urlparse(x.split(" ")[2]).scheme in ("http", "https")]
    whole.write_text(head + "".join(body))
    cut = 1 + cut_at % (len(body) - 1)
    if at_boundary:                     # between two URI-Rs (the first's line, else the last's)
        urir = [x.split(" ")[0] for x in body]
        later = [i for i in range(cut, len(body)) if urir[i] != urir[i - 1]]
        earlier = [i for i in range(1, cut) if urir[i] != urir[i - 1]]
        cut = (later or earlier[-1:] or [cut])[0]
        at_boundary = urir[cut] != urir[cut - 1]
    parts = (body[:cut], body[cut:]) if doc_first else (body[cut:], body[:cut])
    ours = folder / "ours.cdx"
    ours.write_text(head + "".join(parts[1]))
    return str(whole), parts[0], str(ours), at_boundary


def document_of(folder, lines):
    caps = [(x.split(" ")[0], x.split(" ")[1], x.split(" ")[3]) for x in lines]
    return write_odu(folder / "part.json", odu_stats(caps))


def projected(path, fields=3):
    """A profile's lines whose fields past the first ``fields`` are '-', keyed by those."""
    out = {}
    for key, value in data(path).items():
        parts = key.split(" ")
        if all(p == "-" for p in parts[fields:]):
            out[" ".join(parts[:fields])] = flatten(value)
    return out


class Truth:
    """The counts of a key over the whole archive, from our profiles of it (one per policy): a
    line's, or none where the policy writes such keys; None when no profile tells."""

    def __init__(self, whole, folder, policies):
        self.profiles = []
        for name in policies:
            path = str(folder / ("whole-%s.cdxj" % name))
            run_profile([whole], path, policy=name, created="2026-01-01T00:00:00Z")
            policy = load(name)
            self.profiles.append((projected(path), policy, layouts.of_file(path)))

    def __call__(self, key):
        fields = key.split(" ")
        for lines, policy, layout in self.profiles:
            if key in lines:
                return lines[key]
            full = fields + ["-"] * (len(layout.names) - 2)
            if not_emitted(policy, full, layout) is None:
                return {n: 0 for n in COUNTS}
        return None


def check_against_truth(merged, truth, doc_keys, exact_mimes=False, ours_writes=lambda key: True):
    """Every merged value exact or bounded around the truth; the keys the document holds exact in
    urim.total (those with a media type too when ``exact_mimes``) where our policy writes such
    keys (else at least the document's count)."""
    checked = 0
    for key, value in merged.items():
        want = truth(key)
        if want is None:
            continue
        flat, bounds = flatten(value), value.get("bounds") or {}
        for name, got in flat.items():
            if name not in want or (want["urim.total"] == 0 and name not in ("urim.total", "urir")):
                continue
            if name in bounds:
                low, high = bounds[name]
                assert low <= want[name] <= high, (key, name, want[name], bounds[name])
            else:
                assert got == want[name], (key, name, got, want[name])
            checked += 1
        if key in doc_keys and not ours_writes(key):
            assert flat["urim.total"] >= doc_keys[key]["urim"]["total"], (key, value)
        elif key in doc_keys and (exact_mimes or key.split(" ")[2] == "-"):
            assert "urim.total" not in bounds and flat["urim.total"] == want["urim.total"], (key, value)
    return checked


def converted_keys(folder, doc):
    out = str(folder / "doc-alone.cdxj")
    assert cli("merge", doc, "-o", out).returncode == 0
    return data(out)


def merge_and_check(folder, seed, n, cut_at, doc_first, at_boundary, policy="default"):
    whole, doc_lines, ours_cdx, at_boundary = cut_archive(folder, seed, n, cut_at, doc_first, at_boundary)
    doc = document_of(folder, doc_lines)
    ours = str(folder / "ours.cdxj")
    r = cli("profile", ours_cdx, "-o", ours, "-r", "inline", "--policy", policy)
    assert r.returncode == 0, r.stderr
    out = str(folder / "merged.cdxj")
    r = cli("merge", doc, ours, "-o", out, *(["--disjoint", "urir"] if at_boundary else []))
    assert r.returncode == 0, r.stderr
    merged = data(out)
    truth = Truth(whole, folder, [policy] + (["default"] if policy != "default" else []))
    doc_keys = converted_keys(folder, doc)
    ours_policy, ours_layout = load(policy), layouts.of_file(ours)

    def ours_writes(key):
        return not_emitted(ours_policy, key.split(" ") + ["-"] * (len(ours_layout.names) - 2), ours_layout) is None
    assert check_against_truth(merged, truth, doc_keys, exact_mimes=at_boundary, ours_writes=ours_writes)
    # the whole archive's total: exact (the document's months add up to its part)
    assert "bounds" not in merged["* - -"] or "urim.total" not in merged["* - -"]["bounds"]
    assert merged["* - -"]["urim"]["total"] == truth("* - -")["urim.total"]
    return r, out, merged, doc_keys


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6), n=st.integers(20, 150), cut_at=st.integers(0, 10 ** 6), doc_first=st.booleans(),
       at_boundary=st.booleans())
def test_a_document_and_our_profile_merge_exact_or_bounded(tmp_path_factory, seed, n, cut_at, doc_first, at_boundary):
    merge_and_check(tmp_path_factory.mktemp("m"), seed, n, cut_at, doc_first, at_boundary)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6), n=st.integers(2, 400), cut_at=st.integers(0, 10 ** 6), doc_first=st.booleans(),
       at_boundary=st.booleans(), policy=st.sampled_from(["default", "lang", "full"]))
def test_many_documents_and_profiles_merge_exact_or_bounded(tmp_path_factory, seed, n, cut_at, doc_first,
                                                            at_boundary, policy):
    merge_and_check(tmp_path_factory.mktemp("m"), seed, n, cut_at, doc_first, at_boundary, policy)


@pytest.fixture(scope="module")
def merged_default(tmp_path_factory):
    folder = tmp_path_factory.mktemp("d")
    r, out, merged, doc_keys = merge_and_check(folder, 5, 200, 77, True, False)
    return {"folder": folder, "stderr": r.stderr, "out": out, "merged": merged, "doc_keys": doc_keys,
            "ours": str(folder / "ours.cdxj"), "doc": str(folder / "part.json")}


def test_the_merged_meta_and_summary_say_what_was_projected(merged_default):
    text = open(merged_default["out"]).read()
    header = [json.loads(x[6:]) for x in text.splitlines() if x.startswith("!meta ")]
    merge = next(m["merge"] for m in header if "merge" in m)
    ours = os.path.abspath(merged_default["ours"])
    with_status = sum(1 for k in data(merged_default["ours"]) if k.split(" ")[3] != "-")
    assert merge["projected"] == {ours: {"dropped_fields": ["status"], "lines_left_out": with_status}}
    assert merge["unknown_keys"] == UNKNOWN_KEYS
    converted = merge["converted_inputs"][os.path.abspath(merged_default["doc"])]
    assert converted["captures"].startswith("HTTP(S) captures only")
    assert text.splitlines()[2] == '!keys ["surt","datetime","mime"]'
    notes = [x for x in merged_default["stderr"].splitlines() if "different key fields" in x]
    assert len(notes) == 1 and "status dropped, %d line(s)" % with_status in notes[0], merged_default["stderr"]
    from profiler.files.validate import validate
    report = validate(merged_default["out"])
    assert report.ok, report.problems


def test_keys_the_document_lacks_are_bounded_not_zero(merged_default):
    """A host our part holds: the document's archive may hold captures there too, up to its TLD's."""
    merged = merged_default["merged"]
    hosts = [k for k, v in merged.items() if ")/" in k and k.endswith(" - -")]
    assert hosts
    bounded = 0
    for key in hosts:
        bounds = merged[key].get("bounds", {})
        tld = merged_default["doc_keys"].get(key.split(",")[0] + ",* - -")
        if tld is None:                 # the document's TLDs add up to its total: none there
            assert "bounds" not in merged[key] and "bytes" in merged[key], key
            continue
        assert bounds["urim.total"][0] == merged[key]["urim"]["total"] < bounds["urim.total"][1]
        assert bounds["urim.total"][1] <= merged[key]["urim"]["total"] + tld["urim"]["total"]
        assert "bytes" not in merged[key] and "first" not in merged[key]
        bounded += 1
    assert bounded


def test_lookup_and_query_answer_with_the_bounds(merged_default):
    merged = merged_default["merged"]
    key = next(k for k, v in merged.items() if k.endswith(")/* - -") and "bounds" in v)
    surt = key.split(" ")[0]
    r = cli("query", merged_default["out"], "--surt", surt)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith(key + " "))
    assert json.loads(line[len(key) + 1:])["bounds"]["urim.total"] == merged[key]["bounds"]["urim.total"]
    host = surt[:-len(")/*")].split(",")
    url = "http://%s/" % ".".join(reversed(host))
    r = cli("lookup", merged_default["out"], url)
    assert r.returncode == 0, r.stderr
    freq = r.stdout.split("\t")[3]
    assert freq.startswith("%d+/" % merged[key]["urim"]["total"]), r.stdout   # at least that many


def test_absence_in_our_profile_is_zero_only_when_complete(merged_default):
    """Our complete default profile lacks a month: none of its captures there; compacted, a page,
    or lines skipped: unknown."""
    ours = merged_default["ours"]
    headers = read_header(ours)
    layout = layouts.of_file(ours)
    common = common_layout(["a", "b"], [layout, layouts.parse(["surt", "datetime", "mime"], "x")])
    complete = Absence(common, {}, headers, layout)
    assert complete.zero(("*", "199901", "-")) and complete.zero(("xx,*", "-", "-"))
    assert complete.zero(("*", "-", "text/html"))
    for meta in ({"compacted": {"generator": "x"}}, {"page": {"number": 1}}):
        assert not Absence(common, {}, headers + [("!meta", meta)], layout).zero(("*", "199901", "-"))
    assert not Absence(common, {}, headers, layout, damaged=True).zero(("*", "199901", "-"))
    lang = Absence(common, {}, [("!meta", {"policy": load("lang").to_dict()})], layouts.parse(
        ["surt", "datetime", "mime", "status", "lang"], "x"))
    assert not lang.zero(("*", "199901", "-"))          # the lang policy writes years only
    assert lang.zero(("*", "1999", "-"))


def test_a_five_field_profile_merges_the_same(tmp_path):
    r, out, merged, doc_keys = merge_and_check(tmp_path, 11, 150, 40, False, False, policy="lang")
    months = [k for k in doc_keys if k.split(" ")[1] != "-"]
    assert months
    for key in months:      # the lang policy writes no months: our share of each is unknown
        value = merged[key]
        assert key in merged and (value.get("bounds", {}).get("urim.total", [0, 0])[1] > value["urim"]["total"]
                                  or merged["* " + key.split(" ")[1][:4] + " -"]["urim"]["total"] == 0), value
    assert "status lang dropped" in r.stderr


def test_fields_that_do_not_nest_are_refused_in_one_line(merged_default, tmp_path):
    other = tmp_path / "status.cdxj"
    other.write_text('!keys ["surt","datetime","status"]\n* - - {"urim":{"total":3,"min":1,"max":2},"urir":2}\n')
    out = tmp_path / "x.cdxj"
    r = cli("merge", merged_default["doc"], str(other), "-o", str(out))
    assert one_line_error(r.returncode, r.stderr, "cannot merge", "part.json has keys surt datetime mime,",
                          "status.cdxj has surt datetime status", "key fields include those"), r.stderr
    assert not out.exists()


@pytest.mark.parametrize("name", ["cut", "negative", "wrong shape", "deep nesting", "not utf-8"])
def test_a_hostile_document_with_our_profile_is_refused_in_one_line(merged_default, tmp_path, name):
    path = tmp_path / "h.json"
    path.write_bytes(HOSTILE[name]().encode("utf-8", "surrogateescape"))
    out = tmp_path / "out.cdxj"
    r = cli("merge", str(path), merged_default["ours"], "-o", str(out))
    assert one_line_error(r.returncode, r.stderr, MESSAGES.get(name, "h.json")), r.stderr
    assert not out.exists() and not [p for p in os.listdir(tmp_path) if p.startswith(".archive-profiler")]


def test_a_key_nothing_bounds_is_refused_and_nothing_written(merged_default, tmp_path):
    """A document whose values were damaged (skipped) has no total: a key of ours under a TLD it
    does not hold has nothing to bound the document's share by."""
    doc = {"@id": "x", "stats": {"suburi": {"zz)/": {"urim": {"total": 1, "min": 1, "max": 1}, "urir": 1}},
                                 "time": {"201401": {"urim": {"total": -1, "min": 1, "max": 1}, "urir": 1}},
                                 "mediatype": {}, "language": {}}}
    path = tmp_path / "d.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "out.cdxj"
    r = cli("merge", str(path), merged_default["ours"], "-o", str(out), "--skip-bad-lines")
    assert one_line_error(r.returncode, r.stderr, "d.json has no line for", "nor for a coarser key"), r.stderr
    assert not out.exists()


def test_random_keys_of_a_document_stay_within_bounds(tmp_path):
    """Keys the document holds that our part lacks: copied exact (our complete profile has none
    there); keys only ours holds: bounded by the document's months, TLDs and total."""
    rng = random.Random(3)
    whole, doc_lines, ours_cdx, _ = cut_archive(tmp_path, 9, 120, rng.randrange(10 ** 6), True)
    doc = document_of(tmp_path, doc_lines)
    ours = str(tmp_path / "ours.cdxj")
    run_profile([ours_cdx], ours, created="2026-01-01T00:00:00Z")
    from profiler.toolkit.merge import merge
    summary = merge([doc, ours], str(tmp_path / "m.cdxj"))
    assert summary["projected"]["inputs"][0][1] == ["status"] and summary["projected"]["unknown"] > 0
    merged = data(str(tmp_path / "m.cdxj"))
    ours_keys = set(projected(ours))
    only_doc = [k for k in converted_keys(tmp_path, doc) if k not in ours_keys]
    for key in only_doc:
        assert "bounds" not in merged[key], key


def test_a_page_of_our_profile_lacks_keys_unknown_not_zero(tmp_path):
    """A page of our profile (split) lacks most keys: the document's keys it lacks are bounded by
    the page's root lines, and every value stays exact or within bounds of the truth."""
    whole, doc_lines, ours_cdx, _ = cut_archive(tmp_path, 21, 150, 60, True)
    doc = document_of(tmp_path, doc_lines)
    ours = str(tmp_path / "ours.cdxj")
    run_profile([ours_cdx], ours, created="2026-01-01T00:00:00Z")
    r = cli("split", ours, "--max-lines", "60", "-o", str(tmp_path / "page"))
    assert r.returncode == 0, r.stderr
    page = str(tmp_path / "page-00001.cdxj")
    out = str(tmp_path / "merged.cdxj")
    r = cli("merge", doc, page, "-o", out)
    assert r.returncode == 0, r.stderr
    merged, doc_keys = data(out), converted_keys(tmp_path, doc)
    on_page = set(projected(page))
    lacking = [k for k in doc_keys if k not in on_page]
    assert lacking
    for key in lacking:
        bounds = merged[key]["bounds"]["urim.total"]
        assert bounds[0] == doc_keys[key]["urim"]["total"] < bounds[1], key
    assert check_against_truth(merged, Truth(whole, tmp_path, ["default"]), doc_keys,
                               ours_writes=lambda key: key in on_page)


def test_a_key_without_a_merged_line_is_answered_with_bounds_that_hold(merged_default):
    """A key of the whole archive the merge has no line for (the document's part holds it, at a
    level the document does not count): query answers with bounds that contain the truth, never
    'none held'; a grouping that finds no line says that keys without one may hold captures."""
    from profiler.toolkit.query import query
    folder = merged_default["folder"]
    whole = str(folder / "whole-for-absent.cdxj")
    run_profile([str(folder / "whole.cdx")], whole, created="2026-01-01T00:00:00Z")
    truth = projected(whole)
    merged = merged_default["merged"]
    missing = [k for k, v in truth.items() if k not in merged and v["urim.total"] > 0]
    assert missing
    for key in missing[:40]:
        found, note, _ = query(merged_default["out"], dict(zip(("surt", "datetime", "mime"), key.split(" "))))
        assert found and "unknown_keys" in note, (key, note)
        bounds = found[0][1]["bounds"]
        for name in ("urim.total", "urir"):
            assert bounds[name][0] <= truth[key][name] <= bounds[name][1], (key, name, bounds, truth[key])
        assert "bytes" not in found[0][1] or "bytes" in bounds
    surts = {k.split(" ")[0] for k in merged}
    lonely = next((k.split(" ")[0] for k in missing if k.split(" ")[0] not in surts), None)
    if lonely is not None:
        r = cli("query", merged_default["out"], "--surt", lonely, "--group", "datetime")
        assert r.returncode == 1 and r.stdout == "" and "may hold captures" in r.stderr, r
