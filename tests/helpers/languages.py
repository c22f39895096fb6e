"""Profiles with languages (five key fields) for the files, toolkit, report and nightly tests:
Common-Crawl-style CDXJ indexes (profiler.testing.synthetic_cc) profiled with policies whose
levels name lang, and brute-force readers of their lines (no bisection, no probes)."""

import os

import orjson
import yaml

from profiler.files.profilefile import flatten, iter_data
from profiler.files.ukvs import datetime_span, parse_frequency, read_map
from profiler.run.profile import run_profile
from profiler.testing import synthetic_cc
from profiler.toolkit.lookup import surt_candidates

#: the policy of issue 23's example: languages at the root, TLDs and domains, hosts without
TLD_LANG = {
    "name": "lang", "host_depth": 3,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "lang": ["code"]},
    "emit": {"root": {"datetime": ["any", "year"], "lang": ["any", "code"]},
             "tld": {"datetime": ["any", "year"], "lang": ["any", "code"]},
             "domain": {"datetime": ["any"], "lang": ["any", "code"]},
             "host": {"datetime": ["any"]}},
}
#: languages down to hosts, by year at the domain level, and days at the root
HOST_LANG = {
    "name": "hostlang", "host_depth": 3,
    "levels": {"datetime": ["year", "day"], "mime": ["type"], "status": ["class"], "lang": ["code"]},
    "emit": {"root": [{"datetime": ["any", "year", "day"], "lang": ["any", "code"]},
                      {"mime": ["any", "type"], "status": ["any", "class"]}],
             "tld": {"datetime": ["any", "year"], "lang": ["any", "code"]},
             "domain": {"datetime": ["any", "year"], "lang": ["any", "code"]},
             "host": {"datetime": ["any", "year"], "lang": ["any", "code"]}},
}
#: years without languages at the TLDs, languages without years at the domains
MIXED_LANG = {
    "name": "mixedlang", "host_depth": 3,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "lang": ["code"]},
    "emit": {"root": {"datetime": ["any", "year"], "lang": ["any", "code"]},
             "tld": [{"datetime": ["any", "year"]}, {"lang": ["code"]}],
             "domain": [{"datetime": ["any"]}, {"datetime": ["year"], "lang": ["code"]}],
             "host": {"datetime": ["any"]}},
}
#: the core criteria only, otherwise like TLD_LANG
NO_LANG = {
    "name": "nolang", "host_depth": 3,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"]},
    "emit": {"root": {"datetime": ["any", "year"]}, "tld": {"datetime": ["any", "year"]},
             "domain": {"datetime": ["any"]}, "host": {"datetime": ["any"]}},
}


def write_policy(folder, policy):
    path = os.path.join(str(folder), policy["name"] + ".yaml")
    with open(path, "w") as f:
        yaml.safe_dump(policy, f)
    return path


def cc_index(folder, n=3000, seed=1, name="cc.cdxj"):
    """A Common-Crawl-style CDXJ index of n captures (with languages)."""
    path = os.path.join(str(folder), name)
    synthetic_cc.write_cc_index(path, n, seed=seed)
    return path


def profile(folder, inputs, policy, name=None, **kw):
    """A profile of inputs (inline runner) made with a policy dict."""
    out = os.path.join(str(folder), (name or policy["name"]) + ".cdxj")
    run_profile(list(inputs), out, write_policy(folder, policy), **kw)
    return out


def index_urls(path):
    """The (urlkey, URL, timestamp) of every line of a CDXJ index."""
    out = []
    with open(path, "rb") as f:
        for line in f:
            urlkey, ts, block = line.split(b" ", 2)
            out.append((urlkey.decode(), orjson.loads(block)["url"], ts.decode()))
    return out


def lines_of(path):
    """{key str: parsed value} of a profile, in file order."""
    return {k.decode(): v for k, v in iter_data(path)}


# ---------------------------------------------------------------- brute-force lookups

def _periods(dt):
    """The datetime fields of a query's digits, finest first (days, months, years)."""
    return [dt[:n] for n in (8, 6, 4) if dt and len(dt) >= n]


