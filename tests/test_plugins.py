"""Plugins (profiler.plugins): named in the environment, loaded once per process, and a plugin
that cannot be loaded is a one-line error."""

import os
import subprocess
import sys

import pytest

from profiler import contract, plugins
from profiler.errors import UserError
from profiler.formats import registry
from profiler.model import criteria

from helpers.paths import ROOT
from helpers.registries import keep

TESTS = os.path.join(ROOT, "tests")


@pytest.fixture
def fresh(monkeypatch):
    keep(monkeypatch)


def test_names_and_loading_once(fresh):
    env = {contract.PLUGINS_ENV: " helpers.throwaway, ,helpers.throwaway"}
    assert plugins.names(env) == ["helpers.throwaway", "helpers.throwaway"]
    assert plugins.load(env) == ["helpers.throwaway"]
    assert plugins.load(env) == ["helpers.throwaway"]            # registered once
    assert [c.name for c in criteria.CRITERIA].count("scheme") == 1 and "urllist" in registry.FORMATS
    assert plugins.load({}) == ["helpers.throwaway"]


@pytest.mark.parametrize("name, message", [
    ("no_such_plugin_module", "ModuleNotFoundError"),
    ("helpers.paths", "has no attribute 'register'"),
])
def test_a_plugin_that_cannot_load_is_a_user_error(fresh, name, message):
    with pytest.raises(UserError, match=message):
        plugins.load({contract.PLUGINS_ENV: name})


def test_a_plugin_that_registers_twice_what_exists_is_a_user_error(fresh):
    plugins.load({contract.PLUGINS_ENV: "helpers.throwaway"})
    plugins._loaded.clear()
    with pytest.raises(UserError, match="not a new capture field name"):
        plugins.load({contract.PLUGINS_ENV: "helpers.throwaway"})


def test_the_console_script_says_it_in_one_line():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, TESTS]), **{contract.PLUGINS_ENV: "nope.nothing"})
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "query", "--help"], env=env, capture_output=True,
                       text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("archive-profiler: error: plugin nope.nothing (ARCHIVE_PROFILER_PLUGINS)")
    env[contract.PLUGINS_ENV] = "helpers.throwaway"
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "query", "--help"], env=env, capture_output=True,
                       text=True)
    assert r.returncode == 0 and "--scheme SCHEME" in r.stdout


def test_a_profile_or_policy_of_a_plugin_s_criterion_without_the_plugin_names_it(tmp_path):
    """Where the plugin is not named, its criterion is no key field or policy level: a profile or
    policy of it is refused in one line naming the criterion and the variable that adds it."""
    import yaml
    from helpers import throwaway
    profile = tmp_path / "p.cdxj"
    profile.write_text('!context ["http://oduwsdl.github.io/contexts/archiveprofiles"]\n!id {"uri":null}\n'
                       '!keys ["surt","datetime","mime","status","scheme"]\n'
                       '* - - - - {"urim":{"total":1,"min":1,"max":1},"urir":1,"bytes":5,"digests":1,'
                       '"dedup_bytes":5,"first":"20130101000000","last":"20130101000000"}\n')
    policy = tmp_path / "scheme.yaml"
    policy.write_text(yaml.safe_dump(throwaway.POLICY))
    index = tmp_path / "a.cdx"
    index.write_text(" CDX N b a m s k r M S V g\ncom,a)/ 20130101000000 http://a.com/ text/html 200 "
                     "AAAA - - 5 0 a.warc.gz\n")
    env = {k: v for k, v in os.environ.items() if k != contract.PLUGINS_ENV}
    env["PYTHONPATH"] = ROOT
    for args in (["query", profile], ["validate", profile],
                 ["profile", index, "--policy", policy, "-o", tmp_path / "out.cdxj"]):
        r = subprocess.run([sys.executable, "-m", "profiler.cli"] + [str(a) for a in args], env=env,
                           capture_output=True, text=True)
        assert r.returncode in (1, 2) and r.stdout.count("\n") + r.stderr.count("\n") <= 2, (args, r.stderr)
        assert "scheme: no such criterion here" in r.stdout + r.stderr and contract.PLUGINS_ENV in r.stdout + r.stderr
