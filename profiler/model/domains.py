"""Registered domains of SURT hosts, by the Public Suffix List (PSL).

The registered domain is the public suffix plus one label: ``uk,co,bbc,news`` -> ``uk,co,bbc``
(3 SURT labels), ``com,cnn,edition`` -> ``com,cnn`` (2). The list is the one the
publicsuffixlist package ships (its version is ``list_version()``), matched with the PSL's
own algorithm, wildcard and exception rules included (``ck,foo,bar`` -> 3 labels under
``*.ck``; ``ck,www`` -> 2 under ``!www.ck``).

Only the ICANN section counts: a registered domain is what a registrar sells, so
``com,blogspot,foo`` is under ``com,blogspot`` (the private section, where ``blogspot.com``
is a suffix, would give every blog its own domain line). A host has no registered domain
(None) when it is an IP address (SURT reverses IPv4: ``1,0,0,127``; IPv6 has no commas), a
single label, a public suffix itself (``uk,co``), under a TLD the list does not know
(``html,index``, ``local,intranet``: the PSL's implicit ``*`` rule is not applied), has an empty
label or characters no host name has (``)``, ``/``, ``:``, blanks, ``*``), is longer than a
DNS name may be, or is not a str. A ``:port`` (digits) on the last SURT label is ignored.
"""

import functools
import os
import re

#: the part of the list used (recorded with the version)
SECTION = "icann"
#: a DNS name has at most 253 characters; a SURT host adds at most a port
MAX_HOST_LENGTH = 253

_psl = None
_IPV4 = re.compile(r"\A[0-9]+(?:,[0-9]+){3}\Z")
#: characters no host name has (once its port is off): a urlkey's ')' and path, blanks,
#: control bytes, wildcards, ':'
_NOT_HOST = re.compile(r"[\x00-\x20\x7f()/\\*@:\[\]]")


#: the list file in the publicsuffixlist package
LIST_FILE = "public_suffix_list.dat"


@functools.lru_cache(maxsize=1)
def _list_bytes():
    """The list file publicsuffixlist ships: read from its folder, or with importlib.resources
    when the package is in a zip (tasks shipped with --py-files)."""
    import publicsuffixlist
    try:
        with open(os.path.join(os.path.dirname(publicsuffixlist.__file__), LIST_FILE), "rb") as f:
            return f.read()
    except OSError:
        from importlib.resources import files
        return files("publicsuffixlist").joinpath(LIST_FILE).read_bytes()


def _list():
    global _psl
    if _psl is None:
        from publicsuffixlist import PublicSuffixList
        _psl = PublicSuffixList(_with_punycode(_list_bytes()), accept_unknown=False, only_icann=True,
                                accept_encoded_idn=False)
    return _psl


def list_key():
    """What the rules read of the list depend on (the list's bytes, the package's version, how it is
    read), as a hex digest: the name under which a copy of them may be kept (``rules``)."""
    import hashlib
    h = hashlib.sha256(b"icann, IDN rules encoded, rules version 1\n")
    h.update(_package().encode("utf-8") + b"\n")
    h.update(_list_bytes())
    return h.hexdigest()


def rules():
    """The list's rules as publicsuffixlist holds them once it has read the list (sorted), or
    None when its reader keeps them where this cannot see."""
    held = getattr(_list(), "_publicsuffix", None)
    return sorted(held) if isinstance(held, frozenset) and all(isinstance(r, str) for r in held) else None


