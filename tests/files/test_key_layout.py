"""The key layout of a profile file, from its !keys: parsed, described, compared; and the tools
that refuse a malformed !keys in one line."""

import pytest

from profiler.cli.main import main
from profiler.files import layout
from profiler.model import criteria

FIVE = ["surt", "datetime", "mime", "status", "lang"]
VALUE = b'{"urim":{"total":1,"min":1,"max":1},"urir":1,"bytes":1,"digests":1,"dedup_bytes":1,' \
        b'"first":"20200101000000","last":"20200101000000"}'


def test_layouts_from_headers():
    core = layout.of_headers([("!context", [])], "p")
    assert core == criteria.CORE_LAYOUT and core.fields == ("surt", "datetime", "mime", "status")
    five = layout.of_headers([("@keys", FIVE)], "p")
    assert five.fields == tuple(FIVE) and layout.has(five, "lang") and not layout.has(core, "lang")
    assert layout.index(five, "lang") == 4 and layout.describe(five) == "surt datetime mime status lang"
    assert layout.any_suffix(five) == b" - - - -" and layout.any_suffix(core) == b" - - -"
    assert layout.key(five, "*", lang="ara") == "* - - - ara"
    assert layout.key(five, b"com,*", datetime="2013") == b"com,* 2013 - - -"
    assert layout.is_any(["*", "2013", "-", "-", "-"], five, ("datetime",))
    assert not layout.is_any(["*", "2013", "-", "-", "ara"], five, ("datetime",))
    assert [c.name for c in layout.optional(five)] == ["lang"] and layout.optional(core) == ()


# (["surt", "datetime", "mime"]: another producer's layout, some criteria: tests/files/test_foreign_profiles.py)
@pytest.mark.parametrize("value", [["surt", "datetime", "status", "mime"],
                                   ["surt", "datetime", "mime", "status", "colour"], ["datetime"],
                                   ["surt", "datetime", "mime", "status", "lang", "lang"], "surt", {"a": 1}, [1]])
def test_unknown_or_malformed_keys(value):
    with pytest.raises(layout.LayoutError) as e:
        layout.of_headers([("!keys", value)], "f.cdxj")
    assert str(e.value).startswith("f.cdxj: !keys ") and "\n" not in str(e.value)


def test_require_same_names_both_files():
    core, five = criteria.CORE_LAYOUT, layout.parse(FIVE, "b")
    assert layout.require_same("merge", ["a", "b"], [five, five]) == five
    with pytest.raises(layout.LayoutError) as e:
        layout.require_same("merge", ["A", "B"], [five, core])
    assert str(e.value) == "cannot merge: A has keys surt datetime mime status lang, B has surt datetime mime status"


@pytest.mark.parametrize("command", [["query", "{p}"], ["lookup", "{p}", "http://example.com/"],
                                     ["ukvs", "{p}", "-o", "{o}"], ["report", "{p}", "-o", "{o}"],
                                     ["merge", "{p}", "{p2}", "-o", "{o}"], ["diff", "{p}", "{p2}"],
                                     ["overlap", "{p}", "{p2}"], ["compact", "{p}", "-o", "{o}", "--max-lines", "9"],
                                     ["split", "{p}", "--max-lines", "1", "-o", "{o}"]])
def test_tools_refuse_unknown_keys_in_one_line(tmp_path, capsys, command):
    p = tmp_path / "p.cdxj"
    p.write_bytes(b'!keys ["surt","datetime","mime","status","colour"]\n* - - - - ' + VALUE + b"\n")
    p2 = tmp_path / "p2.cdxj"
    p2.write_bytes(p.read_bytes())
    args = [a.format(p=p, p2=p2, o=tmp_path / "out") for a in command]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "!keys" in err and "colour" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
