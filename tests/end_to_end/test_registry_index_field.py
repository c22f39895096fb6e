"""A criterion a plugin reads from an index's JSON field (tests/helpers/charsets.py: Common
Crawl's ``charset``, read with profiler.formats.registry.index_field) reaches a profile: a CDXJ
line's field gives the capture's value, a line without it and a CDX give ``unk``, its two
levels are written, and the compiled and pure-Python runs write the same lines; maps broken
down by it merge where the plugin is named, and are refused in one line where it is not."""

import json
import os

import pytest
import yaml

from profiler import contract, plugins
from profiler.formats import cdxj, cdxserver, owbcdxj, registry
from profiler.model import capture

from helpers.cliruns import run
from helpers.registries import keep

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

POLICY = {"name": "charset", "host_depth": 1, "path_depth": 0, "exact_urls": False,
          "levels": {"datetime": ["year"], "charset": ["family", "name"]},
          "emit": {"root": {"datetime": ["any", "year"], "charset": ["any", "family", "name"]},
                   "tld": {"datetime": ["any", "year"], "charset": ["any", "family"]},
                   "suffix": "none", "domain": "none", "subdomain": "none", "host": "none", "path": "none"}}


def _line(surt, ts, **fields):
    return "%s %s %s\n" % (surt, ts, json.dumps(dict({"url": "http://x/", "mime": "text/html", "status": "200",
                                                      "digest": "A" * 32, "length": "100"}, **fields)))


