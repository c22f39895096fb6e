"""A damaged profile or map never answers silently (profiler.files.datalines): cut mid-line,
out of order, of mixed layouts, holding values that are not counts. Every command that reads
them refuses in one line naming the file and the line (exit 2), or with --skip-bad-lines skips
the damaged lines, counted and reported on stderr and in the output's !meta, and then answers
exactly as it does from the file without them."""

import os
import random
import shutil
import time

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.files.datalines import MAX_LINE
from profiler.files.validate import validate
from profiler.run.profile import run_profile
from profiler.testing import synthetic

from helpers.damage import NOT_COUNTS, data_lines, one_line_error, pages, run, split_file, with_value

CREATED = "2026-01-01T00:00:00Z"
#: a profile line's value of the spec's shape
VALUE_LINE = (b'{"urim":{"total":1,"min":1,"max":1},"urir":1,"bytes":5,"digests":1,"dedup_bytes":5,'
              b'"first":"20130101000000","last":"20130101000000"}')


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("damage")
    out = {}
    for name, seed in (("profile", 3), ("other", 4)):
        cdx = d / ("%s.cdx" % name)
        synthetic.write_cdx(str(cdx), 300, seed=seed)
        out[name] = str(d / ("%s.cdxj" % name))
        run_profile([str(cdx)], out[name], created=CREATED)
        out[name + "_map"] = str(d / ("%s.ukvs" % name))
        assert run(["ukvs", out[name], "-o", out[name + "_map"], "-q"])[0] == 0
    with open(out["profile"], "rb") as f:
        out["urls"] = ["http://" + ".".join(reversed(x.split(b")")[0].decode().split(","))) + "/"
                       for x in split_file(f.read())[1] if b")/* - - -" in x][:20]
    out["dir"] = d
    return out


def commands(path, other, out):
    """Every command that reads profiles or maps, on path (other: a second file of its kind)."""
    return {
        "lookup": ["lookup", path, "http://www.example.com/a/b"],
        "query": ["query", path, "--surt", "com,*"],
        "merge": ["merge", path, other, "-o", out + ".merge"],
        "ukvs": ["ukvs", path, "-o", out + ".ukvs"],
        "compact": ["compact", path, "--max-lines", "60", "-o", out + ".compact"],
        "split": ["split", path, "--max-lines", "50", "-o", out + ".split"],
        "diff": ["diff", path, other, "--summary"],
        "overlap": ["overlap", other, path],
    }


def answer(name, argv, out):
    """What a command answered: stdout, or the data lines it wrote."""
    status, stdout, err = run(argv + ["-q"])
    written = None
    if status == 0 and name in ("merge", "ukvs", "compact"):
        written = data_lines(argv[argv.index("-o") + 1])
    elif status == 0 and name == "split":
        written = data_lines(pages(out + ".split"))
    return status, stdout, written, err


def _as_if_missing(name, out):
    """diff's or overlap's answer with what it says of keys whose line was damaged (or past a
    cut) taken out: as a key the file has no line for would, it cannot be compared with the
    answer from the file without the line, which says that key vanished or is in one file only."""
    rows = [orjson.loads(x) for x in out.splitlines()]
    for row in rows:
        for name in ("damaged", "appeared", "vanished", "only_a", "only_b", "jaccard", "jaccard_bounds",
                     "captures_a", "captures_b", "shared_share_a", "shared_share_b"):
            row.pop(name, None)
    return rows


def damaged(rng, data, how):
    """(damaged bytes, clean equivalent or None, tolerant must answer, line number) of a file."""
    headers, lines = split_file(data)
    first = len(headers) + 1
    n = rng.randrange(len(lines))
    if how == "cut":
        start = sum(map(len, headers)) + sum(map(len, lines[:n]))
        at = start + rng.randrange(1, len(lines[n]) - 1)
        return data[:at], data[:start], True, first + n
    if how == "swap":
        n = min(n, len(lines) - 2)
        lines[n], lines[n + 1] = lines[n + 1], lines[n]
        return b"".join(headers + lines), None, False, first + n + 1
    clean = b"".join(headers + lines[:n] + lines[n + 1:])
    line = lines[n]
    if how == "value":
        if b'"urim"' not in line:
            how = "nul"             # a map line: damage it another way
        else:
            feature = rng.choice(["urim.total", "urim.min", "urir", "bytes", "dedup_bytes", "first"])
            line = with_value(line, feature, rng.choice(NOT_COUNTS if feature != "first" else [b"2013", b"1"]))
    if how == "field":
        cut = line.find(b" {") if b" {" in line else line.rfind(b" ")
        line = line[:cut] + b" eng" + line[cut:]
    if how == "nul":
        cut = line.find(b" {") if b" {" in line else line.rfind(b" ")
        at = rng.randrange(cut + 1, len(line) - 1)
        line = line[:at] + b"\x00" + line[at:]
    lines[n] = line
    return b"".join(headers + lines), clean, True, first + n


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(seed=st.integers(0, 10 ** 6), which=st.sampled_from(["profile", "map"]),
       how=st.sampled_from(["cut", "swap", "value", "field", "nul", "crlf"]),
       name=st.sampled_from(["lookup", "query", "merge", "ukvs", "compact", "split", "diff", "overlap"]))
