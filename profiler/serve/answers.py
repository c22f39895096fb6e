"""The service's answers: each archive's lookup answer (the `lookup` command's, as JSON) and the
routing order of the archives that may hold a URI.

An archive is asked when its file answers held and lists the URI (profiler.files.coverage: a map made
from a profile, or compacted from one, lists every URI-R it holds at its policy's deepest level,
so a match only on a wider wildcard, not rolled up, means not held there).

Routing score (higher first): the matched key's level counts most (exact 50, path 40, host 30,
domain 20, tld 10, root 0): a line about the URI itself says more than one about its whole TLD;
then a datetime answered by a line for that period beats one answered by a key's first/last
range (+5); then a value asked for (a language) answered held by a line of that value (+5);
then the URI-M count, log10(1 + urim), at most 4.99. An archive whose matched map line's status
breakdown has more than half of its captures 5xx (server errors: the seed's case) loses 100, so
it ranks after every archive whose captures there are not mostly 5xx (MOSTLY_5XX_PENALTY).
Archives answering not-held or no-match,
held from a line that does not list the URI, or not-held in the value asked for, are left out.

Asked for a value of an optional criterion (``lang=ara``, or any optional criterion's name), each
archive's answer also has the `lookup --NAME` answer (the most specific key that tells that
criterion's values; its value '-' when none does, or the file has no such values), under
"language" for lang and under the criterion's name for the others (ANSWER_NAMES).

An archive that cannot answer (no version to serve, a damaged line met) answers "error" with
the reason, and only it: the others answer as ever; /route leaves it out and lists it under
"errors".

A query's work is bounded: a lookup probes the file once per candidate key (the exact key, one
per path directory, the host, one per host label, '*'), so a URI or SURT of more than
MAX_SEGMENTS directories or MAX_LABELS host labels, or a urlkey longer than MAX_URLKEY, is
refused (QueryTooLarge) rather than costing hundreds of lookups. A request's time is bounded
too: past its deadline (profiler.serve.limits.Limits.request_timeout) no more archive is asked
(TooSlow).
"""

import math
import time

from profiler.errors import UserError
from profiler.files.coverage import listed
from profiler.files.ukvs import format_frequency
from profiler.model.keys import directories, host_part
from profiler.toolkit.lookup import HELD, INVALID, NOT_HELD, NO_MATCH, breakdown_texts, canonical, match_level

LEVEL_WEIGHT = {"exact": 50, "path": 40, "host": 30, "domain": 20, "tld": 10, "root": 0}
#: what an archive whose captures there are mostly 5xx loses (more than any other part adds)
MOSTLY_5XX_PENALTY = 100
ERROR = "error"
#: the name of an archive's answer for a value asked, by criterion (the criterion's name otherwise)
ANSWER_NAMES = {"lang": "language"}
#: the most path directories and host labels of a query, and the longest urlkey (bytes)
MAX_SEGMENTS = 32
MAX_LABELS = 16
MAX_URLKEY = 8192


class QueryTooLarge(UserError):
    """A query past MAX_SEGMENTS, MAX_LABELS or MAX_URLKEY."""


class TooSlow(UserError):
    """A request past its deadline: its answer is not computed further."""


def in_time(deadline):
    """TooSlow when the time.monotonic() deadline (None: none) has passed."""
    if deadline is not None and time.monotonic() > deadline:
        raise TooSlow("the answer took longer than the time a request may take: ask again later")


def query_key(url):
    """The urlkey of a URI or SURT, None when it is neither; QueryTooLarge past the bounds."""
    urlkey = canonical(url)
    if urlkey is None:
        return None
    if len(urlkey) > MAX_URLKEY:
        raise QueryTooLarge("a URI's key may be at most %d bytes" % MAX_URLKEY)
    host = host_part(urlkey)
    if host is not None:
        if host.count(",") + 1 > MAX_LABELS:
            raise QueryTooLarge("a host may have at most %d labels" % MAX_LABELS)
        if len(directories(urlkey, host)) > MAX_SEGMENTS:
            raise QueryTooLarge("a path may have at most %d directories" % MAX_SEGMENTS)
    return urlkey


