"""The documents that are contracts: the spec vendored in docs/spec.md is the shared one, the
README and the formats page link to it, the formats page lists the registry's formats and the
policies page the package's criteria."""

import os
import re

from profiler.formats import registry
from profiler.model import criteria

from helpers.paths import ROOT, shared_spec

SPEC = os.path.join(ROOT, "docs", "spec.md")


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def test_the_vendored_spec_is_the_shared_one():
    with open(shared_spec("profile-format.md"), "rb") as f:
        shared = f.read()
    with open(SPEC, "rb") as f:
        assert f.read() == shared, "docs/spec.md differs from ../shared/spec/profile-format.md: copy it again"


def test_readme_and_formats_link_to_the_spec():
    assert "](docs/spec.md)" in read("README.md")
    assert "](spec.md)" in read("docs", "formats.md")
    assert "shared/spec" not in read("README.md") + read("docs", "formats.md")


def test_the_formats_page_lists_the_registry_in_its_order():
    text = read("docs", "formats.md")
    table = text[text.index("| registry name |"):]
    table = table[:table.index("\n\n")]
    assert re.findall(r"^\| `([a-z0-9_]+)` \|", table, re.M) == list(registry.FORMATS)
    for name, fmt in registry.FORMATS.items():
        row = re.search(r"^\| `%s` \|.*\| (lines|whole) \|$" % name, table, re.M)
        assert row.group(1) == ("lines" if fmt.lines else "whole"), name


def test_the_policies_page_lists_the_criteria_their_levels_and_key_order():
    """The `levels` row names each criterion of the package with its levels, and its optional
    ones in key order (a criterion added to the package changes it: docs/architecture.md)."""
    text = read("docs", "policies.md")
    row = re.search(r"^\| `levels` \|(.*)\|$", text, re.M).group(1)
    for c in criteria.BUILT_IN:
        part = re.search(r"(?:: |; )%s ([^;.]*)" % c.name, row)
        assert part, "docs/policies.md's levels row does not name %s" % c.name
        assert re.findall(r"`([a-z][a-z0-9_]*)`", part.group(1)) == list(c.level_names), c.name
    optional = [c.name for c in criteria.BUILT_IN if c.optional]
    named = re.search(r"Naming (.*?) here adds", row).group(1)
    assert re.findall(r"`([a-z][a-z0-9_]*)`", named) == optional