@pytest.fixture
def loaded(monkeypatch):
    keep(monkeypatch)
    monkeypatch.setenv(contract.PLUGINS_ENV, "helpers.charsets")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([TESTS] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    assert plugins.load() == ["helpers.charsets"]


def test_a_cdxj_json_field_gives_a_plugin_field(loaded):
    got = cdxj.parse(_line("com,a)/", "20200101000000", charset="UTF-8").encode())
    assert got.charset == "unicode/utf-8"
    assert cdxj.parse(_line("com,a)/", "20200101000000", charset="Windows-1252").encode()).charset == "other/windows-1252"
    assert cdxj.parse(_line("com,a)/", "20200101000000").encode()).charset == "unk"
    assert capture.new(urlkey="com,a)/", timestamp="20200101000000").charset == "unk"


def test_every_index_of_json_fields_gives_it(loaded):
    """A CDX server's JSON lines and an OpenWayback CDXJ's block read the same field."""
    answer = b'{"urlkey": "com,a)/", "timestamp": "20200101000000", "url": "http://a.com/", "charset": "utf-8"}'
    assert [c.charset for c in cdxserver.captures_of_lines([answer])] == ["unicode/utf-8"]
    owb = (b'(com,a,)/ 2020-01-01T00:00:00Z response {"uri": "http://a.com/", "hsc": "200", "mct": "text/html", '
           b'"rle": "10", "charset": "iso-8859-1"}')
    assert owbcdxj.parse(owb).charset == "other/iso-8859-1"


def test_an_index_field_is_read_once(loaded):
    with pytest.raises(ValueError):
        registry.index_field("charset", "charset", str)          # already read
    with pytest.raises(ValueError):
        registry.index_field("mime", "mime", str)                # not a plugin's field


@pytest.mark.parametrize("pure", ["", "1"])
def test_a_profile_counts_by_the_json_field(loaded, tmp_path, monkeypatch, pure):
    monkeypatch.setenv("ARCHIVE_PROFILER_PURE_PYTHON", pure) if pure else None
    src = tmp_path / "cc.cdxj"
    src.write_text(_line("com,a)/", "20200101000000", charset="UTF-8")
                   + _line("com,a)/b", "20210101000000", charset="ISO-8859-1")
                   + _line("org,c)/", "20210101000000"))
    policy = tmp_path / "charset.yaml"
    policy.write_text(yaml.safe_dump(POLICY))
    out = tmp_path / "p.cdxj"
    assert run("profile", src, "-o", out, "--policy", policy, "-r", "inline", "-q") == 0
    lines = {line.split(" {")[0]: json.loads(line[line.index("{"):])
             for line in out.read_text().splitlines() if not line.startswith("!")}
    assert lines["* - - - unicode/utf-8"]["urim"]["total"] == 1
    assert lines["* 2021 - - other/iso-8859-1"]["urim"]["total"] == 1
    assert lines["* - - - unk"]["urim"]["total"] == 1
    assert lines["com,* - - - unicode/*"]["urim"]["total"] == 1
    assert lines["org,* - - - unk"]["urim"]["total"] == 1


def _charset_map(path, total, other):
    path.write_text('!context ["http://oduwsdl.github.io/contexts/ukvs"]\n'
                    '!fields {"keys":["surt"],"values":["frequency"]}\n!id {"uri":null}\n'
                    '!meta {"type":"MementoMap","breakdown":["charset"]}\n'
                    '* %d/%d {"charset":{"other/*":"%d/%d","unk":"%d/%d"}}\n'
                    % (total, total, other, other, total - other, total - other))
    return path


def test_maps_of_a_criterion_not_loaded_are_not_merged(tmp_path, capsys):
    """Where the plugin is not named, merging two maps broken down by its criterion is refused in
    one line naming it: their breakdowns could not add up, and were dropped from the lines in both."""
    a, b = _charset_map(tmp_path / "a.ukvs", 10, 4), _charset_map(tmp_path / "b.ukvs", 6, 1)
    out = tmp_path / "m.ukvs"
    assert run("merge", a, b, "-o", out) == 2
    err = capsys.readouterr().err
    assert "charset" in err and contract.PLUGINS_ENV in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_maps_of_a_loaded_criterion_merge_their_breakdowns(loaded, tmp_path):
    a, b = _charset_map(tmp_path / "a.ukvs", 10, 4), _charset_map(tmp_path / "b.ukvs", 6, 1)
    out = tmp_path / "m.ukvs"
    assert run("merge", a, b, "-o", out, "-q") == 0
    assert '"other/*":"5/5' in out.read_text()


_FEWER_LEVELS = '''
from helpers import charsets
from profiler.formats import registry
from profiler.model import capture, criteria, normalise

CHARSET = criteria.Criterion(
    "charset", "charset", (criteria.Level("name", criteria.IDENTITY),), ("name",), charsets._levels,
    ("unicode/utf-8",), r"-|unk|(unicode|other)/(\\*|[a-z0-9._-]{1,40})", "unk or a charset", optional=True)


def register():
    capture.add_field("charset", normalise.UNKNOWN)
    criteria.register(CHARSET)
    registry.index_field("charset", "charset", charsets.charset_of)
'''


def test_a_profile_of_levels_the_loaded_criterion_lacks_is_refused(loaded, tmp_path):
    """A profile written with the plugin's two levels, read where another version of the plugin
    registers the criterion with its name level only: its family lines ('unicode/*', every UTF
    charset's captures) were read as names, and validate said valid. Every reader refuses it in
    one line naming the level; validate lists it."""
    import subprocess
    import sys
    src = tmp_path / "cc.cdxj"
    src.write_text(_line("com,a)/", "20200101000000", charset="UTF-8")
                   + _line("com,a)/b", "20210101000000", charset="UTF-16"))
    policy = tmp_path / "charset.yaml"
    policy.write_text(yaml.safe_dump(POLICY))
    out = tmp_path / "p.cdxj"
    assert run("profile", src, "-o", out, "--policy", policy, "-r", "inline", "-q") == 0
    (tmp_path / "charsets_v1.py").write_text(_FEWER_LEVELS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), TESTS]), **{contract.PLUGINS_ENV: "charsets_v1"})
    for argv in (["query", out, "--charset", "unicode/*"], ["ukvs", out, "-o", tmp_path / "m.ukvs"],
                 ["lookup", out, "http://a.com/"], ["merge", out, src, "-o", tmp_path / "m.cdxj"]):
        r = subprocess.run([sys.executable, "-m", "profiler.cli"] + [str(a) for a in argv], env=env,
                           capture_output=True, text=True)
        assert r.returncode == 2 and "'family'" in r.stderr and len(r.stderr.strip().splitlines()) == 1, (argv, r.stderr)
    assert not (tmp_path / "m.ukvs").exists() and not (tmp_path / "m.cdxj").exists()
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "validate", str(out)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 1 and "'family'" in r.stdout, r.stdout + r.stderr
