"""Seeded generator of Heritrix 3 crawl.log lines whose captures per depth are known.

A breadth-first crawl from a few seeds: each fetched page links (``L``), embeds (``E``),
redirects (``R``) or speculatively reaches (``X``) the next hop, down to a depth of 14 and one
page past Heritrix's 50 displayed hops (``N+LETTERS``). Lines are laid out as Heritrix's
UriProcessingFormatter writes them (space-padded status and size, ``#NNN`` thread, 17-digit fetch
start ``+`` duration, ``sha1:`` digest, source tag, annotations, then an extra-info JSON object
on some lines), with the lines a crawl log also holds that are not captures: DNS lookups
(status 1), failed fetches (negative codes), and duplicates (``duplicate:digest``,
``warcRevisit:digest``) that are revisits.
"""

import base64
import bisect
import datetime
import hashlib
import json
import random

HOPS = "LLLLERX"
MIMES = ["text/html", "text/html", "image/jpeg", "image/png", "text/css", "application/javascript",
         "application/x-shockwave-flash", "application/pdf"]
STATUSES = [200] * 10 + [301, 302, 404, 500]


def _digest(text):
    return "sha1:" + base64.b32encode(hashlib.sha1(text.encode()).digest()).decode()


def _hop_path(depth, rng):
    """A hop path of depth hops, as Heritrix writes it (past 49 hops: 'N+' and the last 49)."""
    if depth == 0:
        return "-"
    letters = "".join(rng.choice(HOPS) for _ in range(depth))
    if depth < 50:
        return letters
    return "%d+%s" % (depth - 49, letters[-49:])


def crawl_log(seed=0, pages=300):
    """(lines, expected): crawl.log lines (str, newline-terminated) and what they hold:
    {'captures': n, 'by_depth': {'0'.. '9', '10+': captures}, 'revisits': n, 'skipped':
    {reason: n}}."""
    rng = random.Random(seed)
    when = datetime.datetime(2013, 4, 2, 9, 58, 0)
    hosts = ["www.example.fr", "example.com", "news.example.org", "blog.example.fr"]
    lines, by_depth, skipped = [], {}, {}
    revisits = 0
    fetched, fetched_urls = {}, []          # fetched_urls: sorted
    depths = [0] * len(hosts) + [rng.choice(range(1, 15)) for _ in range(pages - len(hosts))] + [52]
    for n, depth in enumerate(depths):
        host = hosts[n % len(hosts)]
        when += datetime.timedelta(seconds=rng.randint(0, 400), milliseconds=rng.randint(0, 999))
        path = _hop_path(depth, rng)
        via = "-" if depth == 0 else "http://%s/p%d.html" % (host, rng.randrange(n + 1))
        start = when - datetime.timedelta(milliseconds=rng.randint(20, 900))
        thread = "#%03d" % rng.randrange(50)
        if rng.random() < 0.05:                                           # the DNS lookup of a host
            lines.append(_line(when, 1, 52, "dns:" + host, "P", "http://%s/" % host, "text/dns", thread, start,
                               _digest(host), "", None))
            skipped["dns_fetch"] = skipped.get("dns_fetch", 0) + 1
            continue
        if rng.random() < 0.05:                                           # a fetch that failed
            code = rng.choice([-1, -2, -6, -404, -9998])
            lines.append(_line(when, code, None, "http://%s/gone%d" % (host, n), path, via, "no-type", thread,
                               None, None, "", None))
            skipped["failed_fetch"] = skipped.get("failed_fetch", 0) + 1
            continue
        url = "http://%s/" % host if depth == 0 else "http://%s/p%d.html" % (host, n)
        annotations = []
        if fetched and rng.random() < 0.15:                               # fetched again, unchanged
            url = rng.choice(fetched_urls)
            digest, mime = fetched[url]
            annotations.append(rng.choice(["duplicate:digest", "warcRevisit:digest"]))
            revisits += 1
            status = 200
        else:
            mime = rng.choice(MIMES)
            status = rng.choice(STATUSES)
            digest = _digest(url + str(n))
            fetched[url] = (digest, mime)
            bisect.insort(fetched_urls, url)
        size = rng.choice([0, rng.randint(100, 999), rng.randint(1000, 90000), rng.randint(10 ** 5, 3 * 10 ** 6)])
        if rng.random() < 0.3:
            annotations.append("%dt" % rng.randint(2, 4))
        extra = {"contentSize": size + 300, "warcFilename": "WEB-20130402-%05d.warc.gz" % (n // 100)} \
            if rng.random() < 0.5 else None
        lines.append(_line(when, status, size, url, path, via, mime, thread, start, digest, ",".join(annotations),
                           extra))
        key = str(depth) if depth < 10 else "10+"
        by_depth[key] = by_depth.get(key, 0) + 1
    return lines, {"captures": sum(by_depth.values()), "by_depth": by_depth, "revisits": revisits,
                   "skipped": skipped}


def _line(when, status, size, url, path, via, mime, thread, start, digest, annotations, extra):
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (when.microsecond // 1000)
    fetch = "-" if start is None else start.strftime("%Y%m%d%H%M%S") + "%03d+%d" % (
        start.microsecond // 1000, int((when - start).total_seconds() * 1000))
    fields = [stamp, "%5d" % status, "%10s" % ("-" if size is None else size), url, path, via, mime, thread, fetch,
              digest or "-", "-", annotations or "-"]
    if extra is not None:
        fields.append(json.dumps(extra, separators=(",", ":")))
    return " ".join(fields) + "\n"
