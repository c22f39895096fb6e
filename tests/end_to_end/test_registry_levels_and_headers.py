"""Two more kinds of criterion a plugin adds reach every command through the registries alone:

- ``query`` (tests/helpers/qparams.py): a hierarchy of two levels, ``presence`` (a CATEGORY:
  ``none`` or ``q/*``) over ``names`` (the parameter names), derived from the urlkey;
- ``truncated`` (tests/helpers/truncated.py): a value only a WARC header gives
  (``WARC-Truncated``, read with profiler.formats.registry.warc_header); a CDX gives ``unk``.

Each policy uses its criterion at the root and lower, crossed with year and status. The numbers
are the brute-force oracle's; profile's runners and kernels write the same bytes; query (with
--series), lookup, merge, split, compact, diff, validate, ukvs, report (in headless Chromium),
explore's API, serve and nightly read the new key field by its registry entry: a map keeps one
level of a criterion of several, a key listing only another level's fields does not answer a
value not-held, the report has a section per criterion.
"""

import json
import os
import time
import urllib.parse
import urllib.request

import pytest
import yaml

from profiler import contract, plugins
from profiler.accel import fast
from profiler.files.validate import validate
from profiler.formats import registry, warc
from profiler.model import capture, criteria
from profiler.model.policy import load
from profiler.testing import synthetic

from helpers import qparams, truncated
from helpers.cliruns import profile, run
from helpers.damage import data_lines
from helpers.oracle import profile as oracle_profile, read_captures, read_profile, resolve_revisits
from helpers.registries import keep
from helpers.serving import Server

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Both plugins registered here and named for every process; a generated CDX (some URLs with
    queries) cut in two, a WARC with WARC-Truncated headers, the two policies, and the captures
    as the oracle reads them."""
    with pytest.MonkeyPatch.context() as mp:
        keep(mp)
        mp.setenv(contract.PLUGINS_ENV, "helpers.qparams,helpers.truncated")
        mp.setenv("PYTHONPATH", os.pathsep.join([TESTS, ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        assert plugins.load() == ["helpers.qparams", "helpers.truncated"]
        folder = tmp_path_factory.mktemp("levels")
        whole = folder / "all.cdx"
        synthetic.write_cdx(str(whole), 6000, seed=5)
        lines = whole.read_text().splitlines(keepends=True)
        halves = [folder / "a.cdx", folder / "b.cdx"]
        halves[0].write_text(lines[0] + "".join(lines[1:3001]))
        halves[1].write_text(lines[0] + "".join(lines[3001:]))
        policies = {}
        for name, policy in (("query", qparams.POLICY), ("truncated", truncated.POLICY)):
            policies[name] = folder / ("%s.yaml" % name)
            policies[name].write_text(yaml.safe_dump(policy))
        warc_path = folder / "t.warc.gz"
        fields = truncated.write_warc(str(warc_path), 1500, 3)
        caps = [c + [{"query": qparams.query_names(c[0])}] for c in read_captures([str(whole)])]
        yield {"folder": folder, "whole": str(whole), "halves": [str(h) for h in halves], "caps": caps,
               "policies": {k: str(v) for k, v in policies.items()}, "warc": str(warc_path), "fields": fields}


@pytest.fixture(scope="module")
def profiled(made):
    return profile(made, "q-inline", [made["whole"]], "query")


def one_line(capfd, *args):
    assert run(*args) == 0
    [line] = capfd.readouterr().out.splitlines()
    return line


# ---------------------------------------------------------------- a criterion of two levels

def test_query_levels_the_oracle_s_numbers_on_every_runner_and_kernel(made, profiled, monkeypatch):
    expected = oracle_profile(resolve_revisits([list(c) for c in made["caps"]]), load(made["policies"]["query"]))
    assert read_profile(profiled) == expected
    fields = {k.split(" ")[4] for k in expected}
    assert {"-", "none", "q/*"} < fields and any(f.startswith("q/") and f != "q/*" for f in fields)
    local = profile(made, "q-local", [made["whole"]], "query", "-r", "local", "--cores", "2")
    assert data_lines(local) == data_lines(profiled)
    monkeypatch.setenv(fast.PURE_ENV, "1")
    pure = profile(made, "q-pure", [made["whole"]], "query", "-r", "local")
    assert data_lines(pure) == data_lines(profiled)


def test_query_levels_on_spark(made, profiled):
    """Spark's driver and workers load the plugin the environment names (its module on their
    PYTHONPATH) and write the same bytes."""
    from helpers.spark import require_spark
    require_spark()
    spark = profile(made, "q-spark", [made["whole"]], "query", "-r", "spark")
    assert data_lines(spark) == data_lines(profiled)


def test_query_by_each_level_and_as_a_series(made, profiled, capfd):
    caps = made["caps"]
    with_query = sum(1 for c in caps if c[8]["query"] != "none")
    line = one_line(capfd, "query", profiled, "--query", "q/*")
    assert line.startswith("* - - - q/* ") and json.loads(line.split(" ", 5)[5])["urim"]["total"] == with_query
    name = max({c[8]["query"] for c in caps if c[8]["query"] != "none"},
               key=lambda v: sum(1 for c in caps if c[8]["query"] == v))
    line = one_line(capfd, "query", profiled, "--query", name)
    assert json.loads(line.split(" ", 5)[5])["urim"]["total"] == sum(1 for c in caps if c[8]["query"] == name)
    assert run("query", profiled, "--query", "q/*", "--series", "year") == 0
    series = capfd.readouterr().out.splitlines()
    by_year = {}
    for c in caps:
        if c[8]["query"] != "none":
            by_year[c[1][:4]] = by_year.get(c[1][:4], 0) + 1
    assert {l.split(" ")[1]: json.loads(l.split(" ", 5)[5])["urim"]["total"] for l in series} == by_year
    # the TLD keys have presence, not names: a series of names there cannot be answered (as the
    # key alone cannot), where it said "no captures in that time"
    assert run("query", profiled, "--surt", "com,*", "--query", name, "--series", "year") == 2
    assert "cannot answer 'com,* - - - %s'" % name in capfd.readouterr().err
    assert run("query", profiled, "--surt", "com,*", "--query", "q/*", "--series", "year") == 0
    capfd.readouterr()
    assert run("query", profiled, "--group", "query", "--top", "3", "--by", "urim") == 0
    assert len(capfd.readouterr().out.splitlines()) == 3
    assert run("query", profiled, "--query", "q/a b") == 2
    assert "not a query value" in capfd.readouterr().err


def test_ukvs_keeps_one_level_of_the_criterion(made, profiled, capfd):
    """A map line's breakdown by a criterion of two levels keeps one (the coarsest), so its
    entries add up to the line's captures and the map is valid."""
    out = made["folder"] / "q.ukvs"
    assert run("ukvs", profiled, "-o", out, "-q") == 0
    assert run("validate", out, "-q") == 0
    root = next(line for line in out.read_text().splitlines() if line.startswith("* "))
    block = json.loads(root.split(" ", 2)[2])["query"]
    with_query = sum(1 for c in made["caps"] if c[8]["query"] != "none")
    assert block == {"none": "%d/%d" % (len(made["caps"]) - with_query, len({c[0] for c in made["caps"]
                                                                               if c[8]["query"] == "none"})),
                     "q/*": "%d/%d" % (with_query, len({c[0] for c in made["caps"] if c[8]["query"] != "none"}))}
    small = made["folder"] / "qs.ukvs"
    assert run("compact", out, "-o", small, "--max-lines", "60", "-q") == 0
    assert run("validate", small, "-q") == 0


