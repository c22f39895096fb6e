#!/usr/bin/env python
"""Draw docs/explore-1.png, -2, -3: what a person sees in `archive-profiler explore` at three
steps of a question, on the bundled sample's profile, in headless Chromium.

    python scripts/draw_explore.py [--out docs] [--width 1280] [--height 1500]

1. the whole archive: its features, and where, when, what and how it was captured;
2. ".com, largest by bytes": the biggest sites and content types under one TLD;
3. ".com, its HTML pages from 2012 to 2016": a time range, with bounds where a feature
   cannot be exact.
"""

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from profiler.explore.server import make_server  # noqa: E402
from profiler.run.profile import run_profile  # noqa: E402

STEPS = [("explore-1.png", ""), ("explore-2.png", "?surt=com%2C*&sort=bytes"),
         ("explore-3.png", "?surt=com%2C*&mime=text%2Fhtml&from=2012&to=2016")]


def browser(width, height, folder):
    from selenium import webdriver
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    for arg in ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
                "--window-size=%d,%d" % (width, height), "--user-data-dir=%s" % folder]:
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=webdriver.ChromeService(shutil.which("chromedriver")))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "docs"))
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1500)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        profile = os.path.join(tmp, "sample.cdxj")
        run_profile([os.path.join(ROOT, "samples", "sample-5k.cdx.gz")], profile, "default",
                    archive_uri="https://archive.example.org/")
        server, url = make_server([profile], "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        driver = browser(args.width, args.height, os.path.join(tmp, "chromium"))
        try:
            for name, query in STEPS:
                driver.get(url + query)
                deadline = time.monotonic() + 30
                while driver.execute_script("return document.getElementById('status').textContent") != "" \
                        and time.monotonic() < deadline:
                    time.sleep(0.1)
                time.sleep(0.3)
                path = os.path.join(args.out, name)
                driver.save_screenshot(path)
                print("wrote %s" % path)
        finally:
            driver.quit()
            server.shutdown()
            server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
