"""Profiles of the bundled sample, and readers of their lines, for the report tests."""

import html.parser
import json
import os
import tempfile

import pytest

from profiler.run.profile import run_profile

from helpers.paths import ROOT


SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


CHART_IDS = ["captures-per-year", "mime-by-captures", "mime-by-bytes", "status-classes", "tlds-by-urim",
             "tlds-by-urir", "tlds-by-bytes", "hosts-by-urim", "hosts-by-urir", "hosts-by-bytes",
             "dedup-per-year"]


def make_profile(folder, policy="default"):
    """Profile the bundled sample (inline runner) into folder; temp files stay in folder."""
    out = os.path.join(str(folder), "sample.cdxj")
    with pytest.MonkeyPatch.context() as mp:
        tmp = os.path.join(str(folder), "tmp")
        os.makedirs(tmp, exist_ok=True)
        mp.setenv("TMPDIR", tmp)
        mp.setattr(tempfile, "tempdir", tmp)
        run_profile([SAMPLE], out, policy, archive_uri="https://archive.example.org/")
    return out



def make_profile_of_policy(folder, name, text):
    """make_profile with the policy file folder/NAME.yaml that holds text."""
    path = os.path.join(str(folder), name + ".yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return make_profile(folder, path)

def data_lines(path):
    """{key: value} of a profile, read here with the standard library only."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith(("!", "@")):
                key, _, value = line.rstrip("\n").partition(" {")
                out[key] = json.loads("{" + value)
    return out


def matching(lines, pattern, keep=lambda field: field != "-"):
    """{field: value} of the keys matching a pattern of literals and one None (the field returned)."""
    out = {}
    for key, value in lines.items():
        fields = key.split(" ")
        captured = [f for f, p in zip(fields, pattern) if p is None][0]
        if all(p is None or p == f for f, p in zip(fields, pattern)) and keep(captured):
            out[captured] = value
    return out


def is_year(field):
    return len(field) == 4 and field.isdigit()


def num(text):
    return int(text.replace(",", ""))


class Page(html.parser.HTMLParser):
    """Tables (id -> rows of cell text), figures (id -> has an <svg>, its classes), all ids."""

    def __init__(self):
        super().__init__()
        self.tables, self.figures, self.ids, self.tags = {}, {}, [], []
        self._table = self._row = self._cell = self._figure = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "table":
            self._table = self.tables.setdefault(a.get("id"), [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "figure":
            self._figure = a["id"]
            self.figures[a["id"]] = {"svg": False, "class": a.get("class", "")}
        elif tag == "svg" and self._figure:
            self.figures[self._figure]["svg"] = True

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._table.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "figure":
            self._figure = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse_page(path):
    page = Page()
    with open(path, encoding="utf-8") as f:
        page.feed(f.read())
    return page
