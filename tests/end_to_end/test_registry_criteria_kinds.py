"""Two more kinds of criterion a plugin adds reach every command, runner and output through the
registries alone:

- ``minute`` (tests/helpers/minutes.py): two PREFIX levels (``tens``, ``minute``) over a field
  the compiled map side knows, the timestamp, read with no derivation;
- ``record`` (tests/helpers/recordkind.py): one level, derived from a field that is not text
  (the bool ``revisit``).

On CDX, CDXJ and WARC inputs the inline runner writes the brute-force oracle's numbers, and the
local runner and the pure-Python kernels the same bytes; query (levels, --group, --top), lookup
(profile and map), ukvs, merge, split, compact, diff, overlap, export, validate, report,
explore (API and page), serve (two workers) and nightly find the key field by its name. A
criterion registered but not in a night's policy changes none of its numbers nor labels
(tests/helpers/hostdigit.py); a level no policy or parameter can name is refused when the
plugin registers it.
"""

import json
import os
import subprocess
import sys
import time
import urllib.parse

import pytest
import yaml

from profiler import contract, plugins
from profiler.accel import fast
from profiler.files.validate import validate
from profiler.formats import inputs, registry
from profiler.model import criteria
from profiler.model.policy import load
from profiler.testing import synthetic, synthetic_cc, synthetic_warc

from helpers import hostdigit, minutes, recordkind
from helpers.cliruns import profile, run
from helpers.damage import data_lines
from helpers.nightly_archive import check_within_bounds
from helpers.oracle import profile as oracle_profile, read_profile, resolve_revisits
from helpers.registries import keep
from helpers.serving import Server

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
KINDS = {"minute": minutes, "record": recordkind}
INPUTS = ("cdx", "cdxj", "warc")


def extras(c):
    """A reader's capture's values of both criteria, as the plugins define them."""
    return {"minute": c.timestamp, "record": recordkind.record_kind(c.revisit)}


def reader_captures(path):
    """The captures the format's reader gives, as the oracle takes them."""
    info = inputs.sniff(path)
    out = []
    for split in inputs.plan_splits([info], split_size=1 << 30):
        for c in registry.captures(split):
            if not isinstance(c, str):
                out.append([c.urlkey, c.timestamp, c.mime, c.status, c.digest, c.length, c.revisit, c.lang, extras(c)])
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Both plugins registered here and named for every process; a generated CDX, CDXJ and
    WARC, the two policies and the captures each reader gives."""
    with pytest.MonkeyPatch.context() as mp:
        keep(mp)
        mp.setenv(contract.PLUGINS_ENV, "helpers.minutes,helpers.recordkind")
        mp.setenv("PYTHONPATH", os.pathsep.join([TESTS, ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        assert plugins.load() == ["helpers.minutes", "helpers.recordkind"]
        folder = tmp_path_factory.mktemp("kinds")
        files = {"cdx": folder / "a.cdx", "cdxj": folder / "cc.cdxj", "warc": folder / "w.warc.gz"}
        synthetic.write_cdx(str(files["cdx"]), 4000, seed=7)
        synthetic_cc.write_cc_index(str(files["cdxj"]), 3000, seed=3)
        synthetic_warc.write_warc(str(files["warc"]), 700, seed=4)
        policies = {}
        for name, module in KINDS.items():
            policies[name] = folder / ("%s.yaml" % name)
            policies[name].write_text(yaml.safe_dump(module.POLICY))
        caps = {kind: reader_captures(str(path)) for kind, path in files.items()}
        yield {"folder": folder, "files": {k: str(v) for k, v in files.items()}, "caps": caps,
               "policies": {k: str(v) for k, v in policies.items()}}


@pytest.fixture(scope="module")
def profiled(made):
    """Each criterion's profile of the CDX, inline."""
    return {name: profile(made, "%s-cdx" % name, [made["files"]["cdx"]], name) for name in KINDS}


def one_line(capfd, *args):
    assert run(*args) == 0
    [line] = capfd.readouterr().out.splitlines()
    return line


def total(line):
    """A query line's captures."""
    return json.loads("{" + line.split(" {", 1)[1])["urim"]["total"]


