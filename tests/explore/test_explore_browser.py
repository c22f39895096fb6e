"""The explorer in headless Chromium: a three-step refinement clicked through, the numbers a
person reads equal query's, the back and forward buttons, a shared URL reopened, a time range,
hostile URLs shown as text, and no request but to the explorer itself.

Needs Debian's `chromium` and `chromium-driver` and selenium (the test extra); without them it
skips with a message, except under CI=true, where it fails.
"""

import time
import urllib.parse

import pytest

from profiler.toolkit import ranges
from profiler.toolkit.query import SortedProfile, feature_value, query

from helpers.browser import requests_of, session
from helpers.explore import BLOG, serving
from helpers.reports import make_profile

CARDS = ["urim.total", "urir", "bytes", "dedup_bytes", "avg_size", "digests", "urim.min", "urim.max", "first", "last"]


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return make_profile(tmp_path_factory.mktemp("explore-browser"))


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    yield from session(tmp_path_factory)


@pytest.fixture(scope="module")
def site(sample):
    with serving(sample) as (url, _):
        yield url


def settle(driver, expect_url=None):
    """Wait until the page has drawn its answer (and its URL holds expect_url)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = driver.execute_script(
            "const s = document.getElementById('status'); return [document.readyState, s ? s.textContent : null,"
            " location.href]")
        if state[0] == "complete" and state[1] == "" and (expect_url is None or expect_url in urllib.parse.unquote(state[2])):
            return
        time.sleep(0.05)
    raise AssertionError("the page did not settle: %r" % (state,))


def cards(driver):
    """{feature: value} of the answer's cards as the page holds them, and as a person reads them."""
    found = driver.execute_script(
        "return Array.from(document.querySelectorAll('.card')).map(c => [c.dataset.feature, c.dataset.value,"
        " c.querySelector('.card-value').textContent])")
    return {f: (v, text) for f, v, text in found}


def expected(path, key):
    fields = key.split(" ")
    found, _, _ = query(path, dict(zip(("surt", "datetime", "mime", "status"), fields)))
    assert len(found) == 1, key
    return found[0][1]


def same(shown, want):
    """A value the page holds (text) and query's, compared as numbers when they are numbers."""
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return float(shown) == want
    return shown == ("" if want is None else str(want))


def assert_cards(driver, path, key):
    assert driver.find_element("id", "key").text == key
    shown = cards(driver)
    flat = expected(path, key)
    for name in CARDS:
        value, text = shown[name]
        want = feature_value(flat, name)
        assert same(value, want), (key, name, value, want)
        if isinstance(want, int):
            assert text.replace(",", "") == str(want), (name, text)
    assert "14:39:18" in shown["last"][1] or shown["last"][1].startswith(flat["last"][:4])


def table(driver, field):
    """[(row key, {feature: data-value})] of a breakdown's table."""
    return driver.execute_script(
        "const t = document.getElementById('table-' + arguments[0]); if (!t) return [];"
        "return Array.from(t.tBodies[0].rows).map(r => [r.dataset.key,"
        " Object.fromEntries(Array.from(r.querySelectorAll('td')).map(td => [td.dataset.feature, td.dataset.value]))])",
        field)


def assert_table(driver, path, field):
    rows = table(driver, field)
    assert rows, field
    for key, values in rows:
        flat = expected(path, key)
        for name, value in values.items():
            assert same(value, feature_value(flat, name)), (key, name)
    return rows


def click_row(driver, field, value):
    link = driver.find_element("css selector", '#table-%s tr[data-value="%s"] th a' % (field, value))
    link.click()


def test_three_refinements_back_forward_and_a_shared_url(browser, site, sample):
    requests_of(browser)
    browser.get(site)
    settle(browser)
    assert_cards(browser, sample, "* - - -")
    assert_table(browser, sample, "surt")

    click_row(browser, "surt", "com,*")                     # 1: which sites under .com?
    settle(browser, "surt=com,*")
    assert_cards(browser, sample, "com,* - - -")
    hosts = assert_table(browser, sample, "surt")
    assert "com,cnn)/* - - -" in [k for k, _ in hosts]

    click_row(browser, "datetime", "2013")                  # 2: in 2013
    settle(browser, "datetime=2013")
    assert_cards(browser, sample, "com,* 2013 - -")
    assert_table(browser, sample, "mime")

    click_row(browser, "mime", "text/html")                 # 3: its HTML pages
    settle(browser, "mime=text/html")
    assert_cards(browser, sample, "com,* 2013 text/html -")
    assert_table(browser, sample, "status")
    shared = browser.current_url
    page = [table(browser, f) for f in ("surt", "datetime", "mime", "status")]

    browser.back()
    settle(browser)
    assert "mime=" not in browser.current_url
    assert_cards(browser, sample, "com,* 2013 - -")
    browser.back()
    settle(browser)
    assert_cards(browser, sample, "com,* - - -")
    browser.forward()
    settle(browser, "datetime=2013")
    assert_cards(browser, sample, "com,* 2013 - -")

    browser.get("about:blank")
    browser.get(shared)                                     # the shared URL, opened afresh
    settle(browser, "mime=text/html")
    assert_cards(browser, sample, "com,* 2013 text/html -")
    assert [table(browser, f) for f in ("surt", "datetime", "mime", "status")] == page

    base = site.rstrip("/")
    assert all(u.startswith(base) for u in requests_of(browser)), "a request left the explorer"
    console = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert not console, console