def test_damaged_files_are_refused_or_skipped_counted(files, tmp_path_factory, seed, which, how, name):
    """Whatever the damage, a command refuses in one line (exit 2) or answers; with
    --skip-bad-lines it answers exactly as from the file without the damaged line, and says
    what it skipped; a CRLF file is read as it is. validate never passes a damaged file."""
    if which == "map" and name in ("ukvs", "query"):
        name = "lookup"
    rng = random.Random(seed)
    original = files[which if which == "profile" else "profile_map"]
    other = files["other" if which == "profile" else "other_map"]
    with open(original, "rb") as f:
        data = f.read()
    d = tmp_path_factory.mktemp("d")
    if how == "crlf":
        bad, clean, tolerant_answers, lineno = data.replace(b"\n", b"\r\n"), data, True, None
    else:
        bad, clean, tolerant_answers, lineno = damaged(rng, data, how)
    path = str(d / ("bad" + os.path.splitext(original)[1]))
    with open(path, "wb") as f:
        f.write(bad)
    argv = commands(path, other, str(d / "out"))[name]
    status, out, written, err = answer(name, argv, str(d / "out"))
    if how == "crlf":
        assert status != 0 or "damaged" not in err
    else:
        assert one_line_error(status, err, os.path.basename(path)), (how, name, err)
        assert ("line %d" % lineno) in err or "not sorted" in err, err
        assert not validate(path).ok
    if clean is None:                       # out of order: refused whatever the option
        status, _, _, err = answer(name, argv + ["--skip-bad-lines"], str(d / "out"))
        assert one_line_error(status, err, "not sorted"), err
        return
    clean_path = str(d / ("clean" + os.path.splitext(original)[1]))
    with open(clean_path, "wb") as f:
        f.write(clean)
    expected = answer(name, commands(clean_path, other, str(d / "clean"))[name], str(d / "clean"))
    got = answer(name, argv + ["--skip-bad-lines"], str(d / "out"))
    if expected[0] == 2 and "a line is missing" in expected[3]:
        # the file without the line is itself found damaged (its lines no longer add up:
        # profiler.files.headerpolicy); the skip is reported and labelled in the output instead
        assert got[0] == 0 and "1 damaged line(s) skipped" in got[3], got[3]
        return
    if got[0] == 2 and not tolerant_answers:
        assert one_line_error(got[0], got[3]), got[3]
        return
    if name == "lookup" and got[0] == 0 and b"\tunknown\t" in got[1]:
        # the line that would answer may be the one lost: unknown, not another line's answer
        # (tests/files/test_lost_keys.py)
        pairs = list(zip(got[1].splitlines(), expected[1].splitlines()))
        assert pairs and all(g == e or b"\tunknown\t" in g for g, e in pairs), got[1]
        return
    if name in ("diff", "overlap") and how != "crlf":
        got = (got[0], _as_if_missing(name, got[1]), got[2], got[3])
        expected = (expected[0], _as_if_missing(name, expected[1]), expected[2], expected[3])
    assert got[:3] == expected[:3], (how, name, got[3])
    if how != "crlf":
        assert "1 damaged line(s) skipped" in got[3] and "line %d" % lineno in got[3], got[3]


@pytest.mark.parametrize("name", ["lookup", "query", "merge", "ukvs", "compact", "split", "diff", "overlap",
                                  "report"])
def test_a_profile_cut_mid_line(files, tmp_path, name):
    """The audit's case: a copy interrupted mid-line. Before, merge dropped the line's key with
    exit 0 and ukvs a record; now every command refuses, or with --skip-bad-lines counts it (in
    the output's !meta too)."""
    with open(files["profile"], "rb") as f:
        data = f.read()
    cut = data[:data.rindex(b"\n", 0, len(data) - 1) + 40]
    path = str(tmp_path / "cut.cdxj")
    with open(path, "wb") as f:
        f.write(cut)
    argv = commands(path, files["other"], str(tmp_path / "out")).get(name) or \
        ["report", path, "-o", str(tmp_path / "out.html")]
    status, out, err = run(argv)
    assert one_line_error(status, err, "cut.cdxj line %d" % (cut.count(b"\n") + 1), "cut short"), err
    assert out == b""
    status, out, err = run(argv + ["--skip-bad-lines"])
    assert status == 0, err
    assert "cut.cdxj: 1 damaged line(s) skipped (1 cut short)" in err
    if name == "split":
        written = pages(str(tmp_path / "out.split"))
        assert written and all(validate(p).ok for p in written)
        with open(written[0], "rb") as f:
            assert b'cut.cdxj":{"lines":1,"reasons":{"cut":1},"first_line":%d}}' % (cut.count(b"\n") + 1) \
                in f.read()
    if name in ("merge", "ukvs", "compact"):
        with open(argv[argv.index("-o") + 1], "rb") as f:
            assert b'cut.cdxj":{"lines":1,"reasons":{"cut":1},"first_line":%d}}' % (cut.count(b"\n") + 1) \
                in f.read()


def test_a_stray_line_of_another_layout(files, tmp_path):
    """merge of a four-field profile with one five-field line: refused, naming the line; skipped
    and counted with --skip-bad-lines, the output valid."""
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    n = len(lines) // 2
    lines[n] = lines[n].replace(b" {", b" eng {", 1)
    path = str(tmp_path / "mixed.cdxj")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    out = str(tmp_path / "m.cdxj")
    status, _, err = run(["merge", path, files["other"], "-o", out])
    assert one_line_error(status, err, "mixed.cdxj line %d" % (len(headers) + n + 1), "5 key fields"), err
    assert not os.path.exists(out)
    status, _, err = run(["merge", path, files["other"], "-o", out, "--skip-bad-lines"])
    assert status == 0 and "1 bad key fields" in err
    assert validate(out).ok


@pytest.mark.parametrize("value", NOT_COUNTS)
@pytest.mark.parametrize("name", ["lookup", "ukvs", "query", "merge", "diff"])
def test_values_that_are_not_counts(files, tmp_path, value, name):
    """NaN, infinities, 1e400, negative, fractional, boolean, string, nested and endless numbers
    where a count belongs: one line, exit 2 (lookup and ukvs gave tracebacks)."""
    path, lineno = _root_line_with(files, tmp_path, "urim.total", value)
    status, out, err = run(_reading(name, path, files, tmp_path))
    assert one_line_error(status, err, "values.cdxj line %d" % lineno), err
    assert out == b""


