"""The fixtures of tests/data, profiled, are their golden profiles, byte for byte; they hold a
file of every format the registry reads and a broken one of each."""

import pytest

from profiler.formats import inputs, registry

from helpers import fixtures

CASES = [(name, policy) for name in fixtures.names() for policy in fixtures.policies(name)]


@pytest.mark.parametrize("name, policy", CASES)
def test_the_profile_is_the_golden_one(name, policy):
    with open(fixtures.golden(name, policy), encoding="utf-8") as f:
        expected = f.read()
    assert fixtures.profile_text(name, policy) == expected


@pytest.mark.parametrize("name, policy", [c for c in CASES if not c[0].startswith("broken-")][:4])
def test_the_same_profile_in_byte_ranges_and_with_the_local_runner(name, policy):
    with open(fixtures.golden(name, policy), encoding="utf-8") as f:
        expected = f.read()
    assert fixtures.profile_text(name, policy, split_size=300) == expected
    assert fixtures.profile_text(name, policy, runner="local", cores=2) == expected


def test_every_format_has_a_fixture_and_a_broken_one():
    found = {}
    for name in fixtures.names():
        found.setdefault(inputs.sniff(fixtures.path(name))["format"], set()).add(name.startswith("broken-"))
    wanted = {f.name for f in registry.FORMATS.values() if not f.internal}
    assert {f for f, kinds in found.items() if kinds == {True, False}} == wanted == set(found)


def test_every_golden_profile_has_its_input():
    import os
    goldens = sorted(os.listdir(fixtures.GOLDEN))
    assert goldens == sorted(os.path.basename(fixtures.golden(n, p)) for n, p in CASES)


def test_the_cdx_fixtures_hold_every_layout():
    layouts = {inputs.sniff(fixtures.path(n)).get("fields") for n in fixtures.names() if n.endswith(".cdx")}
    assert {len(f.split()) for f in layouts if f} == {7, 8, 9, 10, 11}
