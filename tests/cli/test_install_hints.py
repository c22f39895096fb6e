"""Install hints: one helper (profiler.extras.install_command) says how to add an extra to this
installation, a command that works (the package is not on a package index): from the folder,
sdist, wheel or repository it was installed from, -e for an editable install."""

import json
import os
import subprocess
import sys

import pytest

from profiler import extras

from helpers.paths import ROOT


class FakeDist:
    def __init__(self, direct_url):
        self.direct_url = direct_url

    def read_text(self, name):
        return None if self.direct_url is None else json.dumps(self.direct_url)


@pytest.mark.parametrize("direct_url, expected", [
    ({"url": "file://%s" % ROOT, "dir_info": {"editable": True}}, "pip install -e '%s[serve]'" % ROOT),
    ({"url": "file://%s" % ROOT, "dir_info": {}}, "pip install '%s[serve]'" % ROOT),
    ({"url": "file://%s/setup.cfg" % ROOT, "archive_info": {}}, "pip install '%s/setup.cfg[serve]'" % ROOT),
    ({"url": "https://example.org/ap.git", "vcs_info": {"vcs": "git", "commit_id": "abc"}},
     "pip install 'archive-profiler[serve] @ git+https://example.org/ap.git'"),
])
def test_the_command_for_each_kind_of_installation(monkeypatch, direct_url, expected):
    monkeypatch.setattr(extras, "_checkout", lambda: None)
    from importlib import metadata
    monkeypatch.setattr(metadata, "distributions", lambda name=None: [FakeDist(None), FakeDist(direct_url)])
    assert extras.install_command("serve") == expected


def test_without_a_known_source(monkeypatch):
    from importlib import metadata
    monkeypatch.setattr(metadata, "distributions", lambda name=None: [])
    monkeypatch.setattr(extras, "_checkout", lambda: None)
    assert extras.install_command("report") == "in an archive-profiler checkout, pip install '.[report]'"
    monkeypatch.setattr(extras, "_checkout", lambda: ROOT)
    assert extras.install_command("report") == "pip install '%s[report]'" % ROOT


def test_no_hint_names_the_package_index():
    """`pip install 'archive-profiler[X]'` fails: no page, config or message says it."""
    found = []
    for top in ("profiler", "docs", "conf", "README.md", "CHANGES.md"):
        path = os.path.join(ROOT, top)
        files = [path] if os.path.isfile(path) else [os.path.join(d, n) for d, _, names in os.walk(path) for n in names
                                                        if n.endswith((".py", ".md", ".yaml", ".conf", ".html", ".cfg"))]
        for name in files:
            with open(name, encoding="utf-8", errors="replace") as f:
                if "'archive-profiler[" in f.read():
                    found.append(os.path.relpath(name, ROOT))
    assert not found


@pytest.mark.parametrize("blocked, argv, extra", [
    ("uvicorn", ["serve", "x.ukvs"], "serve"),
    ("matplotlib", ["report", "x.cdxj", "-o", "r.html"], "report"),
    ("fastwarc", ["profile", os.path.join(ROOT, "samples", "sample-5k.cdx.gz"), "-o", "-", "--warc-reader",
                  "fastwarc"], "fastwarc"),
])
def test_every_missing_extra_says_the_same_command(tmp_path, blocked, argv, extra):
    code = ("import sys; sys.modules[%r] = None; from profiler.cli.main import main; sys.exit(main(sys.argv[1:]))"
            % blocked)
    r = subprocess.run([sys.executable, "-c", code] + argv, capture_output=True, text=True, cwd=str(tmp_path),
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "needs the %s extra" % extra in r.stderr
    assert r.stderr.rstrip().endswith(extras.install_command(extra)), r.stderr