def _root_line_with(files, tmp_path, feature, value):
    """A copy of the profile whose `com,* - - -` line holds value (JSON bytes) as feature: its
    path and that line's number."""
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    n = next(i for i, x in enumerate(lines) if x.startswith(b"com,* - - - "))
    lines[n] = with_value(lines[n], feature, value)
    path = str(tmp_path / "values.cdxj")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    return path, len(headers) + n + 1


def _reading(name, path, files, tmp_path):
    """The command line of a command that reads the profile at path whole or at its `com,*` line."""
    return {"lookup": ["lookup", path, "http://nowhere.example.com/"],
            "ukvs": ["ukvs", path, "-o", str(tmp_path / "m.ukvs")],
            "query": ["query", path, "--surt", "com,*"],
            "merge": ["merge", path, files["other"], "-o", "-"],
            "split": ["split", path, "--max-lines", "50", "-o", str(tmp_path / "page")],
            "diff": ["diff", files["profile"], path],
            "report": ["report", path, "-o", str(tmp_path / "r.html")]}[name]


#: (feature, value) changes that keep every number a count but give a line no archive has
IMPOSSIBLE = [("urir", b"99999"), ("urir", b"0"), ("urim.min", b"99999"), ("urim.max", b"0"),
              ("digests", b"99999"), ("dedup_bytes", b"999999999999"), ("first", b'"29991231000000"')]


@pytest.mark.parametrize("feature, value", IMPOSSIBLE)
@pytest.mark.parametrize("name", ["lookup", "ukvs", "query", "merge", "split", "diff", "report"])
def test_values_no_archive_has(files, tmp_path, feature, value, name):
    """Counts and timestamps of the right type whose features contradict each other (more URI-Rs
    than captures, first after last: what validate calls inconsistent) are damage: one line, exit
    2, from every command, the line written as this tool writes it or not; with --skip-bad-lines
    (lookup, query) skipped and counted. Before, each command answered from them."""
    path, lineno = _root_line_with(files, tmp_path, feature, value)
    argv = _reading(name, path, files, tmp_path)
    before = set(os.listdir(tmp_path))
    status, out, err = run(argv)
    assert one_line_error(status, err, "values.cdxj line %d" % lineno, "inconsistent"), err
    assert out == b"" and set(os.listdir(tmp_path)) == before
    assert not validate(path).ok
    if name in ("lookup", "query"):
        status, out, err = run(argv[:2] + ["--skip-bad-lines"] + argv[2:])
        # query's answer for the key left out: none held (exit 1)
        assert status == (0 if name == "lookup" else 1) and "1 damaged line(s) skipped" in err, err
        assert "inconsistent" in err and "Traceback" not in err


@pytest.mark.parametrize("frequency, refused", [(b"5/9", True), (b"5-/9+", True), (b"5+/9", False), (b"5/9~", False),
                                                 (b"5/5", False)])
def test_a_map_line_of_more_uri_rs_than_mementos(files, tmp_path, frequency, refused):
    """A map frequency whose URI-Rs exceed its URI-Ms, both exact or bounded the impossible way
    (`5/9`, `5-/9+`), is damage (lookup answered it); a loose one (`5+/9`, `5/9~`) may be true."""
    with open(files["profile_map"], "rb") as f:
        headers, lines = split_file(f.read())
    n = next(i for i, x in enumerate(lines) if x.startswith(b"com,* "))
    lines[n] = b"com,* " + frequency + lines[n][len(b"com,* "):].partition(b" ")[1] + lines[n].split(b" ", 2)[2]
    path = str(tmp_path / "freq.ukvs")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    status, out, err = run(["lookup", path, "http://nowhere.example.com/"])
    if refused:
        assert one_line_error(status, err, "freq.ukvs line %d" % (len(headers) + n + 1), "more URI-Rs"), err
        assert not validate(path).ok
    else:
        assert status == 0 and b"\tcom,*\t" + frequency in out, (out, err)


def test_huge_integers_stay_exact(files, tmp_path):
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    big = 2 ** 80 + 7
    n = next(i for i, x in enumerate(lines) if x.startswith(b"com,* - - - "))
    lines[n] = with_value(with_value(with_value(lines[n], "urim.total", b"%d" % big), "urim.max", b"%d" % big),
                          "bytes", b"%d" % (big * 3))
    path = str(tmp_path / "big.cdxj")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    status, out, err = run(["lookup", path, "http://nowhere.example.com/"])
    assert status == 0 and ("\t%d/" % big).encode() in out, err
    status, out, err = run(["query", path, "--surt", "com,*", "--feature", "urim", "--feature", "bytes"])
    assert status == 0 and out == b'com,* - - - {"urim.total":%d,"bytes":%d}\n' % (big, big * 3), err
    # the all-time line no longer adds up with its years: ukvs holds a profile to the policy its
    # header names, so the map is made of the lines as a header naming no policy gives them
    unnamed = str(tmp_path / "unnamed.cdxj")
    with open(unnamed, "wb") as f:
        f.write(b"".join([h if not h.startswith(b"!meta ") or b'"policy"' not in h else
                          b"!meta " + orjson.dumps({k: v for k, v in orjson.loads(h[6:]).items() if k != "policy"})
                          + b"\n" for h in headers] + lines))
    assert one_line_error(*run(["ukvs", path, "-o", str(tmp_path / "m.ukvs")])[::2], "add up to")
    assert run(["ukvs", unnamed, "-o", str(tmp_path / "m.ukvs"), "-q"])[0] == 0
    with open(tmp_path / "m.ukvs", "rb") as f:
        assert b"\ncom,* %d/" % big in f.read()


