"""The holdings report: data picked from real profiles of the bundled sample, the page, PNGs, errors."""

import os

import pytest

from profiler.report import holdings as report
from profiler.cli import main as cli

from helpers.reports import (CHART_IDS, make_profile, make_profile_of_policy, data_lines, matching, is_year, num,
                             parse_page)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def sample_profile(tmp_path_factory):
    return make_profile(tmp_path_factory.mktemp("profile"))


def test_surt_levels_and_host_names():
    assert report.surt_level(b"*") == "root"
    assert report.surt_level(b"com,*") == "tld"
    assert report.surt_level(b"com,cnn,*") == "domain"
    assert report.surt_level(b"com,cnn)/*") == "host"
    assert report.surt_level(b"com,cnn)/world/*") is None
    assert report.surt_level(b"com,cnn)/a)/*") is None
    assert report.surt_level(b"com,cnn)/index.html") is None
    assert report.host_name("com,cnn)/*") == "cnn.com"
    assert report.host_name("org,example:8080)/*") == "example.org:8080"


def test_holdings_of_the_sample(sample_profile):
    lines = data_lines(sample_profile)
    h = report.read_holdings(sample_profile)
    assert h["lines"] == len(lines)
    assert h["total"] == lines["* - - -"] and h["total"]["urim"]["total"] == 5000
    assert h["years"] == matching(lines, ["*", None, "-", "-"], is_year) and len(h["years"]) == 29
    types = {m: v for m, v in matching(lines, ["*", "-", None, "-"]).items() if not m.endswith("/*")}
    assert h["mimes"] == types and "text/html" in types
    assert set(h["mime_categories"]) == {"application/*", "audio/*", "font/*", "image/*", "text/*",
                                         "video/*", "unk"}
    assert h["statuses"] == {s: v for s, v in matching(lines, ["*", "-", "-", None]).items()
                             if s.endswith("xx") or s == "unk"}
    assert set(h["statuses"]) == {"2xx", "3xx", "4xx", "5xx"}
    hosts = {k.split(" ")[0]: v for k, v in lines.items() if k.endswith(")/* - - -")}
    assert h["hosts"] == hosts and "com,cnn)/*" in hosts
    tlds = {k.split(",")[0]: v for k, v in lines.items()
            if k.endswith(",* - - -") and k.count(",") == 1}
    assert h["tlds"] == tlds and "com" in tlds


def test_a_profile_of_many_hosts_is_reported_from_a_bounded_part(sample_profile, tmp_path):
    """Every host line was held (423 MB RSS for a profile of 400,000 hosts, growing with it): the
    report keeps only the hosts and TLDs some ranking can show, and its charts, tables and
    counts are those of all of them (random metrics, many ties)."""
    import random
    rng = random.Random(5)
    headers = [line for line in open(sample_profile, "rb").read().splitlines() if line.startswith(b"!")]

    def value(n):
        return (b'{"urim":{"total":%d,"min":1,"max":%d},"urir":%d,"bytes":%d,"digests":1,"dedup_bytes":1,'
                b'"first":"20100101000000","last":"20100101000000"}' % (n, n, rng.randint(1, min(9, n)), rng.randint(1, 50)))
    n_hosts = 3 * report.RANKED_HELD
    lines = [b"* - - - " + value(10 ** 6)]
    for tld in range(40):
        lines.append(b"t%02d,* - - - " % tld + value(rng.randint(1, 5)))
        lines += [b"t%02d,h%06d)/* - - - " % (tld, i) + value(rng.randint(1, 30))
                  for i in range(tld, n_hosts, 40)]
    path = tmp_path / "hosts.cdxj"
    path.write_bytes(b"\n".join(headers + sorted(lines)) + b"\n")
    whole = report.read_holdings(str(path))
    kept = report.read_holdings(str(path), top=7)
    assert len(whole["hosts"]) == kept["counts"]["hosts"] == n_hosts and kept["counts"]["tlds"] == 40
    assert len(kept["hosts"]) <= report.RANKED_HELD
    for table in ("hosts", "tlds"):
        for a, b in zip(report.ranking_charts(whole, table, 7),
                        report.ranking_charts(kept, table, 7)):
            assert (a.labels, a.series, a.rows, a.note) == (b.labels, b.series, b.rows, b.note)
    assert report.summary_rows(kept) == report.summary_rows(whole)


