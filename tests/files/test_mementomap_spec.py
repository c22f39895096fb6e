"""The MementoMap/UKVS seed's own examples: aligned columns, relaxed JSON, frequencies of every
form and datetime breakdown blocks validate (with notes), look up as the spec says, and merge
keeping their blocks."""

import os
import subprocess
import sys

import orjson
import pytest

from profiler.toolkit.lookup import Lookup
from profiler.files.validate import validate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: the seed's first example, and its frequency, blacklist and datetime examples in one sorted map
SEED = """!context ["http://oduwsdl.github.io/contexts/ukvs"]
!id {uri: "http://archive.example.org/"}
!fields {keys: ["surt"], values: ["frequency"]}
!meta {type: "MementoMap", name: "A Test Web Archive", year: 1996}
!meta {updated_at: "2018-09-03T13:27:52Z"}
*                   54321
com,*               10000
com,apple)/*    300
com,cnn)/*      400+/100
com,cnn)/profiles/* 0
com,cnn)/world      0
com,example)/*  200-/150~
com,facebook)/* /50+
com,google)/*   /
com,twitter)/       100
com,twitter)/*      250 {datetime: {"2014": "20~/10", "2015": "60+/30+"}}
com,yahoo)/* 0/20
uk,co,bbc)/images/* 300
"""

#: the seed's datetime-keyed example, in byte order (the seed lists ':' first: lookups need the
#: order, so validate reports that line order as a problem)
DATED = """!context ["http://oduwsdl.github.io/contexts/ukvs"]
!fields {keys: ["surt", "datetime"], values: ["frequency"]}
com,twitter)/* 2014 20~/10
com,twitter)/* 2015 60+/30+
com,twitter)/* :    100/35
"""


def cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, cwd=ROOT,
                          input=stdin, env=dict(os.environ, PYTHONPATH=ROOT))


@pytest.fixture
def seed(tmp_path):
    path = tmp_path / "seed.ukvs"
    path.write_text(SEED)
    return str(path)


@pytest.mark.parametrize("text", [SEED, DATED])
def test_seed_examples_validate_with_notes(tmp_path, text):
    path = tmp_path / "m.ukvs"
    path.write_text(text)
    report = validate(str(path))
    assert report.ok, report.problems
    notes = " ".join(n.message for n in report.notes)
    assert "aligned columns" in notes and "relaxed JSON" in notes
    r = cli("validate", str(path))
    assert r.returncode == 0 and b"note: aligned columns" in r.stdout


def test_the_output_contract_example_map(tmp_path):
    """../shared/spec/profile-format.md section 5's example (its !meta elides content with ...)."""
    spec = os.path.join(os.path.dirname(ROOT), "shared", "spec", "profile-format.md")
    if not os.path.exists(spec):
        if os.environ.get("CI") == "true":
            pytest.fail("../shared/spec/profile-format.md is missing")
        pytest.skip("no ../shared/spec")
    text = open(spec).read()
    block = text[text.index("## 5."):].split("```")[1].strip("\n") + "\n"
    path = tmp_path / "contract.ukvs"
    path.write_text(block)
    report = validate(str(path))
    assert report.ok, report.problems
    assert any("malformed !meta" in n.message for n in report.notes)
    with Lookup(str(path)) as lk:
        assert (lk.lookup("http://cnn.com/x").key, lk.lookup("http://cnn.com/x").status) == (b"com,cnn)/*", "held")
        assert lk.lookup("http://foo.org/").key == b"*"


def test_dated_seed_lookups(tmp_path):
    path = tmp_path / "d.ukvs"
    path.write_text(DATED)
    with Lookup(str(path)) as lk:
        assert (lk.lookup("http://twitter.com/a", "2015").date, lk.lookup("http://twitter.com/a", "2015").key) == \
            ("period", b"com,twitter)/* 2015")
        assert lk.lookup("http://twitter.com/a").key == b"com,twitter)/* :"


def test_real_problems_stay_problems(tmp_path):
    path = tmp_path / "bad.ukvs"
    path.write_text(SEED.replace("com,apple)/*    300", "com,apple)/*    3x0")
                    .replace('{datetime: {"2014"', '{datetime: {"20x4"'))
    report = validate(str(path))
    assert not report.ok
    messages = " ".join(p.message for p in report.problems)
    assert "3x0" in messages and "20x4" in messages
    path.write_text(SEED + "com,a)/ 5\n")                  # out of order
    assert not validate(str(path)).ok
    path.write_text(SEED.replace('!meta {updated_at: "2018-09-03T13:27:52Z"}', '!meta [1, 2]'))
    report = validate(str(path))
    assert report.ok and "!meta is not a JSON object" in " ".join(n.message for n in report.notes)