def use_rules(kept):
    """Read the list from rules a process read before (``rules``, kept under ``list_key``): the same
    rules, without reading the whole list and encoding its IDN rules again. When publicsuffixlist
    holds what it reads as it did when the rules were taken (its rules and their most labels),
    they are given to it as they are; else it reads them as a list of its own."""
    global _psl
    from publicsuffixlist import PublicSuffixList

    def read(rules):
        return PublicSuffixList(rules, accept_unknown=False, only_icann=False, accept_encoded_idn=False)
    probe = read(["com", "!www.ck"])
    if vars(probe) != {"accept_unknown": False, "_publicsuffix": frozenset(["com", "!www.ck"]), "_maxlabel": 2}:
        _psl = read(kept)
        return
    psl = PublicSuffixList.__new__(PublicSuffixList)
    psl.accept_unknown = False
    psl._publicsuffix = frozenset(kept)
    psl._maxlabel = max((rule.count(".") + 1 for rule in kept), default=0)
    _psl = psl


def _with_punycode(data):
    """The list's lines, each rule that is not ASCII followed by its punycode form: the rules
    PublicSuffixList holds when it encodes every rule itself (an IDNA encoding of each ASCII
    rule too, most of the time a run spends reading the list)."""
    from publicsuffixlist import encode_idn
    out = []
    for line in data.splitlines():
        out.append(line)
        if line.isascii():
            continue
        rule = line.decode("utf-8").lower().split(" ")[0].rstrip()
        if rule and not rule.startswith("//"):
            out.append(("!" if rule[0] == "!" else "") + encode_idn(rule.lstrip("!")))
    return out


@functools.lru_cache(maxsize=1 << 16)
def _labels(surt_host):
    labels = surt_host.lower().split(",")
    if len(labels) < 2:
        return None                                  # one label, IPv6, empty
    last = labels[-1]
    colon = last.find(":")
    if colon >= 0:
        if not last[colon + 1:].isdigit():
            return None
        labels[-1] = last[:colon]
    host = ",".join(labels)
    if "" in labels or len(host) > MAX_HOST_LENGTH or _NOT_HOST.search(host) or _IPV4.match(host):
        return None
    registered = _list().privatesuffix(".".join(reversed(labels)))
    return registered.count(".") + 1 if registered else None


def load():
    """Read the list now (a process that forks tasks reads it once for all of them)."""
    _list()
    registered_domain_labels("com,example,www")


def registered_domain_labels(surt_host):
    """The number of SURT labels of a host's registered domain, or None (see the module).

    >>> registered_domain_labels("uk,co,bbc,news"), registered_domain_labels("com,cnn,edition")
    (3, 2)
    >>> registered_domain_labels("uk,co"), registered_domain_labels("1,0,0,127")
    (None, None)
    """
    if not isinstance(surt_host, str) or len(surt_host) > MAX_HOST_LENGTH + 6:
        return None
    _list()                                # a list that cannot be read is an error, not None
    try:
        return _labels(surt_host)
    except Exception:                      # hostile text: no registered domain, never an error
        return None


def registered_domain(surt_host):
    """The SURT text of a host's registered domain (lower case, without a port), or None.

    >>> registered_domain("uk,co,bbc,news"), registered_domain("com,example:8080")
    ('uk,co,bbc', 'com,example')
    """
    n = registered_domain_labels(surt_host)
    if n is None:
        return None
    labels = surt_host.lower().split(",", n)[:n]
    labels[-1] = labels[-1].split(":", 1)[0]
    return ",".join(labels)


@functools.lru_cache(maxsize=1)
def list_version():
    """The PSL's version as the list states it (``// VERSION:``), else the package's version."""
    for line in _list_bytes()[:4096].splitlines():
        if line.startswith(b"// VERSION:"):
            return line.split(b":", 1)[1].strip().decode("ascii", "replace")
    return _package()


@functools.lru_cache(maxsize=1)
def _package():
    """'publicsuffixlist VERSION' by the package's metadata."""
    from profiler.model.versions import installed_version
    import publicsuffixlist
    return "publicsuffixlist " + (installed_version("publicsuffixlist", publicsuffixlist) or "?")


def list_meta():
    """What a profile's ``!meta`` records of the list: its version, package and section."""
    return {"version": list_version(), "package": _package(), "section": SECTION}
