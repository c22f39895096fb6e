"""query on profiles whose keys have lang: --lang, --group lang, --datetime at the day level,
checked against a scan of the file; four-field profiles refuse what they cannot answer."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.cli.main import main
from profiler.files.profilefile import flatten
from profiler.toolkit.query import QueryError, query

from helpers.languages import HOST_LANG, NO_LANG, TLD_LANG, cc_index, lines_of, profile


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("query-lang")
    index = cc_index(d, 2000, seed=4)
    out = {p["name"]: profile(d, [index], p) for p in (TLD_LANG, HOST_LANG, NO_LANG)}
    out["lines"] = {name: lines_of(out[name]) for name in ("lang", "hostlang")}
    return out


def scan(lines, test):
    return [(k, flatten(v)) for k, v in lines.items() if test(k.split(" "))]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_fixed_key_equals_a_scan(files, data):
    """A key drawn from the file's fields (or made up) is answered by its line, or by nothing."""
    name = data.draw(st.sampled_from(["lang", "hostlang"]))
    lines = files["lines"][name]
    fields = [data.draw(st.sampled_from(sorted({k.split(" ")[i] for k in lines}))) for i in range(5)]
    if data.draw(st.booleans()):
        fields[4] = data.draw(st.sampled_from(["ara", "eng", "tlh", "unk", "-"]))
    fixed = dict(zip(["surt", "datetime", "mime", "status", "lang"], fields))
    try:
        found, note, _ = query(files[name], fixed)
    except QueryError as e:                     # the policy never writes such a key
        assert " ".join(fields) not in lines and "does not emit" in str(e)
        return
    assert found == scan(lines, lambda f: f == fields)
    assert (note is None) == bool(found)


@pytest.mark.parametrize("name", ["lang", "hostlang"])
def test_group_by_language_and_rankings(files, name):
    lines, path = files["lines"][name], files[name]
    found, _, _ = query(path, {}, group=["lang"])
    assert found == scan(lines, lambda f: f[0] == "*" and f[1:4] == ["-"] * 3 and f[4] != "-")
    assert len(found) > 5 and sum(v["urim.total"] for _, v in found) == flatten(lines["* - - - -"])["urim.total"]
    found, _, _ = query(path, {"surt": "com,*", "datetime": "2021"}, group=["lang"], top=3, by="urir")
    expected = scan(lines, lambda f: f[:4] == ["com,*", "2021", "-", "-"] and f[4] != "-")
    assert found == sorted(expected, key=lambda kv: -kv[1]["urir"])[:3]
    found, _, _ = query(path, {"lang": "spa"}, level="tld")
    assert found == scan(lines, lambda f: f[0].endswith(",*") and f[0].count(",") == 1
                         and f[1:] == ["-", "-", "-", "spa"]) and found
    found, _, _ = query(path, {"lang": "deu"}, group=["datetime"])
    assert found == scan(lines, lambda f: f[0] == "*" and f[1] != "-" and f[2:] == ["-", "-", "deu"])


def test_day_level(files):
    lines, path = files["lines"]["hostlang"], files["hostlang"]
    day = next(k.split(" ")[1] for k in lines if len(k.split(" ")[1]) == 8)
    found, note, _ = query(path, {"datetime": day})
    assert found == scan(lines, lambda f: f == ["*", day, "-", "-", "-"]) and found and note is None
    found, _, _ = query(path, {"datetime": day}, group=["lang"])
    assert found == scan(lines, lambda f: f[:4] == ["*", day, "-", "-"] and f[4] != "-") and found


def test_what_a_profile_cannot_answer(files, capsys):
    with pytest.raises(QueryError, match="has no lang key field"):
        query(files["nolang"], {"lang": "ara"})
    with pytest.raises(QueryError, match="has no lang key field"):
        query(files["nolang"], {}, group=["lang"])
    with pytest.raises(QueryError, match="is not"):
        query(files["lang"], {"datetime": "2019-01"})
    with pytest.raises(QueryError, match="does not emit"):
        query(files["lang"], {"datetime": "20190101"})          # no day level in this policy
    with pytest.raises(QueryError, match="does not emit"):
        query(files["lang"], {"surt": "com,*", "mime": "text/html", "lang": "ara"})
    found, note, _ = query(files["lang"], {"lang": "tlh"})      # emitted, none held
    assert found == [] and note.startswith("no captures")
    assert main(["query", files["nolang"], "--lang", "ara"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has no lang key field" in err
    assert err.rstrip().endswith(": profile with --policy lang (or a policy whose levels name lang)"), err
    assert main(["query", files["nolang"], "--size", "1k-10k"]) == 2     # the bundled policy that has it
    err = capsys.readouterr().err
    assert "has no size key field" in err and "profile with --policy facetredux" in err, err
    assert main(["query", files["lang"], "--lang", "gibberish!"]) == 2
    assert "not a language" in capsys.readouterr().err


def test_cli_normalises_the_language(files, capsys):
    assert main(["query", files["lang"], "--lang", "ar-EG", "--feature", "urim"]) == 0
    out = capsys.readouterr().out
    expected = flatten(files["lines"]["lang"]["* - - - ara"])["urim.total"]
    assert out == '* - - - ara {"urim.total":%d}\n' % expected
    assert main(["query", files["lang"], "--group", "lang", "--top", "2", "--by", "urim", "--feature", "urim"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert len(rows) == 2 and all(r.startswith("* - - - ") for r in rows)