def test_counts_past_a_float_s_range_give_derived_features_or_one_line(files, tmp_path):
    """Every count of every line times 10^320 (a valid profile: counts have no bound): the derived
    features are their integer parts, exact, and their bounds hold them (OverflowError tracebacks,
    exit 1, from float division); report, which draws floats, says so in one line."""
    import json
    import re
    big = 10 ** 320
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    lines = [re.sub(rb'"(total|max|bytes|dedup_bytes|digests)":(\d+)',
                    lambda m: b'"%s":%d' % (m.group(1), int(m.group(2)) * big), x) for x in lines]
    path = str(tmp_path / "huge.cdxj")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    root = next(x for x in lines if x.startswith(b"* - - - "))
    value = json.loads(root[len(b"* - - - "):])
    status, out, err = run(["query", path, "--surt", "*", "--feature", "avg_size", "--feature", "avg_bytes",
                            "--feature", "urim_per_urir", "--feature", "dedup_saving"])
    assert status == 0, err
    got = json.loads(out.split(b" ", 4)[4])
    assert got["avg_size"] == value["dedup_bytes"] // value["urir"]
    assert got["urim_per_urir"] == value["urim"]["total"] // value["urir"]
    assert got["avg_bytes"] == round(value["bytes"] / value["urim"]["total"], 2)
    assert got["dedup_saving"] == round(1 - value["dedup_bytes"] / value["bytes"], 4)
    from profiler.toolkit.query import derived_bounds
    n, d = value["dedup_bytes"], value["urir"]
    low, high = derived_bounds({"bounds": {"dedup_bytes": [n, n + 1]}, "dedup_bytes": n, "urir": d}, "avg_size")
    assert low <= n // d and n // d + 1 >= high >= (n + 1) // d
    status, out, err = run(["query", path, "--group", "surt", "--top", "3", "--by", "avg_size"])
    assert status == 0, err
    status, out, err = run(["report", path, "-o", str(tmp_path / "r.html")])
    assert one_line_error(status, err, "huge.cdxj holds counts past 10^308"), err
    assert not os.path.exists(tmp_path / "r.html")


def test_an_unsorted_line_the_search_does_not_touch(files, tmp_path):
    """The audit's case: a line moved far from its place. The binary search never reads it, so
    query said 'none are held' and lookup answered at a shallower level, exit 0; now both are
    refused, and so is every streaming command before it writes anything."""
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    n = max(i for i, x in enumerate(lines) if b")/* - - - " in x)
    moved = lines.pop(n)
    lines.insert(3, moved)
    path = str(tmp_path / "moved.cdxj")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    surt = moved.split(b" ")[0].decode()
    host = "http://" + ".".join(reversed(surt.split(")")[0].split(","))) + "/"
    for argv in (["query", path, "--surt", surt], ["lookup", path, host], ["merge", path, "-o", "-"],
                 ["diff", files["profile"], path], ["overlap", path, files["profile"]], ["ukvs", path, "-o", "-"],
                 ["compact", path, "--max-lines", "99", "-o", "-"], ["split", path, "--max-lines", "99"],
                 ["lookup", path, host, "--skip-bad-lines"]):
        status, out, err = run(argv)
        assert one_line_error(status, err, "moved.cdxj is not sorted: line"), (argv, err)
        assert out == b"", argv
    assert not [n for n in os.listdir(tmp_path) if n.startswith("moved-")]


@pytest.mark.parametrize("question, found", [
    (["--datetime", "2013"], False),                                      # the key whose line is damaged
    (["--from", "2012", "--to", "2014", "--feature", "urim.total"], True),   # a range summing its line
    (["--series", "year", "--feature", "urim.total"], True),
    (["--group", "datetime", "--feature", "urim.total"], True),
])
def test_a_question_answered_without_a_damaged_line_says_so(files, tmp_path, question, found):
    """--skip-bad-lines answers as the file without the damaged line does (its exit status and
    lines), but never says what the damaged line would have told: not 'no line means none are
    held' for its key, and not a range's sum without a word. The note names the key left out."""
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    n = next(i for i, x in enumerate(lines) if x.startswith(b"com,* 2013 - - {"))
    damaged = lines[:n] + [lines[n].replace(b'"urir":', b'"urir":x', 1)] + lines[n + 1:]
    clean = lines[:n] + lines[n + 1:]
    paths = {}
    for name, body in (("bad", damaged), ("clean", clean)):
        paths[name] = str(tmp_path / ("%s.cdxj" % name))
        with open(paths[name], "wb") as f:
            f.write(b"".join(headers + body))
    expected = run(["query", paths["clean"], "--surt", "com,*"] + question)
    status, out, err = run(["query", paths["bad"], "--surt", "com,*", "--skip-bad-lines"] + question)
    assert (status, out) == expected[:2] and (status == 0) == found and (out != b"") == found, err
    assert "1 damaged line(s) skipped" in err
    assert "left out (--skip-bad-lines): 'com,* 2013 - -'" in err, err
    assert "none are held" not in err
    assert "left out" not in expected[2]


