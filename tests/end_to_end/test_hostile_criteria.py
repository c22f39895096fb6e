"""A plugin's criterion of a hostile name or hostile values: a name that is no lower-case ASCII
identifier, or one a command uses for its own options, parameters or answers, is refused when
the plugin loads (one line, exit 2), before any command builds an option of it; a value that is
no key field (blank, '-', white space, a newline, too long) is a counted skip, and the values
that are key fields ('/', non-ASCII, the longest allowed) are counted exactly."""

import os
import subprocess
import sys

import pytest
import yaml

from profiler import contract, plugins
from profiler.accel import fast
from profiler.cli import main as cli
from profiler.explore import questions
from profiler.files.validate import validate
from profiler.model import criteria
from profiler.model.policy import load
from profiler.serve import answers
from profiler.testing import synthetic

from helpers import hostile_values
from helpers.oracle import profile as oracle_profile, read_captures, read_profile, resolve_revisits
from helpers.registries import keep

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)

HOSTILE_NAMES = ["group", "from", "profile", "url", "sort", "skip_bad_lines", "help", "quiet", "answer", "language",
                 "surt", "lang", "Lang", "\u00fcn\u00ef", "a-b", "", "1a", "_x", "x" * 33, "with space"]


def criterion(name, **kw):
    return criteria.Criterion(name, "urlkey", (criteria.Level("v", criteria.IDENTITY),), ("v",), lambda f: ("v",),
                              ("x",), r"-|[a-z]+", "a word", optional=True, derive=lambda u: "x", **kw)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_register_refuses_a_hostile_name(name, monkeypatch):
    keep(monkeypatch)
    with pytest.raises(ValueError):
        criteria.register(criterion(name))
    assert criteria.CRITERIA == criteria.BUILT_IN


def test_register_refuses_a_revisit_value_outside_the_pattern(monkeypatch):
    keep(monkeypatch)
    with pytest.raises(ValueError, match="revisit value"):
        criteria.register(criterion("word", revisit="NOT A WORD"))
    criteria.register(criterion("word", revisit="unknown"))


@pytest.mark.parametrize("name", ["group", "profile", "\u00fcn\u00ef"])
def test_a_plugin_of_a_hostile_name_is_one_line_exit_2(name, tmp_path):
    (tmp_path / "hostile_name.py").write_text(
        "from profiler.model import criteria\n"
        "def register():\n"
        "    criteria.register(criteria.Criterion(%r, 'urlkey', (criteria.Level('v', criteria.IDENTITY),), ('v',),\n"
        "        lambda f: ('v',), ('x',), r'-|[a-z]+', 'a word', optional=True, derive=lambda u: 'x'))\n" % name)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]), **{contract.PLUGINS_ENV: "hostile_name"})
    profile = tmp_path / "p.cdxj"
    profile.write_text("")
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "query", str(profile)], env=env, capture_output=True,
                       text=True, cwd=str(tmp_path), timeout=120)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert "not a" in r.stderr and "Traceback" not in r.stderr


def test_reserved_holds_every_name_the_commands_use_for_themselves():
    """Every option of the commands that add one per criterion (as its dest and its spelling with
    '_'), the explorer's own parameters and serve's answer members are RESERVED, so a criterion of
    that name is refused rather than overwriting or crashing them."""
    parser = cli.build_parser()
    own = set()
    for name in ("query", "lookup", "overlap"):
        for action in parser.subcommands[name]._actions:
            own.add(action.dest)
            own.update(s.lstrip("-").replace("-", "_") for s in action.option_strings)
    own.update(questions.OWN)

    class Archive:
        name = "a"
    own.update(answers.error_answer(Archive, "x"))
    own.update(answers.value_answer("x", answers_value()))
    own.update(answers.ANSWER_NAMES.values())
    own.update(("url", "urlkey", "datetime", "archives", "asked", "left_out", "errors", "limit", "score", "date",
                "listed", "share_5xx"))
    own.discard("x")
    assert own - set(criteria.NAMES) <= criteria.RESERVED, sorted(own - set(criteria.NAMES) - criteria.RESERVED)