def test_sample_profile_partitions_what_the_charts_share_out(sample_profile):
    """The charts' shares assume every capture has one year, MIME type, status class and TLD."""
    h = report.read_holdings(sample_profile)
    for table in ("years", "mimes", "mime_categories", "statuses", "tlds"):
        assert sum(v["urim"]["total"] for v in h[table].values()) == 5000, table
        assert sum(v["bytes"] for v in h[table].values()) == h["total"]["bytes"], table


def test_page_tables_match_the_profile(sample_profile, tmp_path):
    out = tmp_path / "report.html"
    summary = report.write_report(sample_profile, str(out), png_dir=str(tmp_path / "png"))
    assert summary["charts"] == CHART_IDS and summary["missing"] == []
    page = parse_page(out)
    lines = data_lines(sample_profile)
    total = lines["* - - -"]

    for chart in CHART_IDS:
        assert page.figures["chart-" + chart]["svg"], chart
        assert len(page.tables["table-" + chart]) > 1, chart
    assert len(page.ids) == len(set(page.ids)), "ids shared between inline SVGs"

    glance = dict((r[0], r[1]) for r in page.tables["table-summary"][1:])
    assert num(glance["captures (URI-Ms)"]) == 5000
    assert num(glance["unique URLs (URI-Rs)"]) == total["urir"] == 1875
    assert num(glance["bytes"]) == total["bytes"]
    assert num(glance["bytes after deduplication"]) == total["dedup_bytes"]
    assert glance["first capture"] == "1996-01-08 23:03:06"
    # the sixth feature, as query derives it (dedup_bytes / urir), two decimals
    assert glance[report.AVG] == "{:,.2f}".format(round(total["dedup_bytes"] / total["urir"], 2)) == "61,329.07"

    years = matching(lines, ["*", None, "-", "-"], is_year)
    rows = page.tables["table-captures-per-year"][1:]
    assert [r[0] for r in rows] == sorted(years)
    assert page.tables["table-captures-per-year"][0][-1] == report.AVG
    for year, urim, urir, size, avg in rows:
        v = years[year]
        assert (num(urim), num(urir), num(size)) == (v["urim"]["total"], v["urir"], v["bytes"])
        assert float(avg.replace(",", "")) == round(v["dedup_bytes"] / v["urir"], 2)

    mimes = {m: v for m, v in matching(lines, ["*", "-", None, "-"]).items() if not m.endswith("/*")}
    rows = page.tables["table-mime-by-bytes"][1:]
    top = sorted(mimes, key=lambda m: -mimes[m]["bytes"])[:10]
    assert [r[0] for r in rows[:10]] == top and rows[0][0] == "application/pdf"
    assert [num(r[1]) for r in rows[:10]] == [mimes[m]["bytes"] for m in top]
    assert rows[10][0] == "other (%d types)" % (len(mimes) - 10)
    assert num(rows[10][1]) == sum(mimes[m]["bytes"] for m in mimes if m not in top)
    assert rows[-1][:2] == ["all", "{:,}".format(sum(v["bytes"] for v in mimes.values()))]

    status = {r[0]: num(r[1]) for r in page.tables["table-status-classes"][1:]}
    assert status == {s: lines["* - - %s" % s]["urim"]["total"] for s in ("2xx", "3xx", "4xx", "5xx")}

    hosts = {k.split(" ")[0]: v for k, v in lines.items() if k.endswith(")/* - - -")}
    rows = page.tables["table-hosts-by-urir"][1:]
    assert len(rows) == 10
    assert [num(r[3]) for r in rows] == sorted((v["urir"] for v in hosts.values()), reverse=True)[:10]
    for name, surt, urim, urir, size, avg in rows:
        v = hosts[surt]
        assert name == report.host_name(surt)
        assert (num(urim), num(urir), num(size)) == (v["urim"]["total"], v["urir"], v["bytes"])
        assert float(avg.replace(",", "")) == round(v["dedup_bytes"] / v["urir"], 2)

    dedup = dict((r[0], r[1]) for r in page.tables["table-dedup"][1:])
    assert num(dedup["saved by deduplication"]) == total["bytes"] - total["dedup_bytes"] == 13876996
    assert dedup["share saved"] == "10.8 %"

    meta = dict((r[0], r[1]) for r in page.tables["table-metadata"][1:])
    assert meta["!id uri"] == "https://archive.example.org/"
    assert meta["!meta captures"] == "5,000" and meta["!meta revisits"] == "resolved"
    assert '"name":"default"' in meta["!meta policy"]

    pngs = sorted(os.listdir(tmp_path / "png"))
    assert pngs == sorted(c + ".png" for c in CHART_IDS)
    from PIL import Image
    with Image.open(tmp_path / "png" / "hosts-by-bytes.png") as im:
        assert im.format == "PNG" and im.size[0] > 300 and im.size[1] > 200
        assert len(im.convert("L").getcolors(1 << 16)) > 10          # more than a blank canvas


