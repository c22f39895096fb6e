"""validate: passes on every file the tool writes, fails with line numbers on corrupted copies."""

import os
import re
import subprocess
import sys

import pytest

from profiler.testing import synthetic
from profiler.toolkit.compact import compact_file
from profiler.toolkit.merge import merge
from profiler.run.profile import run_profile
from profiler.model.policy import available
from profiler.toolkit.split import split
from profiler.files.ukvs import profile_to_map
from profiler.files.validate import validate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Every kind of file the tool writes: profiles of each bundled policy, maps, merges, pages."""
    d = tmp_path_factory.mktemp("validate")
    parts = [str(d / "a.cdx"), str(d / "b.cdx")]
    synthetic.write_cdx_parts(parts, 600, seed=5)
    files = {}
    for policy in available():
        files[policy] = str(d / ("%s.cdxj" % policy))
        run_profile(parts, files[policy], policy)
    run_profile(parts[:1], str(d / "a.cdxj"), "default")
    run_profile(parts[1:], str(d / "b.cdxj"), "default")
    files["merged"] = str(d / "merged.cdxj")
    merge([str(d / "a.cdxj"), str(d / "b.cdxj")], files["merged"])
    files["map"] = str(d / "map.ukvs")
    profile_to_map(files["default"], files["map"])
    files["map_dt"] = str(d / "map-dt.ukvs")
    profile_to_map(files["default"], files["map_dt"], ("surt", "datetime"))
    files["merged_map"] = str(d / "merged.ukvs")
    profile_to_map(str(d / "a.cdxj"), str(d / "a.ukvs"))
    profile_to_map(str(d / "b.cdxj"), str(d / "b.ukvs"))
    merge([str(d / "a.ukvs"), str(d / "b.ukvs")], files["merged_map"])
    files["compact_map"] = str(d / "compact.ukvs")
    compact_file(files["map_dt"], files["compact_map"], max_lines=60)
    for name in ("merged", "map_dt"):
        for i, page in enumerate(split(files[name], 150, str(d / ("page-" + name)))):
            files["%s_page%d" % (name, i)] = page
    return files


def test_everything_written_validates(written):
    assert {"default", "hosts", "full", "merged", "map", "merged_map", "merged_page0", "map_dt_page1",
            "compact_map"} <= set(written)
    for name, path in written.items():
        report = validate(path)
        assert report.ok, (name, report.problems[:5])
        assert report.kind == ("ukvs" if "map" in name else "cdxj")
        assert report.data_lines > 0


def _lines(path):
    with open(path, "rb") as f:
        return f.read().split(b"\n")[:-1]


def _first_data(lines):
    return next(i for i, l in enumerate(lines) if l[:1] not in (b"!", b"@"))


def _corrupt(lines, how, h):
    """Return (lines, 1-based line number expected in the report)."""
    lines = list(lines)
    i = h + 3
    if how == "empty line":
        lines.insert(i, b"")
    elif how == "double space":
        lines[i] = lines[i].replace(b" ", b"  ", 1)
    elif how == "leading space":
        lines[i] = b" " + lines[i]
    elif how == "space before JSON":
        lines[i] = lines[i].replace(b" {", b"  {", 1)
    elif how == "unsorted":
        lines[i], lines[i - 1] = lines[i - 1], lines[i]
    elif how == "duplicate key":
        lines.insert(i, lines[i - 1][:lines[i - 1].index(b" {")] + b' {"urim":{"total":1,"min":1,"max":1},'
                     b'"urir":1,"bytes":0,"digests":0,"dedup_bytes":0,"first":"20000101000000",'
                     b'"last":"20000101000000"}')
    elif how == "bad JSON":
        lines[i] = lines[i][:-5]
    elif how == "multi-line JSON":
        key, _, js = lines[i].partition(b" {")
        lines[i:i + 1] = [key + b' {"urim":', js.split(b":", 1)[1]]
    elif how == "wrong field count":
        key, _, js = lines[i].partition(b" {")
        lines[i] = key.rsplit(b" ", 1)[0] + b" {" + js
    elif how == "header after data":
        lines.insert(i, b'!meta {"late":true}')
    elif how == "CRLF":
        lines[i] += b"\r"
    elif how == "tab in key":
        lines[i] = lines[i].replace(b" ", b"\t", 1)
    elif how == "inconsistent":
        lines[i] = lines[i].replace(b'"urir":', b'"urir":9999', 1)
    elif how == "missing feature":
        lines[i] = lines[i].replace(b',"digests":', b',"x":', 1)
    elif how == "bad timestamp":
        lines[i] = lines[i].replace(b'"first":"', b'"first":"x', 1)
    elif how == "headers unsorted":
        lines[0], lines[1] = lines[1], lines[0]
        return lines, 2
    else:
        raise AssertionError(how)
    return lines, i + 1


PROFILE_CORRUPTIONS = [
    ("empty line", "empty line"), ("double space", "more than one space"),
    ("space before JSON", "more than one space"), ("unsorted", "not in byte order"),
    ("duplicate key", "duplicate key"), ("bad JSON", "bad JSON"), ("multi-line JSON", "bad JSON"),
    ("wrong field count", "3 key fields, the header declares 4"), ("header after data", "header line after"),
    ("CRLF", "CRLF"), ("tab in key", "tab or control byte"), ("inconsistent", "inconsistent features"),
    ("missing feature", "missing feature(s): digests"), ("bad timestamp", "14-digit timestamp"),
    ("headers unsorted", "header lines not in byte order"),
]


@pytest.mark.parametrize("how, message", PROFILE_CORRUPTIONS)
def test_corrupted_profile_fails_with_line_number(written, tmp_path, how, message):
    lines = _lines(written["default"])
    bad, lineno = _corrupt(lines, how, _first_data(lines))
    path = tmp_path / "bad.cdxj"
    path.write_bytes(b"\n".join(bad) + b"\n")
    report = validate(str(path))
    assert not report.ok
    assert any(p.lineno == lineno and message in p.message for p in report.problems), report.problems


@pytest.mark.parametrize("source", ["merged", "merged_page1"])
def test_bounds_outside_the_value_fail(written, tmp_path, source):
    lines = _lines(written[source])
    i = next(i for i, l in enumerate(lines) if b'"bounds":{' in l and b'"urir":[' in l)
    lines[i] = re.sub(rb'"urir":\[[0-9]+,[0-9]+\]', b'"urir":[0,0]', lines[i])
    (tmp_path / "b.cdxj").write_bytes(b"\n".join(lines) + b"\n")
    report = validate(str(tmp_path / "b.cdxj"))
    assert [p.lineno for p in report.problems] == [i + 1]
    assert "lies outside its bounds [0, 0]" in report.problems[0].message


def test_missing_last_newline_and_missing_keys(written, tmp_path):
    lines = _lines(written["hosts"])
    (tmp_path / "a.cdxj").write_bytes(b"\n".join(lines))
    report = validate(str(tmp_path / "a.cdxj"))
    assert [(p.lineno, p.message) for p in report.problems] == [(len(lines), "no newline at the end of the last line")]
    (tmp_path / "b.cdxj").write_bytes(b"\n".join(l for l in lines if not l.startswith(b"!keys")) + b"\n")
    report = validate(str(tmp_path / "b.cdxj"))
    assert [p.message for p in report.problems] == ["no !keys header line before the data"]


@pytest.mark.parametrize("how, message", [
    ("bad frequency", "not a frequency"), ("extra field", "3 fields, expected 1 key field(s)"),
    ("leading space", "more than one space"), ("unsorted", "not in byte order"),
    ("CRLF", "CRLF"), ("empty line", "empty line"),
])
def test_corrupted_map_fails_with_line_number(written, tmp_path, how, message):
    lines = _lines(written["map"])
    i = _first_data(lines) + 3
    if how == "bad frequency":
        key, _, freq = lines[i].rpartition(b" ")
        lines[i] = key + b" " + freq.replace(b"/", b"/x")
    elif how == "extra field":
        lines[i] = lines[i].replace(b" ", b" 2013 ", 1)
    elif how == "double space":
        lines[i] = lines[i].replace(b" ", b"  ", 1)
    elif how == "leading space":
        lines[i] = b" " + lines[i]
    elif how == "unsorted":
        lines[i], lines[i - 1] = lines[i - 1], lines[i]
    elif how == "CRLF":
        lines[i] += b"\r"
    else:
        lines.insert(i, b"")
    (tmp_path / "bad.ukvs").write_bytes(b"\n".join(lines) + b"\n")
    report = validate(str(tmp_path / "bad.ukvs"))
    assert any(p.lineno == i + 1 and message in p.message for p in report.problems), report.problems


def test_seed_style_map_with_relaxed_json_headers(tmp_path):
    path = tmp_path / "seed.ukvs"
    path.write_bytes(b'!context ["http://oduwsdl.github.io/contexts/ukvs"]\n'
                     b'!fields {keys: ["surt"], values: ["frequency"]}\n'
                     b'!id {uri: "https://archive.example.org/"}\n'
                     b"* 54321/12000\ncom,* 10000+/2000~\ncom,cnn)/* 400/100 {\"note\":1}\n")
    report = validate(str(path))
    assert report.ok and report.kind == "ukvs" and report.data_lines == 3, report.problems


@pytest.mark.parametrize("which", ["default", "map"])
@pytest.mark.parametrize("blank", [b" ", b"\t"])
def test_white_space_after_a_line_s_block_fails(written, tmp_path, which, blank):
    """A data line with a space or tab after its block (`KEY {json}\\t`): no writer writes it,
    and explore refuses such a line saying to run validate, so validate lists it (it passed
    the file). The toolkit's readers read it as they read a CRLF line."""
    lines = _lines(written[which])
    h = _first_data(lines)
    lines[h + 2] += blank
    path = tmp_path / ("bad" + os.path.splitext(written[which])[1])
    path.write_bytes(b"\n".join(lines) + b"\n")
    report = validate(str(path))
    assert not report.ok
    assert (h + 3, "white space at the end of the line") in [(n, text) for n, text in report.problems]


