"""export: a profile as JSON-LD (the CDXJ blog's serialisation), streamed: valid JSON (read back
with a JSON parser) whose nested values are the profile's lines, numbers equal; a damaged profile
refused before anything is written."""

import json
import os
import subprocess
import sys

import pytest

from profiler.files.profilefile import iter_data
from profiler.run.profile import run_profile
from profiler.testing import synthetic
from profiler.toolkit.export import export

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def leaves(tree, depth, prefix=()):
    """(key fields, value) of a nested profile tree, depth key fields deep."""
    for field, sub in tree.items():
        if depth == 1:
            yield prefix + (field,), sub
        else:
            yield from leaves(sub, depth - 1, prefix + (field,))


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    d = tmp_path_factory.mktemp("export")
    cdx = d / "a.cdx"
    cdx.write_text(synthetic.LEGEND + "\n" + "".join(synthetic.cdx_lines(2000, seed=9)))
    out = str(d / "a.cdxj")
    run_profile([str(cdx)], out, "full", archive_uri="https://a.example.org/")
    return out


def test_jsonld_is_the_profile_nested(profile, tmp_path):
    out = str(tmp_path / "a.jsonld")
    n = export(profile, out)
    with open(out, "rb") as f:
        doc = json.load(f)          # valid JSON; numbers as Python ints, exact
    assert doc["@context"] == ["http://oduwsdl.github.io/contexts/archiveprofiles"]
    assert doc["@id"] == "https://a.example.org/"
    assert doc["keys"] == ["surt", "datetime", "mime", "status"]
    assert any("policy" in m for m in doc["meta"])
    expected = [(k.decode().split(" "), v) for k, v in iter_data(profile)]
    got = [(list(k), v) for k, v in leaves(doc["profile"], 4)]
    assert n == len(expected) and got == expected


def test_cli_and_a_damaged_profile(profile, tmp_path):
    out = str(tmp_path / "b.jsonld")
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "export", profile, "--format", "jsonld", "-o", out],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    json.loads(open(out, "rb").read())
    bad = tmp_path / "bad.cdxj"
    bad.write_bytes(open(profile, "rb").read()[:-20])
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "export", str(bad), "-o", str(tmp_path / "c.jsonld")],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "cut short" in r.stderr and "Traceback" not in r.stderr
    assert not os.path.exists(tmp_path / "c.jsonld")


def test_a_foreign_profile_exports_too(tmp_path):
    path = tmp_path / "blog.cdxj"
    path.write_bytes(b'@keys ["surt_uri", "year"]\n'
                     b'com,cnn)/world - {"urim": {"min": 1, "max": 3, "total": 5}, "urir": 2}\n'
                     b'com,cnn)/world 2013 {"frequency": 3, "spread": 1}\n')
    out = str(tmp_path / "blog.jsonld")
    export(str(path), out)
    doc = json.load(open(out))
    assert doc["keys"] == ["surt", "datetime"]
    assert doc["profile"]["com,cnn)/world"]["2013"] == {"urim": {"total": 3}, "spread": 1}