def test_lookup_a_value_of_the_finer_level_where_a_key_lists_the_coarser(made, profiled, capfd):
    """The host keys list presence only ('none', 'q/*'): asked for parameter names, they do not
    say not-held; a key that lists names (the root's) answers. In a profile and in its map."""
    caps = made["caps"]
    urlkey, name = next((c[0], c[8]["query"]) for c in caps if c[8]["query"] not in ("none", "q/"))
    held_names = {c[8]["query"] for c in caps}
    ukvs = made["folder"] / "lookup.ukvs"
    assert run("ukvs", profiled, "-o", ukvs, "-q") == 0
    for path in (profiled, ukvs):
        line = one_line(capfd, "lookup", path, urlkey, "--query", name)
        fields = line.split("\t")
        assert fields[1] == "held" and fields[-1] in (name, "-"), fields
        if path == profiled:
            assert fields[2].endswith(" - - - " + name), fields
    absent = next("q/%s" % w for w in ("zz", "zzz", "zzzz") if "q/" + w not in held_names)
    fields = one_line(capfd, "lookup", profiled, urlkey, "--query", absent).split("\t")
    assert fields[1] == "not-held" and fields[2] == "* - - - -", fields
    fields = one_line(capfd, "lookup", profiled, urlkey, "--query", "q/*").split("\t")
    assert fields[1] == "held" and fields[2].endswith(")/* - - - q/*"), fields