def test_cli_exit_codes_and_line_numbers(written, tmp_path):
    lines = _lines(written["default"])
    h = _first_data(lines)
    lines[h + 1] += b"\r"
    lines.insert(h + 4, b"")
    (tmp_path / "bad.cdxj").write_bytes(b"\n".join(lines) + b"\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "validate", written["default"], written["map"]],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout == "" and "valid CDXJ profile" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "validate", str(tmp_path / "bad.cdxj"),
                        "--max-problems", "1"], capture_output=True, text=True, env=env)
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["%s:%d: CR before the line end (CRLF line ends are not allowed)"
                                     % (tmp_path / "bad.cdxj", h + 2)]
    assert "INVALID CDXJ profile: 2 problem(s) (1 not listed)" in r.stderr
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "validate", "nope.cdxj"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "no such file: nope.cdxj" in r.stderr


@pytest.mark.parametrize("fields_line", [True, False])
def test_a_map_datetime_range_running_backwards_fails(tmp_path, fields_line):
    """A map's datetime key field that is no datetime or range ('2012:2010': its start after its
    end) made every reader refuse the file, yet validate passed it: it now lists the line."""
    path = tmp_path / "r.ukvs"
    fields = '!fields {"keys":["surt","datetime"],"values":["frequency"]}\n' if fields_line else ""
    path.write_text('!context ["http://oduwsdl.github.io/contexts/ukvs"]\n' + fields
                    + "* : 10/5\ncom,x)/* 2010:2012 5/1\ncom,x)/* 2012:2010 5/1\n")
    report = validate(str(path))
    line = 5 if fields_line else 4
    assert not report.ok and any(p.lineno == line and "2012:2010" in p.message for p in report.problems)
    path.write_text(path.read_text().replace("2012:2010", "2011:2013"))
    assert [p for p in validate(str(path)).problems if "datetime" in p.message] == []


