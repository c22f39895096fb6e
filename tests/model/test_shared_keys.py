"""No key counts two sets of captures: a value whose field at one level of its criterion is what
another level writes for other values (a type 'text/*', a category's; a status '2xx', a class's)
is never written (profiler.model.criteria.shares_a_key). The package's normalisers never give
one; a plugin's criterion's value that is one is refused by is_field (a counted skip)."""

import pytest
from hypothesis import given, settings, strategies as st

from profiler.model import criteria, normalise
from profiler.model.criteria import CATEGORY, CLASS, IDENTITY, MIME_CLASS, PREFIX, Level

from helpers import spelt_values

LEVELS = (Level("family", CATEGORY), Level("group", CLASS), Level("kind", MIME_CLASS), Level("pre", PREFIX, 2),
          Level("name", IDENTITY))


@pytest.mark.parametrize("value, shares", [
    ("a/*", True),          # the family of 'a/b'
    ("2xx", True),          # the group of '200'
    ("html", True),         # the kind of 'text/html'
    ("other", True),
    ("ab", True),           # the first two characters of 'abc'
    ("a", False),           # no value but 'a' has the field 'a' at any level
    ("a/b", False), ("200", False), ("text/html", False), ("abc", False), ("a/b/*", False), ("*", False),
    ("unk", False),         # a value, and the group of what is not 1xx-5xx: as a status's (docs/policies.md)
])
def test_a_value_spelt_as_another_level_s_field_shares_its_key(value, shares):
    assert criteria.shares_a_key(LEVELS, value) is shares


def test_prefixes_of_several_lengths_share_a_short_value_s_key():
    levels = (Level("year", PREFIX, 4), Level("month", PREFIX, 6))
    assert criteria.shares_a_key(levels, "2013")            # its month '2013' is the year of '20130101...'
    assert not any(criteria.shares_a_key(levels, v) for v in ("20130101000000", "201301", "20130", "201"))


def test_is_field_refuses_a_plugin_s_value_that_shares_a_key():
    c = criteria.Criterion("sp", "urlkey", LEVELS, ("name",), spelt_values.SP.levels_of,
                           ("a/*", "2xx", "html", "ab", "abc"), r"[^ \t\n]+", "a path", optional=True)
    assert criteria.is_field(c, "a/b") and criteria.is_field(c, "unk")
    assert not criteria.is_field(c, "a/*") and not criteria.is_field(c, "-")


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=24) | st.sampled_from([b"text/*", b"*/*", b"html", b"Code", b"/", b"-", b"unk", b"text/*x",
                                                   b"2xx", b"image/*; q=1"]))
def test_the_package_s_normalisers_never_give_a_value_that_shares_a_key(raw):
    assert not criteria.shares_a_key(criteria.MIME.levels, normalise.mime(raw))
    assert not criteria.shares_a_key(criteria.STATUS.levels, normalise.status(raw[:3]))
    ts = normalise.timestamp(raw)
    assert ts is None or not criteria.shares_a_key(criteria.DATETIME.levels, ts)


def test_is_field_refuses_a_value_whose_field_its_levels_of_does_not_place_at_that_level():
    """'-x' under a PREFIX of 1 is '-', the field of any; '/x' under a CATEGORY is '/x', a field
    this levels_of places at the IDENTITY level only: readers would take either line for no key
    of its level (validate, merge, ukvs refused the profile)."""
    c = criteria.Criterion("pp", "urlkey", (Level("one", PREFIX, 1), Level("all", IDENTITY)), ("all",),
                           lambda f: ("one",) if len(f) == 1 else ("all",), ("a", "ab"), r"-|[!-~]+", "a word",
                           optional=True)
    assert criteria.is_field(c, "ab") and not criteria.is_field(c, "-x")
    c = criteria.Criterion("sv", "urlkey", (Level("product", IDENTITY), Level("name", CATEGORY)), ("product",),
                           lambda f: ("name",) if f.endswith("/*") else ("product",) if "/" in f else ("product", "name"),
                           ("a/1", "a/*"), r"-|[!-~]+", "a product", optional=True)
    assert criteria.is_field(c, "nginx/1.0") and criteria.is_field(c, "apache") and not criteria.is_field(c, "/x")
