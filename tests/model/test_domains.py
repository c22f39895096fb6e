"""Tests for profiler.model.domains: registered domains of SURT hosts by the Public Suffix List."""

import doctest
import re

import pytest
from hypothesis import given, settings, strategies as st

from profiler.model import domains
from profiler.model.domains import list_meta, list_version, registered_domain, registered_domain_labels


def test_doctests():
    result = doctest.testmod(domains)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("host, labels, domain", [
    # the examples: both are registered-domain lines, whatever their label count
    ("uk,co,bbc,news", 3, "uk,co,bbc"),
    ("uk,co,bbc", 3, "uk,co,bbc"),
    ("com,cnn", 2, "com,cnn"),
    ("com,cnn,edition", 2, "com,cnn"),
    ("com,cnn,edition,money,www2", 2, "com,cnn"),
    ("uk,ac,ox,cs", 3, "uk,ac,ox"),
    ("jp,co,yahoo", 3, "jp,co,yahoo"),
    ("au,com,example,shop", 3, "au,com,example"),
    ("de,spiegel", 2, "de,spiegel"),
    ("COM,CNN,WWW", 2, "com,cnn"),                        # lower-cased
    ("com,example:8080", 2, "com,example"),               # the port is not a label
    ("uk,co,bbc,news:443", 3, "uk,co,bbc"),
    ("xn--p1ai,xn--e1afmkfd,www", 2, "xn--p1ai,xn--e1afmkfd"),   # IDN, as surt writes it (punycode)
    # wildcard and exception rules (*.ck, !www.ck; *.kawasaki.jp, !city.kawasaki.jp; *.sch.uk)
    ("ck,foo,bar", 3, "ck,foo,bar"),
    ("ck,foo,bar,baz", 3, "ck,foo,bar"),
    ("ck,www", 2, "ck,www"),
    ("ck,www,sub", 2, "ck,www"),
    ("jp,kawasaki,city", 3, "jp,kawasaki,city"),
    ("jp,kawasaki,foo,bar", 4, "jp,kawasaki,foo,bar"),
    ("uk,sch,school,www", 4, "uk,sch,school,www"),
    # the private section does not count
    ("com,blogspot,someone", 2, "com,blogspot"),
    ("io,github,someone", 2, "io,github"),
    ("com,amazonaws,compute,eu-west-1,ec2-1-2-3-4", 2, "com,amazonaws"),
])
def test_registered_domain(host, labels, domain):
    assert registered_domain_labels(host) == labels
    assert registered_domain(host) == domain


@pytest.mark.parametrize("host", [
    "uk,co", "com", "uk", "ck,foo", "jp,kawasaki,foo", "uk,sch,school",   # public suffixes
    "localhost", "html,index", "local,intranet,www", "invalidtld,example",  # unknown TLDs
    "1,0,0,127", "4,3,2,1:8080", "2001:db8::1", "[::1]",                    # IP addresses
    "", ",", "com,", ",com,example", "com,,example", "com,cnn)", "com,cnn)/a", "com,*", "com,cnn,*",
    "com,ex ample", "com,ex\x00ample", "com," + "a" * 300, None, 42, b"com,cnn", ["com", "cnn"],
])
def test_no_registered_domain(host):
    assert registered_domain_labels(host) is None
    assert registered_domain(host) is None


def test_the_key_prefix_is_a_prefix_of_the_host():
    """A registered domain's labels are the host's first labels: the key the lead emits is
    a prefix of every SURT of the host."""
    for host in ("uk,co,bbc,news", "com,cnn,edition", "jp,kawasaki,foo,bar", "ck,www,sub"):
        n = registered_domain_labels(host)
        assert host.startswith(",".join(host.split(",")[:n]))
        assert registered_domain(host) == ",".join(host.split(",")[:n])


@settings(max_examples=500, deadline=None)
@given(st.one_of(
    st.text(max_size=300),
    st.lists(st.from_regex(r"\A[a-z0-9-]{0,12}\Z"), min_size=1, max_size=8).map(",".join),
    st.lists(st.sampled_from(["uk", "co", "com", "jp", "ck", "www", "bbc", "xn--p1ai", "1", ":80"]),
             max_size=6).map(",".join)))
def test_never_raises(host):
    n = registered_domain_labels(host)
    assert n is None or 2 <= n <= host.count(",") + 1
    domain = registered_domain(host)
    assert (domain is None) == (n is None)
    if domain is not None:
        assert domain.count(",") + 1 == n
        assert registered_domain_labels(domain) == n       # a registered domain is its own


def test_cache_is_bounded():
    info = domains._labels.cache_info()
    assert info.maxsize is not None and info.maxsize <= 1 << 16


def test_list_version():
    version = list_version()
    assert re.match(r"\A\d{4}-\d{2}-\d{2}", version)
    meta = list_meta()
    assert meta["version"] == version and meta["section"] == "icann"
    assert meta["package"].startswith("publicsuffixlist ")


def test_works_from_zips(tmp_path):
    """Tasks import the package and its dependencies from zips (--py-files): data files are
    read with importlib.resources, not from paths."""
    from helpers.zips import run_from_zips
    out = run_from_zips(str(tmp_path), "publicsuffixlist",
                        "from profiler.model import domains as D; assert '.zip' in D.__file__; "
                        "print(D.registered_domain_labels('uk,co,bbc,news'), D.registered_domain_labels('uk,co'), "
                        "D.list_version())")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[:2] == ["3", "None"] and out.stdout.split()[2][:4].isdigit()


def test_the_list_holds_the_rules_publicsuffixlist_makes_of_it():
    """Read with only its IDN rules encoded (the others are ASCII already), the list holds the
    rules, punycode forms included, that the package makes when it encodes every rule itself."""
    from publicsuffixlist import PublicSuffixList
    theirs = PublicSuffixList(domains._list_bytes(), accept_unknown=False, only_icann=True)
    ours = domains._list()
    assert ours._publicsuffix == theirs._publicsuffix and ours._maxlabel == theirs._maxlabel
    assert any(not rule.isascii() for rule in ours._publicsuffix)
    assert any(rule.startswith("xn--") for rule in ours._publicsuffix)
