"""The service's answers: each archive's lookup answer (the `lookup` command's, as JSON) and the
routing order of the archives that may hold a URI.

An archive is asked when its file answers held and lists the URI (profiler.files.coverage: a map made
from a profile, or compacted from one, lists every URI-R it holds at its policy's deepest level,
so a match only on a wider wildcard, not rolled up, means not held there).

Routing score (higher first): the matched key's level counts most (exact 50, path 40, host 30,
domain 20, tld 10, root 0): a line about the URI itself says more than one about its whole TLD;
then a datetime answered by a line for that period beats one answered by a key's first/last
range (+5); then the URI-M count, log10(1 + urim), at most 4.99. Archives answering not-held
or no-match, or held from a line that does not list the URI, are left out.
"""

import math

from profiler.files.coverage import listed
from profiler.files.ukvs import format_frequency
from profiler.toolkit.lookup import HELD, INVALID, NOT_HELD, NO_MATCH, canonical, match_level

LEVEL_WEIGHT = {"exact": 50, "path": 40, "host": 30, "domain": 20, "tld": 10, "root": 0}


def archive_answer(archive, answer, lookup=None):
    """One archive's answer to a lookup, as JSON-ready dict; "listed" says whether the file
    lists the URI (see the module's text)."""
    out = {"archive": archive.name, "answer": answer.status,
           "key": answer.key.decode("utf-8", "replace") if answer.key is not None else None,
           "level": match_level(answer.key) if answer.key is not None else None,
           "frequency": format_frequency(answer.frequency) if answer.frequency is not None else None,
           "urim": answer.frequency.urim if answer.frequency is not None else None,
           "urir": answer.frequency.urir if answer.frequency is not None else None}
    if answer.date is not None:
        out["date"] = answer.date
    if answer.status == HELD:
        out["listed"] = listed(lookup.coverage if lookup is not None else None, answer.urlkey, answer.key,
                               answer.rollup)
    return out


def lookup_all(archives, url, dt=None):
    """{"url", "urlkey", "archives": [...]} or None when url is not a URI or SURT."""
    urlkey = canonical(url)
    if urlkey is None:
        return None
    answers = []
    for a in archives:
        lookup = a.current()
        answers.append(archive_answer(a, lookup.lookup_urlkey(urlkey, dt), lookup))
    return {"url": url, "urlkey": urlkey, "datetime": dt, "archives": answers}


def score(answer):
    """The routing score of one held answer (see the module's text)."""
    urim = answer.get("urim") or 0
    return (LEVEL_WEIGHT.get(answer["level"], 0) + (5 if answer.get("date") == "period" else 0)
            + min(4.99, round(math.log10(1 + urim), 2)))


def route(archives, url, dt=None, limit=None):
    """The archives that may hold url (at dt), best first, with their scores."""
    found = lookup_all(archives, url, dt)
    if found is None:
        return None
    held = [dict(a, score=score(a)) for a in found["archives"] if a["answer"] == HELD and a["listed"]]
    held.sort(key=lambda a: -a["score"])
    if limit is not None:
        held = held[:limit]
    return {"url": url, "urlkey": found["urlkey"], "datetime": dt, "archives": held,
            "asked": len(archives), "left_out": len(archives) - len(held)}


__all__ = ["archive_answer", "lookup_all", "route", "score", "HELD", "NOT_HELD", "NO_MATCH", "INVALID"]