def test_merge_split_compact_diff_validate(made, profiled, capfd):
    parts = [profile(made, "half%d" % i, [half], "query") for i, half in enumerate(made["halves"])]
    merged = made["folder"] / "merged.cdxj"
    assert run("merge", *parts, "-o", merged, "-q") == 0
    assert validate(str(merged)).ok
    assert [l.split(b" {")[0] for l in data_lines(merged)] == [l.split(b" {")[0] for l in data_lines(profiled)]
    line = one_line(capfd, "query", merged, "--query", "q/*")
    assert json.loads(line.split(" ", 5)[5])["urim"]["total"] == sum(1 for c in made["caps"]
                                                                      if c[8]["query"] != "none")
    assert run("split", profiled, "--max-lines", "700", "-o", made["folder"] / "page", "-q") == 0
    pages = sorted(made["folder"].glob("page*"))
    assert len(pages) > 2 and run("validate", *pages, "-q") == 0
    assert b"".join(b"".join(data_lines(p)) for p in pages) == b"".join(data_lines(profiled))
    compacted = made["folder"] / "compact.cdxj"
    assert run("compact", profiled, "-o", compacted, "--max-lines", "400", "-q") == 0
    assert run("validate", compacted, "-q") == 0
    assert run("diff", parts[0], profiled, "--summary") == 0
    summary = json.loads(capfd.readouterr().out)
    assert summary["vanished"] == 0 and summary["appeared"] > 0


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium, started before a test sets its own TMPDIR (a long one is too long for
    Chromium's sockets)."""
    from helpers.browser import session
    yield from session(tmp_path_factory)


def test_report_has_a_section_per_level_in_a_browser(made, profiled, browser, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report.html"
    assert run("report", profiled, "-o", out, "-q") == 0
    browser.get("file://" + str(out))
    deadline = time.monotonic() + 30
    while browser.execute_script("return document.readyState") != "complete" and time.monotonic() < deadline:
        time.sleep(0.1)
    found = browser.execute_script(
        "const s = document.getElementById('by-query'); if (!s) return null;"
        "return {charts: Array.from(s.querySelectorAll('figure.chart svg')).length,"
        " rows: Array.from(document.getElementById('table-by-query-presence').rows)"
        "  .map(r => Array.from(r.cells).map(c => c.innerText.trim()))}")
    assert found is not None and found["charts"] == 2
    rows = {r[0]: r[1] for r in found["rows"][1:]}
    with_query = sum(1 for c in made["caps"] if c[8]["query"] != "none")
    assert rows["q/*"].replace(",", "") == str(with_query)
    assert rows["none"].replace(",", "") == str(len(made["caps"]) - with_query)


def test_explore_breaks_down_by_each_level(made, profiled):
    from helpers.explore import answer, serving
    with serving("q=" + profiled) as (url, _):
        found = answer(url)
        [by] = [b for b in found["breakdowns"] if b["field"] == "query"]
        assert by["level"] == "presence" and by["levels"] == ["presence", "names"]
        assert {r["value"] for r in by["rows"]} == {"none", "q/*"}
        names = answer(url, levels="query:names")
        [by] = [b for b in names["breakdowns"] if b["field"] == "query"]
        assert by["level"] == "names" and "q/*" not in {r["value"] for r in by["rows"]}
        asked = answer(url, query="q/*")
        assert asked["key"] == "* - - - q/*" and asked["features"]["urim.total"] == sum(
            1 for c in made["caps"] if c[8]["query"] != "none")


@pytest.mark.parametrize("workers", [1, 2])
def test_serve_answers_a_finer_value(made, profiled, workers):
    """A real server (another process, loading the plugins the environment names; with several
    workers, each spawned worker loads them too)."""
    pytest.importorskip("uvicorn")
    server = Server(["q=%s" % profiled], workers=workers, environ=dict(os.environ))
    try:
        urlkey, name = next((c[0], c[8]["query"]) for c in made["caps"] if c[8]["query"] not in ("none", "q/"))
        for _ in range(2 * workers):
            status, answer = server.get("/lookup?" + urllib.parse.urlencode({"url": urlkey, "query": name}))
            assert status == 200, answer
            [archive] = answer["archives"]
            assert archive["query"]["answer"] == "held" and archive["query"]["query"] == name, archive
    finally:
        server.stop()


# ---------------------------------------------------------------- a criterion of a WARC header

@pytest.fixture(scope="module")
def warc_profiled(made):
    return profile(made, "t-inline", [made["warc"]], "truncated")


def test_truncated_the_oracle_s_numbers_from_the_warc_header(made, warc_profiled, monkeypatch):
    """The reader's captures with the field the generator wrote (not the reader's) give the
    oracle's profile; local, pure Python and fastwarc runs write the same bytes."""
    found = [c for c in warc.iter_captures(made["warc"]) if not isinstance(c, str)]
    assert [c.truncated for c in found] == made["fields"]
    caps = [[c.urlkey, c.timestamp, c.mime, c.status, c.digest, c.length, c.revisit, c.lang,
             {"truncated": field}] for c, field in zip(found, made["fields"])]
    expected = oracle_profile(resolve_revisits(caps), load(made["policies"]["truncated"]))
    assert read_profile(warc_profiled) == expected
    assert {k.split(" ")[4] for k in expected if k.startswith("* - ")} == {"-"} | set(made["fields"])
    local = profile(made, "t-local", [made["warc"]], "truncated", "-r", "local", "--cores", "2")
    assert data_lines(local) == data_lines(warc_profiled)
    try:
        import fastwarc  # noqa: F401
        fw = profile(made, "t-fastwarc", [made["warc"]], "truncated", "--warc-reader", "fastwarc")
        assert data_lines(fw) == data_lines(warc_profiled)
    except ImportError:
        pass
    monkeypatch.setenv(fast.PURE_ENV, "1")
    pure = profile(made, "t-pure", [made["warc"]], "truncated", "-r", "local")
    assert data_lines(pure) == data_lines(warc_profiled)


def test_an_index_gives_the_unknown_value(made, capfd):
    out = profile(made, "t-cdx", [made["whole"]], "truncated")
    assert run("query", out, "--group", "truncated") == 0
    [line] = capfd.readouterr().out.splitlines()
    assert line.startswith("* - - - unk ") and json.loads(line.split(" ", 5)[5])["urim"]["total"] == len(made["caps"])


def test_truncated_through_the_toolkit(made, warc_profiled, capfd):
    n = made["fields"].count("length")
    line = one_line(capfd, "query", warc_profiled, "--truncated", "length")
    assert json.loads(line.split(" ", 5)[5])["urim"]["total"] == n
    ukvs = made["folder"] / "t.ukvs"
    assert run("ukvs", warc_profiled, "-o", ukvs, "-q") == 0 and run("validate", ukvs, "-q") == 0
    root = next(l for l in ukvs.read_text().splitlines() if l.startswith("* "))
    assert json.loads(root.split(" ", 2)[2])["truncated"]["length"].startswith("%d/" % n)
    urlkey = next(c.urlkey for c, f in zip((c for c in warc.iter_captures(made["warc"]) if not isinstance(c, str)),
                                           made["fields"]) if f == "time")
    fields = one_line(capfd, "lookup", warc_profiled, urlkey, "--truncated", "time").split("\t")
    assert fields[1] == "held" and fields[2].endswith(")/* - - - time"), fields
    report = made["folder"] / "t.html"
    pytest.importorskip("matplotlib")
    assert run("report", warc_profiled, "-o", report, "-q") == 0
    assert 'id="table-by-truncated-reason"' in report.read_text()


def test_nightly_keeps_the_header_s_field_in_its_captures_file(made, capsys):
    """Nights of WARC files: an approximate night re-profiles the night's captures file, which
    carries the field read from the header, so its keys are the reasons, not unk."""
    root = made["folder"] / "nightly"
    inputs_dir = root / "in"
    inputs_dir.mkdir(parents=True)
    config = root / "nightly.yaml"
    config.write_text(yaml.safe_dump({"inputs": ["in"], "output_dir": "out", "runner": "inline",
                                      "policy": made["policies"]["truncated"], "archive_uri": "https://a.example/",
                                      "on_overlap": "approximate", "settle_seconds": 0}))
    modes, written = [], set()
    for i, seed in enumerate((3, 4, 3)):
        written.update(truncated.write_warc(str(inputs_dir / ("n%d.warc.gz" % i)), 400, seed))
        assert run("nightly", "--config", config, "-q") == 0
        with open(root / "out" / ".nightly" / "runs.jsonl", "rb") as f:
            modes.append(json.loads(f.read().splitlines()[-1])["mode"])
    assert modes[0] == "rebuild" and "approximate" in modes[1:], modes
    keys = {line.split(b" {")[0].split(b" ")[4] for line in data_lines(root / "out" / "archive-latest.cdxj")}
    assert keys == {b"-"} | {f.encode() for f in written}


def test_a_warc_header_is_read_only_into_a_plugin_s_field(made):
    with pytest.raises(ValueError):
        registry.warc_header("mime", "WARC-Truncated", str)         # a field of the package
    with pytest.raises(ValueError):
        registry.warc_header("truncated", "WARC-Truncated", str)    # already read
    with pytest.raises(ValueError):
        registry.warc_header("no_such_field", "X-Y", str)
    assert capture.Capture._field_defaults["truncated"] == "unk" and criteria.BY_NAME["truncated"].source == "truncated"