# ---------------------------------------------------------------- profile: inputs, runners, kernels

@pytest.mark.parametrize("kind", INPUTS)
@pytest.mark.parametrize("name", sorted(KINDS))
def test_the_oracle_s_numbers_on_every_input_runner_and_kernel(made, name, kind, monkeypatch):
    path = made["files"][kind]
    inline = profile(made, "%s-%s-inline" % (name, kind), [path], name)
    expected = oracle_profile(resolve_revisits([list(c) for c in made["caps"][kind]]), load(made["policies"][name]))
    assert read_profile(inline) == expected
    fields = {k.split(" ")[4] for k in expected if k.startswith("* - ")}
    if name == "minute":
        assert {len(f) for f in fields} == {1, 11, 12}
    else:
        assert fields == {"-", "response", "revisit"}
    local = profile(made, "%s-%s-local" % (name, kind), [path], name, "-r", "local", "--cores", "2")
    assert data_lines(local) == data_lines(inline)
    monkeypatch.setenv(fast.PURE_ENV, "1")
    pure = profile(made, "%s-%s-pure" % (name, kind), [path], name, "-r", "local", "--cores", "2")
    assert data_lines(pure) == data_lines(inline)


def test_on_spark(made, profiled):
    """Spark's driver and workers load both plugins the environment names: the same bytes."""
    from helpers.spark import require_spark
    require_spark()
    for name in KINDS:
        spark = profile(made, "%s-spark" % name, [made["files"]["cdx"]], name, "-r", "spark")
        assert data_lines(spark) == data_lines(profiled[name])


# ---------------------------------------------------------------- the toolkit

def test_query_each_level_grouped_and_over_time(made, profiled, capfd):
    caps = made["caps"]["cdx"]
    ts = caps[0][1]
    tens = sum(1 for c in caps if c[1][:11] == ts[:11])
    assert total(one_line(capfd, "query", profiled["minute"], "--minute", ts[:11])) == tens
    assert total(one_line(capfd, "query", profiled["minute"], "--minute", ts[:12])) == \
        sum(1 for c in caps if c[1][:12] == ts[:12])
    line = one_line(capfd, "query", profiled["minute"], "--minute", ts[:11], "--datetime", ts[:4])
    assert line.startswith("* %s - - %s " % (ts[:4], ts[:11])) and total(line) == tens
    assert run("query", profiled["minute"], "--minute", "2013") == 2
    assert "not a minute value" in capfd.readouterr().err
    revisits = sum(1 for c in caps if c[6])
    assert total(one_line(capfd, "query", profiled["record"], "--record", "revisit")) == revisits
    assert run("query", profiled["record"], "--group", "record", "--top", "1", "--by", "urim") == 0
    [line] = capfd.readouterr().out.splitlines()
    assert line.startswith("* - - - response ") and total(line) == len(caps) - revisits
    assert run("query", profiled["record"], "--record", "revisit", "--series", "year") == 0
    by_year = {}
    for c in caps:
        if c[6]:
            by_year[c[1][:4]] = by_year.get(c[1][:4], 0) + 1
    assert {l.split(" ")[1]: total(l) for l in capfd.readouterr().out.splitlines()} == by_year


def test_lookup_in_the_profile_and_its_map(made, profiled, capfd):
    """A map keeps the coarsest level (tens) of minute; the domain keys list minutes."""
    urlkey, ts = made["caps"]["cdx"][0][:2]
    ukvs = made["folder"] / "minute.ukvs"
    assert run("ukvs", profiled["minute"], "-o", ukvs, "-q") == 0
    assert run("validate", ukvs, "-q") == 0
    root = next(l for l in ukvs.read_text().splitlines() if l.startswith("* "))
    block = json.loads(root.split(" ", 2)[2])["minute"]
    assert {len(f) for f in block} == {11} and sum(int(v.split("/")[0]) for v in block.values()) == \
        len(made["caps"]["cdx"])
    for path in (profiled["minute"], ukvs):
        for value in (ts[:11], ts[:12]):
            fields = one_line(capfd, "lookup", path, urlkey, "--minute", value).split("\t")
            assert fields[1] == "held" and fields[-1] == value, fields
    revisit = next(c[0] for c in made["caps"]["cdx"] if c[6])
    fields = one_line(capfd, "lookup", profiled["record"], revisit, "--record", "revisit").split("\t")
    assert fields[1] == "held" and fields[2].endswith(" - - - revisit"), fields