@pytest.mark.parametrize("block, message", [
    ('{"datetime":{"2014":"60/10"}}', "the datetime breakdown's 2014 holds 60 captures, more than the line's 50"),
    ('{"datetime":{"2014":60}}', "the datetime breakdown's 2014 holds 60 captures"),
    ('{"rollup":"yes"}', "rollup is yes, not true or false")])
def test_a_map_block_no_archive_or_reader_has_fails(tmp_path, block, message):
    """A map line '50/20' whose datetime breakdown gives one period more captures than the line
    (lookup --datetime 2014 answered 60/10), or whose rollup mark is no boolean (every reader
    refuses the line): validate passed both; it now lists them. Entries that overlap or are bounds
    may add up to more."""
    path = tmp_path / "b.ukvs"
    head = '!context ["http://oduwsdl.github.io/contexts/ukvs"]\n!fields {"keys":["surt"],"values":["frequency"]}\n'
    path.write_text(head + "* 100/50\ncom,* 50/20 %s\n" % block)
    report = validate(str(path))
    assert not report.ok and any(p.lineno == 4 and message in p.message for p in report.problems), report.problems
    for fine in ('{"datetime":{"2014":"50/10","2015":"50/12"}}', '{"datetime":{"2014":"60+/10"}}', '{"rollup":true}'):
        path.write_text(head + "* 100/50\ncom,* 50/20 %s\n" % fine)
        assert validate(str(path)).ok, fine