def written_report(profile, out, **kw):
    """(summary, parsed page, text) of the report of a profile written at out."""
    summary = report.write_report(profile, str(out), **kw)
    return summary, parse_page(out), out.read_text(encoding="utf-8")


def test_page_is_self_contained(sample_profile, tmp_path):
    _, page, text = written_report(sample_profile, tmp_path / "report.html")
    assert not [t for t, a in page.tags if t in ("script", "link", "iframe", "img", "object", "embed")]
    assert not [a for _, a in page.tags if "src" in a or "srcset" in a]
    assert not [a["href"] for _, a in page.tags if "href" in a and not a["href"].startswith("#")]
    assert "@import" not in text and "url(http" not in text
    assert "default-src 'none'" in text                  # the browser refuses any fetch anyway


def test_profile_without_the_keys_degrades_with_notes(tmp_path):
    profile = make_profile_of_policy(tmp_path, "thin", "name: thin\nhost_depth: 3\npath_depth: 0\n"
                                     "exact_urls: false\nlevels: {datetime: [year], mime: [type], status: [class]}\n"
                                     "emit:\n  root: {datetime: [any, year]}\n  tld: {datetime: [any]}\n"
                                     "  domain: none\n  host: none\n  path: none\n")
    summary, page, text = written_report(profile, tmp_path / "thin.html")
    assert summary["charts"] == ["captures-per-year", "tlds-by-urim", "tlds-by-urir", "tlds-by-bytes",
                                 "dedup-per-year"]
    assert summary["missing"] == ["mime-by-captures", "mime-by-bytes", "status-classes", "hosts-by-urim",
                                  "hosts-by-urir", "hosts-by-bytes"]
    for chart in summary["missing"]:
        assert "chart-missing" in page.figures["chart-" + chart]["class"]
        assert not page.figures["chart-" + chart]["svg"] and "table-" + chart not in page.tables
    assert "This profile has no &#39;* - MIME -&#39; lines (policy thin)" in text
    assert "This profile has no &#39;HOST)/* - - -&#39; lines (policy thin)" in text
    assert page.figures["chart-captures-per-year"]["svg"]


def test_hosts_policy_profile_has_every_chart(tmp_path):
    profile = make_profile(tmp_path, "hosts")
    summary = report.write_report(profile, str(tmp_path / "hosts.html"), top=3)
    assert summary["charts"] == CHART_IDS and summary["missing"] == []
    page = parse_page(tmp_path / "hosts.html")
    assert len(page.tables["table-tlds-by-bytes"]) == 1 + 3


def test_cli_report_and_user_mistakes(sample_profile, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["report", sample_profile, "-o", "r.html", "--png", "charts"]) == 0
    assert "r.html: 11 charts" in capsys.readouterr().err
    assert (tmp_path / "charts" / "captures-per-year.png").exists()
    (tmp_path / "not-a-profile.txt").write_text("hello world\n")
    for args, message in [
        (["no.cdxj", "-o", "r.html"], "no such file: no.cdxj"),
        ([sample_profile, "-o", "/no/such/folder/r.html"], "output folder does not exist"),
        (["not-a-profile.txt", "-o", "r.html"], "not a profile or map"),
        ([sample_profile, "-o", "r.html", "--png", "r.html"], "--png: not a folder"),
        ([sample_profile, "-o", "r.pdf"], "-o r.pdf names a PDF; give a name ending .html"),
        ([sample_profile, "-o", "Charts.PNG"], "names a PNG image"),
    ]:
        assert cli.main(["report"] + args) == 2, args
        err = [x for x in capsys.readouterr().err.strip().splitlines() if "skipped" not in x]
        assert len(err) == 1 and err[0].startswith("archive-profiler: error:") and message in err[0], err
    with pytest.raises(SystemExit) as e:
        cli.main(["report", sample_profile, "-o", "r.html", "--top", "0"])
    assert e.value.code == 2 and "positive" in capsys.readouterr().err
    assert not (tmp_path / "r.pdf").exists() and not (tmp_path / "Charts.PNG").exists()