@pytest.mark.parametrize("name", sorted(KINDS))
def test_merge_split_compact_diff_overlap_export_validate(made, profiled, name, capfd):
    whole = profiled[name]
    lines = open(made["files"]["cdx"]).read().splitlines(keepends=True)
    halves = []
    for i, part in enumerate((lines[1:2001], lines[2001:])):
        path = made["folder"] / ("%s-half%d.cdx" % (name, i))
        path.write_text(lines[0] + "".join(part))
        halves.append(profile(made, "%s-half%d" % (name, i), [path], name))
    merged = made["folder"] / ("%s-merged.cdxj" % name)
    assert run("merge", *halves, "-o", merged, "-q") == 0 and validate(str(merged)).ok
    assert [l.split(b" {")[0] for l in data_lines(merged)] == [l.split(b" {")[0] for l in data_lines(whole)]
    value = "revisit" if name == "record" else made["caps"]["cdx"][0][1][:11]
    assert total(one_line(capfd, "query", merged, "--%s" % name, value)) == \
        total(one_line(capfd, "query", whole, "--%s" % name, value))
    assert run("split", whole, "--max-lines", "3000", "-o", made["folder"] / ("%s-page" % name), "-q") == 0
    pages = sorted(made["folder"].glob("%s-page*" % name))
    assert run("validate", *pages, "-q") == 0
    assert b"".join(b"".join(data_lines(p)) for p in pages) == b"".join(data_lines(whole))
    compacted = made["folder"] / ("%s-compact.cdxj" % name)
    assert run("compact", whole, "-o", compacted, "--max-lines", "300", "-q") == 0
    assert run("validate", compacted, "-q") == 0
    assert run("diff", halves[0], whole, "--summary") == 0
    summary = json.loads(capfd.readouterr().out)
    assert summary["vanished"] == 0 and summary["appeared"] > 0
    assert run("overlap", halves[0], halves[1], "--%s" % name, value) == 0
    root = json.loads(capfd.readouterr().out.splitlines()[0])
    assert root["level"] == "root"
    exported = made["folder"] / ("%s.jsonld" % name)
    assert run("export", whole, "-o", exported, "-q") == 0
    doc = json.loads(exported.read_text())
    assert doc["keys"] == ["surt", "datetime", "mime", "status", name]
    root = doc["profile"]["*"]["-"]["-"]["-"]
    assert root[value]["urim"]["total"] == total(one_line(capfd, "query", whole, "--%s" % name, value))
    other = "minute" if name == "record" else "record"
    assert run("merge", whole, profiled[other], "-o", made["folder"] / "mixed.cdxj", "-q") == 2
    assert "cannot merge" in capfd.readouterr().err


def test_report_has_a_section_and_a_table_per_level(made, profiled):
    pytest.importorskip("matplotlib")
    for name, tables in (("minute", ("tens", "minute")), ("record", ("kind",))):
        out = made["folder"] / ("%s.html" % name)
        assert run("report", profiled[name], "-o", out, "-q") == 0
        text = out.read_text()
        assert text.count('id="by-%s"' % name) == 1
        for level in tables:
            assert text.count('id="table-by-%s-%s"' % (name, level)) == 1


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from helpers.browser import session
    yield from session(tmp_path_factory)


