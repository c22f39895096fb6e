"""Random policies and random archives for the property tests."""

import random

from profiler.model.policy import CHOICES, CRITERIA, LEVEL_TYPES, Policy


HOSTS = ["com,a)", "com,a,b)", "com,a,b,c)", "org,x)", "uk,co,y)", "uk,co,y,www2)"]


PATHS = ["/", "/d/", "/d/e/f.html", "/d/g?x=1/2", "/h*", "/d/e/"]


def random_policy(rng):
    levels = {c: [x for x in CHOICES[c] if rng.random() < 0.7] for c in CRITERIA}
    emit = {}
    for lt in LEVEL_TYPES:
        r = rng.random()
        if r < 0.3:
            emit[lt] = "all"
        elif r < 0.4:
            emit[lt] = "none"
        else:
            emit[lt] = [{c: rng.sample(["any"] + levels[c], rng.randint(1, 1 + len(levels[c])))
                         for c in CRITERIA} for _ in range(rng.randint(1, 2))]
    return Policy({"host_depth": rng.randint(0, 4), "path_depth": rng.randint(0, 3),
                   "exact_urls": rng.random() < 0.5, "levels": levels, "emit": emit})


def random_captures(rng):
    caps = []
    digests_pool = ["D%d" % i for i in range(12)]
    for _ in range(rng.randint(1, 120)):
        urlkey = rng.choice(HOSTS) + rng.choice(PATHS) if rng.random() > 0.05 else "dns:z.example"
        ts = "%d%02d%02d120000" % (rng.randint(2010, 2012), rng.randint(1, 12), rng.randint(1, 28))
        revisit = rng.random() < 0.25
        mime = "warc/revisit" if revisit else rng.choice(["text/html", "image/png", "unk", "text/css"])
        status = "-" if revisit else rng.choice(["200", "404", "301", "-"])
        digest = rng.choice(digests_pool + ["-"])
        caps.append((urlkey, ts, mime, status, digest, rng.randint(0, 999)))
    return caps


def cdx_lines(caps):
    return [("%s %s %s %s %s %s - - %d 0 f" % (u, t, u if ")" not in u else "http://x/", m, s, d, n)).encode()
            for u, t, m, s, d, n in caps]
