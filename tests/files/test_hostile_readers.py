"""Damage the readers of profiles and maps met nowhere else: a header line that is not JSON (a
header block cut and joined to another file), a JSON block that gives a name twice (two values
spliced), and files made of a cut file followed by another. Every reader (the toolkit's
commands, validate, serve's and explore's opening of a file) refuses such a file in one line,
exit 2, or lists the problem; none answers from it."""

import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.files.datalines import repeated_name
from profiler.files.validate import validate
from profiler.run.profile import run_profile
from profiler.testing import synthetic

from helpers.damage import one_line_error, run, split_file

CREATED = "2026-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile-readers")
    out = {}
    for name, seed in (("profile", 5), ("other", 6)):
        cdx = d / ("%s.cdx" % name)
        synthetic.write_cdx(str(cdx), 200, seed=seed)
        out[name] = str(d / ("%s.cdxj" % name))
        run_profile([str(cdx)], out[name], created=CREATED)
    out["map"] = str(d / "profile.ukvs")
    assert run(["ukvs", out["profile"], "-o", out["map"], "-q"])[0] == 0
    return out


def readers(path, other, out):
    """Every command that reads a profile, on path (other: a second profile)."""
    return {
        "lookup": ["lookup", path, "http://www.example.com/"],
        "query": ["query", path],
        "merge": ["merge", path, other, "-o", out + ".merge"],
        "ukvs": ["ukvs", path, "-o", out + ".ukvs"],
        "compact": ["compact", path, "--max-lines", "2000", "-o", out + ".compact"],
        "split": ["split", path, "--max-lines", "50", "-o", out + ".split"],
        "export": ["export", path, "-o", out + ".json"],
        "diff": ["diff", path, other, "--summary"],
        "overlap": ["overlap", other, path],
    }


def _written(out):
    folder, stem = os.path.split(out)
    return [n for n in os.listdir(folder) if n.startswith(stem + ".")]


def _with_header(files, tmp_path, index, text):
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    headers[index] = text + b"\n"
    path = str(tmp_path / "header.cdxj")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    return path


@pytest.mark.parametrize("name", ["lookup", "query", "merge", "ukvs", "compact", "split", "export", "diff",
                                  "overlap"])
@pytest.mark.parametrize("text", [b'!meta {"inputs":["/data/a.cdx"],"captu', b"!meta", b"!context [",
                                  b'!id {"uri":"http://a.example/"!context ["x"]'])
def test_a_header_line_that_is_not_json_is_refused(files, tmp_path, name, text):
    """A profile's header line that is not JSON (its header block cut and joined to another
    file's, or emptied): one line naming it, exit 2, nothing written (export gave a TypeError
    traceback; merge wrote '"captures":0' for the run !meta it could not read, exit 0)."""
    headers = split_file(open(files["profile"], "rb").read())[0]
    index = next(i for i, h in enumerate(headers) if h.startswith(text.split(b" ")[0] + b" "))
    path = _with_header(files, tmp_path, index, text)
    out = str(tmp_path / "out")
    status, stdout, err = run(readers(path, files["other"], out)[name])
    assert one_line_error(status, err, "header.cdxj line %d" % (index + 1), "not JSON"), err
    assert stdout == b"" and _written(out) == []
    assert not validate(path).ok


def test_a_map_s_free_form_meta_is_still_read_but_not_its_other_header_lines(files, tmp_path):
    """A map's !meta is free-form (validate notes it, readers skip it); its other header lines
    must be (relaxed) JSON."""
    with open(files["map"], "rb") as f:
        headers, lines = split_file(f.read())
    for i, h in enumerate(headers):
        if h.startswith(b"!meta "):
            headers[i] = b"!meta made by hand, not JSON\n"
    path = str(tmp_path / "free.ukvs")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    assert run(["lookup", path, "http://www.example.com/"])[0] in (0, 1)
    headers = [b"!id {\n" if h.startswith(b"!id ") else h for h in headers]
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    status, _, err = run(["lookup", path, "http://www.example.com/"])
    assert one_line_error(status, err, "free.ukvs line", "!id", "not JSON"), err