@pytest.mark.parametrize("question, found", [
    (["--datetime", "2013"], False),                                      # a key past the cut
    (["--from", "2012", "--to", "2014", "--feature", "urim.total"], True),   # a range summing it
    (["--series", "year", "--feature", "urim.total"], True),
    (["--group", "datetime", "--feature", "urim.total"], True),
])
def test_a_question_past_the_cut_of_a_file_cut_short_says_so(files, tmp_path, question, found):
    """A profile cut short (a copy interrupted) read with --skip-bad-lines: every key past its
    last whole line is lost with the cut, so an answer that needs one says so (as diff and
    overlap do) and never says 'no line means none are held' of a key past the cut."""
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    n = next(i for i, x in enumerate(lines) if x.startswith(b"com,* 2012 - - {"))
    path = str(tmp_path / "cut.cdxj")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines[:n + 1]) + lines[n + 1][:len(lines[n + 1]) // 2])
    status, out, err = run(["query", path, "--surt", "com,*", "--skip-bad-lines"] + question)
    assert (status == 0) == found and (out != b"") == found, err
    assert "1 damaged line(s) skipped (1 cut short)" in err
    assert "left out (--skip-bad-lines): every key after 'com,* 2012 - -' (the file was cut short)" in err, err
    assert "none are held" not in err and "no captures in" not in err
    status, out, err = run(["query", path, "--surt", "com,*", "--datetime", "2012", "--skip-bad-lines"])
    assert status == 0 and "left out" not in err, err                    # the last whole line stands


@pytest.mark.parametrize("damage", ["value", "cut"])
def test_diff_and_overlap_never_take_a_damaged_line_for_a_missing_key(files, tmp_path, damage):
    """With --skip-bad-lines, a key whose line is damaged (or past the cut of a file cut
    short) is `damaged` in diff and overlap, never `vanished`, `appeared` or in one file only,
    and overlap's Jaccard bounds hold the index of the whole file."""
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    n = next(i for i, x in enumerate(lines) if x.startswith(b"com,* - - - {"))
    key = lines[n][:lines[n].index(b" {")]
    if damage == "value":
        body = b"".join(headers + lines[:n] + [lines[n].replace(b'"urir":', b'"urir":x', 1)] + lines[n + 1:])
        past = []
    else:                                   # cut in the line's block: every key after it is unknown
        body = b"".join(headers + lines[:n]) + lines[n][:len(key) + 10]
        past = [x[:x.index(b" {")] for x in lines[n + 1:]]
    bad, whole = str(tmp_path / "bad.cdxj"), files["profile"]
    with open(bad, "wb") as f:
        f.write(body)
    status, out, err = run(["diff", whole, bad, "--skip-bad-lines"])
    changes = {x[:x.index(b" {")]: orjson.loads(x[x.index(b" {") + 1:]) for x in out.splitlines()}
    assert status == 0 and "1 damaged line(s) skipped" in err, err
    assert set(changes) == {key} | set(past), set(changes) ^ ({key} | set(past))
    assert all(c["change"] == "damaged" and c["damaged"] == ["new"] and c["new"] is None for c in changes.values())
    assert "vanished=0" in err and "damaged=%d" % (1 + len(past)) in err, err
    status, out, err = run(["overlap", whole, bad, "--skip-bad-lines"])
    rows = {r["level"]: r for r in map(orjson.loads, out.splitlines())}
    truth = {r["level"]: r["jaccard"] for r in map(orjson.loads, run(["overlap", whole, whole])[1].splitlines())}
    assert status == 0 and rows["tld"]["damaged"] >= 1 and rows["tld"]["only_a"] == 0, rows["tld"]
    for level, row in rows.items():
        if "jaccard_bounds" in row:
            low, high = row["jaccard_bounds"]
            assert low <= truth[level] <= high, (level, row)
        else:
            assert row["jaccard"] == truth[level], (level, row)


def test_a_line_too_long_is_never_held(files, tmp_path):
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    n = len(lines) // 2
    lines[n] = lines[n].rstrip(b"\n")[:-1] + b',"x":"' + b"a" * (MAX_LINE + 10) + b'"}\n'
    path = str(tmp_path / "long.cdxj")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines))
    status, _, err = run(["ukvs", path, "-o", str(tmp_path / "m.ukvs")])
    assert one_line_error(status, err, "long.cdxj line %d" % (len(headers) + n + 1), "longer than"), err
    status, _, err = run(["ukvs", path, "-o", str(tmp_path / "m.ukvs"), "--skip-bad-lines"])
    assert status == 0 and "1 longer than" in err
    status, _, err = run(["lookup", path, "http://a.com/", "--skip-bad-lines"])      # a search would read it
    assert one_line_error(status, err, "long.cdxj line %d" % (len(headers) + n + 1), "search would read it whole")


def test_a_searched_file_s_line_too_long_is_refused_without_reading_it_to_its_end(files, tmp_path):
    """A searched file's line longer than MAX_LINE is refused; the check read it to its end first
    (a line of gigabytes: a request to explore or serve waited while it was read). It stops where
    the line passes the limit: a line of 64 GiB (a sparse file) is refused at once."""
    from profiler.files.datalines import physical_lines

    class Endless:
        def read(self, n):
            return b"a" * n
    found = list(physical_lines(Endless(), 0, limit=1000, stop_long=True))
    assert len(found) == 1 and found[0][3] and found[0][4] is None
    with open(files["profile"], "rb") as f:
        headers, lines = split_file(f.read())
    path = str(tmp_path / "huge.cdxj")
    with open(path, "wb") as f:
        f.write(b"".join(headers + lines) + b"zz)/ - - - {")
    try:
        os.truncate(path, 1 << 36)
    except OSError:
        pytest.skip("no sparse file of 64 GiB here")
    status, _, err = run(["lookup", path, "http://a.com/"])
    assert one_line_error(status, err, "huge.cdxj line %d" % (len(headers) + len(lines) + 1),
                          "longer than", "search would read it whole"), err


