"""Tests for profiler.model.keys: SURT levels and key suffixes (spec section 2)."""

import itertools

import pytest
from hypothesis import given, strategies as st

from profiler.model import criteria
from profiler.model.keys import SuffixTable, exact_key, group_levels, host_part, key_level, own_levels, surt_levels
from profiler.model.policy import Policy

CNN = "com,cnn,edition)/world/asia/index.html"
ALL_LEVELS = {"datetime": ["year", "month"], "mime": ["type", "category"], "status": ["class", "code"]}


def policy(host_depth=3, path_depth=0, exact_urls=False, **extra):
    return Policy(dict(host_depth=host_depth, path_depth=path_depth, exact_urls=exact_urls, **extra))


def keys(urlkey, **kw):
    return [key for _, key in surt_levels(urlkey, policy(**kw))]


# SURT levels

def test_spec_example_all_levels():
    assert surt_levels(CNN, policy(host_depth=3, path_depth=2, exact_urls=True)) == [
        ("root", "*"),
        ("tld", "com,*"),
        ("domain", "com,cnn,*"),
        ("host", "com,cnn,edition)/*"),
        ("path", "com,cnn,edition)/world/*"),
        ("path", "com,cnn,edition)/world/asia/*"),
        ("url", CNN),
    ]


@pytest.mark.parametrize("host_depth, expected", [
    (0, ["*"]),
    (1, ["*", "com,*"]),
    (2, ["*", "com,*", "com,cnn,*"]),
    (3, ["*", "com,*", "com,cnn,*", "com,cnn,edition)/*"]),
    (4, ["*", "com,*", "com,cnn,*", "com,cnn,edition)/*"]),    # n - 1 label wildcards at most
    (9, ["*", "com,*", "com,cnn,*", "com,cnn,edition)/*"]),
])
def test_host_depth(host_depth, expected):
    assert keys(CNN, host_depth=host_depth) == expected


@pytest.mark.parametrize("path_depth, expected", [
    (0, []),
    (1, ["com,cnn,edition)/world/*"]),
    (2, ["com,cnn,edition)/world/*", "com,cnn,edition)/world/asia/*"]),
    (5, ["com,cnn,edition)/world/*", "com,cnn,edition)/world/asia/*"]),   # index.html is no directory
])
def test_path_depth(path_depth, expected):
    assert keys(CNN, path_depth=path_depth)[4:] == expected


def test_exact_urls():
    assert keys(CNN, exact_urls=True)[-1] == CNN
    assert CNN not in keys(CNN, exact_urls=False)


def test_directory_url_counts_its_last_segment():
    assert keys("com,cnn)/world/asia/", path_depth=5)[3:] == [
        "com,cnn)/world/*", "com,cnn)/world/asia/*"]


def test_root_path_has_no_directory():
    assert keys("com,cnn)/", path_depth=3) == ["*", "com,*", "com,cnn)/*"]


@pytest.mark.parametrize("urlkey", [
    "com,cnn)/a/b?x=/c/d/",
    "com,cnn)/a/b?x=1",
    "com,cnn)/a/b#frag/c/",
    "com,cnn)/a/?x=/c/",
])
def test_query_and_fragment_are_not_directories(urlkey):
    assert [k for k in keys(urlkey, path_depth=5) if k.endswith("/*")] == ["com,cnn)/*", "com,cnn)/a/*"]


def test_query_only_url():
    assert keys("com,example)/?example=1", path_depth=3, exact_urls=True) == [
        "*", "com,*", "com,example)/*", "com,example)/?example=1"]


@pytest.mark.parametrize("urlkey", ["dns:netarkivet.dk", "urn:x:y", "mailto:a@b.c"])
def test_urlkey_without_paren(urlkey):
    p = policy(host_depth=5, path_depth=5, exact_urls=True)
    assert surt_levels(urlkey, p) == [("root", "*"), ("url", urlkey)]
    assert surt_levels(urlkey, policy(host_depth=5, path_depth=5)) == [("root", "*")]


def test_single_label_host():
    assert keys("localhost)/a/", path_depth=1) == ["*", "localhost)/*", "localhost)/a/*"]


def test_host_with_port():
    assert keys("com,example:8080)/a/", path_depth=1) == [
        "*", "com,*", "com,example:8080)/*", "com,example:8080)/a/*"]


