"""lookup --lang: the most specific key that tells languages answers, in profiles with a lang key
field and in maps with lang breakdowns, checked against a brute-force reading of the file."""

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.cli.main import main
from profiler.errors import UserError
from profiler.toolkit.lookup import HELD, NOT_HELD, Lookup, canonical, language_query

from helpers.generated import map_of
from helpers.languages import (HOST_LANG, MIXED_LANG, NO_LANG, TLD_LANG, BruteProfile, brute_map_lookup, cc_index,
                               index_urls, lines_of, profile, read_map_lines)

#: a profile with a lang key field whose policy writes no language line
NONE_LISTED = dict(TLD_LANG, name="nonelisted", emit={"root": {"datetime": ["any", "year"]}, "tld": {},
                                                      "domain": {}, "host": {}})
LANGS = ["ara", "eng", "spa", "deu", "jpn", "zho", "unk", "tlh", "fra", "rus"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("lookup-lang")
    index = cc_index(d, 2500, seed=7)
    out = {"index": index, "urls": index_urls(index)}
    for policy in (TLD_LANG, HOST_LANG, MIXED_LANG, NO_LANG, NONE_LISTED):
        out[policy["name"]] = profile(d, [index], policy)
    out["map"] = map_of(out["lang"], d / "lang.ukvs")
    out["map2"] = map_of(out["hostlang"], d / "lang2.ukvs", ("surt", "datetime"))
    out["nomap"] = map_of(out["nolang"], d / "nolang.ukvs")
    return out


def queries(files, seed, n=300):
    """URLs of the index, siblings on their hosts, other hosts; with years and days."""
    rng = random.Random(seed)
    urls = files["urls"]
    out = []
    for _ in range(n):
        urlkey, url, ts = rng.choice(urls)
        kind = rng.random()
        q = url if kind < 0.5 else url.rstrip("/") + "/not-there.html" if kind < 0.8 else \
            "http://www.unheld-%d.%s/" % (rng.randrange(1000), rng.choice(["com", "ar", "de", "xyz"]))
        dt = rng.choice([None, None, ts[:4], ts[:8], str(rng.randrange(2015, 2027)), ts])
        out.append((q, dt, rng.choice(LANGS)))
    return out


@pytest.mark.parametrize("policy", ["lang", "hostlang", "mixedlang", "nonelisted"])
def test_profile_answers_equal_a_scan(files, policy):
    """Single and batch lookups with and without a language equal the brute-force reading."""
    path = files[policy]
    brute = BruteProfile(lines_of(path))
    qs = queries(files, len(policy))
    with Lookup(path) as index:
        for q, dt, lang in qs:
            a = index.lookup(q, dt, lang)
            got = (a.status, a.key.decode() if a.key else None,
                   (a.frequency.urim, a.frequency.urir) if a.frequency else None, a.date, a.value)
            assert got == brute.lookup(canonical(q), dt, lang), (q, dt, lang)
        for dt in (None, "2019", "20210315"):
            for lang in (None, "ara", "eng"):
                batch = [a for _, a in index.batch([q for q, _, _ in qs], dt, chunk=97, value=lang)]
                single = [index.lookup(q, dt, lang) for q, _, _ in qs]
                assert batch == single, (dt, lang)
    kinds = {(a[0], a[4] == lang) for a, lang in ((brute.lookup(canonical(q), dt, lang), lang) for q, dt, lang in qs)}
    if policy == "nonelisted":          # no key tells languages: answered as without, for any ('-')
        assert kinds == {(HELD, False), (NOT_HELD, False)}
    else:
        assert {(HELD, True), (NOT_HELD, True)} <= kinds


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_lookup_equals_a_scan(files, data):
    """Hypothesis: a URL of the index or a variant, any language code, datetime of 4 to 14 digits."""
    url = data.draw(st.sampled_from(files["urls"]))[1]
    url = data.draw(st.sampled_from([url, url + "x/y", url.replace("://", "://www2.")]))
    lang = data.draw(st.sampled_from(LANGS) | st.text("abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=3))
    dt = data.draw(st.none() | st.integers(2010, 2026).map(str) |
                   st.from_regex(r"20[12][0-9](0[1-9]|1[0-2])(0[1-9]|[12][0-9])", fullmatch=True))
    for policy in ("lang", "hostlang", "mixedlang"):
        with Lookup(files[policy]) as index:
            a = index.lookup(url, dt, lang)
        brute = BruteProfile(lines_of(files[policy]))
        got = (a.status, a.key.decode() if a.key else None,
               (a.frequency.urim, a.frequency.urir) if a.frequency else None, a.date, a.value)
        assert got == brute.lookup(canonical(url), dt, lang)


@pytest.mark.parametrize("name,nkeys", [("map", 1), ("map2", 2)])
def test_map_answers_equal_a_scan(files, name, nkeys):
    entries = read_map_lines(files[name])
    qs = queries(files, 3)
    langs = set()
    with Lookup(files[name]) as index:
        assert index.has_languages
        for q, dt, lang in qs:
            a = index.lookup(q, dt, lang)
            got = (a.status, a.key.decode() if a.key else None,
                   (a.frequency.urim, a.frequency.urir) if a.frequency else None, a.value)
            assert got == brute_map_lookup(entries, nkeys, canonical(q), dt, lang), (q, dt, lang)
            langs.add((a.status, a.value))
        batch = [a for _, a in index.batch([q for q, _, _ in qs], "2021", value="eng")]
        assert batch == [index.lookup(q, "2021", "eng") for q, _, _ in qs]
    assert (HELD, "eng") in langs or (HELD, "spa") in langs


def test_held_in_a_language_only_where_its_captures_are(files):
    """Every capture of the index is found held in its own primary language (no false negative)."""
    import orjson
    from profiler.model.language import primary_language
    captures = []
    with open(files["index"], "rb") as f:
        for line in f:
            urlkey, ts, block = line.split(b" ", 2)
            v = orjson.loads(block)
            captures.append((v["url"], ts.decode(), primary_language(v.get("languages") or "")))
    sample = random.Random(5).sample(captures, 300)
    for name in ("lang", "hostlang", "map", "map2"):
        with Lookup(files[name]) as index:
            for url, ts, lang in sample:
                if "revisit" in url:
                    continue
                a = index.lookup(url, ts[:4] if name != "map" else None, lang)
                assert a.status == HELD and a.value in (lang, "-"), (name, url, ts, lang, a)


def test_language_codes_and_files_without_languages(files):
    assert language_query("ar") == language_query("ar-EG") == language_query("ARA") == "ara"
    assert language_query("unk") == "unk" and language_query(None) is None
    with pytest.raises(UserError, match="not a language"):
        language_query("klingonese-or-not")
    for name in ("nolang", "nomap"):
        with Lookup(files[name]) as index:
            assert not index.has_languages
            with pytest.raises(UserError, match="lang"):
                index.lookup("http://example.com/", None, "ara")


def test_cli_lang_column_and_errors(files, capsys, monkeypatch):
    url = files["urls"][0][1]
    assert main(["lookup", files["lang"], url, "--lang", "ar"]) == 0
    out = capsys.readouterr().out.rstrip("\n").split("\t")
    assert len(out) == 7 and out[0] == url and out[6] in ("ara", "-")
    assert main(["lookup", files["lang"], url]) == 0
    assert len(capsys.readouterr().out.rstrip("\n").split("\t")) == 6
    import io
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(("%s\nnot a uri\n" % url).encode())))
    assert main(["lookup", files["map"], "--lang", "spa", "--datetime", "2020"]) == 0
    rows = [r.split("\t") for r in capsys.readouterr().out.splitlines()]
    assert [len(r) for r in rows] == [7, 7] and rows[1][1:] == ["invalid", "-", "-", "-", "-", "-"]
    for path in (files["nolang"], files["nomap"]):
        assert main(["lookup", path, url, "--lang", "ara"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "lang" in err and "Traceback" not in err
    assert main(["lookup", files["lang"], url, "--lang", "nonsense tag"]) == 2
    assert "not a language" in capsys.readouterr().err


def test_a_year_without_captures_holds_no_language(files):
    """A TLD listed by year (without languages) but not in some year between its first and last
    capture: asked for one of its languages in that year, not held (date 'period', or 'outside'
    the language's own first and last)."""
    lines = lines_of(files["mixedlang"])
    brute = BruteProfile(lines)
    checked = 0
    for (surt, by_language), years in brute.years.items():
        if by_language or not surt.endswith(",*") or surt.count(",") != 1:
            continue
        gaps = [str(y) for y in range(int(min(years)), int(max(years))) if str(y) not in years]
        langs = [k.split(" ")[4] for k in lines if k.startswith(surt + " - - - ") and not k.endswith(" -")]
        if not gaps or not langs:
            continue
        url = "http://www.zz-unheld.%s/" % ".".join(reversed(surt[:-2].split(",")))
        with Lookup(files["mixedlang"]) as index:
            for year in gaps:
                a = index.lookup(url, year + "0615", langs[0])
                assert (a.status, a.value) == (NOT_HELD, langs[0]) and a.date in ("period", "outside"), (url, year, a)
                assert (a.status, a.key.decode(), (a.frequency.urim, a.frequency.urir), a.date, a.value) == \
                    brute.lookup(canonical(url), year + "0615", langs[0])
                checked += a.date == "period"
    assert checked > 0