def test_header_lines_are_bounded_together(files, tmp_path):
    """Header lines each under their bound but many (8 of 60 MiB) were all held: 1.1 GB to 2.1 GB
    RSS for a 500 MB file, every command answering from it. Their total is bounded as one
    header line is: past MAX_HEADER, one line, exit 2."""
    from profiler.files.datalines import MAX_HEADER
    path = str(tmp_path / "many.cdxj")
    each = MAX_HEADER // 2 - 100
    with open(files["profile"], "rb") as f, open(path, "wb") as out:
        for i in range(3):
            out.write(b'!meta "' + b"a" * each + b'"\n')
        out.write(f.read())
    for argv in (["ukvs", path, "-o", str(tmp_path / "m.ukvs"), "--skip-bad-lines"], ["lookup", path, "http://a.com/"]):
        status, out, err = run(argv)
        assert one_line_error(status, err, "many.cdxj line 3", "header lines of more than"), (argv, err)
        assert out == b""
    assert not os.path.exists(str(tmp_path / "m.ukvs"))
    status, out, err = run(["validate", path])
    assert status == 1 and "many.cdxj:3: header lines of more than" in out.decode() + err, err


@pytest.mark.parametrize("text", [
    b'!fields {"keys":["surt",%s],"values":["frequency"]}\n* 10/3\n' % b",".join(b'"k%d"' % i for i in range(200000)),
    b"* " + b"x " * 20000 + b"10/3 {}\n"])
def test_key_fields_are_bounded_in_number(tmp_path, text):
    """A map of 200,000 key fields in its !fields (or its first line's) built a pattern of them
    all: 267 MB and 5 s (2.4 GB and 59 s for 2,000,000), then an error line of 1.5 MB naming
    them. At most MAX_KEY_FIELDS: one short line, exit 2."""
    from profiler.files.datalines import MAX_KEY_FIELDS
    path = str(tmp_path / "wide.ukvs")
    with open(path, "wb") as f:
        f.write(text)
    for argv in (["lookup", path, "http://a.com/"], ["merge", path, "-o", str(tmp_path / "m.ukvs")]):
        status, out, err = run(argv)
        assert one_line_error(status, err, "wide.ukvs", "at most %d" % MAX_KEY_FIELDS), (argv, err)
        assert len(err) < 500 and out == b""
    if text.startswith(b"!fields"):
        status, out, err = run(["validate", path])
        assert status == 1 and "wide.ukvs:1: 200001 key fields: a map has at most" in out.decode(), out[:300]


def test_a_header_line_of_many_json_values_is_refused(files, tmp_path):
    """A header line of 20,000,000 empty objects (60 MB, under the header bound) was parsed
    whole: 1.9 GB RSS for one lookup. A header line of more than MAX_HEADER_VALUES JSON values
    (counted by its commas and brackets, before it is parsed): one line, exit 2; validate
    lists it."""
    from profiler.files.datalines import MAX_HEADER_VALUES
    path = str(tmp_path / "values.cdxj")
    with open(files["profile"], "rb") as f, open(path, "wb") as out:
        out.write(b"!a [" + b"{}," * MAX_HEADER_VALUES + b"{}]\n")
        out.write(f.read())
    for argv in (["lookup", path, "http://a.com/"], ["ukvs", path, "-o", str(tmp_path / "m.ukvs")]):
        status, out, err = run(argv)
        assert one_line_error(status, err, "values.cdxj line 1", "JSON values"), (argv, err)
        assert out == b""
    status, out, err = run(["validate", path])
    assert status == 1 and "values.cdxj:1: more than %d JSON values" % MAX_HEADER_VALUES in out.decode(), out[:300]


def test_header_lines_are_bounded_in_number(files, tmp_path):
    """Five million header lines of five bytes (a 26 MB file) took 966 MB and 16 s to look a URI
    up in: each line was held as objects. Past MAX_HEADER_LINES, one line, exit 2; validate
    lists it."""
    from profiler.files.datalines import MAX_HEADER_LINES
    path = str(tmp_path / "tiny.cdxj")
    with open(files["profile"], "rb") as f, open(path, "wb") as out:
        out.write(b"!a 1\n" * (MAX_HEADER_LINES + 1))
        out.write(f.read())
    for argv in (["lookup", path, "http://a.com/"], ["merge", path, "-o", str(tmp_path / "m.cdxj")]):
        status, out, err = run(argv)
        assert one_line_error(status, err, "tiny.cdxj line %d" % (MAX_HEADER_LINES + 1), "header lines"), (argv, err)
        assert out == b""
    status, out, err = run(["validate", path])
    assert status == 1 and "tiny.cdxj:%d: more than" % (MAX_HEADER_LINES + 1) in out.decode() + err, err


@pytest.mark.parametrize("text, words", [
    (b"", ["is empty"]),
    (b'!keys ["surt","datetime","mime","status"]\n!keys ["surt","datetime","mime","status","lang"]\n',
     ["declares its key fields twice"]),
    (b'!keys ["surt","when","mime","status"]\n* - - - {}\n', ["!keys", "not a profile's key fields"]),
    (b'!fields {"keys":["surt"]}\n* 10/3\ncom,* 2013 4/1\n', ["line 3", "3 fields"]),
    (b'!fields {"keys":"surt"}\n* 10/3\n', ["!fields must be"]),
    (b'!fields {"keys":["surt"]}\n* 10/3\n\ncom,* 4/1\n', ["line 3", "an empty line"]),
    (b'!fields {"keys":["surt"]}\n* 10/3\ncom,a)/\tx 4/1\n', ["line 3"]),
    (b'!fields {"keys":["surt"]}\n* 10/3\n!meta {}\n', ["line 3", "a header line after the data"]),
    (b'!keys ["surt","datetime","mime","status"]\n* - - -\t{}\n', ["line 2"]),
    (b'!fields {"keys":["surt"]}\n* 10/3\ncom,* \xd9\xa3/1\n', ["line 3", "frequency"]),
])
def test_hostile_files(tmp_path, text, words):
    """Empty files, header lines only twice, unknown or lying key fields, blank lines, tabs,
    late header lines, non-ASCII digits: one line, exit 2, for every reader."""
    path = str(tmp_path / "f.ukvs")
    with open(path, "wb") as f:
        f.write(text)
    for argv in (["lookup", path, "http://a.com/"], ["merge", path, "-o", "-"], ["split", path, "--max-lines", "5"],
                 ["compact", path, "--max-lines", "5", "-o", "-"], ["diff", path, path], ["overlap", path, path]):
        status, out, err = run(argv)
        assert one_line_error(status, err, *words), (argv, err)
        assert out == b""


