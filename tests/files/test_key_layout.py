"""The key layout of a profile file, from its !keys: parsed, described, compared; and the tools
that refuse a malformed !keys in one line."""

import json

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
@pytest.mark.parametrize("value", [["surt", "datetime", "mime", "status", "colour"], ["datetime"],
                                   ["surt", "datetime", "mime"] + ["datetime", "status"], ["datetime", "surt", "mime", "status"],
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


SIZED = ["surt", "datetime", "mime", "status", "size", "depth"]
#: the same fields in another order: readers find each field by its name (spec section 2)
REORDERED = ["surt", "depth", "size", "status", "datetime", "mime"]
CDX = (b" CDX N b a m s k r M S V g\n"
       b"com,example)/a 20130101000000 http://example.com/a text/html 200 AAAA - - 1500 0 w.warc.gz\n"
       b"com,example)/a 20140101000000 http://example.com/a text/html 200 AAAA - - 1600 0 w.warc.gz\n"
       b"com,example)/b 20130505000000 http://example.com/b image/png 404 BBBB - - 10 0 w.warc.gz\n")


def _profile_in_order(tmp_path, order):
    """A profile of CDX whose key fields are written in ``order`` (by name), sorted again."""
    policy = tmp_path / "sized.yaml"
    policy.write_text("name: sized\nhost_depth: 3\npath_depth: 0\nexact_urls: false\n"
                      "levels: {datetime: [year], mime: [type, class], status: [class], size: [class], "
                      "depth: [hops]}\n")
    (tmp_path / "in.cdx").write_bytes(CDX)
    canonical = tmp_path / "canonical.cdxj"
    assert main(["profile", str(tmp_path / "in.cdx"), "-o", str(canonical), "--policy", str(policy), "-q"]) == 0
    head, data = [], []
    for line in canonical.read_bytes().splitlines():
        if line.startswith(b"!keys"):
            head.append(b"!keys " + json.dumps(order, separators=(",", ":")).encode())
        elif line.startswith(b"!"):
            head.append(line)
        else:
            key, value = line.split(b" {", 1)
            by_name = dict(zip(SIZED, key.split(b" ")))
            data.append(b" ".join(by_name[n] for n in order) + b" {" + value)
    out = tmp_path / ("%s.cdxj" % "-".join(order[1:]))
    out.write_bytes(b"\n".join(sorted(head) + sorted(data)) + b"\n")
    return canonical, out


def test_a_keys_line_in_another_order_is_read_by_name():
    five = layout.of_headers([("!keys", REORDERED)], "p")
    assert five.fields == tuple(REORDERED) and layout.index(five, "mime") == 5
    assert layout.key(five, "*", mime="html", size="1k-10k") == "* - 1k-10k - - html"


@pytest.mark.parametrize("command", [["query", "{p}", "--mime", "html", "--size", "1k-10k", "--status", "2xx"],
                                     ["query", "{p}", "--surt", "com,*", "--datetime", "2013", "--depth", "unk"],
                                     ["lookup", "{p}", "http://example.com/a", "--datetime", "2014"],
                                     ["lookup", "{p}", "http://example.com/a", "--datetime", "2014", "--size", "1k-10k"],
                                     ["lookup", "{p}", "http://example.com/b", "--datetime", "2014", "--depth", "unk"]])
def test_tools_answer_a_profile_whose_keys_come_in_another_order(tmp_path, capsys, command):
    """The same answer, its key in the file's order, whatever order !keys gives the fields in."""
    canonical, reordered = _profile_in_order(tmp_path, REORDERED)
    answers = []
    for path in (canonical, reordered):
        assert main([a.format(p=path) for a in command]) == 0
        answers.append(capsys.readouterr().out)
    key, value = answers[1].rstrip("\n").split(" {", 1) if command[0] == "query" else \
        (answers[1].split("\t")[2], "\t".join(answers[1].split("\t")[3:]))
    by_name = dict(zip(REORDERED, key.split(" ")))
    canonical_key = " ".join(by_name[n] for n in SIZED)
    assert answers[0] == (canonical_key + " {" + value + "\n" if command[0] == "query" else
                          answers[1].replace(key, canonical_key))


@pytest.mark.parametrize("command", [["validate", "{p}"], ["ukvs", "{p}", "-o", "{o}"], ["report", "{p}", "-o", "{o}"],
                                     ["merge", "{p}", "{p2}", "-o", "{o}"], ["diff", "{p}", "{p2}"],
                                     ["compact", "{p}", "-o", "{o}", "--max-lines", "10"],
                                     ["split", "{p}", "--max-lines", "20", "-o", "{o}"]])
def test_every_tool_reads_a_profile_whose_keys_come_in_another_order(tmp_path, command):
    if command[0] == "report":
        pytest.importorskip("jinja2")
    _, p = _profile_in_order(tmp_path, REORDERED)
    p2 = tmp_path / "p2.cdxj"
    p2.write_bytes(p.read_bytes().replace(b"!id {\"uri\":null}", b"!id {\"uri\":\"https://b.example/\"}"))
    assert main([a.format(p=p, p2=p2, o=tmp_path / "out") for a in command] + ["-q"] * (command[0] != "validate")) == 0


def test_validate_notes_key_fields_in_another_order_than_the_writers(tmp_path, capsys):
    canonical, reordered = _profile_in_order(tmp_path, REORDERED)
    assert main(["validate", str(reordered)]) == 0
    assert "another order than the spec's" in capsys.readouterr().out
    assert main(["validate", str(canonical)]) == 0
    assert "another order" not in capsys.readouterr().out


def test_merge_refuses_the_same_fields_in_another_order_in_one_line(tmp_path, capsys):
    """A merge streams its sorted inputs: their shared key fields must come in one order."""
    canonical, reordered = _profile_in_order(tmp_path, REORDERED)
    assert main(["merge", str(canonical), str(reordered), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "another order" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("keys", ["surt", "surt,datetime"])
def test_a_map_of_a_profile_whose_keys_come_in_another_order_keeps_its_breakdowns(tmp_path, keys):
    """The map's lines and their breakdowns by size and depth are the same whatever order !keys
    gives (a year's lines of a size come after the SURT's other years when size comes first)."""
    canonical, reordered = _profile_in_order(tmp_path, REORDERED)
    maps = []
    for path in (canonical, reordered):
        out = tmp_path / (path.name + ".ukvs")
        assert main(["ukvs", str(path), "-o", str(out), "--keys", keys, "-q"]) == 0
        lines = [line.split(b" {", 1) for line in out.read_bytes().splitlines() if not line.startswith(b"!")]
        maps.append([(line[0], json.loads(b"{" + line[1]) if len(line) > 1 else None) for line in lines])
    assert maps[0] == maps[1] and any(value and "size" in value for _, value in maps[0])