def test_host_part():
    assert host_part(CNN) == "com,cnn,edition"
    assert host_part("dns:netarkivet.dk") is None


def test_group_and_own_levels_add_up():
    p = policy(path_depth=2, exact_urls=True)
    host = host_part(CNN)
    assert group_levels(host, p) + own_levels(CNN, host, p) == surt_levels(CNN, p)
    assert all(t in ("root", "tld", "domain", "host") for t, _ in group_levels(host, p))
    assert all(t in ("path", "url") for t, _ in own_levels(CNN, host, p))


def test_no_key_contains_white_space():
    for k in keys("com,example)/a%20b/c%09d/e", path_depth=3, exact_urls=True):
        assert " " not in k and "\t" not in k


# exact keys

@pytest.mark.parametrize("urlkey, expected", [
    ("com,example)/a*", "com,example)/a%2A"),
    ("com,example)/*", "com,example)/%2A"),
    ("com,example)/a*b", "com,example)/a*b"),
    ("com,example)/a%2A", "com,example)/a%252A"),
    ("com,example)/a%252A", "com,example)/a%25252A"),
    ("com,example)/a%25%2A", "com,example)/a%25%252A"),
    ("com,example)/a%2a", "com,example)/a%2a"),
    ("com,example)/a2A", "com,example)/a2A"),
    ("com,example)/a%22A", "com,example)/a%22A"),
    (CNN, CNN),
])
def test_exact_key(urlkey, expected):
    assert exact_key(urlkey) == expected


@given(st.lists(st.text(alphabet="%25Aa*/", max_size=8), min_size=2, max_size=6, unique=True))
def test_no_two_urlkeys_share_an_exact_key(tails):
    """'a*' is written 'a%2A', and a urlkey ending in '%2A' (or '%252A', ...) is escaped once more:
    the key of one URL never counts another's captures."""
    urlkeys = ["com,example)/" + t for t in tails]
    keys_ = [exact_key(u) for u in urlkeys]
    assert len(set(keys_)) == len(urlkeys) and not any(k.endswith("*") for k in keys_)


def test_exact_key_never_reads_as_wildcard():
    ks = keys("com,cnn)/*", path_depth=2, exact_urls=True)
    assert ks.count("com,cnn)/*") == 1          # the host wildcard only
    assert ks[-1] == "com,cnn)/%2A"


# suffixes

@pytest.mark.parametrize("combo, expected", [
    (("any", "any", "any"), "- - -"),
    (("year", "any", "any"), "2014 - -"),
    (("month", "any", "any"), "201403 - -"),
    (("any", "type", "any"), "- text/html -"),
    (("any", "category", "any"), "- text/* -"),
    (("any", "any", "class"), "- - 4xx"),
    (("any", "any", "code"), "- - 404"),
    (("month", "category", "code"), "201403 text/* 404"),
    (("year", "type", "class"), "2014 text/html 4xx"),
])
def test_suffix_parts(combo, expected):
    assert criteria.suffix(criteria.CORE, ("201403", "text/html", "404"), combo) == expected


def test_suffix_parts_unknown_values():
    assert criteria.suffix(criteria.CORE, ("2014", "unk", "unk"), ("year", "category", "class")) == "2014 unk unk"
    assert criteria.suffix(criteria.CORE, ("2014", "unk", "unk"), ("year", "type", "code")) == "2014 unk unk"


def full_policy(**emit):
    return policy(levels=ALL_LEVELS, emit=emit or None)


def test_suffix_table_all_combinations():
    p = full_policy()
    table = SuffixTable(p)
    suffixes = table(("201403", "text/html", "404"))[p.set_of["root"]]
    assert len(suffixes) == 27 == len(set(suffixes))
    assert suffixes[0] == "- - -"
    assert "201403 text/* 4xx" in suffixes


def test_suffix_table_deduplicates_colliding_suffixes():
    p = full_policy()
    table = SuffixTable(p)
    suffixes = table(("201403", "unk", "unk"))[p.set_of["root"]]
    # mime 'unk' is its own category; status 'unk' is its own class: 3 x 2 x 2 distinct suffixes
    assert len(suffixes) == len(set(suffixes)) == 12
    expected = {"%s %s %s" % c for c in itertools.product(["-", "2014", "201403"], ["-", "unk"], ["-", "unk"])}
    assert set(suffixes) == expected


