"""Headless Chromium through selenium for the browser tests (Debian's chromium and
chromium-driver, which .ci/run installs). Without them a test skips with a message, except
under CI=true, where it fails."""

import json
import os
import shutil

import pytest

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-extensions", "--disable-default-apps", "--window-size=1280,1000"]


def need(what, found):
    """Skip (or fail under CI=true) when a tool the browser test needs is missing."""
    if found:
        return found
    message = "%s not found: install Debian's chromium and chromium-driver, and the test extra" % what
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def chromium(profile_dir, size=(1280, 1000)):
    """A headless Chromium driven by chromedriver, logging the network and the console."""
    try:
        from selenium import webdriver
    except ImportError:
        webdriver = None
    webdriver = need("selenium", webdriver)
    binary = need("chromium", shutil.which("chromium") or shutil.which("chromium-browser"))
    driver_path = need("chromedriver", shutil.which("chromedriver"))
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ARGS:
        options.add_argument(arg)
    options.add_argument("--window-size=%d,%d" % size)
    options.add_argument("--user-data-dir=%s" % profile_dir)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    service = webdriver.ChromeService(executable_path=driver_path)   # no Selenium Manager download
    return webdriver.Chrome(options=options, service=service)


def requests_of(driver):
    """URLs of the requests made since the last call (Chrome's DevTools Network log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent" and \
                not params.get("documentURL", "").startswith("chrome://"):
            urls.append(params["request"]["url"])
    return urls


def session(tmp_path_factory, size=(1280, 1000)):
    """A module's headless Chromium, quit after its last test: a fixture yields from it."""
    driver = chromium(tmp_path_factory.mktemp("chromium-profile"), size=size)
    try:
        yield driver
    finally:
        driver.quit()