def test_profile_without_the_whole_archive_line(tmp_path):
    profile = make_profile_of_policy(tmp_path, "years", "name: years-only\nhost_depth: 3\npath_depth: 0\n"
                                     "exact_urls: false\nlevels: {datetime: [year], mime: [type], status: [class]}\n"
                                     "emit:\n  root: {datetime: [year]}\n  tld: none\n  domain: none\n"
                                     "  host: none\n  path: none\n")
    assert "* - - -" not in data_lines(profile)
    summary, page, text = written_report(profile, tmp_path / "years.html")
    assert summary["charts"] == ["captures-per-year", "dedup-per-year"]
    assert "table-summary" not in page.tables and "table-dedup" not in page.tables
    assert text.count("This profile has no &#39;* - - -&#39; lines (policy years-only), so the "
                      "whole-archive figures are not shown.") == 2
    rows = page.tables["table-captures-per-year"][1:]
    assert sum(num(r[1]) for r in rows) == 5000


def test_mime_categories_when_a_profile_has_no_type_lines(sample_profile, tmp_path):
    """A profile whose policy writes only MIME categories: the chart shows them, 'unk' included."""
    thin = tmp_path / "categories.cdxj"
    with open(sample_profile, "rb") as f, open(thin, "wb") as out:
        for line in f:
            fields = line.split(b" ", 4)
            if not (fields[0] == b"*" and b"/" in fields[2] and not fields[2].endswith(b"/*")):
                out.write(line)
    summary = report.write_report(str(thin), str(tmp_path / "c.html"), top=20)
    assert "mime-by-captures" in summary["charts"]
    rows = parse_page(tmp_path / "c.html").tables["table-mime-by-captures"]
    assert rows[0][0] == "MIME category"
    assert [r[0] for r in rows[1:3]] == ["text/*", "image/*"] and "unk" in [r[0] for r in rows]
    assert rows[-1][:2] == ["all", "5,000"] and len(rows) == 1 + 7 + 1


def test_chart_labels_are_plain_text():
    """Labels come from the index: '$' or '<' in a MIME type is text, not mathtext or markup."""
    from profiler.report import charts
    chart = report.Chart("odd", "Odd <labels>", "bars", "bytes", labels=["text/$x", "a<b>&c"],
                         series=[("bytes", [1500000, 0])])
    svg, png = charts.render(chart, with_png=True)
    assert svg.startswith("<svg role=\"img\" aria-labelledby=\"odd-title\"")
    assert "text/$x" in svg and "a&lt;b&gt;&amp;c" in svg and "MB" in svg
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def _labels(surt_host):
    return len(surt_host[:surt_host.index(")")].split(","))


def test_hosts_note_agrees_with_the_chart(sample_profile, tmp_path):
    """The hosts section says which hosts it can list, and its chart lists exactly those: with
    registered domains every host under one (deeper than host_depth too); by label count, none
    deeper than host_depth."""
    h = report.read_holdings(sample_profile)
    [section] = [s for s in report.build_sections(h, top=100000) if s.id == "hosts"]
    listed = [row[1] for row in section.charts[0].rows]
    assert max(_labels(k) for k in listed) > 3          # uk,co,bbc,news)/*: four labels, listed
    assert "every host under a registered domain" in section.text and "at most 3 labels" in section.text
    h = report.read_holdings(make_profile_of_policy(tmp_path, "by-labels", "name: by-labels\nhost_depth: 2\n"
                                                    "registered_domains: false\nlevels: {datetime: [year]}\n"
                                                    "emit: {root: {datetime: [any, year]}}\n"))
    [section] = [s for s in report.build_sections(h, top=100000) if s.id == "hosts"]
    listed = [row[1] for row in section.charts[0].rows]
    assert listed and max(_labels(k) for k in listed) == 2
    assert "at most 2 labels, so deeper hosts" in section.text and "registered" not in section.text


def test_a_facetredux_profile_keeps_content_classes_out_of_the_media_types(tmp_path):
    """The mime class level writes 'image', 'html' in the mime field: not media types."""
    profile = make_profile(tmp_path, "facetredux")
    h = report.read_holdings(profile)
    assert h["mimes"] and not set(h["mimes"]) & {"html", "image", "media", "document", "code", "other"}
    assert all("/" in m or m == "unk" for m in h["mimes"])


