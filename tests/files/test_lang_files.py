"""Five-field profiles and the maps made from them: validate checks each criterion's field and the
lang breakdowns (line numbers asserted), ukvs breaks frequencies down by language exactly."""

import pytest

from profiler.cli.main import main
from profiler.files.profilefile import flatten
from profiler.files.ukvs import breakdowns, format_frequency, profile_to_map, read_headers
from profiler.files.validate import validate

from helpers.languages import NO_LANG, TLD_LANG, cc_index, lines_of, profile, read_map_lines


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("lang-files")
    index = cc_index(d, 1500, seed=3)
    out = {"lang": profile(d, [index], TLD_LANG), "nolang": profile(d, [index], NO_LANG)}
    for keys, suffix in ((("surt",), ""), (("surt", "datetime"), "2")):
        for name in ("lang", "nolang"):
            out[name + "_map" + suffix] = str(d / ("%s%s.ukvs" % (name, suffix)))
            profile_to_map(out[name], out[name + "_map" + suffix], keys)
    return out


def test_everything_validates(files):
    for name, path in files.items():
        report = validate(path)
        assert report.ok, (name, report.problems[:3])
        assert not [n for n in report.notes if "lang" in n.message], report.notes


def _lines(path):
    with open(path, "rb") as f:
        return f.read().split(b"\n")[:-1]


def _corrupt(tmp_path, path, change, name="bad"):
    lines = _lines(path)
    n = change(lines)
    out = tmp_path / name
    out.write_bytes(b"\n".join(lines) + b"\n")
    return str(out), n


def _first(lines, test):
    return next(i for i, line in enumerate(lines) if line[:1] != b"!" and test(line))


@pytest.mark.parametrize("how,message", [
    ("lang_upper", "lang field 'ARA' is not"),
    ("lang_long", "lang field 'arab' is not"),
    ("four_fields", "4 key fields, the header declares 5 (surt datetime mime status lang)"),
    ("six_fields", "6 key fields, the header declares 5"),
    ("day", None),
    ("bad_day", "datetime field '2013011' is not"),
])
def test_five_field_lines_checked_with_line_numbers(files, tmp_path, how, message):
    def change(lines):
        i = _first(lines, lambda line: line.startswith(b"* - - - eng "))
        key, value = lines[i].split(b" {", 1)
        f = key.split(b" ")
        if how == "lang_upper":
            f[4] = b"ARA"
        elif how == "lang_long":
            f[4] = b"arab"
        elif how == "four_fields":
            del f[4]
        elif how == "six_fields":
            f.append(b"x")
        elif how == "day":
            i = _first(lines, lambda line: line.startswith(b"* 2018 - - -"))
            key, value = lines[i].split(b" {", 1)
            f = key.split(b" ")
            f[1] = b"20181231"          # a day: a valid field (the line is out of order, not wrong)
        elif how == "bad_day":
            i = _first(lines, lambda line: line.startswith(b"* 2018 - - -"))
            key, value = lines[i].split(b" {", 1)
            f = key.split(b" ")
            f[1] = b"2013011"
        lines[i] = b" ".join(f) + b" {" + value
        return i + 1
    path, lineno = _corrupt(tmp_path, files["lang"], change)
    report = validate(path)
    if message is None:
        assert not [p for p in report.problems if "field" in p.message], report.problems
        return
    assert [p.lineno for p in report.problems if message in p.message] == [lineno], report.problems


def test_unknown_keys_are_a_problem_of_their_line(files, tmp_path):
    def change(lines):
        i = next(i for i, line in enumerate(lines) if line.startswith(b"!keys "))
        lines[i] = b'!keys ["surt","datetime","mime","status","tongue"]'
        return i + 1
    path, lineno = _corrupt(tmp_path, files["lang"], change)
    report = validate(path)
    assert [p.lineno for p in report.problems if "not a profile's key fields" in p.message] == [lineno]