def test_header_lines_only_is_a_profile_of_nothing(tmp_path):
    path = str(tmp_path / "h.cdxj")
    with open(path, "wb") as f:
        f.write(b'!keys ["surt","datetime","mime","status"]\n!meta {}\n')
    status, out, err = run(["lookup", path, "http://a.com/"])
    assert status == 0 and out.split(b"\t")[1] == b"no-match", err
    copy = shutil.copyfile(path, str(tmp_path / "h2.cdxj"))
    assert run(["merge", path, copy, "-o", str(tmp_path / "m.cdxj")])[0] == 0


def counted_reads(monkeypatch):
    """The paths whose lines DataFile.records reads from now on, a call each (a list that grows)."""
    from profiler.files import datalines
    reads = []
    real = datalines.DataFile.records

    def counted(self, *args, **kw):
        reads.append(self.path)
        return real(self, *args, **kw)
    monkeypatch.setattr(datalines.DataFile, "records", counted)
    return reads


def test_check_is_remembered_per_version(files, tmp_path, monkeypatch):
    """A file checked clean is not read whole again until it changes (its identity: device,
    inode, size, mtime, ctime); the record lives in the user's cache folder."""
    from profiler.files import checkcache
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(checkcache, "RACY_NS", 0)
    checkcache.forget()
    path = str(tmp_path / "p.cdxj")
    shutil.copy(files["profile"], path)
    reads = counted_reads(monkeypatch)
    assert run(["lookup", path, "http://a.com/"])[0] == 0
    assert len(reads) == 1 and os.path.isfile(tmp_path / "cache" / "archive-profiler" / "checked-files.json")
    checkcache.forget()                     # a new process: only the cache file remembers
    assert run(["lookup", path, "http://a.com/"])[0] == 0
    assert len(reads) == 1
    time.sleep(0.1)                         # (a file changed within a clock tick is not remembered)
    with open(path, "r+b") as f:            # changed in place, same size: checked again
        f.seek(-3, 2)
        f.write(b"x}\n")
    status, _, err = run(["lookup", path, "http://a.com/"])
    assert len(reads) == 2 and one_line_error(status, err, "p.cdxj line"), err


def test_merge_remembers_the_header_policy_check_with_the_reading_it_shares(files, tmp_path, monkeypatch):
    """merge holds each input's lines to its header's policy in the reading that checks them,
    and remembers both for the file's version: a second merge reads neither input whole again.
    A check without the policy (lookup's) is no check with it."""
    from profiler.files import checkcache
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(checkcache, "RACY_NS", 0)
    checkcache.forget()
    a, b = str(tmp_path / "a.cdxj"), str(tmp_path / "b.cdxj")
    shutil.copy(files["profile"], a)
    shutil.copy(files["profile"], b)
    assert run(["lookup", a, "http://a.com/"])[0] == 0
    reads = counted_reads(monkeypatch)
    assert run(["merge", a, b, "-o", str(tmp_path / "m1.cdxj")])[0] == 0
    first = sorted(reads)
    assert first.count(a) == 2 and first.count(b) == 2       # checked (policy too), merged
    del reads[:]
    checkcache.forget()                     # a new process: only the cache file remembers
    assert run(["merge", a, b, "-o", str(tmp_path / "m2.cdxj")])[0] == 0
    assert sorted(reads) == [a, b]          # merged only
    merged = [[line for line in (tmp_path / name).read_bytes().split(b"\n") if not line.startswith(b"!")]
              for name in ("m1.cdxj", "m2.cdxj")]
    assert merged[0] == merged[1] and len(merged[0]) > 10


def test_a_file_just_written_is_not_remembered(files, tmp_path, monkeypatch):
    """Its time stamps could stay the same through a change made within the same clock tick."""
    from profiler.files import checkcache
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    checkcache.forget()
    path = str(tmp_path / "p.cdxj")
    shutil.copy(files["profile"], path)
    assert run(["lookup", path, "http://a.com/"])[0] == 0
    assert not os.path.exists(tmp_path / "cache" / "archive-profiler" / "checked-files.json")


@pytest.mark.parametrize("how", ["link", "others_can_write", "not_ours"])
def test_a_cache_file_not_safely_ours_is_not_used(files, tmp_path, monkeypatch, how):
    from profiler.files import checkcache
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(checkcache, "RACY_NS", 0)
    checkcache.forget()
    path = str(tmp_path / "p.cdxj")
    shutil.copy(files["profile"], path)
    assert run(["lookup", path, "http://a.com/"])[0] == 0
    record = tmp_path / "cache" / "archive-profiler" / "checked-files.json"
    assert record.is_file()
    if how == "link":
        record.rename(tmp_path / "elsewhere.json")
        record.symlink_to(tmp_path / "elsewhere.json")
        before = (tmp_path / "elsewhere.json").read_bytes()
    elif how == "others_can_write":
        record.chmod(0o666)
    else:
        os.chown(str(record), 12345, 12345)
    checkcache.forget()
    assert checkcache.recall(datalines_identity(path), "x") is None
    from profiler.files.datalines import DataFile
    found = DataFile(path)
    reads = []
    monkeypatch.setattr(DataFile, "records", lambda self, *a, **kw: reads.append(1) or iter(()))
    found.check()
    assert reads == [1]                     # read whole again: the record was not trusted
    if how == "link":
        assert (tmp_path / "elsewhere.json").read_bytes() == before     # never written through
        assert not record.is_symlink()