def test_explore_api_and_page_facets(made, profiled, browser):
    """The API breaks down by each level and answers a value; the page draws the criterion's
    facet with a tab per level, names it among the fields a question leaves open, and, once a row
    is chosen, draws a chip for it."""
    from helpers.explore import answer, serving
    caps = made["caps"]["cdx"]
    with serving("m=" + profiled["minute"], "r=" + profiled["record"]) as (url, _):
        [by] = [b for b in answer(url, profile="m")["breakdowns"] if b["field"] == "minute"]
        assert by["level"] == "tens" and by["levels"] == ["tens", "minute"]
        ts = caps[0][1]
        found = answer(url, profile="m", minute=ts[:11])
        assert found["key"] == "* - - - " + ts[:11]
        assert found["features"]["urim.total"] == sum(1 for c in caps if c[1][:11] == ts[:11])
        [by] = [b for b in found["breakdowns"] if b["field"] == "minute"]
        assert by["level"] == "minute" and all(r["value"].startswith(ts[:11]) for r in by["rows"])
        found = answer(url, profile="r", record="revisit")
        assert found["features"]["urim.total"] == sum(1 for c in caps if c[6])
        browser.get(url + "?profile=m")
        deadline = time.monotonic() + 30
        script = ("const s = document.getElementById('by-minute'); if (!s || !s.querySelector('tbody tr')) return null;"
                  "return {tabs: Array.from(s.querySelectorAll('.levels a')).map(a => a.textContent),"
                  " rows: s.querySelectorAll('tbody tr').length}")
        facet = None
        while facet is None and time.monotonic() < deadline:
            facet = browser.execute_script(script)
            time.sleep(0.1)
        assert facet is not None and facet["tabs"] == ["tens", "minute"] and facet["rows"] > 0
        hint = browser.execute_script("const s = document.querySelector('#chips .quiet-text');"
                                      " return s && s.textContent")
        assert hint.startswith("Any time, any type, any status, any minute:"), hint
        browser.get(url + "?" + urllib.parse.urlencode({"profile": "r", "record": "revisit"}))
        chips = None
        while not chips and time.monotonic() < deadline + 30:
            chips = browser.execute_script("return Array.from(document.querySelectorAll('#chips .chip > span'))"
                                           ".map(s => s.textContent)")
            time.sleep(0.1)
        assert "record: revisit" in chips


def test_serve_answers_each_criterion_with_two_workers(made, profiled):
    pytest.importorskip("uvicorn")
    ukvs = made["folder"] / "serve-minute.ukvs"
    assert run("ukvs", profiled["minute"], "-o", ukvs, "-q") == 0
    server = Server(["m=%s" % profiled["minute"], "r=%s" % profiled["record"], "u=%s" % ukvs], workers=2,
                    environ=dict(os.environ))
    try:
        urlkey, ts = made["caps"]["cdx"][0][:2]
        revisit = next(c[0] for c in made["caps"]["cdx"] if c[6])
        for _ in range(4):
            status, answer = server.get("/lookup?" + urllib.parse.urlencode({"url": urlkey, "minute": ts[:12]}))
            assert status == 200, answer
            archives = {a["archive"]: a for a in answer["archives"]}
            assert archives["m"]["minute"]["answer"] == "held" and archives["m"]["minute"]["minute"] == ts[:12]
            assert archives["u"]["minute"]["answer"] == "held"
            status, answer = server.get("/lookup?" + urllib.parse.urlencode({"url": revisit, "record": "revisit"}))
            assert status == 200, answer
            archives = {a["archive"]: a for a in answer["archives"]}
            assert archives["r"]["record"]["answer"] == "held"
            status, answer = server.get("/lookup?" + urllib.parse.urlencode({"url": urlkey, "record": "new"}))
            assert status == 400 and "not a record value" in answer["error"]
    finally:
        server.stop()


# ---------------------------------------------------------------- nightly

def night_files(folder, seed):
    """Night one's CDX and night two's: some of its URLs captured again with new payloads (no
    revisits), so night two is approximate, not a rebuild."""
    first = folder / "n1.cdx"
    synthetic.write_cdx(str(first), 3000, seed=seed)
    lines = first.read_text().splitlines()
    again = [lines[0]]
    for i, line in enumerate(lines[1:]):
        f = line.split(" ")
        if i % 7 == 0 and f[3] != "warc/revisit":
            f[1] = "2026" + f[1][4:]
            f[5] = "sha1:" + ("%032X" % (i * 7919 + 1))[-32:]
            again.append(" ".join(f))
    second = folder / "n2.cdx"
    second.write_text("\n".join(again) + "\n")
    return first, second