def test_another_producers_profile_is_reported_or_refused_in_one_line(tmp_path):
    """A profile whose !keys name only a SURT and a year is reported (its other fields are any);
    one whose values lack features the report shows is refused in one line, exit 2."""
    import subprocess
    import sys
    value = '{"urim":{"total":3,"min":1,"max":2},"urir":2,"bytes":30,"digests":2,"dedup_bytes":20,' \
            '"first":"20130101000000","last":"20140101000000"}'
    full = tmp_path / "full.cdxj"
    full.write_text('@keys ["surt_uri", "year"]\n* - %s\n* 2013 %s\ncom,)/* - %s\ncom,cnn)/ - %s\n'
                    % (value, value, value, value))
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "report", str(full), "-o", str(tmp_path / "r.html")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "2013" in (tmp_path / "r.html").read_text()
    counts = tmp_path / "counts.cdxj"
    counts.write_text('@keys ["surt_uri", "year"]\n* - {"frequency": 7, "spread": 3}\n')
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "report", str(counts), "-o", str(tmp_path / "c.html")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "c.html").exists()


def test_a_profile_of_no_capture_says_so(tmp_path, capsys):
    """A valid profile whose every record was skipped (a WARC of requests only) has no data line:
    the report says there is nothing to report, not that the file may not be a profile."""
    import io
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter
    from profiler.run.profile import run_profile
    warc = tmp_path / "requests.warc.gz"
    with open(warc, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        head = StatusAndHeaders("GET / HTTP/1.1", [("Host", "a.example")], is_http_request=True)
        writer.write_record(writer.create_warc_record("http://a.example/", "request", payload=io.BytesIO(b""),
                                                      http_headers=head))
    profile = tmp_path / "p.cdxj"
    run_profile([str(warc)], str(profile))
    capsys.readouterr()
    assert cli.main(["report", str(profile), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "a profile of no capture: there is nothing to report" in err and "is it a CDXJ" not in err
    assert not (tmp_path / "r.html").exists()


def test_a_ranking_notes_an_other_row_only_when_it_has_one(tmp_path):
    """A criterion's chart that shows every value has no 'other' row, and its note says so; one
    cut at --top sums the rest as 'other' and says how many it shows."""
    profile = make_profile(tmp_path, "facetredux")
    h = report.read_holdings(profile)
    sizes = len(h["criteria"]["size"])
    [whole] = report.criterion_charts(h, "size", sizes)
    assert whole.note.startswith("All %d values shown" % sizes) and "other" not in whole.note
    assert not any(str(row[0]).startswith("other") for row in whole.rows)
    [cut] = report.criterion_charts(h, "size", 2)
    assert cut.note.startswith("2 of %d values shown; the 'other' row sums the rest" % sizes)
    assert any(str(row[0]).startswith("other (") for row in cut.rows)


def test_a_level_of_a_criterion_the_policy_does_not_write_has_no_chart(tmp_path, monkeypatch):
    """A plugin's criterion of two levels (tests/helpers/servers.py) whose policy writes the finer
    one alone at the root: a bare 'apache' fits the coarser level too, which had a chart of it
    alone, 'apache' 100 % of 'all' (1 capture of 3); only the written level has a chart."""
    import yaml
    from profiler import contract, plugins
    from helpers import servers
    from helpers.registries import keep
    keep(monkeypatch)
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    monkeypatch.setenv(contract.PLUGINS_ENV, "helpers.servers")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([tests, os.path.dirname(tests)]))
    assert plugins.load() == ["helpers.servers"]
    warc = tmp_path / "s.warc"
    servers.write_warc(warc, [b"nginx/1.18.0", b"Apache", b"nginx/1.20.1"])
    policy = tmp_path / "p.yaml"
    policy.write_text(yaml.safe_dump(dict(servers.POLICY, emit={"root": {"server": ["any", "product"]}, "tld": "none",
                                                                 "domain": "none", "host": "none", "path": "none"})))
    profile = tmp_path / "s.cdxj"
    assert cli.main(["profile", str(warc), "-o", str(profile), "--policy", str(policy), "-q"]) == 0
    charts = report.criterion_charts(report.read_holdings(str(profile)), "server", 10)
    assert [c.id for c in charts] == ["by-server-product"]
    assert charts[0].rows[-1][:2] == ["all", 3]
