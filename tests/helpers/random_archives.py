"""Random policies and random archives for the property tests."""

import random

from profiler.job.kernels import supports
from profiler.model import criteria
from profiler.model.policy import LEVEL_TYPES, REGISTERED_ONLY, Policy


HOSTS = ["com,a)", "com,a,b)", "com,a,b,c)", "org,x)", "uk,co,y)", "uk,co,y,www2)", "uk,co,y,news,a)",
         "uk,co)", "1,0,0,127)", "com,example:8080)", "com,blogspot,x)", "html,index)"]


PATHS = ["/", "/d/", "/d/e/f.html", "/d/g?x=1/2", "/h*", "/d/e/", "/h%2A"]


#: languages of random captures (Common Crawl's codes, a tag to normalise, none)
LANGUAGES = ["eng", "ara", "fra", "unk", "zh-Hant", "de-DE,en"]


#: media types of random captures: some of each content class (spec section 2) and unknown
MIMES = ["text/html", "image/png", "unk", "text/css", "application/x-shockwave-flash", "video/mp4",
         "application/pdf", "application/vnd.ms-excel", "font/woff2", "application/octet-stream"]
#: lengths at and around the size classes' bounds
LENGTHS = [999, 1000, 9999, 10 ** 4, 10 ** 5 - 1, 10 ** 6, 10 ** 7 + 1, 10 ** 8, 10 ** 9 - 1, 10 ** 9, 3 * 10 ** 9]


def random_policy(rng, optional=None, compiled=None):
    """A random policy of the criteria registered now: each optional one in about 4 of 10, or
    those optional names (a collection of names). compiled: a compiled module: a policy it
    supports (profiler.job.kernels.supports), drawn again until one is."""
    while True:
        policy = _random_policy(rng, optional)
        if compiled is None or supports(compiled, policy):
            return policy


def _random_policy(rng, optional):
    chosen = [c for c in criteria.CRITERIA
              if not c.optional or (rng.random() < 0.4 if optional is None else c.name in optional)]
    names = [c.name for c in chosen]
    levels = {c.name: [x for x in c.level_names if rng.random() < 0.7] for c in chosen}
    registered = rng.random() < 0.3
    emit = {}
    for lt in LEVEL_TYPES:
        if lt in REGISTERED_ONLY and not registered:
            continue
        r = rng.random()
        if r < 0.3:
            emit[lt] = "all"
        elif r < 0.4:
            emit[lt] = "none"
        else:
            emit[lt] = [{c: rng.sample(["any"] + levels[c], rng.randint(1, 1 + len(levels[c])))
                         for c in names} for _ in range(rng.randint(1, 2))]
    return Policy({"host_depth": rng.randint(0, 4), "path_depth": rng.randint(0, 3),
                   "exact_urls": rng.random() < 0.5, "registered_domains": registered, "levels": levels,
                   "emit": emit})


def random_captures(rng, wide=False):
    """Random captures (urlkey, timestamp, mime, status, digest, length); wide: of more hours, media
    types (of every content class) and lengths (of every size class)."""
    caps = []
    digests_pool = ["D%d" % i for i in range(12)]
    for _ in range(rng.randint(1, 120)):
        urlkey = rng.choice(HOSTS) + rng.choice(PATHS) if rng.random() > 0.05 else "dns:z.example"
        hour = rng.choice([0, 9, 12, 23]) if wide else 12
        ts = "%d%02d%02d%02d0000" % (rng.randint(2010, 2012), rng.randint(1, 12), rng.randint(1, 28), hour)
        revisit = rng.random() < 0.25
        mime = "warc/revisit" if revisit else rng.choice(MIMES if wide else MIMES[:4])
        status = "-" if revisit else rng.choice(["200", "404", "301", "-"])
        digest = rng.choice(digests_pool + ["-"])
        length = rng.randint(0, 999) if not wide or rng.random() < 0.7 else rng.choice(LENGTHS)
        caps.append((urlkey, ts, mime, status, digest, length))
    return caps


def random_languages(rng, caps):
    """A language field (or None: no field) for each capture."""
    return [rng.choice(LANGUAGES + [None]) for _ in caps]


def normalised_language(value):
    """The oracle's reading of a language field: the first entry's primary subtag, an ISO 639-3
    code as it is, a 2-letter one by ISO 639's table (langcodes' copy of it), 'unk' when there is
    none or it names no language."""
    if not value:
        return "unk"
    primary = value.split(",")[0].strip().replace("_", "-").split("-")[0].lower()
    if primary in ("und", "mul", "zxx", "mis"):
        return "unk"
    if len(primary) == 3:
        return primary
    from langcodes.data_dicts import LANGUAGE_ALPHA3
    return LANGUAGE_ALPHA3.get(primary, "unk")


def oracle_captures(caps, langs=None):
    """The oracle's captures: [urlkey, timestamp, mime, status, digest, length, revisit, lang]."""
    langs = langs or [None] * len(caps)
    return [[u, t, m, "unk" if s == "-" else s, d, n, m == "warc/revisit", normalised_language(lang)]
            for (u, t, m, s, d, n), lang in zip(caps, langs)]


def index_lines(caps, langs=None):
    """CDX lines of the captures, or CDXJ lines (with Common Crawl's languages field) when
    they have languages."""
    if langs is None:
        return cdx_lines(caps)
    import json
    out = []
    for (u, t, m, s, d, n), lang in zip(caps, langs):
        record = {"url": u if ")" not in u else "http://x/", "mime": m, "status": s, "digest": d,
                  "length": str(n)}
        if lang is not None:
            record["languages"] = lang
        out.append(("%s %s %s" % (u, t, json.dumps(record))).encode())
    return out


def parse_line(line):
    """The capture of a line index_lines wrote."""
    from profiler.formats import cdx, cdxj
    if line.rstrip().endswith(b"}"):
        return cdxj.parse(line)
    return cdx.make_parser("N b a m s k r M S V g")(line)


def cdx_lines(caps):
    return [("%s %s %s %s %s %s - - %d 0 f" % (u, t, u if ")" not in u else "http://x/", m, s, d, n)).encode()
            for u, t, m, s, d, n in caps]
