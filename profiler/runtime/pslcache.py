"""The Public Suffix List's rules kept for the next run, so that a run's client need not read the
whole list and encode its IDN rules again (most of what reading it costs).

The rules (profiler.model.domains.rules) are kept in the user's cache folder
(profiler.runtime.usercache) as ``public-suffixes.txt``: a first line naming what they were read
from (profiler.model.domains.list_key: the list's bytes, the package's version), then one rule a
line. Rules kept of another list, or a file usercache does not trust, are not used: the list is
read and its rules kept again. The rules give the same registered domains either way
(tests/runtime/test_pslcache.py).
"""

from profiler.model import domains
from profiler.runtime import usercache

NAME = "public-suffixes.txt"
#: the largest file read (the list's rules take about 100 KB)
MAX_BYTES = 1 << 22


def load():
    """Read the list, from the rules kept in the cache folder when they are the list's, else from
    the list itself (its rules then kept for the next run)."""
    key = domains.list_key()
    kept = _read(key)
    if kept is not None:
        domains.use_rules(kept)
    domains.load()
    if kept is None:
        made = domains.rules()
        if made is not None:
            _write(key, made)


def _read(key):
    """The rules kept for the list of key, or None."""
    body = usercache.read(NAME, MAX_BYTES)
    if body is None:
        return None
    first, _, rest = body.partition(b"\n")
    if first != key.encode("ascii"):
        return None
    try:
        kept = rest.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return None
    return kept if all(kept) else None


def _write(key, rules):
    if not rules or any(not r or "\n" in r for r in rules):
        return
    try:
        body = "\n".join(rules).encode("utf-8")
    except UnicodeEncodeError:
        return
    usercache.write(NAME, key.encode("ascii") + b"\n" + body)
