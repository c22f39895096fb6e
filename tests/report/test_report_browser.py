"""The holdings report in headless Chromium: every chart drawn, no network request, the numbers
a person reads on the page equal the bundled sample's profile.

Needs Debian's `chromium` and `chromium-driver` (.ci/run installs them) and selenium (the test
extra). Without them the test skips with a message, except under CI=true, where it fails.
"""

import time

import pytest

from profiler.report import holdings as report
from helpers.browser import chromium, requests_of
from helpers.reports import CHART_IDS, data_lines, is_year, make_profile, matching, num


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = chromium(tmp_path_factory.mktemp("chromium-profile"), size=(1200, 900))
    try:
        driver.get("about:blank")
        requests_of(driver)
        yield driver
    finally:
        driver.quit()


def load(driver, path):
    driver.get_log("performance")                        # drop what came before
    driver.get("file://" + str(path))
    deadline = time.monotonic() + 30           # a loaded machine may still be decoding the charts
    while driver.execute_script("return document.readyState") != "complete" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert driver.execute_script("return document.readyState") == "complete"
    return requests_of(driver)


def table(driver, table_id):
    """Rows of cell texts, as a person sees them, of a table in the page (header row first)."""
    return driver.execute_script(
        "return Array.from(document.getElementById(arguments[0]).rows)"
        ".map(r => Array.from(r.cells).map(c => c.innerText.trim()))", table_id)


CHARTS_JS = """
return Array.from(document.querySelectorAll('figure.chart')).map(f => {
  const svg = f.querySelector('svg');
  if (!svg) return {id: f.id, svg: false, missing: f.classList.contains('chart-missing')};
  const box = svg.getBBox(), rect = svg.getBoundingClientRect();
  const bars = Array.from(svg.querySelectorAll('g[id*="patch_"] path'))
                    .filter(p => { const b = p.getBBox(); return b.width > 0 && b.height > 0; });
  return {id: f.id, svg: true, bbox: [box.width, box.height], rect: [rect.width, rect.height],
          elements: svg.querySelectorAll('*').length, bars: bars.length,
          text: Array.from(svg.querySelectorAll('text')).map(t => t.textContent).join(' ')};
});
"""


def test_detector_sees_a_subresource(browser, tmp_path):
    """The network check is not vacuous: a page that loads a stylesheet shows two requests."""
    (tmp_path / "style.css").write_text("body { color: red }\n")
    (tmp_path / "control.html").write_text('<!DOCTYPE html><link rel="stylesheet" href="style.css"><p>x')
    urls = load(browser, tmp_path / "control.html")
    assert urls == ["file://%s/control.html" % tmp_path, "file://%s/style.css" % tmp_path]


def test_report_in_chromium(browser, tmp_path):
    profile = make_profile(tmp_path)
    page = tmp_path / "report.html"
    report.write_report(profile, str(page))

    urls = load(browser, page)
    assert urls == ["file://%s" % page], urls                # the page itself, nothing else
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    console = [e["message"] for e in browser.get_log("browser")]
    assert not console, console                              # e.g. a fetch refused by the page's CSP

    charts = browser.execute_script(CHARTS_JS)
    assert [c["id"] for c in charts] == ["chart-" + c for c in CHART_IDS]
    lines = data_lines(profile)
    years = matching(lines, ["*", None, "-", "-"], is_year)
    for c in charts:
        assert c["svg"], c["id"]
        assert min(c["bbox"]) > 50 and min(c["rect"]) > 100, c
        assert c["elements"] > 30, c
        assert c["bars"] >= (len(years) if "year" in c["id"] else 4), c
    by_id = {c["id"]: c for c in charts}
    assert "2013" in by_id["chart-captures-per-year"]["text"]          # axis labels are text
    assert "cnn.com" in by_id["chart-hosts-by-urim"]["text"]

    total = lines["* - - -"]
    glance = {r[0]: r[1] for r in table(browser, "table-summary")[1:]}
    assert num(glance["captures (URI-Ms)"]) == total["urim"]["total"] == 5000
    assert num(glance["unique URLs (URI-Rs)"]) == total["urir"]
    assert num(glance["bytes"]) == total["bytes"]
    assert num(glance["distinct payload digests"]) == total["digests"]
    assert float(glance[report.AVG].replace(",", "")) == round(total["dedup_bytes"] / total["urir"], 2)

    rows = table(browser, "table-captures-per-year")
    assert rows[0] == ["year", "captures (URI-Ms)", "unique URLs (URI-Rs)", "bytes", report.AVG]
    assert [(r[0], num(r[1]), num(r[2]), num(r[3])) for r in rows[1:]] == [
        (y, years[y]["urim"]["total"], years[y]["urir"], years[y]["bytes"]) for y in sorted(years)]

    mimes = {m: v for m, v in matching(lines, ["*", "-", None, "-"]).items() if not m.endswith("/*")}
    rows = table(browser, "table-mime-by-captures")[1:]
    top = sorted(mimes, key=lambda m: (-mimes[m]["urim"]["total"], m))[:10]
    assert [(r[0], num(r[1])) for r in rows[:10]] == [(m, mimes[m]["urim"]["total"]) for m in top]
    assert rows[0][0] == "text/html"

    rows = table(browser, "table-status-classes")[1:]
    assert [(r[0], num(r[1]), num(r[3])) for r in rows] == [
        (s, lines["* - - " + s]["urim"]["total"], lines["* - - " + s]["bytes"]) for s in ("2xx", "3xx", "4xx", "5xx")]

    tlds = {k.split(",")[0]: v for k, v in lines.items() if k.endswith(",* - - -") and k.count(",") == 1}
    rows = table(browser, "table-tlds-by-urim")[1:]
    assert [(r[0], num(r[1]), num(r[2]), num(r[3])) for r in rows] == [
        (t, tlds[t]["urim"]["total"], tlds[t]["urir"], tlds[t]["bytes"])
        for t in sorted(tlds, key=lambda t: (-tlds[t]["urim"]["total"], t))[:10]]

    hosts = {k.split(" ")[0]: v for k, v in lines.items() if k.endswith(")/* - - -")}
    rows = table(browser, "table-hosts-by-bytes")[1:]
    assert [(r[1], num(r[4])) for r in rows] == [
        (h, hosts[h]["bytes"]) for h in sorted(hosts, key=lambda h: (-hosts[h]["bytes"], h))[:10]]

    dedup = {r[0]: r[1] for r in table(browser, "table-dedup")[1:]}
    assert num(dedup["saved by deduplication"]) == total["bytes"] - total["dedup_bytes"]
    rows = table(browser, "table-dedup-per-year")[1:]
    assert [(r[0], num(r[1]), num(r[2])) for r in rows] == [
        (y, years[y]["bytes"], years[y]["dedup_bytes"]) for y in sorted(years)]

    meta = {r[0]: r[1] for r in table(browser, "table-metadata")[1:]}
    assert meta["!id uri"] == "https://archive.example.org/" and meta["!meta captures"] == "5,000"