def answers_value():
    from profiler.toolkit.lookup import Answer
    return Answer("com,x)/", "held", None, None)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        keep(mp)
        mp.setenv(contract.PLUGINS_ENV, "helpers.hostile_values")
        mp.setenv("PYTHONPATH", os.pathsep.join([TESTS, ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        assert plugins.load() == ["helpers.hostile_values"]
        folder = tmp_path_factory.mktemp("hostile")
        whole = folder / "all.cdx"
        synthetic.write_cdx(str(whole), 4000, seed=21)
        policy = folder / "hv.yaml"
        policy.write_text(yaml.safe_dump(hostile_values.POLICY))
        caps = [c + [{"hv": hostile_values.pick(c[0])}] for c in read_captures([str(whole)])]
        yield {"folder": folder, "whole": str(whole), "policy": str(policy), "caps": caps}


def test_hostile_values_are_counted_skips_and_the_others_exact(hostile, capfd, monkeypatch):
    out = hostile["folder"] / "hv.cdxj"
    assert cli.main(["profile", hostile["whole"], "-o", str(out), "--policy", hostile["policy"], "-q"]) == 0
    kept = [c for c in hostile["caps"] if c[8]["hv"] in hostile_values.KEPT]
    bad = len(hostile["caps"]) - len(kept)
    assert bad > 0 and {c[8]["hv"] for c in kept} == set(hostile_values.KEPT)
    meta = [line for line in out.read_text("utf-8").splitlines() if line.startswith('!meta {"inputs"')]
    assert '"skipped":{"bad_hv":%d}' % bad in meta[0]
    expected = oracle_profile(resolve_revisits([list(c) for c in kept]), load(hostile["policy"]))
    assert read_profile(str(out)) == expected
    assert validate(str(out)).ok
    for value in ("x/y", "\u00e9t\u00e9", "z" * criteria.MAX_FIELD):
        assert cli.main(["query", str(out), "--hv", value]) == 0
        [line] = capfd.readouterr().out.splitlines()
        assert line.startswith("* - - - %s {" % value)
    # a value asked that no key can have is refused (its permissive pattern takes it), not answered
    urlkey = kept[0][0]
    for value in ("a b", "", "tab\there", "z" * (criteria.MAX_FIELD + 1)):
        for args in (["query", str(out), "--hv", value], ["lookup", str(out), urlkey, "--hv", value]):
            assert cli.main(args) == 2, args
            out_text, err = capfd.readouterr()
            assert out_text == "" and err.count("\n") == 1 and "not a hv value" in err, err
    from helpers.explore import get, serving
    with serving("h=" + str(out)) as (url, _):
        status, _, body = get(url, "/api/answer", {"hv": "a b"})
        assert status == 400 and b"hv=" in body
        status, _, body = get(url, "/api/answer", {"hv": "x/y"})
        assert status == 200 and b'"key":"* - - - x/y"' in body
    local = hostile["folder"] / "local.cdxj"
    monkeypatch.setenv(fast.PURE_ENV, "1")
    assert cli.main(["profile", hostile["whole"], "-o", str(local), "--policy", hostile["policy"], "-q",
                     "-r", "local", "--cores", "2"]) == 0
    assert [l for l in local.read_bytes().splitlines() if not l.startswith(b"!")] == \
        [l for l in out.read_bytes().splitlines() if not l.startswith(b"!")]


@pytest.mark.parametrize("pure", ["", "1"])
def test_a_value_spelt_as_another_level_s_field_is_a_skip_and_a_prefix_keeps_characters(tmp_path, monkeypatch, pure):
    """A plugin's value 'a/*' beside a CATEGORY level wrote the line the family of 'a/b' writes (2 for
    its 1), '2xx' beside a CLASS, 'html' beside a MIME_CLASS and 'ab' beside a PREFIX of 2 the same:
    each is a counted skip ('bad_sp'), and the other level keeps the key. The compiled reduce side
    cut a prefix in bytes ('éab' and 'ébc' were one key 'é', '日本語' a key of a character cut in
    two, no UTF-8); it keeps characters, as Python does."""
    from helpers import spelt_values
    keep(monkeypatch)
    monkeypatch.setenv(contract.PLUGINS_ENV, "helpers.spelt_values")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([TESTS, ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    assert plugins.load() == ["helpers.spelt_values"]
    if pure:
        monkeypatch.setenv(fast.PURE_ENV, pure)
    paths = ["a/b", "a/*", "200", "2xx", "text/html", "html", "abc", "ab", "\u00e9ab", "\u00e9bc", "\u65e5\u672c\u8a9e"]
    index = tmp_path / "c.cdx"
    index.write_text(" CDX N b a m s k r M S V g\n" + "".join(
        "com,example)/%s 20130101000000 http://example.com/ text/html 200 D%d - - 10 0 f.warc.gz\n" % (p, i)
        for i, p in enumerate(paths)), "utf-8")
    policy = tmp_path / "sp.yaml"
    policy.write_text(yaml.safe_dump(spelt_values.POLICY))
    out = tmp_path / "sp.cdxj"
    assert cli.main(["profile", str(index), "-o", str(out), "--policy", str(policy), "-q"]) == 0
    text = out.read_bytes().decode("utf-8")              # every key field is UTF-8
    assert '"skipped":{"bad_sp":4}' in text
    got = {k: v[0] for k, v in read_profile(str(out)).items()}
    assert got["* - - - a/*"] == 1 and got["* - - - 2xx"] == 1 and got["* - - - html"] == 1 and got["* - - - ab"] == 1
    assert got["* - - - \u00e9a"] == 1 and got["* - - - \u00e9b"] == 1 and got["* - - - \u65e5\u672c"] == 1
    assert got["* - - - a/b"] == 1
    assert validate(str(out)).ok


def test_a_value_its_levels_of_does_not_place_at_a_level_it_is_written_at_is_a_skip(tmp_path, monkeypatch):
    """A plugin of the Server header (tests/helpers/servers.py, as docs/architecture.md shows one)
    whose levels_of places a field with a '/' at its IDENTITY level only: a server that sends
    'Server: /x' wrote '/x' at the CATEGORY level too (a CATEGORY of no '/' after the first
    character is the value itself), under a key that emits only that level: the profile was one
    that validate, merge and ukvs refuse as no key of its own policy. The value is a counted
    skip, 'bad_server'; the other values are kept, and every command takes the profile."""
    from helpers import servers
    keep(monkeypatch)
    monkeypatch.setenv(contract.PLUGINS_ENV, "helpers.servers")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([TESTS, ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    assert plugins.load() == ["helpers.servers"]
    warc_path = tmp_path / "s.warc"
    servers.write_warc(warc_path, [b"nginx/1.18.0 (Ubuntu)", b"Apache", b"/x", b"nginx/1.20.1", b"-x"])
    policy = tmp_path / "server.yaml"
    policy.write_text(yaml.safe_dump(servers.POLICY))
    out = tmp_path / "s.cdxj"
    assert cli.main(["profile", str(warc_path), "-o", str(out), "--policy", str(policy), "-q"]) == 0
    text = out.read_text("utf-8")
    assert '"captures":4,' in text and '"skipped":{"bad_server":1}' in text
    got = {k: v[0] for k, v in read_profile(str(out)).items()}
    assert got["* - - - -"] == 4 and got["* - - - nginx/*"] == 2 and got["* - - - apache"] == 1
    assert got["com,example,* - - - nginx/*"] == 2 and got["com,example,* - - - -x"] == 1
    assert not any(k.endswith(" /x") for k in got)
    assert validate(str(out)).ok
    assert cli.main(["ukvs", str(out), "-o", str(tmp_path / "s.ukvs"), "-q"]) == 0
    assert cli.main(["split", str(out), "-o", str(tmp_path / "page"), "--max-lines", "20", "-q"]) == 0
    pages = sorted(str(p) for p in tmp_path.glob("page-*.cdxj"))
    assert len(pages) > 1 and cli.main(["merge", *pages, "-o", str(tmp_path / "m.cdxj"), "-q"]) == 0
    assert read_profile(str(tmp_path / "m.cdxj")) == read_profile(str(out))