def _spliced(line):
    """A profile line whose JSON block gives urim and urir again, with other numbers."""
    return line.rstrip(b"\n")[:-1] + b',"urim":{"total":1,"min":1,"max":1},"urir":1}\n'


@pytest.mark.parametrize("name", ["lookup", "query", "merge", "ukvs", "compact", "split", "export", "diff",
                                  "overlap"])
def test_a_json_block_giving_a_name_twice_is_damaged(files, tmp_path, name):
    """A line whose JSON block gives a feature twice (two values spliced: readers differ on which
    counts; orjson took the last and every command answered from it, validate passed it): a
    damaged line, refused in one line naming it, or skipped and counted with --skip-bad-lines."""
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    n = next(i for i, x in enumerate(lines) if x.startswith(b"* - - - "))
    lines[n] = _spliced(lines[n])
    path = str(tmp_path / "twice.cdxj")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    out = str(tmp_path / "out")
    argv = readers(path, files["other"], out)[name]
    status, stdout, err = run(argv)
    assert one_line_error(status, err, "twice.cdxj line %d" % (len(headers) + n + 1), "twice"), err
    assert stdout == b"" and _written(out) == []
    report = validate(path)
    assert not report.ok and any("twice" in p for _, p in report.problems)
    if name not in ("lookup", "query"):
        status, _, err = run(argv + ["--skip-bad-lines"])
        assert status == 0 and "1 damaged line(s) skipped (1 bad JSON)" in err, err


def test_a_map_block_giving_a_breakdown_twice_is_damaged(files, tmp_path):
    with open(files["map"], "rb") as f:
        headers, lines = split_file(f.read())
    n = next(i for i, x in enumerate(lines) if b' {"' in x)
    lines[n] = lines[n].rstrip(b"\n")[:-1] + b',"status":{"2xx":"1/1"}}\n'
    assert repeated_name(lines[n].partition(b" {")[2].join([b"{", b""])) == "status"
    path = str(tmp_path / "twice.ukvs")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    status, _, err = run(["merge", path, "-o", str(tmp_path / "m.ukvs")])
    assert one_line_error(status, err, "twice.ukvs line %d" % (len(headers) + n + 1), "twice"), err
    assert not validate(path).ok


@pytest.mark.parametrize("text, name", [
    (b'{"a":1,"b":{"a":2}}', None), (b'{"a":1,"a":1}', "a"), (b'{"b":[{"x":1,"x":2}]}', "x"),
    (b'{"\\u0061":1,"a":2}', "a"), (b'{"a":"\\"a\\":","b":1}', None), (b'{"a":1', None)])
def test_repeated_name(text, name):
    assert repeated_name(text) == name


def test_serve_and_explore_refuse_such_files(files, tmp_path):
    """serve's and explore's opening of a file goes through the same checks."""
    from profiler.explore.answers import Explorer
    from profiler.serve.versions import BadVersion, open_version
    from profiler.errors import UserError
    path = _with_header(files, tmp_path, 3, b'!meta {"inputs":["/data/a.cdx"],"captu')
    with pytest.raises(BadVersion, match="not JSON"):
        open_version(path)
    with pytest.raises(UserError, match="not JSON"):
        Explorer(path)
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    lines = [_spliced(x) if x.startswith(b"* - - - ") else x for x in lines]
    twice = str(tmp_path / "twice.cdxj")
    with open(twice, "wb") as f:
        f.write(b"".join(headers + lines))
    with pytest.raises((BadVersion, UserError), match="twice"):
        open_version(twice)
    with pytest.raises(UserError, match="twice"):
        Explorer(twice)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data(), second=st.sampled_from(["other", "map"]),
       name=st.sampled_from(["lookup", "query", "merge", "ukvs", "export", "diff"]))
def test_a_cut_file_followed_by_another_is_refused(files, tmp_path_factory, data, second, name):
    """A profile cut at any byte and another file appended (a copy resumed into the wrong file,
    two downloads joined): refused in one line, exit 2, whatever the cut, nothing answered. A cut
    in the header block used to make a header line that is not JSON, read as absent."""
    with open(files["profile"], "rb") as f:
        first = f.read()
    with open(files[second], "rb") as f:
        rest = f.read()
    cut = data.draw(st.integers(1, len(first) - 1), label="cut")
    tmp = tmp_path_factory.mktemp("joined")
    path = str(tmp / "joined.cdxj")
    with open(path, "wb") as f:
        f.write(first[:cut] + rest)
    out = str(tmp / "out")
    status, stdout, err = run(readers(path, files["other"], out)[name])
    assert one_line_error(status, err, "joined.cdxj"), (cut, err)
    assert stdout == b"" and _written(out) == []