def answer_name(by):
    return ANSWER_NAMES.get(by, by)


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
    if answer.breakdowns:
        out.update(breakdown_texts(answer.breakdowns))
        status = answer.breakdowns.get("status")
        if status and answer.frequency is not None and answer.frequency.urim:
            errors = sum(f.urim or 0 for field, f in status.items() if field == "5xx" or field[:1] == "5")
            out["share_5xx"] = round(errors / answer.frequency.urim, 4)
    if answer.status == HELD:
        out["listed"] = listed(lookup.coverage if lookup is not None else None, answer.urlkey, answer.key,
                               answer.rollup)
    return out


def value_answer(by, answer):
    """An archive's answer for a value of the criterion named by (a language), as JSON-ready dict."""
    return {by: answer.value, "answer": answer.status,
            "key": answer.key.decode("utf-8", "replace") if answer.key is not None else None,
            "level": match_level(answer.key) if answer.key is not None else None,
            "frequency": format_frequency(answer.frequency) if answer.frequency is not None else None}


def error_answer(archive, error):
    """The answer of an archive that cannot answer."""
    return {"archive": archive.name, "answer": ERROR, "error": str(error), "key": None, "level": None,
            "frequency": None, "urim": None, "urir": None}


def one_archive(archive, urlkey, dt=None, asked=None):
    """One archive's answer (see the module's text), an error answer when it cannot answer."""
    try:
        lookup = archive.current()
        out = archive_answer(archive, lookup.lookup_urlkey(urlkey, dt), lookup)
        if asked is not None:
            by, value = asked
            out[answer_name(by)] = value_answer(by, lookup.lookup_urlkey(urlkey, dt, value, by)) if lookup.has(by) \
                else {by: "-", "answer": None, "key": None, "level": None, "frequency": None}
        return out
    except Exception as e:          # this archive's file, whatever it raised; never the others'
        archive.failed(e)
        return error_answer(archive, e)


def lookup_all(archives, url, dt=None, asked=None, deadline=None):
    """{"url", "urlkey", "archives": [...]} or None when url is not a URI or SURT. ``asked``:
    (criterion name, key field) of a value asked (("lang", "ara")), answered by each archive whose
    file has that criterion's values. QueryTooLarge past the bounds (query_key); TooSlow once
    the time.monotonic() ``deadline`` has passed, before the next archive is asked."""
    urlkey = query_key(url)
    if urlkey is None:
        return None
    answers = []
    for a in archives:
        in_time(deadline)
        answers.append(one_archive(a, urlkey, dt, asked))
    out = {"url": url, "urlkey": urlkey, "datetime": dt, "archives": answers}
    if asked is not None:
        out[asked[0]] = asked[1]
    return out


def score(answer, by=None):
    """The routing score of one held answer (see the module's text); by: the criterion of a value
    asked, or None."""
    urim = answer.get("urim") or 0
    valued = answer.get(answer_name(by)) or {} if by is not None else {}
    return (LEVEL_WEIGHT.get(answer["level"], 0) + (5 if answer.get("date") == "period" else 0)
            + (5 if valued.get("answer") == HELD and valued.get(by) != "-" else 0)
            + min(4.99, round(math.log10(1 + urim), 2))
            - (MOSTLY_5XX_PENALTY if (answer.get("share_5xx") or 0) > 0.5 else 0))


def route(archives, url, dt=None, limit=None, asked=None, deadline=None):
    """The archives that may hold url (at dt, with the value asked, before the deadline:
    lookup_all), best first, with their scores."""
    found = lookup_all(archives, url, dt, asked, deadline)
    if found is None:
        return None
    by = asked[0] if asked is not None else None
    held = [dict(a, score=score(a, by)) for a in found["archives"] if a["answer"] == HELD and a["listed"]
            and (a.get(answer_name(by)) or {} if by is not None else {}).get("answer") != NOT_HELD]
    held.sort(key=lambda a: -a["score"])
    if limit is not None:
        held = held[:limit]
    out = {"url": url, "urlkey": found["urlkey"], "datetime": dt, "archives": held,
           "asked": len(archives), "left_out": len(archives) - len(held),
           "errors": [{"archive": a["archive"], "error": a["error"]} for a in found["archives"]
                      if a["answer"] == ERROR]}
    if asked is not None:
        out[asked[0]] = asked[1]
    return out


__all__ = ["archive_answer", "lookup_all", "route", "score", "query_key", "QueryTooLarge", "TooSlow", "HELD", "NOT_HELD",
           "NO_MATCH", "INVALID", "ERROR"]
