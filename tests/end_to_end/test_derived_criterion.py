"""A plugin's criterion computed from a field every capture has (tests/helpers/tldclass.py:
``derive`` over ``urlkey``) reaches profile and the toolkit through the registry alone: the same
bytes inline, local and in pure Python, the oracle's numbers, the compiled reduce side over the
Python map side, and query, lookup and merge by the field's name."""

import json
import os

import pytest
import yaml

from profiler import contract, plugins
from profiler.accel import fast
from profiler.cli import main as cli
from profiler.model.policy import load
from profiler.run.profile import run_profile
from profiler.testing import synthetic

from helpers import tldclass
from helpers.oracle import profile as oracle_profile, read_captures, read_profile, resolve_revisits
from helpers.registries import keep

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The plugin registered here and named for every process; a generated CDX cut in two, the
    criterion's policy, and the whole file's captures as the oracle reads them."""
    with pytest.MonkeyPatch.context() as mp:
        keep(mp)
        mp.setenv(contract.PLUGINS_ENV, "helpers.tldclass")
        mp.setenv("PYTHONPATH", os.pathsep.join([TESTS, ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        assert plugins.load() == ["helpers.tldclass"]
        folder = tmp_path_factory.mktemp("derived")
        whole = folder / "all.cdx"
        synthetic.write_cdx(str(whole), 8000, seed=11)
        lines = whole.read_text().splitlines(keepends=True)
        halves = [folder / "a.cdx", folder / "b.cdx"]
        halves[0].write_text(lines[0] + "".join(lines[1::2]))
        halves[1].write_text(lines[0] + "".join(lines[2::2]))
        policy = folder / "tldclass.yaml"
        policy.write_text(yaml.safe_dump(tldclass.POLICY))
        caps = [c + [{"tldclass": tldclass.tld_class(c[0])}] for c in read_captures([str(whole)])]
        yield {"folder": folder, "whole": str(whole), "halves": [str(h) for h in halves],
               "policy": str(policy), "caps": caps}


def run(*args):
    return cli.main([str(a) for a in args])


def data_lines(path):
    with open(path, "rb") as f:
        return [line for line in f if not line.startswith(b"!")]


@pytest.fixture(scope="module")
def profiled(made):
    out = made["folder"] / "inline.cdxj"
    assert run("profile", made["whole"], "-o", out, "--policy", made["policy"], "-q") == 0
    return str(out)


def test_inline_local_and_pure_python_give_the_oracle_s_numbers(made, profiled, monkeypatch):
    expected = oracle_profile(resolve_revisits([list(c) for c in made["caps"]]), load(made["policy"]))
    assert read_profile(profiled) == expected
    assert {k.split(" ")[4] for k in expected} >= {"-", "cc", "g"}
    local = made["folder"] / "local.cdxj"
    summary = run_profile([made["whole"]], str(local), policy=made["policy"], runner="local", cores=2,
                          split_size=1 << 20)
    assert summary["splits"] > 1 and data_lines(local) == data_lines(profiled)
    if fast.load() is not None:
        counted = {name for step in summary["counters"] for group in step.values() for name in group}
        assert "step-1 reducers (compiled)" in counted, counted
    monkeypatch.setenv(fast.PURE_ENV, "1")
    pure = made["folder"] / "pure.cdxj"
    assert run("profile", made["whole"], "-o", pure, "--policy", made["policy"], "-r", "local", "-q") == 0
    assert data_lines(pure) == data_lines(profiled)


def test_query_lookup_and_merge_read_the_field_by_its_name(made, profiled, capfd):
    cc = sum(1 for c in made["caps"] if c[8]["tldclass"] == "cc")
    assert run("query", profiled, "--tldclass", "cc") == 0
    [line] = capfd.readouterr().out.splitlines()
    assert line.startswith("* - - - cc ") and json.loads(line.split(" ", 5)[5])["urim"]["total"] == cc
    host = next(c[0] for c in made["caps"] if c[8]["tldclass"] == "cc")
    for asked, held in (("cc", "held"), ("g", "not-held")):
        assert run("lookup", profiled, host, "--tldclass", asked) == 0
        fields = capfd.readouterr().out.rstrip("\n").split("\t")
        assert fields[1] == held and fields[-1] == asked, fields
    assert run("lookup", profiled, host, "--tldclass", "country") == 2
    assert "not a tldclass value" in capfd.readouterr().err
    parts = []
    for i, half in enumerate(made["halves"]):
        parts.append(made["folder"] / ("half%d.cdxj" % i))
        assert run("profile", half, "-o", parts[-1], "--policy", made["policy"], "-q") == 0
    merged = made["folder"] / "merged.cdxj"
    assert run("merge", *parts, "-o", merged, "-q") == 0
    assert run("query", merged, "--tldclass", "cc") == 0
    [line] = capfd.readouterr().out.splitlines()
    assert json.loads(line.split(" ", 5)[5])["urim"]["total"] == cc