@pytest.mark.parametrize("second", ["other", "map"])
@pytest.mark.parametrize("name", ["lookup", "query", "merge", "ukvs", "compact", "split", "export", "diff",
                                  "overlap"])
def test_a_file_cut_after_its_first_header_line_and_another_joined_is_refused(files, tmp_path, second, name):
    """Cut at the end of its !context line, then another file: that file whole under a second
    !context, which every reader took for it (lookup answered from the other file). A header a
    file gives once, given twice, is damage; validate lists it."""
    with open(files["profile"], "rb") as f:
        first = f.read()
    with open(files[second], "rb") as f:
        rest = f.read()
    path = str(tmp_path / "joined.cdxj")
    with open(path, "wb") as f:
        f.write(first[:first.index(b"\n") + 1] + rest)
    out = str(tmp_path / "out")
    status, stdout, err = run(readers(path, files["other"], out)[name])
    assert one_line_error(status, err, "twice"), err
    assert stdout == b"" and _written(out) == []
    assert any("a second !context line" in p.message for p in validate(path).problems)


def test_a_feature_s_bounds_given_twice_is_damaged(files, tmp_path):
    """A merged line's bounds with a feature twice (the line is otherwise as merge writes it)."""
    merged = str(tmp_path / "merged.cdxj")
    assert run(["merge", files["profile"], files["other"], "-o", merged, "-q"])[0] == 0
    with open(merged, "rb") as f:
        headers, lines = split_file(f.read())
    n = next(i for i, x in enumerate(lines) if b'"bounds":{"' in x)
    at = lines[n].index(b'"bounds":{') + len(b'"bounds":{')
    end = lines[n].index(b"]", at) + 1
    lines[n] = lines[n][:end] + b"," + lines[n][at:end] + lines[n][end:]
    path = str(tmp_path / "bounds.cdxj")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    for argv in (["lookup", path, "http://www.example.com/"], ["query", path], ["ukvs", path, "-o", path + ".u"]):
        status, _, err = run(argv)
        assert one_line_error(status, err, "bounds.cdxj line %d" % (len(headers) + n + 1), "twice"), err
    assert not validate(path).ok


@pytest.fixture(scope="module")
def projected(files, tmp_path_factory):
    """A merge of a four-field profile (default policy) with a five-field one (lang policy, which
    writes other levels): keys the lang input has no line for are bounded by coarser lines, and
    those lines keep only the features the bounds hold (!meta unknown_keys)."""
    d = tmp_path_factory.mktemp("projected")
    cdx = str(d / "lang.cdx")
    synthetic.write_cdx(cdx, 200, seed=7)
    lang = str(d / "lang.cdxj")
    run_profile([cdx], lang, policy="lang", created=CREATED)
    out = str(d / "merged.cdxj")
    assert run(["merge", files["profile"], lang, "-o", out, "-q"])[0] == 0
    with open(out, "rb") as f:
        text = f.read()
    assert b'"unknown_keys"' in text and any(b'"urir"' in x and b'"bytes"' not in x for x in text.splitlines())
    return out


@pytest.mark.parametrize("name", ["lookup", "query", "ukvs", "compact", "split", "export", "diff", "overlap"])
def test_a_merge_of_other_key_fields_is_read_by_every_reader(files, projected, tmp_path, name):
    """merge wrote such a file (exit 0), and every reader refused it ('bytes is null'), validate
    called it invalid: its lines are read with the features they have, as another producer's."""
    argv = readers(projected, projected, str(tmp_path / "out"))[name]
    status, _, err = run(argv)
    assert status == 0, err
    assert validate(projected).ok


def test_explore_reads_a_merge_of_other_key_fields(projected):
    from profiler.explore.answers import Explorer
    explorer = Explorer(projected)
    try:
        assert explorer.foreign and explorer.describe()["lines"] > 0
    finally:
        explorer.close()