class BruteProfile:
    """Lookups in a five-field profile's lines ({key: value}) read as docs/toolkit.md states the
    rules, from dictionaries of its lines (no bisection, no probes)."""

    def __init__(self, lines):
        self.lines = lines
        self.groups = {}            # (surt, datetime) -> {lang: key} of the lines with mime, status '-'
        self.years = {}             # (surt, whether by language) -> the years of its year lines
        for k in lines:
            f = k.split(" ")
            if f[2:4] == ["-", "-"]:
                self.groups.setdefault((f[0], f[1]), {})[f[4]] = k
                if len(f[1]) == 4:
                    self.years.setdefault((f[0], f[4] != "-"), set()).add(f[1])

    def lookup(self, urlkey, dt=None, lang=None):
        """(status, key, (urim, urir), date, lang)."""
        periods = _periods(dt) + ["-"]
        if lang is not None:
            for s in surt_candidates(urlkey):
                for p in periods:
                    group = self.groups.get((s, p), {})
                    if lang in group:
                        return self._dated(group[lang], dt, True) + (lang,)
                    if set(group) - {"-"}:
                        key = group.get("-") or group[min(group)]
                        return ("not-held", key, (0, 0), "period" if dt and p != "-" else None, lang)
            return self.lookup(urlkey, dt)[:4] + ("-",)
        for s in surt_candidates(urlkey):
            for p in periods:
                key = self.groups.get((s, p), {}).get("-")
                if key is not None:
                    return self._dated(key, dt, False) + (None,)
        return ("no-match", None, None, None, None)

    def _dated(self, key, dt, by_language):
        f = flatten(self.lines[key])
        status, freq = ("held" if f["urim.total"] else "not-held"), (f["urim.total"], f["urir"])
        fields = key.split(" ")
        if not dt:
            return (status, key, freq, None)
        if fields[1] != "-":
            return (status, key, freq, "period")
        if dt.ljust(14, "9") < f["first"] or dt.ljust(14, "0") > f["last"]:
            return ("not-held", key, freq, "outside")
        if status == "held":
            years = self.years.get((fields[0], False), set())
            lang_years = self.years.get((fields[0], True), set())
            listed = bool(lang_years) or (bool(years) and dt[:4] not in years) if by_language else bool(years)
            if listed:
                return ("not-held", key, freq, "period")
            return (status, key, freq, "range")
        return (status, key, freq, None)


def read_map_lines(path):
    """{key str: (Frequency, parsed block or None)} of a map."""
    out = {}
    with open(path, "rb") as f:
        for line in f:
            if line[:1] in (b"!", b"@"):
                continue
            body = line.rstrip(b"\n")
            i = body.find(b" {")
            fields = (body[:i] if i >= 0 else body).split(b" ")
            block = orjson.loads(body[i + 1:]) if i >= 0 else None
            out[b" ".join(fields[:-1]).decode()] = (parse_frequency(fields[-1]), block)
    return out


def brute_map_lookup(entries, nkeys, urlkey, dt=None, lang=None):
    """(status, key, (urim, urir), lang) of a lookup in a map ({key: (Frequency, block)})."""
    def line_of(s):
        if nkeys == 1:
            return s if s in entries else None
        best = None
        for k in entries:
            surt, field = k.split(" ")
            span = datetime_span(field)
            if surt != s or span is None:
                continue
            if not dt:
                if field == ":":
                    return k
                continue
            if span[0] <= dt.ljust(14, "0") and dt.ljust(14, "9") <= span[1]:
                width = int(span[1]) - int(span[0])
                if best is None or width < best[0]:
                    best = (width, k)
        return best[1] if best else None

    def held(freq):
        return "held" if freq.urim else "not-held"

    if lang is not None:
        for s in surt_candidates(urlkey):
            k = line_of(s)
            if k is None:
                continue
            freq, block = entries[k]
            breakdown = (block or {}).get("lang")
            if not breakdown:
                continue
            if lang in breakdown:
                f = parse_frequency(breakdown[lang])
                return (held(f), k, (f.urim, f.urir), lang)
            if sum(parse_frequency(v).urim for v in breakdown.values()) == freq.urim:
                return ("not-held", k, (0, 0), lang)
        return brute_map_lookup(entries, nkeys, urlkey, dt)[:3] + ("-",)
    for s in surt_candidates(urlkey):
        k = line_of(s)
        if k is not None:
            freq = entries[k][0]
            return (held(freq), k, (freq.urim, freq.urir), None)
    return ("no-match", None, None, None)


def map_records(path):
    """{key str: Frequency} of a map, read by the map reader."""
    return {k.decode(): f for k, f in read_map(path)[1]}