def test_suffix_table_status_collision_only():
    p = full_policy()
    suffixes = SuffixTable(p)(("201403", "text/html", "unk"))[p.set_of["root"]]
    assert len(suffixes) == 18 == len(set(suffixes))


def test_suffix_table_is_indexed_like_combo_sets():
    p = full_policy(root="all", tld=[{"datetime": "year"}], domain="none", host="none", path="none")
    table = SuffixTable(p)
    found = table(("201403", "text/html", "200"))
    assert len(found) == len(p.combo_sets)
    assert found[p.set_of["tld"]] == ("2014 - -",)
    assert found[p.set_of["domain"]] == ()
    assert found[p.set_of["url"]] == ()


def test_suffix_table_caches_and_clears():
    table = SuffixTable(full_policy(), limit=2)
    first = table(("2014", "text/html", "200"))
    assert table(("2014", "text/html", "200")) is first
    table(("2015", "text/html", "200"))
    table(("2016", "text/html", "200"))
    assert len(table.cache) <= 2
    assert table(("2014", "text/html", "200")) == first


def test_registered_domains_by_the_public_suffix_list():
    p = Policy({"registered_domains": True, "path_depth": 1})
    assert group_levels("uk,co,bbc,news", p) == [
        ("root", "*"), ("tld", "uk,*"), ("suffix", "uk,co,*"), ("domain", "uk,co,bbc,*"),
        ("host", "uk,co,bbc,news)/*")]
    assert group_levels("com,cnn,edition,www", p) == [
        ("root", "*"), ("tld", "com,*"), ("domain", "com,cnn,*"), ("subdomain", "com,cnn,edition,*"),
        ("host", "com,cnn,edition,www)/*")]
    # the registered domain's own host: its host line (a wildcard never names the host itself)
    assert group_levels("com,cnn", p) == [("root", "*"), ("tld", "com,*"), ("host", "com,cnn)/*")]
    # no registered domain: the TLD, and the host line by host_depth
    assert group_levels("1,0,0,127", p) == [("root", "*"), ("tld", "1,*")]
    assert group_levels("uk,co", p) == [("root", "*"), ("tld", "uk,*"), ("host", "uk,co)/*")]
    assert own_levels("uk,co,bbc,news,a,b)/x/y.html", "uk,co,bbc,news,a,b", p) == [
        ("path", "uk,co,bbc,news,a,b)/x/*")]
    assert own_levels("1,0,0,127)/x/y", "1,0,0,127", p) == []


def test_key_levels_by_count_and_by_the_public_suffix_list():
    assert [key_level(s) for s in ("*", "uk,*", "uk,co,*", "com,cnn)/*", "com,cnn)/a/*", "com,cnn)/a")] == \
        ["root", "tld", "domain", "host", "path", "url"]
    assert [key_level(s, True) for s in ("uk,*", "uk,co,*", "uk,co,bbc,*", "uk,co,bbc,news,*", "com,cnn,*")] == \
        ["tld", "suffix", "domain", "subdomain", "domain"]
    assert key_level("html,index,*", True) == "domain"       # an unknown TLD: no suffix to be inside


@pytest.mark.parametrize("name, field, coarser", [
    ("datetime", "201305", ["201305", "2013", "-"]),
    ("datetime", "2013050112", ["2013050112", "2013", "201305", "20130501", "-"]),
    ("mime", "text/html", ["text/html", "text/*", "html", "-"]),
    ("mime", "text/*", ["text/*", "-"]),
    ("mime", "unk", ["unk", "-"]),          # a category or a class as well: nothing coarser it determines
    ("status", "200", ["200", "2xx", "-"]),
    ("status", "unk", ["unk", "-"]),
    ("status", "-", ["-"])])
def test_a_field_s_coarser_fields_come_from_its_criterion_s_levels(name, field, coarser):
    """The fields that count every capture a field counts (merge bounds a key an input lacks by
    them), from the registry's levels, so that a criterion added there has them too."""
    from profiler.model.criteria import CORE
    assert next(c for c in CORE if c.name == name).coarser_fields(field) == coarser