@pytest.mark.parametrize("frequency, refused", [(b"7/0", True), (b"7+/0-", True), (b"7/0+", False),
                                                (b"7-/0", False), (b"0/0", False)])
@pytest.mark.parametrize("where", ["line", "breakdown"])
def test_a_map_frequency_of_mementos_of_no_uri_r(files, tmp_path, frequency, refused, where):
    """Mementos of no URI-R (`7/0`: an exact or upper-bounded zero beside captures), on a line or in
    a breakdown: damaged like more URI-Rs than URI-Ms (lookup answered "held 7/0", validate
    passed it); `7/0+`, `7-/0` may be true, `0/0` is "not held"."""
    with open(files["map"], "rb") as f:
        headers, lines = split_file(f.read())
    n = next(i for i, x in enumerate(lines) if x.startswith(b"* "))
    key, freq, rest = lines[n].split(b" ", 2) if lines[n].count(b" ") >= 2 else (*lines[n].split(b" "), b"")
    if where == "line":
        lines[n] = b"%s %s%s" % (key, frequency, (b" " + rest) if rest else b"\n")
    else:
        lines[n] = b'%s %s {"status":{"2xx":"%s"}}\n' % (key, freq.strip(), frequency)
    path = str(tmp_path / "freq.ukvs")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    status, _, err = run(["merge", path, "-o", str(tmp_path / "m.ukvs")])
    if refused:
        assert one_line_error(status, err, "freq.ukvs line %d" % (len(headers) + n + 1), frequency.decode()), err
        assert not validate(path).ok
    else:
        assert status == 0, err


@pytest.mark.parametrize("frequency", [b"5/9", b"7/0"])
def test_a_plain_map_line_no_archive_has_is_found_by_the_whole_check(files, tmp_path, frequency):
    """The check of a whole map before lookup answers, and serve's before it serves a file, took
    a plain line (no block) by its pattern alone: a lookup of another URI answered, exit 0, and
    serve served the file."""
    from profiler.serve.versions import BadVersion, open_version
    with open(files["map"], "rb") as f:
        headers, lines = split_file(f.read())
    n = max(i for i, x in enumerate(lines) if b" {" not in x and not x.startswith(b"* "))
    lines[n] = lines[n].split(b" ")[0] + b" " + frequency + b"\n"
    path = str(tmp_path / "plain.ukvs")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    status, out, err = run(["lookup", path, "http://nothing.invalid/"])
    assert one_line_error(status, err, "plain.ukvs line %d" % (len(headers) + n + 1), frequency.decode()), err
    assert out == b""
    with pytest.raises(BadVersion, match=frequency.decode()):
        open_version(path)


@pytest.mark.parametrize("which", ["profile", "map"])
def test_a_byte_order_mark_before_the_first_line_is_named(files, tmp_path, which):
    """A profile or map saved by an editor with a byte order mark: one line naming the mark and
    how to remove it (it was "not a profile or map", showing its first line)."""
    path = str(tmp_path / "bom.txt")
    with open(files[which], "rb") as f, open(path, "wb") as out:
        out.write(b"\xef\xbb\xbf" + f.read())
    for argv in (["lookup", path, "http://www.example.com/"], ["merge", path, "-o", path + ".m"]):
        status, stdout, err = run(argv)
        assert one_line_error(status, err, "bom.txt", "byte order mark", "tail -c +4"), err
        assert stdout == b""


@pytest.mark.parametrize("feature", ["avg_size", "avg_bytes", "dedup_saving", "avg_dedup_bytes"])
def test_a_derived_feature_of_a_line_lacking_its_parts_is_not_there(projected, feature):
    """query --feature of a ratio whose parts a bounded line lacks (a merge's key bounded by a
    coarser line keeps only urim and urir): null, never a KeyError traceback."""
    with open(projected, "rb") as f:
        line = next(x for x in f if x[:1] not in (b"!", b"@") and b'"bytes"' not in x and b'"bounds"' in x)
    surt, dt, mime, status = line.split(b" {")[0].decode().split(" ")
    status_, out, err = run(["query", projected, "--surt", surt, "--datetime", dt, "--mime", mime,
                             "--status", status, "--feature", feature])
    assert status_ == 0 and "Traceback" not in err, err
    assert b'"%s":null' % feature.encode() in out, out