@pytest.mark.parametrize("uri, dt, status, key, freq, date", [
    ("http://apple.com/x", None, "held", "com,apple)/*", "300", None),
    ("http://cnn.com/profiles/jane", None, "not-held", "com,cnn)/profiles/*", "0", None),
    ("http://cnn.com/world", None, "not-held", "com,cnn)/world", "0", None),
    ("http://cnn.com/us", None, "held", "com,cnn)/*", "400+/100", None),
    ("http://yahoo.com/a", None, "not-held", "com,yahoo)/*", "0/20", None),
    ("http://google.com/", None, "held", "com,google)/*", "/", None),
    ("http://twitter.com/", None, "held", "com,twitter)/", "100", None),
    ("http://bbc.co.uk/images/x.png", None, "held", "uk,co,bbc)/images/*", "300", None),
    ("http://bbc.co.uk/news", None, "held", "*", "54321", None),
    ("http://twitter.com/jack", "2014", "held", "com,twitter)/*", "20~/10", "period"),
    ("http://twitter.com/jack", "201503", "held", "com,twitter)/*", "60+/30+", "period"),
    ("http://twitter.com/jack", "2016", "held", "com,twitter)/*", "250", "unknown"),
    ("http://apple.com/x", "2016", "held", "com,apple)/*", "300", "unknown"),
])
def test_seed_lookups(seed, uri, dt, status, key, freq, date):
    from profiler.files.ukvs import format_frequency
    with Lookup(seed) as lk:
        a = lk.lookup(uri, dt)
    assert (a.status, a.key.decode(), format_frequency(a.frequency), a.date) == (status, key, freq, date)


def test_complete_breakdown_rules_other_years_out(tmp_path):
    path = tmp_path / "m.ukvs"
    path.write_text('!fields {"keys":["surt"],"values":["frequency"]}\n'
                    'com,a)/* 10/4 {"datetime":{"2014":"4/2","2015":"6/3"}}\n'
                    'com,b)/* 10/4 {"datetime":{"2014":"4/2","2015":"5/3"}}\n')
    with Lookup(str(path)) as lk:
        assert lk.lookup("http://a.com/", "2016")[1:2] == ("not-held",)      # 4 + 6 = 10: complete
        assert lk.lookup("http://b.com/", "2016").date == "unknown"         # 4 + 5 < 10: cannot tell
        assert lk.lookup("http://a.com/", "2015").frequency.urim == 6
    r = cli("lookup", str(path), "-", "--datetime", "2016", stdin=b"http://a.com/\nhttp://b.com/\n")
    assert [line.split("\t")[1] for line in r.stdout.decode().splitlines()] == ["not-held", "held"]


def test_merge_keeps_and_adds_breakdowns(tmp_path):
    a, b, out = tmp_path / "a.ukvs", tmp_path / "b.ukvs", tmp_path / "m.ukvs"
    a.write_text('!fields {keys: ["surt"], values: ["frequency"]}\n'
                 'com,t)/* 100/35 {datetime: {"2014": "20/10", "2015": "80/30"}, note: "a"}\n'
                 'com,x)/* 5 {"rollup":true}\n')
    b.write_text('!fields {"keys":["surt"],"values":["frequency"]}\n'
                 'com,t)/* 10/5 {"datetime": {"2015": "4/2", "2016": "6/3"}, "note": "b"}\n'
                 'com,y)/* 2 {"datetime": {"2019": 2}}\n')
    r = cli("merge", str(a), str(b), "-o", str(out), "--disjoint", "urir")
    assert r.returncode == 0, r.stderr
    lines = {l.split(b" ")[0]: l for l in out.read_bytes().splitlines() if not l.startswith(b"!")}
    t = orjson.loads(lines[b"com,t)/*"].split(b" ", 2)[2])
    assert lines[b"com,t)/*"].split(b" ")[1] == b"110/40"
    assert t == {"datetime": {"2014": "20/10", "2015": "84/32", "2016": "6/3"}}      # notes differ: dropped
    assert lines[b"com,x)/*"].endswith(b'{"rollup":true}')
    assert lines[b"com,y)/*"].endswith(b'{"datetime": {"2019": 2}}')                  # a lone line as it was
    assert b"1 merged line(s) dropped extra attributes" in r.stderr
    assert validate(str(out)).ok
    with Lookup(str(out)) as lk:
        assert lk.lookup("http://t.com/", "2016").frequency.urim == 6