def test_a_time_range_shows_bounds(browser, site, sample):
    browser.get(site + "?surt=com,*")
    settle(browser, "surt=com,*")
    browser.find_element("id", "from").send_keys("2011")
    browser.find_element("id", "to").send_keys("2013")
    browser.find_element("css selector", "#range button[type=submit]").click()
    settle(browser, "to=2013")
    with SortedProfile(sample) as p:
        found = ranges.answer(ranges.Lines(p), {"surt": "com,*"}, ranges.parse_range("2011", "2013"))
    assert browser.find_element("id", "key").text == "com,* 2011:2013 - -"
    shown = cards(browser)
    assert shown["urim.total"][0] == str(found.flat["urim.total"])
    low, high = found.flat["bounds"]["urir"]
    assert shown["urir"][1].replace(",", "") == "%d – %d" % (low, high)
    classes = browser.execute_script("return document.getElementById('card-urir').className")
    assert "bounded" in classes
    assert browser.execute_script("return document.getElementById('card-urim-total').className") == "card"


def test_hostile_urls_are_shown_as_text(browser, site):
    payload = "<img/src=x/onerror=window.pwned=1>"
    browser.get(site + "?" + urllib.parse.urlencode({"mime": payload}))
    settle(browser)
    assert browser.execute_script("return window.pwned") is None
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    assert payload in browser.find_element("id", "chips").text
    browser.get(site + "?" + urllib.parse.urlencode({"datetime": "٢٠١٣"}))
    deadline = time.monotonic() + 20
    while "error" not in browser.find_element("id", "status").get_attribute("class") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "is not" in browser.find_element("id", "status").text
    browser.get(site + "?surt=" + urllib.parse.quote("</script><script>window.pwned=1</script>"))
    time.sleep(0.5)
    assert browser.execute_script("return window.pwned") is None


def test_go_to_a_site_by_its_name(browser, site, sample):
    browser.get(site)
    settle(browser)
    for typed, surt in [("http://www.cnn.com/world/index.html", "com,cnn)/world/*"), ("cnn.com", "com,cnn)/*")]:
        box = browser.find_element("id", "goto-text")
        box.clear()
        box.send_keys(typed)
        browser.find_element("css selector", "#goto button").click()
        settle(browser, "surt=" + surt)
    assert_cards(browser, sample, "com,cnn)/* - - -")


def test_the_profile_picker(browser, sample, tmp_path_factory):
    other = make_profile(tmp_path_factory.mktemp("explore-hosts"), policy="hosts")
    with serving("default=" + sample, "hosts=" + other) as (url, _):
        browser.get(url)
        settle(browser)
        assert browser.find_element("id", "picker-label").is_displayed()
        assert browser.find_element("id", "archive").text == "default"
        from selenium.webdriver.support.ui import Select
        Select(browser.find_element("id", "picker")).select_by_value("hosts")
        settle(browser, "profile=hosts")
        assert browser.find_element("id", "archive").text == "hosts"
        found, _, _ = query(other, {"surt": "*"})
        assert cards(browser)["urim.total"][0] == str(found[0][1]["urim.total"])
        assert table(browser, "surt")
        browser.back()
        settle(browser)
        assert browser.find_element("id", "archive").text == "default"


def test_another_producers_profile_shows_missing_features(browser, tmp_path_factory):
    path = tmp_path_factory.mktemp("explore-blog") / "blog.cdxj"
    path.write_bytes(BLOG)
    with serving(str(path)) as (url, _):
        browser.get(url + "?surt=com%2C*")
        settle(browser, "surt=com,*")
        shown = cards(browser)
        assert shown["urim.total"] == ("3050", "3,050") and shown["urir"] == ("345", "345")
        for name in ("bytes", "dedup_bytes", "avg_size", "digests", "first", "last"):
            assert shown[name] == ("", "–"), name
            badge = browser.find_element("css selector", '.card[data-feature="%s"] .badge' % name)
            assert badge.text.lower() == "missing", name
        rows = dict(table(browser, "surt"))
        assert rows["com,nyt)/ -"]["urim.total"] == "5" and rows["com,nyt)/ -"]["urir"] == ""
        cell = browser.find_element("css selector", '#table-surt tr[data-key="com,nyt)/ -"] td[data-feature="urir"]')
        assert cell.text == "–"
