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


def _list_bytes():
    """The list file publicsuffixlist ships (importlib.resources: the package may be in a zip)."""
    from importlib.resources import files
    return files("publicsuffixlist").joinpath("public_suffix_list.dat").read_bytes()


def _list():
    global _psl
    if _psl is None:
        from publicsuffixlist import PublicSuffixList
        _psl = PublicSuffixList(_with_punycode(_list_bytes()), accept_unknown=False, only_icann=True,
                                accept_encoded_idn=False)
    return _psl


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


def _package():
    from importlib.metadata import PackageNotFoundError, version
    try:
        return "publicsuffixlist " + version("publicsuffixlist")
    except PackageNotFoundError:                     # shipped without its metadata
        return "publicsuffixlist ?"


def list_meta():
    """What a profile's ``!meta`` records of the list: its version, package and section."""
    return {"version": list_version(), "package": _package(), "section": SECTION}