@settings(max_examples=300, deadline=None)
@given(urim=st.none() | st.integers(0, 10 ** 25), urir=st.none() | st.integers(0, 10 ** 25),
       marks=st.tuples(st.sampled_from(["", "+", "-", "~"]), st.sampled_from(["", "+", "-", "~"])))
def test_the_plain_check_of_a_frequency_is_the_parser_s(urim, urir, marks):
    """frequency_problem (the whole check's fast reading of a plain line) refuses exactly what
    parse_frequency refuses."""
    from profiler.files.datalines import frequency_problem
    from profiler.files.ukvs import MapFormatError, parse_frequency
    text = ("" if urim is None else "%d%s" % (urim, marks[0])) + "/" + (
        "" if urir is None else "%d%s" % (urir, marks[1]))
    if text == "/":
        return
    try:
        parse_frequency(text)
        refused = False
    except MapFormatError:
        refused = True
    assert (frequency_problem(text.encode()) is not None) == refused, text


@pytest.mark.parametrize("frequency", [b"9" * 5000 + b"/1", b"9" * 5000, b"5/" + b"9" * 5000 + b"-"])
def test_a_map_count_past_python_s_digits_is_a_damaged_line(files, tmp_path, frequency):
    """A map frequency of 5,000 digits (past the 4,300 digits Python reads an int of): validate,
    compact, merge, diff and overlap ended in a ValueError traceback, and lookup and split took
    the line by its pattern. Now a damaged line: refused in one line, or skipped and counted."""
    with open(files["map"], "rb") as f:
        headers, lines = split_file(f.read())
    assert lines[0].startswith(b"* ")
    path = str(tmp_path / "huge.ukvs")
    with open(path, "wb") as f:
        f.write(b"".join(headers + [b"* " + frequency + b"\n"] + lines[1:]))
    out = str(tmp_path / "out")
    for argv in (["lookup", path, "http://www.example.com/"], ["compact", path, "--max-lines", "20", "-o", out],
                 ["merge", path, "-o", out + ".ukvs"], ["split", path, "--max-lines", "20", "-o", out],
                 ["diff", files["map"], path], ["overlap", files["map"], path]):
        status, stdout, err = run(argv)
        assert one_line_error(status, err, "huge.ukvs line %d" % (len(headers) + 1), "digits"), (argv, err)
        status, stdout, err = run(argv + ["--skip-bad-lines"])
        assert status == 0 and "Traceback" not in err and "1 damaged line(s) skipped" in err, (argv, err)
    report = validate(path)
    assert not report.ok and "digits" in str(report.problems), report.problems


@pytest.mark.parametrize("period", [b"201313", b"20130230", b"2013011524"])
def test_a_profile_key_of_a_period_no_calendar_has_is_a_damaged_line(files, tmp_path, period):
    """A profile line keyed by month 13, 30 February or hour 24 (a header edited by hand, another
    tool's profile): its digits have the pattern's shape, so every reader answered from it (query
    --group datetime listed '201313') and validate passed it. Now a damaged line: refused in one
    line naming it, or skipped and counted; validate lists it."""
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    at = next(i for i, l in enumerate(lines) if l.startswith(b"* 2") and l.split(b" ")[1].isdigit())
    old = lines[at].split(b" ")[1]
    bad = lines[at].replace(b"* " + old + b" ", b"* " + period + b" ", 1)
    rest = sorted(lines[:at] + lines[at + 1:] + [bad])
    path = str(tmp_path / "calendar.cdxj")
    with open(path, "wb") as f:
        f.write(b"".join(headers + rest))
    out = str(tmp_path / "out")
    for argv in readers(path, files["other"], out).values():
        status, stdout, err = run(argv)
        assert one_line_error(status, err, "calendar.cdxj line %d" % (len(headers) + rest.index(bad) + 1),
                              "no date of the calendar"), (argv, err)
        status, stdout, err = run(argv + ["--skip-bad-lines"])
        assert "Traceback" not in err and "1 damaged line(s) skipped" in err, (argv, err)
    report = validate(path)
    assert not report.ok and "no date of the calendar" in str(report.problems), report.problems
