"""archive_profiler's JSON archive profiles made here: its algorithm by brute force (odu_stats,
cdx_profiler.py's key rules), documents written as it writes them, and hostile documents."""

import json


def odu_stats(caps, host_depth=3, path_depth=1):
    """archive_profiler's stats of the captures: its key rules (cdx_profiler.py), computed by brute force."""
    raw = {"suburi": {}, "time": {}, "mediatype": {}}

    def count(kind, key, surt):
        per = raw[kind].setdefault(key, {})
        per[surt] = per.get(surt, 0) + 1

    for surt, ts, mime in caps:
        host, _, path = surt.split("?")[0].partition(")")
        path = path.strip("/")
        keys = set()
        hparts = host.split(",")
        for i in range(1, min(len(hparts), host_depth) + 1):
            keys.add(",".join(hparts[:i]) + ")/")
        pparts = path.split("/")
        for i in range(1, min(len(pparts), path_depth) + 1):
            keys.add(host + ")/" + "/".join(pparts[:i]))
        for k in keys:
            count("suburi", k, surt)
        count("time", ts[:6], surt)
        count("mediatype", mime.replace(" ", ""), surt)
    stats = {"language": {}}
    for kind, keys in raw.items():
        stats[kind] = {k: {"urim": {"total": sum(per.values()), "min": min(per.values()), "max": max(per.values())},
                           "urir": len(per)} for k, per in keys.items()}
    return stats


def write_odu(path, stats, homepage="http://archive.example.org/"):
    """A document as archive_profiler writes it (keys sorted, indent 4)."""
    doc = {"@context": "https://oduwsdl.github.io/contexts/archiveprofile.jsonld", "@id": homepage,
           "about": {"name": "Example", "homepage": homepage}, "stats": stats}
    with open(path, "w") as f:
        f.write(json.dumps(doc, sort_keys=True, indent=4))
    return str(path)


GOOD = {"urim": {"total": 3, "min": 1, "max": 2}, "urir": 2}


def doc_with(**stats):
    base = {"suburi": {"com)/": GOOD}, "time": {}, "mediatype": {}, "language": {}}
    base.update(stats)
    return {"@context": "x", "@id": "http://e.org/", "stats": base}


HOSTILE = {
    "cut": lambda: json.dumps(doc_with(), indent=4)[:-30],
    "negative": lambda: json.dumps(doc_with(time={"201401": {"urim": {"total": -1, "min": 1, "max": 2}, "urir": 2}})),
    "fraction": lambda: json.dumps(doc_with(time={"201401": {"urim": {"total": 3.5, "min": 1, "max": 2}, "urir": 2}})),
    "string count": lambda: json.dumps(doc_with(suburi={"com)/": {"urim": {"total": "3", "min": 1, "max": 2},
                                                                   "urir": 2}})),
    "bool count": lambda: json.dumps(doc_with(suburi={"com)/": {"urim": {"total": True, "min": 1, "max": 1},
                                                                 "urir": 1}})),
    "wrong shape": lambda: json.dumps(doc_with(suburi={"com)/": [3, 1, 2]})),
    "no urir": lambda: json.dumps(doc_with(suburi={"com)/": {"urim": {"total": 3, "min": 1, "max": 2}}})),
    "disagreeing": lambda: json.dumps(doc_with(suburi={"com)/": {"urim": {"total": 3, "min": 4, "max": 2},
                                                                  "urir": 2}})),
    "stats a list": lambda: json.dumps({"stats": [], "suburi": {}}),
    "no stats": lambda: json.dumps({"suburi": {}, "about": {"stats": 1}}),
    "section a list": lambda: json.dumps(doc_with(time=[1, 2])),
    "deep nesting": lambda: '{"stats": {"suburi": ' + "[" * 100000 + "]" * 100000 + "}}",
    "huge number": lambda: json.dumps(doc_with()).replace('"total": 3', '"total": ' + "9" * 5000),
    "not utf-8": lambda: '{"stats": {"suburi": {"com)/": "\udcff"}}}',
}
MESSAGES = {"cut": "not a whole JSON document", "stats a list": "without a stats object",
            "no stats": "without a stats object", "section a list": "stats.time is not an object",
            "deep nesting": "not a whole JSON document", "huge number": "not a whole JSON document",
            "not utf-8": "not a whole JSON document"}