def nights(folder, policy, seed=11):
    """Two nights (inline, approximate on overlap) of night_files; the published profile and a
    scratch profile of both nights' inputs."""
    (folder / "in").mkdir(parents=True)
    config = folder / "nightly.yaml"
    config.write_text(yaml.safe_dump({"inputs": ["in"], "output_dir": "out", "runner": "inline", "policy": policy,
                                      "archive_uri": "https://a.example/", "on_overlap": "approximate",
                                      "settle_seconds": 0}))
    first, second = night_files(folder, seed)
    modes = []
    for path in (first, second):
        os.replace(path, folder / "in" / path.name)
        assert run("nightly", "--config", config, "-q") == 0
        with open(folder / "out" / ".nightly" / "runs.jsonl", "rb") as f:
            modes.append(json.loads(f.read().splitlines()[-1])["mode"])
    assert modes == ["rebuild", "approximate"], modes
    scratch = folder / "scratch.cdxj"
    assert run("profile", *sorted((folder / "in").iterdir()), "-o", scratch, "--policy", policy, "-q") == 0
    return str(folder / "out" / "archive-latest.cdxj"), str(scratch)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_nightly_approximate_night_holds_the_criterion(made, name, tmp_path, capsys):
    published, scratch = nights(tmp_path, made["policies"][name])
    exact, bounded = check_within_bounds(published, scratch)
    assert bounded > 0 and exact > 0
    fields = {l.split(b" {")[0].split(b" ")[4] for l in data_lines(published)}
    assert len(fields) > 2


def test_a_criterion_outside_the_night_s_policy_changes_none_of_its_numbers(tmp_path, capsys):
    """A plugin's criterion with no value for some captures ('': no key field), registered but
    not in the policy: the night's captures file read back had those captures as bad_field, so
    the keys of URI-Rs seen before were missed and an approximate night was labelled exact with
    summed URI-Rs."""
    with pytest.MonkeyPatch.context() as mp:
        keep(mp)
        mp.setenv(contract.PLUGINS_ENV, "helpers.hostdigit")
        mp.setenv("PYTHONPATH", os.pathsep.join([TESTS, ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        assert plugins.load() == ["helpers.hostdigit"]
        assert hostdigit.host_digit("com,example)/") == ""
        published, scratch = nights(tmp_path, "default")
        _, bounded = check_within_bounds(published, scratch)
        assert bounded > 0


# ---------------------------------------------------------------- refused loudly

def level_criterion(levels, default=None):
    names = tuple(level.name for level in levels)
    return criteria.Criterion("odd", "timestamp", tuple(levels), default or names[:1], lambda f: names,
                              ("2",) * len(levels), r"-|[0-9]+", "digits", optional=True)


@pytest.mark.parametrize("levels, default", [
    ((criteria.Level("v", criteria.PREFIX, 4), criteria.Level("v", criteria.PREFIX, 6)), None),   # one unreachable
    ((criteria.Level("a,b", criteria.PREFIX, 4),), None),      # explore's levels=odd:a,b reads 'odd:a' and 'b'
    ((criteria.Level("ten minutes", criteria.PREFIX, 11),), None),
    ((criteria.Level("Year", criteria.PREFIX, 4),), None),
    ((criteria.Level("a", criteria.PREFIX, 0),), None),         # every value blank: every capture a skip
    ((criteria.Level("a", criteria.PREFIX, 4),), ("b",)),      # a default level it has not
])
def test_register_refuses_a_level_a_policy_or_parameter_cannot_name(levels, default, monkeypatch):
    keep(monkeypatch)
    before = criteria.CRITERIA
    with pytest.raises(ValueError, match="criterion odd"):
        criteria.register(level_criterion(levels, default))
    assert criteria.CRITERIA == before
    two = (criteria.Level("a", criteria.PREFIX, 4), criteria.Level("b", criteria.PREFIX, 6))
    criteria.register(level_criterion(two))


def plugin_run(tmp_path, plugin_names, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), TESTS, ROOT]),
               **{contract.PLUGINS_ENV: plugin_names})
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + [str(a) for a in args], env=env,
                          capture_output=True, text=True, cwd=str(tmp_path), timeout=120)