def datalines_identity(path):
    from profiler.files import infiles
    return infiles.identity(os.stat(path))


def test_split_pages_are_checked_each(files, tmp_path):
    """lookup of a page (or the pages' folder) checks every page whole, and that each page's
    !meta keys, by which the search skips pages, are those of its lines."""
    folder = tmp_path / "pages"
    folder.mkdir()
    assert run(["split", files["profile"], "--max-lines", "200", "-o", str(folder) + "/", "-q"])[0] == 0
    names = sorted(os.listdir(folder))
    assert len(names) > 2
    whole = run(["lookup", files["profile"], files["urls"][0]])
    assert whole[0] == 0
    assert run(["lookup", str(folder / names[0]), files["urls"][0]])[1] == whole[1]
    assert run(["lookup", str(folder), files["urls"][0]])[1] == whole[1]
    page = folder / names[1]
    data = page.read_bytes()
    headers, lines = split_file(data)
    page.write_bytes(b"".join(headers + lines[:-1]) + lines[-1][:-5])          # cut short
    status, _, err = run(["lookup", str(folder), files["urls"][0]])
    assert one_line_error(status, err, "%s line %d" % (names[1], len(headers) + len(lines)), "cut short"), err
    page.write_bytes(b"".join(headers + lines[:-1]))                            # whole, its last line gone
    status, _, err = run(["lookup", str(folder), files["urls"][0]])
    assert one_line_error(status, err, names[1], "its !meta says its keys run"), err


LINES = [b'!keys ["surt","datetime","mime","status"]', b'!keys ["surt","datetime","mime","status","lang"]',
         b'!fields {"keys":["surt"]}', b'!fields {keys: ["surt", "datetime"]}', b"!meta {}", b'@meta {"policy":5}',
         b'!meta {"inputs":3,"captures":"x"}', b"* 10/3", b"com,* 2013 4/1", b"com,* : 4+/2 {\"lang\":{\"ara\":\"1/1\"}}",
         b"com,a)/ 5 {\"datetime\":{\"2013\":7}}", b'* - - - {"urim":{"total":1,"min":1,"max":1},"urir":1}',
         b"* - - - " + VALUE_LINE, b"com,* - - - " + VALUE_LINE, b"com,* - - - eng " + VALUE_LINE,
         b"com,* 2013 - - " + VALUE_LINE.replace(b"dedup_bytes", b"bounds\":{\"urir\":[2,1]},\"x"), b"", b"\r",
         b"\x1f\x8b", b"WARC/1.0", b" CDX N b a m s k r M S V g"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(lines=st.lists(st.sampled_from(LINES) | st.binary(max_size=40), max_size=8), end=st.booleans(),
       name=st.sampled_from(["lookup", "query", "merge", "ukvs", "compact", "split", "diff", "overlap", "validate"]),
       tolerant=st.booleans())
def test_any_bytes_never_a_traceback(tmp_path_factory, lines, end, name, tolerant):
    """Whatever a file holds, every command answers or refuses (exit 0, 1 or 2), never a
    traceback."""
    d = tmp_path_factory.mktemp("any")
    path = str(d / "f.cdxj")
    with open(path, "wb") as f:
        f.write(b"\n".join(x.replace(b"\n", b" ") for x in lines) + (b"\n" if end else b""))
    argv = {"lookup": ["lookup", path, "http://a.com/x"], "query": ["query", path, "--surt", "com,*"],
            "merge": ["merge", path, shutil.copyfile(path, str(d / "g.cdxj")), "-o", str(d / "m")], "ukvs": ["ukvs", path, "-o", str(d / "u")],
            "compact": ["compact", path, "--max-lines", "3", "-o", str(d / "c")],
            "split": ["split", path, "--max-lines", "2"], "diff": ["diff", path, path],
            "overlap": ["overlap", path, path], "validate": ["validate", path]}[name]
    if tolerant and name != "validate":
        argv.append("--skip-bad-lines")
    status, _, err = run(argv)
    assert status in (0, 1, 2) and "Traceback" not in err, err
    if status == 2:
        assert one_line_error(status, err), err


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=7, max_size=7), st.sampled_from(["2013", "2014"]),
       st.sampled_from(["2013", "2014"]))
def test_the_fast_check_of_a_line_as_written_is_the_consistency_table(counts, first, last):
    """The reader checks a line as this tool writes it from its numbers as written (no JSON parse):
    it refuses exactly what profiler.files.profilefile.CONSISTENCY refuses."""
    from profiler.files import datalines
    from profiler.files.profilefile import inconsistencies
    total, low, high, urir, size, digests, dedup = counts
    raw = (b'{"urim":{"total":%d,"min":%d,"max":%d},"urir":%d,"bytes":%d,"digests":%d,"dedup_bytes":%d,'
           b'"first":"%s0101000000","last":"%s0101000000"}' % (total, low, high, urir, size, digests, dedup,
                                                               first.encode(), last.encode()))
    flat = {"urim.total": total, "urim.min": low, "urim.max": high, "urir": urir, "bytes": size,
            "digests": digests, "dedup_bytes": dedup, "first": first, "last": last}
    match = datalines._CANONICAL.match(raw)
    assert datalines._canonical_consistent(match) == (next(inconsistencies(flat), None) is None)