@pytest.mark.parametrize("when", ["lines", "policy"])
def test_a_file_written_while_it_is_validated_is_not_called_valid(written, tmp_path, monkeypatch, when):
    """A profile changed in place while validate reads its lines (a line's count rewritten, same
    size), or while it checks the lines against the policy: a problem, `changed while it was
    read`; it was called valid, from lines of no one version (or without the policy's check,
    whose refusal of the changed file was taken for another reader's concern)."""
    from profiler.files import validate as validate_mod
    from profiler.files import headerpolicy
    path = tmp_path / "p.cdxj"
    path.write_bytes(open(written["default"], "rb").read())

    def rewrite():
        data = path.read_bytes()
        i = data.index(b'"total":') + len(b'"total":')
        with open(path, "r+b") as f:             # in place: same inode, same size
            f.seek(i)
            f.write(b"9" if data[i:i + 1] != b"9" else b"8")
            os.utime(f.fileno(), ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10 ** 9))
    if when == "lines":
        lines = validate_mod.physical_lines

        def physical_lines(f, *args):
            for n, line in enumerate(lines(f, *args)):
                if n == 3:
                    rewrite()
                yield line
        monkeypatch.setattr(validate_mod, "physical_lines", physical_lines)
    else:
        check = headerpolicy.check

        def checked(*args):
            rewrite()
            return check(*args)
        monkeypatch.setattr(headerpolicy, "check", checked)
    report = validate(str(path))
    assert not report.ok and any("changed while it was read" in p.message for p in report.problems)
    monkeypatch.undo()
    path.write_bytes(open(written["default"], "rb").read())
    assert validate(str(path)).ok


@pytest.mark.parametrize("field", ["201399", "20130230", "2012:201313"])
def test_a_map_datetime_of_no_calendar_fails(tmp_path, field):
    """A map's datetime key field, or datetime breakdown key, of digits no calendar has (month
    99, 30 February): validate passed it and every reader took it for a span of no date. It is
    now listed by validate and a damaged line to the readers, as a range running backwards is."""
    from profiler.files.datalines import DamagedFile
    from profiler.toolkit.lookup import Lookup
    head = '!context ["http://oduwsdl.github.io/contexts/ukvs"]\n'
    keyed = tmp_path / "k.ukvs"
    keyed.write_text(head + '!fields {"keys":["surt","datetime"],"values":["frequency"]}\n'
                     "* : 10/5\ncom,x)/* %s 5/1\n" % field)
    broken = tmp_path / "b.ukvs"
    broken.write_text(head + '!fields {"keys":["surt"],"values":["frequency"]}\n'
                      '* 10/5\ncom,x)/* 5/1 {"datetime":{"%s":"5/1"}}\n' % field)
    for path in (keyed, broken):
        report = validate(str(path))
        assert not report.ok and any(p.lineno == 4 and field in p.message for p in report.problems), report.problems
        with pytest.raises(DamagedFile):
            with Lookup(str(path)) as index:
                index.lookup("http://x.com/")