def test_a_policy_or_profile_of_a_criterion_not_registered_and_a_name_registered_twice(made, profiled, tmp_path):
    """Each is one line, exit 2, naming what is missing or taken."""
    r = plugin_run(tmp_path, "", "profile", made["files"]["cdx"], "-o", tmp_path / "p.cdxj", "--policy",
                   made["policies"]["minute"], "-q")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "minute: no such criterion here" in r.stderr, r.stderr
    assert not (tmp_path / "p.cdxj").exists()
    r = plugin_run(tmp_path, "helpers.recordkind", "query", profiled["minute"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "minute: no such criterion here" in r.stderr, r.stderr
    (tmp_path / "minutes_again.py").write_text(
        "from helpers.minutes import MINUTE\nfrom profiler.model import criteria\n"
        "def register():\n    criteria.register(MINUTE)\n")
    r = plugin_run(tmp_path, "helpers.minutes,minutes_again", "query", profiled["minute"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a new name" in r.stderr, r.stderr
    (tmp_path / "key_field.py").write_text(
        "from profiler.model import criteria\nfrom helpers.minutes import MINUTE\nimport dataclasses\n"
        "def register():\n    criteria.register(dataclasses.replace(MINUTE, name='urlkey'))\n")
    r = plugin_run(tmp_path, "key_field", "query", profiled["minute"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a new name" in r.stderr, r.stderr


@pytest.mark.parametrize("value, kept", [("~", True), ("a~b", True), ("", False), (None, False), (" ", False),
                                         ("x\ny", False), ("x y", False)])
def test_a_value_with_a_tilde_is_exact_and_a_blank_one_a_counted_skip(value, kept, tmp_path, capfd, monkeypatch):
    """Of a plugin's values, '~' (past every other ASCII field byte) is held, asked and looked up
    like any; empty, None or white space is a counted skip, bad_odd (the inline runner's tasks
    share this process's registry)."""
    keep(monkeypatch)
    monkeypatch.delenv(contract.PLUGINS_ENV, raising=False)
    criteria.register(criteria.Criterion(
        "odd", "urlkey", (criteria.Level("v", criteria.IDENTITY),), ("v",), lambda f: ("v",), ("x",), r"[^ \t\n]+",
        "a word", optional=True, derive=lambda u: value if u.startswith("com,") else "plain"))
    cdx = tmp_path / "a.cdx"
    synthetic.write_cdx(str(cdx), 1500, seed=5)
    policy = tmp_path / "odd.yaml"
    policy.write_text(yaml.safe_dump({"name": "odd", "levels": {"odd": ["v"]},
                                      "emit": {"root": {"odd": ["any", "v"]}, "tld": {"odd": ["any", "v"]},
                                               "domain": "none", "host": {"odd": ["any", "v"]}, "path": "none"}}))
    out = tmp_path / "p.cdxj"
    assert run("profile", cdx, "-o", out, "--policy", policy, "-q") == 0
    com = [l.split()[0] for l in cdx.read_text().splitlines()[1:] if l.startswith("com,")]
    assert com
    skipped = out.read_text().count('"bad_odd":%d' % len(com))
    assert skipped == (0 if kept else 1)
    assert run("validate", out, "-q") == 0
    if kept:
        assert total(one_line(capfd, "query", out, "--odd", value)) == len(com)
        fields = one_line(capfd, "lookup", out, com[0], "--odd", value).split("\t")
        assert fields[1] == "held" and fields[-1] == value, fields
        ukvs = tmp_path / "p.ukvs"
        assert run("ukvs", out, "-o", ukvs, "-q") == 0 and run("validate", ukvs, "-q") == 0
        fields = one_line(capfd, "lookup", ukvs, com[0], "--odd", value).split("\t")
        assert fields[1] == "held", fields
    elif value is not None:
        assert run("query", out, "--odd", value) == 2
        assert "not a odd value" in capfd.readouterr().err
