"""merge, split, diff, overlap and compact on five-field profiles (keys with lang) and their maps:
the same results as on four-field ones, checked against profiles made from scratch; files whose
key fields differ merge on the fields they share (a five-field profile projected onto four)."""

import os
import zlib

import orjson
import pytest

from profiler.cli.main import main
from profiler.files.layout import LayoutError
from profiler.files.profilefile import FEATURES, flatten, iter_data, read_header
from profiler.files.ukvs import profile_to_map
from profiler.files.validate import validate
from profiler.toolkit.compact import compact_file
from profiler.toolkit.diff import DiffError, diff, overlap, overlap_summary
from profiler.toolkit.lookup import HELD, Lookup
from profiler.toolkit.merge import MergeError, merge
from profiler.toolkit.split import split

from helpers.languages import NO_LANG, TLD_LANG, cc_index, index_urls, profile, read_map_lines


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A CC index whole and cut in two by URI-R, profiled with and without languages."""
    d = tmp_path_factory.mktemp("lang-tools")
    whole = cc_index(d, 2500, seed=9, name="whole-index.cdxj")
    parts = [open(d / ("part%d-index.cdxj" % i), "wb") for i in range(2)]
    with open(whole, "rb") as f:
        for line in f:
            parts[zlib.crc32(line.split(b" ", 1)[0]) % 2].write(line)
    for p in parts:
        p.close()
    out = {"whole": profile(d, [whole], TLD_LANG, "whole"), "urls": index_urls(whole), "dir": d}
    for i in range(2):
        out["part%d" % i] = profile(d, [str(d / ("part%d-index.cdxj" % i))], TLD_LANG, "part%d" % i)
    out["nolang"] = profile(d, [whole], NO_LANG, "nolang")
    return out


def data(path):
    return {k.decode(): (flatten(v), v.get("bounds", {})) for k, v in iter_data(path)}


def test_merge_of_parts_by_urir_is_exact(corpus, tmp_path):
    out = str(tmp_path / "m.cdxj")
    merge([corpus["part0"], corpus["part1"]], out, ["urir"])
    assert validate(out).ok
    assert dict(read_header(out))["!keys"] == ["surt", "datetime", "mime", "status", "lang"]
    merged, truth = data(out), data(corpus["whole"])
    assert set(merged) == set(truth)
    assert any(k.endswith(" eng") for k in merged)
    for key, (flat, bounds) in merged.items():
        for name in FEATURES:
            if name in bounds:
                assert name in ("digests", "dedup_bytes")
                assert bounds[name][0] <= truth[key][0][name] <= bounds[name][1], (key, name)
            else:
                assert flat[name] == truth[key][0][name], (key, name)


def test_merge_without_declarations_stays_within_bounds(corpus, tmp_path):
    """Revisits resolved within each input: keys with a mime, status or language get bounds from
    their SURT and datetime's all-'-' line, and keys only such revisits give are added."""
    out = str(tmp_path / "m.cdxj")
    merge([corpus["part0"], corpus["part1"]], out)
    assert validate(out).ok
    merged, truth = data(out), data(corpus["whole"])
    assert set(truth) <= set(merged)
    bounded_lang = 0
    for key, (flat, bounds) in merged.items():
        if key not in truth:
            assert bounds["urim.total"][0] == 0
            continue
        for name in FEATURES:
            low, high = bounds.get(name, (flat[name], flat[name]))
            assert low <= truth[key][0][name] <= high, (key, name)
        bounded_lang += key.split(" ")[4] != "-" and "urim.total" in bounds
    assert bounded_lang > 0


def test_merge_projects_five_fields_onto_four(corpus, tmp_path, capsys):
    """A five-field profile merged with a four-field one: merged on the four (its lines with a
    language other than '-' left out, counted); a key both hold adds up."""
    out = tmp_path / "m.cdxj"
    summary = merge([corpus["whole"], corpus["nolang"]], str(out))
    with_lang = sum(1 for k in data(corpus["whole"]) if k.split(" ")[4] != "-")
    assert summary["projected"]["inputs"] == [(corpus["whole"], ["lang"], with_lang)]
    assert dict(read_header(str(out)))["!keys"] == ["surt", "datetime", "mime", "status"]
    merged, nolang = data(str(out)), data(corpus["nolang"])
    assert merged["* - - -"][0]["urim.total"] == 2 * nolang["* - - -"][0]["urim.total"]
    assert validate(str(out)).ok
    assert main(["merge", corpus["nolang"], corpus["whole"], "-o", str(out)]) == 0
    assert "%s: field(s) lang dropped, %d line(s)" % (corpus["whole"], with_lang) in capsys.readouterr().err