@pytest.mark.parametrize("how,message", [
    ("bad_key", "lang breakdown key 'ARA' is not"),
    ("any_key", "lang breakdown key '-' is not"),
    ("bad_value", "lang breakdown value 'lots' is not a frequency"),
    ("too_many", "the lang breakdown adds up to"),
    ("not_object", "the lang breakdown must be"),
])
def test_corrupted_lang_breakdowns(files, tmp_path, how, message):
    import orjson

    def change(lines):
        i = _first(lines, lambda line: line.startswith(b"* "))
        head, block = lines[i].split(b" {", 1)
        block = orjson.loads(b"{" + block)
        entries = block["lang"]
        code = sorted(entries)[0]
        if how == "bad_key":
            entries["ARA"] = entries.pop(code)
        elif how == "any_key":
            entries["-"] = entries.pop(code)
        elif how == "bad_value":
            entries[code] = "lots"
        elif how == "too_many":
            entries[code] = "999999999/1"
        elif how == "not_object":
            block["lang"] = ["ara"]
        lines[i] = head + b" " + orjson.dumps(block)
        return i + 1
    path, lineno = _corrupt(tmp_path, files["lang_map"], change)
    report = validate(path)
    assert [p.lineno for p in report.problems if message in p.message] == [lineno], report.problems


@pytest.mark.parametrize("keys", ["", "2"])
def test_map_breakdowns_equal_the_profile_lines(files, keys):
    """Each map line's lang entries are the profile's lang lines of its key, exactly, adding up to it."""
    lines = lines_of(files["lang"])
    entries = read_map_lines(files["lang_map" + keys])
    expected = {}
    for key, value in lines.items():
        surt, dt, mime, status, lang = key.split(" ")
        if mime != "-" or status != "-" or (dt != "-" and not keys):
            continue
        map_key = surt if not keys else "%s %s" % (surt, ":" if dt == "-" else dt)
        f = flatten(value)
        if lang == "-":
            expected.setdefault(map_key, [None, {}])[0] = (f["urim.total"], f["urir"])
        else:
            expected.setdefault(map_key, [None, {}])[1][lang] = "%d/%d" % (f["urim.total"], f["urir"])
    expected = {k: v for k, v in expected.items() if v[0] is not None}
    assert set(entries) == set(expected)
    with_breakdown = 0
    for key, (freq, block) in entries.items():
        assert (freq.urim, freq.urir) == expected[key][0]
        assert ((block or {}).get("lang") or {}) == expected[key][1], key
        if block:
            with_breakdown += 1
            assert list(block) == ["lang"] and list(block["lang"]) == sorted(block["lang"])
            assert sum(int(v.split("/")[0]) for v in block["lang"].values()) == freq.urim
    assert with_breakdown > 10
    assert breakdowns(read_headers(files["lang_map" + keys])[0]) == ["lang"]


def test_maps_of_four_field_profiles_have_no_breakdown(files):
    for name in ("nolang_map", "nolang_map2"):
        assert all(block is None for _, block in read_map_lines(files[name]).values())
        assert breakdowns(read_headers(files[name])[0]) == []
    # the frequencies of both maps are the same: languages only add the breakdown
    a, b = read_map_lines(files["lang_map"]), read_map_lines(files["nolang_map"])
    assert {k: format_frequency(v[0]) for k, v in a.items()} == {k: format_frequency(v[0]) for k, v in b.items()}


def test_cli_validate_reports_the_line(files, tmp_path, capsys):
    lines = _lines(files["lang"])
    i = _first(lines, lambda line: line.startswith(b"* - - - eng "))
    lines[i] = lines[i].replace(b"* - - - eng ", b"* - - - ENG ", 1)
    bad = tmp_path / "bad.cdxj"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    assert main(["validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "%s:%d: lang field 'ENG' is not '-', an ISO 639-3 code or 'unk'" % (bad, i + 1) in out
