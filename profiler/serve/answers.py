"""The service's answers: each archive's lookup answer (the `lookup` command's, as JSON) and the
routing order of the archives that may hold a URI.

Routing score (higher first): the matched key's level counts most (exact 50, path 40, host 30,
domain 20, tld 10, root 0): a line about the URI itself says more than one about its whole TLD;
then a datetime answered by a line for that period beats one answered by a key's first/last
range (+5); then the URI-M count, log10(1 + urim), at most 4.99. Archives answering not-held
or no-match are left out (no line says they hold anything there).
"""

import math

from profiler.lookup import HELD, INVALID, NO_MATCH, NOT_HELD, canonical, match_level
from profiler.ukvs import format_frequency

LEVEL_WEIGHT = {"exact": 50, "path": 40, "host": 30, "domain": 20, "tld": 10, "root": 0}


def archive_answer(archive, answer):
    """One archive's answer to a lookup, as JSON-ready dict."""
    out = {"archive": archive.name, "answer": answer.status,
           "key": answer.key.decode("utf-8", "replace") if answer.key is not None else None,
           "level": match_level(answer.key) if answer.key is not None else None,
           "frequency": format_frequency(answer.frequency) if answer.frequency is not None else None,
           "urim": answer.frequency.urim if answer.frequency is not None else None,
           "urir": answer.frequency.urir if answer.frequency is not None else None}
    if answer.date is not None:
        out["date"] = answer.date
    return out


def lookup_all(archives, url, dt=None):
    """{"url", "urlkey", "archives": [...]} or None when url is not a URI or SURT."""
    urlkey = canonical(url)
    if urlkey is None:
        return None
    answers = [archive_answer(a, a.current().lookup_urlkey(urlkey, dt)) for a in archives]
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
    held = [dict(a, score=score(a)) for a in found["archives"] if a["answer"] == HELD]
    held.sort(key=lambda a: -a["score"])
    if limit is not None:
        held = held[:limit]
    return {"url": url, "urlkey": found["urlkey"], "datetime": dt, "archives": held,
            "asked": len(archives), "left_out": len(archives) - len(held)}


__all__ = ["archive_answer", "lookup_all", "route", "score", "HELD", "NOT_HELD", "NO_MATCH", "INVALID"]
