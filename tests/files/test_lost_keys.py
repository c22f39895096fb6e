"""--skip-bad-lines never lets a coarser line, or no line, stand for a line that was lost: a file
cut mid-line, a line cut inside its key in the middle of a file (its key unreadable: any key
between its neighbours' may have been it), a file whose every line is damaged. lookup answers
`unknown`, query says the answer's lines were left out, diff and overlap call the key damaged."""

import orjson
import pytest

from profiler.run.profile import run_profile
from profiler.testing import synthetic

from helpers.damage import one_line_error, run, split_file

CREATED = "2026-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    d = tmp_path_factory.mktemp("lost-keys")
    cdx = d / "in.cdx"
    synthetic.write_cdx(str(cdx), 300, seed=3)
    path = str(d / "p.cdxj")
    run_profile([str(cdx)], path, created=CREATED)
    with open(path, "rb") as f:
        headers, lines = split_file(f.read())
    hosts = [i for i, x in enumerate(lines) if b")/* - - - {" in x]
    n = hosts[len(hosts) // 2]
    surt = lines[n][:lines[n].index(b")")].decode()
    url = "http://" + ".".join(reversed(surt.split(","))) + "/a/b.html"
    return {"path": path, "headers": headers, "lines": lines, "n": n, "url": url,
            "key": lines[n][:lines[n].index(b" {")], "dir": d}


def _damaged(profile, how):
    headers, lines, n = profile["headers"], profile["lines"], profile["n"]
    if how == "cut":                    # a copy interrupted in the host line's block
        body = b"".join(headers + lines[:n]) + lines[n][:len(profile["key"]) + 12]
    elif how == "key":                  # the host line cut inside its key, mid-file
        body = b"".join(headers + lines[:n] + [lines[n][:len(profile["key"]) // 2] + b"\n"] + lines[n + 1:])
    else:                               # every line damaged
        body = b"".join(headers + [x.replace(b'"urir":', b'"urir":-', 1) for x in lines])
    path = str(profile["dir"] / ("%s.cdxj" % how))
    with open(path, "wb") as f:
        f.write(body)
    return path


@pytest.mark.parametrize("how", ["cut", "key", "all"])
def test_lookup_never_answers_for_a_lost_line(profile, how, monkeypatch):
    """The audit's case: the host line lost, lookup --skip-bad-lines answered from the TLD line
    (`held com,* ...`, or no-match) as if the host line were not there."""
    path = _damaged(profile, how)
    status, out, err = run(["lookup", path, profile["url"]])
    assert one_line_error(status, err, path.rsplit("/", 1)[1]), err
    status, out, err = run(["lookup", path, profile["url"], "--skip-bad-lines"])
    assert status == 0 and out.split(b"\t")[1] == b"unknown", out
    assert "1 answer(s) unknown" in err and "damaged line(s) skipped" in err, err
    import io
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO((profile["url"] + "\n").encode() * 2)))
    status, out, err = run(["lookup", path, "--skip-bad-lines"])
    assert status == 0 and [x.split(b"\t")[1] for x in out.splitlines()] == [b"unknown"] * 2, out
    assert "2 answer(s) unknown" in err


def test_lookup_of_a_key_away_from_the_damage_is_answered(profile):
    """A line whose key could not be read stands only for the keys between its neighbours."""
    path = _damaged(profile, "key")
    first = profile["lines"][0]
    assert first.startswith(b"* - - - {")
    status, out, err = run(["lookup", path, "http://nowhere.aaa/", "--skip-bad-lines"])
    assert status == 0 and out == run(["lookup", profile["path"], "http://nowhere.aaa/"])[1], out
    assert "unknown" not in err


@pytest.mark.parametrize("how", ["key", "all"])
def test_query_of_a_lost_key_never_says_none_are_held(profile, how):
    """query --skip-bad-lines of the key whose line was lost: it said "no line means none are
    held"; now the note says lines it reads were left out, their captures unknown."""
    path = _damaged(profile, how)
    surt = profile["key"].split(b" ")[0].decode()
    status, out, err = run(["query", path, "--surt", surt, "--skip-bad-lines"])
    assert "none are held" not in err and "left out (--skip-bad-lines)" in err, err
    assert "captures unknown, not none" in err
    assert out == b""


def test_diff_of_a_line_cut_inside_its_key_never_says_vanished(profile):
    path = _damaged(profile, "key")
    status, out, err = run(["diff", profile["path"], path, "--skip-bad-lines"])
    changes = {x[:x.index(b" {")]: orjson.loads(x[x.index(b" {") + 1:]) for x in out.splitlines()}
    assert status == 0 and changes[profile["key"]]["change"] == "damaged", changes
    assert "vanished=0" in err, err


@pytest.mark.parametrize("with_blocks", [False, True])
def test_a_map_without_header_lines_given_to_profile_is_named(tmp_path, with_blocks):
    """A MementoMap as the paper prints it (no header lines) given to profile: it was "not ...
    (unrecognised layout)", or with blocks profiled as a CDX of bad lines (0 captures)."""
    path = tmp_path / "paper.ukvs"
    block = b' {"status":{"2xx":"400/100"}}' if with_blocks else b""
    path.write_bytes(b"* 54321/20000\ncom,* 10000+/100~\ncom,cnn)/* 400/100" + block + b"\n")
    status, out, err = run(["profile", str(path), "-o", str(tmp_path / "p.cdxj")])
    assert one_line_error(status, err, "a MementoMap (UKVS) without header lines", "lookup"), err
    assert not (tmp_path / "p.cdxj").exists()


def test_lookup_of_a_language_a_lost_line_may_have_told_is_unknown_for_it(tmp_path, monkeypatch):
    """lookup --skip-bad-lines --lang: no line left tells the language's count (the profile cut
    inside the root's first language line, every line after it lost). It answered as for any
    language (its value '-'); the lines of the language asked may be the lost ones: unknown of it."""
    import os
    sample = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "cc-sample-5k.cdxj.gz")
    path = str(tmp_path / "lang.cdxj")
    run_profile([sample], path, policy="lang", created=CREATED)
    with open(path, "rb") as f:
        headers, lines = split_file(f.read())
    n = next(i for i, x in enumerate(lines) if x.startswith(b"* - - - ") and not x.startswith(b"* - - - - "))
    cut = str(tmp_path / "cut.cdxj")
    with open(cut, "wb") as f:           # a copy interrupted inside the root's first language line
        f.write(b"".join(headers + lines[:n]) + lines[n][:len(lines[n]) // 2])
    url = "http://nowhere.example/"
    status, out, err = run(["lookup", cut, url, "--lang", "eng", "--skip-bad-lines"])
    assert status == 0 and out.rstrip(b"\n").split(b"\t")[1::5] == [b"unknown", b"eng"], out
    assert "1 answer(s) unknown" in err, err
    import io
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO((url + "\n").encode() * 2)))
    status, out, err = run(["lookup", cut, "--lang", "eng", "--skip-bad-lines"])
    assert status == 0 and [x.split(b"\t")[1::5] for x in out.splitlines()] == [[b"unknown", b"eng"]] * 2, out
