"""The report's languages chart: drawn, with its table, for a profile whose keys have lang (the
'* - - - CODE' lines), and absent from a four-field profile's page."""


import pytest

from profiler.report import holdings as report

from helpers.languages import NO_LANG, TLD_LANG, cc_index, lines_of, profile
from helpers.reports import CHART_IDS, num, parse_page


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    d = tmp_path_factory.mktemp("report-lang")
    index = cc_index(d, 2000, seed=6)
    return {"lang": profile(d, [index], TLD_LANG), "nolang": profile(d, [index], NO_LANG)}


def test_languages_chart_and_table_for_a_five_field_profile(profiles, tmp_path):
    out = tmp_path / "lang.html"
    summary = report.write_report(profiles["lang"], str(out), top=5)
    assert "languages-by-captures" in summary["charts"]
    p = parse_page(out)
    assert "languages" in p.ids and p.figures["chart-languages-by-captures"]["svg"]
    rows = p.tables["table-languages-by-captures"]
    assert rows[0] == ["language", "code", "captures", "share", "unique URLs (URI-Rs)", "bytes"]
    lines = lines_of(profiles["lang"])
    langs = {k.split(" ")[4]: v for k, v in lines.items() if k.startswith("* - - - ") and not k.endswith(" -")}
    ranked = sorted(langs.items(), key=lambda kv: (-kv[1]["urim"]["total"], kv[0]))[:5]
    body = rows[1:-1]
    assert [r[1] for r in body[:5]] == [code for code, _ in ranked]
    assert [num(r[2]) for r in body[:5]] == [v["urim"]["total"] for _, v in ranked]
    assert [num(r[4]) for r in body[:5]] == [v["urir"] for _, v in ranked]
    assert body[5][0] == "other (%d languages)" % (len(langs) - 5)
    assert num(body[5][2]) == sum(v["urim"]["total"] for c, v in langs.items() if c not in dict(ranked))
    assert rows[-1][0] == "all" and num(rows[-1][2]) == lines["* - - - -"]["urim"]["total"]
    names = dict((r[1], r[0]) for r in body)
    assert names.get("eng") == "English" and names.get("unk", "unknown") == "unknown"
    summary_table = dict((r[0], r[1]) for r in p.tables["table-summary"][1:])
    assert num(summary_table["languages"]) == len(langs)
    assert num(summary_table["captures (URI-Ms)"]) == lines["* - - - -"]["urim"]["total"]


def test_no_languages_chart_for_a_four_field_profile(profiles, tmp_path):
    out = tmp_path / "nolang.html"
    summary = report.write_report(profiles["nolang"], str(out))
    assert "languages-by-captures" not in summary["charts"] + summary["missing"]
    p = parse_page(out)
    assert "languages" not in p.ids and "table-languages-by-captures" not in p.tables
    assert "languages" not in dict((r[0], r[1]) for r in p.tables["table-summary"][1:])
    assert set(summary["charts"]) <= set(CHART_IDS)


def test_five_field_profile_notes_name_five_field_lines(tmp_path):
    """A chart whose lines a five-field profile lacks names them with five fields."""
    policy = dict(TLD_LANG, name="rootlang", emit={"root": {"lang": ["any"]}, "tld": "none", "domain": "none",
                                                    "host": "none"})
    path = profile(tmp_path, [cc_index(tmp_path, 300, seed=2)], policy)
    out = tmp_path / "r.html"
    summary = report.write_report(path, str(out))
    assert "languages-by-captures" in summary["missing"]
    text = out.read_text(encoding="utf-8")
    assert "no &#39;* - - - LANG&#39; lines" in text and "no &#39;* YYYY - - -&#39; lines" in text
