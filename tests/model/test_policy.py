"""Tests for profiler.model.policy: policy files, validation and combinations."""

import itertools
import os

import pytest
import yaml

from profiler.model import policy as policy_mod
from profiler.model.policy import CRITERIA, LEVEL_TYPES, REGISTERED_ONLY, Policy, PolicyError, load

ALL_LEVELS = {"datetime": ["year", "month"], "mime": ["type", "category"], "status": ["class", "code"]}


def write(tmp_path, text, name="p.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# bundled policies

def test_load_default():
    p = load("default")
    assert p.name == "default"
    assert os.path.basename(p.source) == "default.yaml"
    assert (p.host_depth, p.path_depth, p.exact_urls) == (3, 0, False)
    assert p.emit["path"] == ()
    assert p.emit["url"] == ()
    assert ("any", "any", "any") in p.emit["host"]
    assert p.period_len == 6      # the root level is emitted by month


def test_load_default_is_the_default():
    assert load().to_dict() == load("default").to_dict()


def test_load_full():
    p = load("full")
    assert (p.host_depth, p.path_depth, p.exact_urls) == (4, 2, True)
    for lt in LEVEL_TYPES:
        assert len(p.emit[lt]) == (0 if lt in REGISTERED_ONLY else 27)
    assert p.combo_sets[p.set_of["root"]] == p.emit["root"]
    assert {p.set_of[lt] for lt in LEVEL_TYPES if lt not in REGISTERED_ONLY} == {p.set_of["root"]}


def test_load_by_path(tmp_path):
    path = write(tmp_path, "name: mine\nhost_depth: 2\n")
    p = load(path)
    assert (p.name, p.host_depth, p.source) == ("mine", 2, path)


def test_name_defaults_to_file_name(tmp_path):
    assert load(write(tmp_path, "host_depth: 2\n", "small.yaml")).name == "small"


def test_available_lists_bundled_policies():
    assert {"default", "full"} <= set(policy_mod.available())


@pytest.mark.parametrize("name", ["default", "full"])
def test_to_dict_round_trips(name):
    p = load(name)
    data = p.to_dict()
    again = Policy.from_dict(data)
    assert again.to_dict() == data
    assert again.emit == p.emit
    assert again.levels == p.levels
    assert again.period_len == p.period_len
    assert again.combo_sets == p.combo_sets


def test_to_dict_round_trips_through_yaml(tmp_path):
    data = load("default").to_dict()
    path = write(tmp_path, yaml.safe_dump(data))
    assert load(path).to_dict() == data


def test_to_dict_omits_url_without_exact_urls():
    assert "url" not in load("default").to_dict()["emit"]
    assert "url" in load("full").to_dict()["emit"]


# defaults

def test_defaults():
    p = Policy({})
    assert (p.host_depth, p.path_depth, p.exact_urls) == (3, 0, False)
    assert p.levels == {"datetime": ["any", "year"], "mime": ["any", "type"], "status": ["any", "class"]}
    assert len(p.emit["root"]) == 8
    assert p.emit["url"] == ()
    assert p.period_len == 4


def test_levels_as_a_string_and_order_is_canonical():
    p = Policy({"levels": {"datetime": "month", "status": ["code", "class"]}})
    assert p.levels["datetime"] == ["any", "month"]
    assert p.levels["status"] == ["any", "class", "code"]


def test_empty_levels_leave_only_any():
    p = Policy({"levels": {"mime": []}})
    assert p.levels["mime"] == ["any"]
    assert all(c[1] == "any" for c in p.emit["root"])


# emit forms

def test_emit_all_is_the_cross_product():
    p = Policy({"levels": ALL_LEVELS})
    assert p.emit["root"] == tuple(itertools.product(*(p.levels[c] for c in p.names)))
    assert p.emit["root"][0] == ("any", "any", "any")


def test_emit_none():
    p = Policy({"emit": {"tld": "none", "domain": None, "host": []}})
    assert p.emit["tld"] == p.emit["domain"] == p.emit["host"] == ()
    assert len(p.emit["root"]) == 8


def test_emit_mapping_is_a_cross_product_with_any_by_default():
    p = Policy({"levels": ALL_LEVELS, "emit": {"root": {"datetime": ["any", "year"], "status": "code"}}})
    assert p.emit["root"] == (("any", "any", "code"), ("year", "any", "code"))


def test_emit_list_of_mappings_is_a_union_in_canonical_order():
    p = Policy({"levels": ALL_LEVELS, "emit": {"root": [
        {"datetime": ["month"], "mime": ["category"]},
        {"datetime": ["any"]},
        {"datetime": ["month"], "mime": ["category"]},     # duplicate
    ]}})
    assert p.emit["root"] == (("any", "any", "any"), ("month", "category", "any"))


def test_equal_emits_share_a_combo_set():
    p = Policy({"emit": {"tld": "all", "domain": [{"datetime": "year"}], "host": {"datetime": ["year"]},
                         "path": "none"}})
    assert p.set_of["root"] == p.set_of["tld"]
    assert p.set_of["domain"] == p.set_of["host"] != p.set_of["root"]
    assert p.set_of["path"] == p.set_of["url"]
    assert p.combo_sets[p.set_of["path"]] == ()
    assert len(p.combo_sets) == 3


def test_url_emit_ignored_without_exact_urls():
    assert Policy({"emit": {"url": "all"}}).emit["url"] == ()
    assert len(Policy({"exact_urls": True, "emit": {"url": "all"}}).emit["url"]) == 8


# period_len

@pytest.mark.parametrize("config, expected", [
    ({}, 4),
    ({"levels": {"datetime": ["year", "month"]}, "emit": {lt: "none" for lt in LEVEL_TYPES}}, 4),
    ({"levels": {"datetime": ["year", "month"]}}, 6),
    ({"levels": {"datetime": ["year", "month"]}, "emit": {"root": {"datetime": "year"}}}, 6),  # others 'all'
    ({"levels": {"datetime": ["year", "month"]},
      "emit": {"root": {"datetime": "year"}, "tld": "none", "domain": "none", "host": "none",
               "path": "none"}}, 4),
    ({"levels": {"datetime": ["year", "month"]},
      "emit": {"root": "none", "tld": "none", "domain": "none", "host": {"datetime": "month"},
               "path": "none"}}, 6),
    # month combinations on the url level count only when exact_urls is set
    ({"levels": {"datetime": ["month"]}, "emit": {"root": "none", "tld": "none", "domain": "none",
                                                  "host": "none", "path": "none", "url": "all"}}, 4),
])
def test_period_len(config, expected):
    assert Policy(config).period_len == expected


# errors

@pytest.mark.parametrize("text, message", [
    ("host_depth: 2\ncolour: blue\n", "unknown key 'colour'"),
    ("levels:\n  datetime: [decade]\n", "unknown level 'decade'"),
    ("levels:\n  colour: [big]\n", "levels must map"),
    ("levels: [year]\n", "levels must map"),
    ("emit:\n  root:\n    datetime: [month]\n", "level 'month' is not enabled in levels.datetime"),
    ("emit:\n  root:\n    colour: [any]\n", "emit.root"),
    ("emit:\n  root: some\n", "emit.root"),
    ("emit:\n  planet: all\n", "emit must map level names"),
    ("host_depth: -1\n", "host_depth must be a whole number"),
    ("path_depth: -2\n", "path_depth must be a whole number"),
    ("host_depth: two\n", "host_depth must be a whole number"),
    ("host_depth: 2.5\n", "host_depth must be a whole number"),
    ("host_depth: true\n", "host_depth must be a whole number"),
    ("host_depth: [3\n", "not valid YAML"),
    ("- host_depth\n- 3\n", "a policy is a YAML mapping"),
    ("just a string\n", "a policy is a YAML mapping"),
])
def test_errors_name_the_file(tmp_path, text, message):
    path = write(tmp_path, text, "broken.yaml")
    with pytest.raises(PolicyError) as e:
        load(path)
    assert path in str(e.value)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_missing_file():
    with pytest.raises(PolicyError) as e:
        load("no-such-policy")
    assert "no-such-policy" in str(e.value)
    assert "default" in str(e.value)       # lists the bundled policies


def test_missing_file_path(tmp_path):
    missing = str(tmp_path / "gone.yaml")
    with pytest.raises(PolicyError, match="gone.yaml"):
        load(missing)


def test_error_names_the_source_of_a_dict():
    with pytest.raises(PolicyError, match="^job-args: unknown key"):
        Policy.from_dict({"bogus": 1}, source="job-args")


def test_empty_file_is_the_default_policy(tmp_path):
    p = load(write(tmp_path, "# nothing\n", "empty.yaml"))
    assert p.to_dict() == dict(Policy({}).to_dict(), name="empty")


def test_registered_domains_add_their_levels():
    p = Policy({"registered_domains": True, "emit": {"suffix": "none", "subdomain": {"datetime": ["any"]}}})
    assert p.emit["suffix"] == () and p.emit["subdomain"] == (("any", "any", "any"),)
    assert p.to_dict()["registered_domains"] is True and "subdomain" in p.to_dict()["emit"]
    assert "registered_domains" not in load("urls").to_dict()
    with pytest.raises(PolicyError, match="emit.suffix needs registered_domains"):
        Policy({"emit": {"suffix": "all"}})
