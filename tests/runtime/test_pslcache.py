"""profiler.runtime.pslcache and profiler.runtime.usercache: the Public Suffix List's rules kept in
the user's cache folder give the list read from itself, and a kept file that is damaged, stale or
not safely the user's own is never used."""

import os

import pytest

from profiler.model import domains
from profiler.runtime import pslcache

HOSTS = ["uk,co,bbc,news", "com,cnn,edition", "ck,foo,bar", "ck,www", "com,blogspot,foo", "jp,kobe,city,x",
         "uk,co", "html,index", "1,0,0,127", "com,example:8080", "xn--p1ai,xn--80aswg,www", "рф,сайт,www"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder of this user's, and the list not read yet in this process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(domains, "_psl", None)
    domains._labels.cache_clear()
    yield tmp_path / "cache" / "archive-profiler" / pslcache.NAME
    domains._psl = None
    domains._labels.cache_clear()


def signed(head, body):
    """A kept file of body with the digest usercache checks."""
    import hashlib
    words = head.split(b" ")
    words[-1] = hashlib.sha256(body).hexdigest().encode()
    return b" ".join(words) + b"\n" + body


def read_from_the_list():
    """The list as domains reads it from the list file, its answers for HOSTS."""
    domains._psl = None
    domains._labels.cache_clear()
    psl = domains._list()
    answers = [domains.registered_domain(h) for h in HOSTS]
    domains._psl = None
    domains._labels.cache_clear()
    return psl, answers


def test_the_kept_rules_are_the_lists(cache):
    truth, answers = read_from_the_list()
    pslcache.load()                                  # reads the list, keeps its rules
    assert cache.is_file() and oct(cache.stat().st_mode & 0o777) == "0o600"
    assert vars(domains._list()) == vars(truth)
    domains._psl = None
    domains._labels.cache_clear()
    reads = []
    real = domains._with_punycode
    domains._with_punycode = lambda data: reads.append(1) or real(data)
    try:
        pslcache.load()                              # from the kept rules: the list is not read again
    finally:
        domains._with_punycode = real
    assert reads == []
    assert vars(domains._list()) == vars(truth)
    assert [domains.registered_domain(h) for h in HOSTS] == answers
    assert answers[:4] == ["uk,co,bbc", "com,cnn", "ck,foo,bar", "ck,www"]


def test_rules_given_as_a_list_of_the_packages_own_read_the_same(cache):
    """When publicsuffixlist holds what it reads otherwise than it did, the rules are read
    through its constructor: the same rules either way."""
    truth, answers = read_from_the_list()
    rules = domains.rules()
    domains._psl = None
    from publicsuffixlist import PublicSuffixList
    via_reader = PublicSuffixList(rules, accept_unknown=False, only_icann=False, accept_encoded_idn=False)
    domains.use_rules(rules)
    assert vars(via_reader) == vars(truth) == vars(domains._list())


@pytest.mark.parametrize("damage", ["cut", "a_rule_changed", "another_list", "not_text", "empty"])
def test_a_damaged_or_stale_file_is_not_used_and_is_replaced(cache, damage):
    truth, answers = read_from_the_list()
    pslcache.load()
    data = cache.read_bytes()
    head, body = data.split(b"\n", 1)
    if damage == "cut":
        data = data[:len(data) // 2]
    elif damage == "a_rule_changed":          # a rule that would make every .com host a suffix
        data = head + b"\n" + body.replace(b"\ncom\n", b"\n*.com\n", 1)
    elif damage == "another_list":               # well formed, kept of another list (with other rules)
        data = signed(head, b"0" * 64 + body[64:].replace(b"\ncom\n", b"\n*.com\n", 1))
    elif damage == "not_text":
        data = b"\xff\xfe" * 100
    else:
        data = b""
    cache.write_bytes(data)
    domains._psl = None
    domains._labels.cache_clear()
    pslcache.load()
    assert vars(domains._list()) == vars(truth)
    assert [domains.registered_domain(h) for h in HOSTS] == answers
    assert cache.read_bytes().split(b"\n", 1)[0] == head          # replaced by the list's rules


@pytest.mark.parametrize("how", ["link", "others_can_write", "not_ours", "folder_others_can_write"])
def test_a_file_not_safely_ours_is_not_used(cache, tmp_path, how):
    truth, answers = read_from_the_list()
    pslcache.load()
    head, body = cache.read_bytes().split(b"\n", 1)
    planted = signed(head, body.replace(b"\ncom\n", b"\n*.com\n", 1))    # well formed, a rule planted
    if how == "link":
        elsewhere = tmp_path / "elsewhere.txt"
        elsewhere.write_bytes(planted)
        cache.unlink()
        cache.symlink_to(elsewhere)
    else:
        cache.write_bytes(planted)
        if how == "others_can_write":
            cache.chmod(0o622)
        elif how == "not_ours":
            if os.geteuid() != 0:
                pytest.skip("only root can give a file to another user")
            os.chown(str(cache), 12345, 12345)
        else:
            cache.parent.chmod(0o777)
    domains._psl = None
    domains._labels.cache_clear()
    pslcache.load()
    assert vars(domains._list()) == vars(truth)
    assert [domains.registered_domain(h) for h in HOSTS] == answers
    if how == "link":
        assert (tmp_path / "elsewhere.txt").read_bytes() == planted     # never written through


def test_without_a_usable_cache_folder_the_list_is_read(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_bytes(b"x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr(domains, "_psl", None)
    domains._labels.cache_clear()
    try:
        pslcache.load()
        assert domains.registered_domain("uk,co,bbc,news") == "uk,co,bbc"
    finally:
        domains._psl = None
        domains._labels.cache_clear()
    assert blocker.read_bytes() == b"x"


def test_a_local_run_reads_the_kept_rules_and_writes_the_same_profile(tmp_path, monkeypatch):
    """The profile of a run whose client read the kept rules is the bytes of one that read the list."""
    from helpers.exactness import without_created
    from helpers.paths import ROOT
    from profiler.run.profile import run_profile
    from profiler.runtime import localjob
    if not hasattr(os, "fork"):
        pytest.skip("no fork here")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MRJOB_CONF", raising=False)
    sample = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")
    outs, reads = [], []
    real = domains._with_punycode
    monkeypatch.setattr(domains, "_with_punycode", lambda data: reads.append(1) or real(data))
    for n in range(2):
        monkeypatch.setattr(domains, "_psl", None)
        domains._labels.cache_clear()
        monkeypatch.setattr(localjob, "_prepared", [])
        out = str(tmp_path / ("p%d.cdxj" % n))
        run_profile([sample], out, runner="local", cores=2)
        outs.append(without_created(out))
        assert (tmp_path / "cache" / "archive-profiler" / pslcache.NAME).is_file()
    assert reads == [1]                     # the list read by the first run only
    domains._psl = None
    domains._labels.cache_clear()
    assert outs[0] == outs[1]