def test_maps_merge_their_language_breakdowns(corpus, tmp_path):
    maps = []
    for name in ("part0", "part1", "whole"):
        maps.append(str(tmp_path / (name + ".ukvs")))
        profile_to_map(corpus[name], maps[-1])
    out = str(tmp_path / "m.ukvs")
    merge(maps[:2], out, ["urir"])
    assert validate(out).ok
    merged, whole = read_map_lines(out), read_map_lines(maps[2])
    assert set(merged) == set(whole)
    for key, (freq, block) in whole.items():
        assert merged[key][0] == freq
        assert (merged[key][1] or {}).get("lang") == (block or {}).get("lang"), key
    nolang = str(tmp_path / "nolang.ukvs")
    profile_to_map(corpus["nolang"], nolang)
    with pytest.raises(MergeError, match="breaks its lines down by lang, .* by nothing"):
        merge([maps[0], nolang], str(tmp_path / "x.ukvs"))


def test_split_pages_round_trip_and_answer_languages(corpus, tmp_path):
    pages = split(corpus["whole"], 400, str(tmp_path / "p"))
    assert len(pages) > 2 and all(validate(p).ok for p in pages)
    lines = []
    for p in pages:
        lines += [line for line in open(p, "rb") if not line.startswith(b"!")]
    assert lines == [line for line in open(corpus["whole"], "rb") if not line.startswith(b"!")]
    url = corpus["urls"][100][1]
    with Lookup(str(tmp_path)) as paged, Lookup(corpus["whole"]) as whole:
        for lang in ("eng", "ara", "deu"):
            assert paged.lookup(url, "2021", lang) == whole.lookup(url, "2021", lang)
    merged = str(tmp_path / "back.cdxj")
    merge(pages, merged)
    assert [k for k, _ in iter_data(merged)] == [k for k, _ in iter_data(corpus["whole"])]


def test_diff_and_overlap_of_five_field_profiles(corpus):
    changes, summary = diff(corpus["part0"], corpus["whole"])
    changes = {k.decode(): c for k, c, _, _ in changes}
    a, b = data(corpus["part0"]), data(corpus["whole"])
    assert {k for k, c in changes.items() if c == "appeared"} == set(b) - set(a)
    assert all(c in ("grew", "changed") for k, c in changes.items() if k in a and k in b)
    assert any(k.endswith(" ara") for k in changes)
    pairs, levels = overlap(corpus["part0"], corpus["part1"], {"lang": "eng"})
    keys = [k.decode() for k, _, _, _ in pairs]
    assert keys and all(k.split(" ")[1:] == ["-", "-", "-", "eng"] for k in keys)
    expected = {k for k in set(a) | set(data(corpus["part1"])) if k.split(" ")[1:] == ["-", "-", "-", "eng"]}
    assert set(keys) == expected
    assert overlap_summary(levels)[0]["level"] == "root"


def test_diff_and_overlap_refuse_mixed_fields(corpus, capsys):
    for verb in ("diff", "overlap"):
        assert main([verb, corpus["whole"], corpus["nolang"]]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "has keys surt datetime mime status lang, " in err
    with pytest.raises(DiffError, match="no lang key field"):
        overlap(corpus["nolang"], corpus["nolang"], {"lang": "eng"})[0]


def test_compact_keeps_every_held_answer(corpus, tmp_path):
    out = str(tmp_path / "c.cdxj")
    lines_in = sum(1 for _ in open(corpus["whole"], "rb"))
    report = compact_file(corpus["whole"], out, max_lines=lines_in // 2)
    assert validate(out).ok and report.lines_out <= lines_in // 2
    with Lookup(out) as small:
        for _, url, _ in corpus["urls"][::7]:
            assert small.lookup(url).status == HELD
    m = str(tmp_path / "whole.ukvs")
    profile_to_map(corpus["whole"], m)
    out = str(tmp_path / "c.ukvs")
    compact_file(m, out, max_lines=60)
    assert validate(out).ok
    with Lookup(out) as small:
        for _, url, _ in corpus["urls"][::7]:
            assert small.lookup(url).status == HELD
            assert small.lookup(url, None, "eng").status in (HELD, "not-held")
