"""Profiles other producers write (the CDXJ blog's example: ``@keys ["surt_uri", "year"]``,
several ``@meta`` lines, values ``{"urim":{...},"urir":N}`` or ``{"frequency":N,"spread":N}``)
are read by validate, lookup, query and merge (profiler.files.layout.ALIASES, is_foreign;
profiler.files.datalines.foreign_value); a damaged one is still refused."""

import os
import subprocess
import sys

import pytest

from profiler.files import layout as layouts
from profiler.files.datalines import DamagedFile
from profiler.files.profilefile import iter_data
from profiler.files.validate import validate
from profiler.toolkit.lookup import Lookup as Index
from profiler.toolkit.merge import merge
from profiler.toolkit.query import query

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: the blog's example, in its shape: two @meta lines, both value styles
BLOG = b"""@context ["http://oduwsdl.github.io/contexts/archiveprofiles"]
@id {"uri": "http://www.webarchive.org.uk/ukwa/"}
@keys ["surt_uri", "year"]
@meta {"name": "UK Web Archive", "year": 2004}
@meta {"type": "urikey#H3P1", "profile_updated": "2015-09-03T13:27:52Z"}
com,cnn)/world - {"urim": {"min": 1, "max": 3, "total": 5}, "urir": 2}
com,cnn)/world 2013 {"urim": {"min": 1, "max": 2, "total": 3}, "urir": 2}
com,cnn)/world 2014 {"urim": {"min": 1, "max": 1, "total": 2}, "urir": 2}
uk,ac,odu)/* - {"frequency": 7, "spread": 3}
uk,ac,odu)/* 2015 {"frequency": 7, "spread": 1}
"""

OTHER = b"""@keys ["surt_uri", "year"]
com,cnn)/world - {"urim": {"min": 1, "max": 4, "total": 4}, "urir": 1}
com,cnn)/world 2014 {"urim": {"min": 1, "max": 4, "total": 4}, "urir": 1}
uk,ac,odu)/* - {"frequency": 2, "spread": 1}
"""


@pytest.fixture
def blog(tmp_path):
    path = tmp_path / "blog.cdxj"
    path.write_bytes(BLOG)
    return str(path)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))


def test_aliases_name_our_fields():
    assert layouts.canonical_names(["surt_uri", "year", "mimetype", "statuscode", "language"]) == [
        "surt", "datetime", "mime", "status", "lang"]
    assert layouts.canonical_names(["surt_uri", "colour"]) is None
    partial = layouts.parse(["surt_uri", "year"], "x")
    assert partial.fields == ("surt", "datetime") and layouts.is_foreign(partial)
    full = layouts.parse(["urlkey", "datetime", "mime_type", "status_code"], "x")
    assert full.fields == ("surt", "datetime", "mime", "status") and not layouts.is_foreign(full)
    assert layouts.parse(["surt", "datetime", "mime"], "x").fields == ("surt", "datetime", "mime")
    assert layouts.parse(["surt_uri", "mime", "year"], "x").fields == ("surt", "mime", "datetime")   # by name
    with pytest.raises(layouts.LayoutError):
        layouts.parse(["surt_uri", "year", "date"], "x")       # one field twice


def test_validate_accepts_with_notes(blog):
    report = validate(blog)
    assert report.ok, report.problems
    notes = " ".join(n.message for n in report.notes)
    assert "another producer's key fields" in notes and "another producer's value style" in notes
    r = cli("validate", blog)
    assert r.returncode == 0, r.stdout + r.stderr


def test_lookup_reads_both_value_styles(blog):
    with Index(blog, verify=True) as index:
        cnn = index.lookup("http://cnn.com/world")
        assert (cnn.status, cnn.key, cnn.frequency.urim, cnn.frequency.urir) == ("held", b"com,cnn)/world -", 5, 2)
        dated = index.lookup("http://cnn.com/world", "2013")
        assert (dated.key, dated.frequency.urim) == (b"com,cnn)/world 2013", 3)
        assert index.lookup("http://cnn.com/world", "2015").status == "not-held"
        odu = index.lookup("http://www.odu.ac.uk/about")
        assert (odu.key, odu.frequency.urim, odu.frequency.urir) == (b"uk,ac,odu)/* -", 7, None)
    r = cli("lookup", blog, "http://cnn.com/world")
    assert r.returncode == 0 and "held\tcom,cnn)/world -\t5/2" in r.stdout, r.stderr


def test_query_answers_with_what_the_lines_have(blog):
    found, note, _ = query(blog, {"surt": "com,cnn)/world"}, group=("datetime",), by="avg_bytes")
    assert [k for k, _ in found] == ["com,cnn)/world 2013", "com,cnn)/world 2014"]
    assert found[0][1] == {"urim.total": 3, "urim.min": 1, "urim.max": 2, "urir": 2}
    found, _, _ = query(blog, {"surt": "uk,ac,odu)/*", "datetime": "2015"})
    assert found[0][1]["urim.total"] == 7 and found[0][1]["extras"] == {"spread": 1}


def test_merge_adds_up_what_every_input_has(blog, tmp_path):
    other = tmp_path / "other.cdxj"
    other.write_bytes(OTHER)
    out = str(tmp_path / "m.cdxj")
    merge([blog, str(other)], out)
    assert validate(out).ok
    data = dict(iter_data(out))
    cnn = data[b"com,cnn)/world -"]
    assert cnn["urim"]["total"] == 9 and cnn["bounds"]["urir"] == [2, 3]
    assert data[b"uk,ac,odu)/* -"]["urim"] == {"total": 9}
    assert data[b"com,cnn)/world 2013"]["urim"]["total"] == 3


def test_a_damaged_foreign_line_is_refused(tmp_path):
    bad = tmp_path / "bad.cdxj"
    bad.write_bytes(BLOG.replace(b'{"frequency": 7, "spread": 1}', b'{"frequency": -7}'))
    assert not validate(str(bad)).ok
    with pytest.raises(DamagedFile, match="frequency is -7"):
        with Index(str(bad), verify=True):
            pass
    r = cli("lookup", str(bad), "http://cnn.com/world")
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
