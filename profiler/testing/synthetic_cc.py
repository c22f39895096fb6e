"""Seeded generator of Common Crawl-style CDXJ index lines (tests, benchmarks).

The format is Common Crawl's index as its documentation shows it (commoncrawl.org/cdxj-index;
the keys and the crawl each appeared in: commoncrawl/cc-index-table's
``cc-index-schema-flat.json``, its ``fromCDX`` and ``since``; ``redirect`` and ``truncated``:
commoncrawl/nutch pull request 15)::

    ar,com,fusionbikes)/producto/x 20250512054001 {"url": "https://fusionbikes.com.ar/producto/x/",
        "mime": "text/html", "mime-detected": "text/html", "status": "200", "digest": "ZA6M...",
        "length": "78501", "offset": "243658810", "filename": "crawl-data/CC-MAIN-2025-21/segments/
        1746990412231.65/warc/CC-MAIN-20250512042640-20250512072640-00410.warc.gz",
        "charset": "UTF-8", "languages": "spa"}

JSON as Common Crawl writes it: ``", "`` and ``": "`` separators, every value a string, keys
in that order, absent keys left out. ``charset`` and ``languages`` (CLD2's languages as ISO
639-3 codes, most prominent first, up to three) are on successful HTML captures from
CC-MAIN-2018-39 on, not always (CLD2 finds none); ``redirect`` on redirects and ``truncated``
on cut payloads from CC-MAIN-2019-47 on. Non-200 captures are in the ``crawldiagnostics``
subset, robots.txt in ``robotstxt``, both without languages. A share of recaptures are
revisits (mime ``warc/revisit``, the digest of the URI-R's last payload, no languages), so
that readers' revisit resolution is exercised. (The documentation's API example from
CC-MAIN-2025-43 has ``encoding`` where earlier index lines have ``charset``; ``charset`` here.)

Hosts draw their languages from their suffix (``de`` mostly ``deu``, ``com`` mostly ``eng``
with many others, ``ch`` ``deu``/``fra``/``ita``); some hosts are bilingual. Sizes follow
synthetic.py's heavy-tailed tables, reused from there with its URI-R paths and digests; a
URI-R's captures fall in different crawls. Lines stream out byte-wise sorted by urlkey and
timestamp, as Common Crawl's index is. Everything derives from ``random.Random(seed)``.
"""

import calendar
import datetime
import json
import random

from profiler.testing import synthetic

LINES_PER_URIR = 1.25          # most URLs are fetched once per crawl
LINES_PER_HOST = 30

#: (crawl, weight); a crawl's captures fall in the two weeks before its ISO week's Monday
CRAWLS = (("CC-MAIN-2017-13", 0.6), ("CC-MAIN-2018-17", 0.7), ("CC-MAIN-2018-39", 0.8),
          ("CC-MAIN-2019-47", 0.9), ("CC-MAIN-2020-50", 1.0), ("CC-MAIN-2021-43", 1.0),
          ("CC-MAIN-2022-49", 1.1), ("CC-MAIN-2023-50", 1.2), ("CC-MAIN-2024-33", 1.3),
          ("CC-MAIN-2025-21", 1.4))
LANGUAGES_SINCE = "CC-MAIN-2018-39"        # charset and languages
REDIRECT_SINCE = "CC-MAIN-2019-47"         # redirect and truncated
MAX_PAYLOAD = 1 << 20                      # longer payloads are cut: "truncated": "length"

_ENG = (("eng", 1),)
#: (reversed public suffix, weight, primary languages with weights)
SUFFIXES = (
    ("com", 40, (("eng", 58), ("spa", 6), ("deu", 4), ("fra", 4), ("rus", 4), ("zho", 4), ("jpn", 3),
                 ("por", 3), ("ita", 2), ("ara", 2), ("kor", 1), ("tur", 1), ("vie", 1), ("ind", 1),
                 ("pol", 1), ("nld", 1), ("fas", 1), ("tha", 1), ("heb", 0.5), ("hin", 0.5))),
    ("org", 7, (("eng", 75), ("spa", 5), ("deu", 4), ("fra", 4), ("rus", 3), ("por", 2), ("ita", 2),
                ("zho", 2), ("ara", 1), ("lat", 0.3))),
    ("net", 5, (("eng", 60), ("rus", 8), ("deu", 6), ("jpn", 6), ("fra", 5), ("spa", 5), ("zho", 5),
                ("por", 3))),
    ("de", 5, (("deu", 92), ("eng", 8))),
    ("ru", 4, (("rus", 95), ("eng", 3), ("ukr", 2))),
    ("uk,co", 3, _ENG), ("uk,ac", 0.5, _ENG), ("uk,org", 0.5, _ENG),
    ("jp", 1.5, (("jpn", 95), ("eng", 5))), ("jp,co", 1, (("jpn", 97), ("eng", 3))),
    ("fr", 2, (("fra", 95), ("eng", 5))),
    ("it", 2, (("ita", 96), ("eng", 4))),
    ("nl", 2, (("nld", 93), ("eng", 7))),
    ("pl", 2, (("pol", 97), ("eng", 3))),
    ("br,com", 2, (("por", 98), ("eng", 2))),
    ("es", 1.5, (("spa", 85), ("cat", 8), ("eng", 5), ("glg", 1), ("eus", 1))),
    ("cn", 1.2, (("zho", 97), ("eng", 3))), ("cn,com", 0.3, (("zho", 97), ("eng", 3))),
    ("au,com", 1, _ENG), ("in", 1, (("eng", 85), ("hin", 10), ("tam", 2), ("ben", 2), ("tel", 1))),
    ("ca", 1, (("eng", 75), ("fra", 25))),
    ("ir", 1, (("fas", 97), ("eng", 3))),
    ("cz", 1, (("ces", 97), ("eng", 3))), ("sk", 0.3, (("slk", 95), ("ces", 5))),
    ("se", 0.8, (("swe", 95), ("eng", 5))), ("dk", 0.6, (("dan", 95), ("eng", 5))),
    ("no", 0.5, (("nor", 95), ("eng", 5))), ("fi", 0.5, (("fin", 93), ("swe", 4), ("eng", 3))),
    ("hu", 0.6, (("hun", 97), ("eng", 3))), ("ro", 0.6, (("ron", 97), ("eng", 3))),
    ("gr", 0.5, (("ell", 95), ("eng", 5))), ("bg", 0.3, (("bul", 97), ("eng", 3))),
    ("ua,com", 0.5, (("ukr", 60), ("rus", 40))), ("tr,com", 0.8, (("tur", 97), ("eng", 3))),
    ("kr,co", 0.5, (("kor", 97), ("eng", 3))), ("tw,com", 0.5, (("zho", 97), ("eng", 3))),
    ("vn", 0.6, (("vie", 97), ("eng", 3))), ("id,co", 0.5, (("ind", 95), ("eng", 5))),
    ("th,co", 0.3, (("tha", 95), ("eng", 5))), ("il,co", 0.3, (("heb", 90), ("eng", 7), ("ara", 3))),
    ("eg,com", 0.2, (("ara", 90), ("eng", 10))), ("sa,com", 0.2, (("ara", 90), ("eng", 10))),
    ("mx,com", 0.5, (("spa", 97), ("eng", 3))), ("ar,com", 0.5, (("spa", 98), ("eng", 2))),
    ("ch", 0.8, (("deu", 60), ("fra", 28), ("ita", 7), ("eng", 5))),
    ("be", 0.7, (("nld", 52), ("fra", 44), ("deu", 1), ("eng", 3))),
    ("at", 0.6, (("deu", 97), ("eng", 3))), ("pt", 0.5, (("por", 97), ("eng", 3))),
    ("hr", 0.2, (("hrv", 97), ("eng", 3))), ("rs", 0.2, (("srp", 97), ("eng", 3))),
    ("lt", 0.2, (("lit", 97), ("eng", 3))), ("ee", 0.1, (("est", 95), ("rus", 5))),
    ("lv", 0.1, (("lav", 90), ("rus", 10))), ("is", 0.05, (("isl", 95), ("eng", 5))),
    ("info", 0.8, (("eng", 70), ("deu", 10), ("rus", 10), ("fra", 10))),
    ("edu", 1, _ENG), ("gov", 0.5, _ENG), ("io", 0.5, _ENG),
)
#: charsets besides UTF-8 of pages in some languages (the rest is ISO-8859-1 or windows-1252)
LEGACY_CHARSETS = {"rus": "windows-1251", "ukr": "windows-1251", "bul": "windows-1251",
                   "jpn": "Shift_JIS", "zho": "GBK", "kor": "EUC-KR", "ces": "windows-1250",
                   "pol": "ISO-8859-2", "hun": "ISO-8859-2", "ell": "ISO-8859-7", "tha": "TIS-620",
                   "ara": "windows-1256", "fas": "windows-1256", "heb": "windows-1255",
                   "tur": "windows-1254", "vie": "windows-1258"}
SECOND_LANGUAGES = ("eng", "fra", "deu", "spa", "rus", "ara", "zho", "por")

#: URI-R classes (synthetic.MIME_CLASSES by name) and weights: Common Crawl fetches pages
CLASS_WEIGHTS = {"html": 92, "pdf": 2, "rare": 1.5, "json": 0.8, "txt": 0.7, "jpeg": 1.5,
                 "png": 0.7, "gif": 0.3, "css": 0.3, "js": 0.2}
_CLASS_INDEX = {c[0]: i for i, c in enumerate(synthetic.MIME_CLASSES)}
_CLASSES = tuple(_CLASS_INDEX[name] for name in CLASS_WEIGHTS)
_CLASS_CUM = synthetic._cumulative(CLASS_WEIGHTS.values())
_MIME_OF_EXTENSION = {ext: mime for mime, ext in synthetic.RARE_EXTENSIONS.items()}
ROBOTS_SHARE = 0.6             # hosts whose robots.txt is in the index

# per capture of a successful HTML page
NO_LANGUAGES = 0.03            # CLD2 found none: no languages key
TWO_LANGUAGES = 0.2            # of a bilingual host's pages
SWAPPED_LANGUAGES = 0.06       # a bilingual host's page mostly in its second language
THREE_LANGUAGES = 0.02
UNCHANGED = 0.3                # a recapture with the payload of the last one
REVISIT = 0.05                 # a recapture written as a revisit of the last payload
XHTML = 0.07                   # mime-detected application/xhtml+xml
# statuses of pages and of other resources: (status, cumulative weight)
HTML_STATUSES = (("200", 82), ("301", 89), ("302", 92), ("404", 97), ("403", 98), ("500", 99),
                 ("503", 100))
OTHER_STATUSES = (("200", 90), ("301", 93), ("302", 95), ("404", 99), ("403", 100))
ROBOTS_STATUSES = (("200", 75), ("404", 90), ("301", 97), ("403", 100))


def crawl_start(crawl):
    """Epoch seconds at which a crawl's captures begin: two weeks before its week's Monday."""
    year, week = int(crawl[8:12]), int(crawl[13:15])
    monday = datetime.date.fromisocalendar(year, week, 1) - datetime.timedelta(days=14)
    return calendar.timegm(monday.timetuple())


_CRAWL_NAMES = tuple(c for c, _ in CRAWLS)
_CRAWL_CUM = synthetic._cumulative(w for _, w in CRAWLS)
_CRAWL_START = {c: crawl_start(c) for c in _CRAWL_NAMES}
_SUFFIX_CUM = synthetic._cumulative(w for _, w, _ in SUFFIXES)
_LANGUAGES_OF = {suffix: langs for suffix, _, langs in SUFFIXES}


def _suffix_languages(surt_host):
    labels = surt_host.split(":", 1)[0].split(",")
    for n in (2, 1):
        langs = _LANGUAGES_OF.get(",".join(labels[:n]))
        if langs:
            return langs
    return _ENG


def _host(rng, surt_host=None, netloc=None, https_year=None):
    """(surt host, netloc, https from year, primary language, second language or None)."""
    if surt_host is None:
        suffix, _, langs = SUFFIXES[rng.choices(range(len(SUFFIXES)), cum_weights=_SUFFIX_CUM)[0]]
        labels = suffix.split(",") + [synthetic._name_label(rng)]
        if rng.random() < 0.15:
            labels.append(rng.choice(synthetic.SUB_LABELS))
        surt_host = ",".join(labels)
        netloc = ".".join(reversed(labels))
        if len(labels) == len(suffix.split(",")) + 1 and rng.random() < 0.7:
            netloc = "www." + netloc
        https_year = 9999 if rng.random() < 0.1 else rng.randint(2013, 2022)
    else:
        langs = _suffix_languages(surt_host)
    primary = synthetic._pick(rng, langs)
    second = None
    if rng.random() < (0.1 if primary == "eng" else 0.3):
        second = rng.choice([lang for lang in SECOND_LANGUAGES if lang != primary])
    return surt_host, netloc, https_year, primary, second


def make_hosts(rng, n_hosts):
    """n_hosts distinct hosts in size-rank order, the famous ones of synthetic.py first."""
    return synthetic.make_hosts(rng, n_hosts, lambda rng, famous=None: _host(rng, *(famous or ())))


def _host_urirs(rng, count):
    """count distinct (surt path, original path, class index): the root page, often robots.txt."""
    urirs = {"/": ("/", _CLASS_INDEX["html"])}
    if count >= 2 and rng.random() < ROBOTS_SHARE:
        urirs["/robots.txt"] = ("/robots.txt", _CLASS_INDEX["txt"])
    while len(urirs) < count:
        cls = _CLASSES[rng.choices(range(len(_CLASSES)), cum_weights=_CLASS_CUM)[0]]
        surt_path, original = synthetic._make_urir(rng, cls)
        urirs.setdefault(surt_path, (original, cls))
    return sorted((path, original, cls) for path, (original, cls) in urirs.items())


def _languages(rng, primary, second):
    """A languages value for one page, or None when CLD2 finds none."""
    r = rng.random()
    if r < NO_LANGUAGES:
        return None
    langs = [primary]
    if second:
        r = rng.random()
        if r < SWAPPED_LANGUAGES:
            langs = [second, primary] if rng.random() < 0.5 else [second]
        elif r < SWAPPED_LANGUAGES + TWO_LANGUAGES:
            langs.append(second)
    if rng.random() < THREE_LANGUAGES:
        langs.extend(lang for lang in rng.sample(SECOND_LANGUAGES, 3) if lang not in langs)
    return ",".join(langs[:3])


def _charset(rng, language):
    r = rng.random()
    if r < 0.86:
        return "UTF-8"
    if r < 0.95 and language in LEGACY_CHARSETS:
        return LEGACY_CHARSETS[language]
    return "ISO-8859-1" if r < 0.97 else "windows-1252"


def _filename(crawl, seconds, subset, rng):
    """crawl-data/CRAWL/segments/SEGMENT/SUBSET/CC-MAIN-START-END-NNNNN.warc.gz of a capture."""
    start = _CRAWL_START[crawl]
    slot = (seconds - start) // 10800                   # a segment's WARC files span 3 hours
    begin = start + slot * 10800
    segment = "%d.%02d" % ((start + slot * 3600) * 1000 + 231, slot % 100)
    return "crawl-data/%s/segments/%s/%s/CC-MAIN-%s-%s-%05d.warc.gz" % (
        crawl, segment, subset, synthetic._timestamp14(begin), synthetic._timestamp14(begin + 10800),
        rng.randrange(800))


def _capture_times(rng, count):
    """count distinct (crawl, epoch seconds), sorted: different crawls while there are enough."""
    crawls = set()
    while len(crawls) < min(count, len(_CRAWL_NAMES)):
        crawls.add(rng.choices(_CRAWL_NAMES, cum_weights=_CRAWL_CUM)[0])
    crawls = sorted(crawls)
    times = set()
    while len(times) < count:
        crawl = crawls[len(times)] if len(times) < len(crawls) else rng.choice(crawls)
        times.add((_CRAWL_START[crawl] + rng.randrange(14 * 86400), crawl))
    return sorted((seconds, crawl) for seconds, crawl in times)


def urir_records(rng, host, surt_path, original_path, class_index, count, revisit=REVISIT, languages_kept=1.0):
    """Yield (urlkey, timestamp, fields) for the count captures of one URI-R, in time order.
    revisit: the share of recaptures written as revisits; languages_kept: the share of the pages
    that would carry languages that do (below 1: an index where CLD2 was run on fewer pages)."""
    surt_host, netloc, https_year, primary, second = host
    name, _, variants, _, median, sigma = synthetic.MIME_CLASSES[class_index]
    robots = surt_path == "/robots.txt"
    if len(variants) > 1:
        ext = "." + original_path.rsplit(".", 1)[-1].split("?")[0]
        mime = _MIME_OF_EXTENSION.get(ext) or synthetic._pick(rng, variants)
    else:
        mime = variants[0][0]
    is_html = name == "html"
    statuses = ROBOTS_STATUSES if robots else HTML_STATUSES if is_html else OTHER_STATUSES
    base_length = synthetic._clamp_length(rng, median, sigma, 300, 40000000)
    urlkey = surt_host + ")" + surt_path
    last = None                                         # (digest, length) of the last 200
    for seconds, crawl in _capture_times(rng, count):
        timestamp = synthetic._timestamp14(seconds)
        scheme = "https" if int(timestamp[:4]) >= https_year else "http"
        url = "%s://%s%s" % (scheme, netloc, original_path)
        fields = {"url": url}
        if last and rng.random() < revisit:
            fields.update((("mime", "warc/revisit"), ("status", "200"), ("digest", last[0]),
                           ("length", str(rng.randint(500, 900)))))
            subset = "warc"
        else:
            status = synthetic._status(rng, statuses)
            subset = "robotstxt" if robots else "warc" if status == "200" else "crawldiagnostics"
            detected = mime
            if status == "200":
                if last and rng.random() < UNCHANGED:
                    digest, length = last[0], last[1] + rng.randint(-30, 30)
                else:
                    digest, length = synthetic.random_digest(rng), int(base_length * (0.8 + 0.4 * rng.random()))
                last = (digest, length)
                if is_html and rng.random() < XHTML:
                    detected = "application/xhtml+xml"
            elif status in ("301", "302"):
                empty = rng.random() < 0.4
                digest = synthetic.EMPTY_DIGEST if empty else synthetic.random_digest(rng)
                length, detected = rng.randint(400, 1500), "application/octet-stream" if empty else "text/html"
            else:
                digest = synthetic.NOT_FOUND_DIGEST if rng.random() < 0.2 else synthetic.random_digest(rng)
                length, detected = rng.randint(600, 20000), "text/html"
            header_mime = mime if rng.random() > 0.005 else "unk"
            if status != "200" and not robots:
                header_mime = "text/html"
            fields.update((("mime", header_mime), ("mime-detected", detected), ("status", status),
                           ("digest", digest), ("length", str(max(200, length)))))
        fields["offset"] = str(rng.randrange(1200000000))
        fields["filename"] = _filename(crawl, seconds, subset, rng)
        status, new = fields["status"], crawl >= REDIRECT_SINCE
        if status == "200" and subset == "warc" and fields["mime"] != "warc/revisit" and is_html:
            if crawl >= LANGUAGES_SINCE:
                fields["charset"] = _charset(rng, primary)
                languages = _languages(rng, primary, second)
                if languages and (languages_kept >= 1 or rng.random() < languages_kept):
                    fields["languages"] = languages
        elif status in ("301", "302") and new and rng.random() < 0.95:
            fields["redirect"] = ("https://%s%s" % (netloc, original_path) if scheme == "http"
                                  else url + ("/" if not url.endswith("/") else "index.html"))
        if new and subset == "warc" and int(fields["length"]) > MAX_PAYLOAD:
            fields["truncated"] = "length"
        yield urlkey, timestamp, fields


def generate_records(n_lines, seed=0, hosts=None, urirs=None, revisit=REVISIT, languages_kept=1.0):
    """Yield n_lines (urlkey, timestamp, fields dict), byte-wise sorted by (urlkey, timestamp).

    hosts / urirs override the number of distinct hosts / URI-Rs (urirs=n_lines: one capture per
    URI-R); revisit and languages_kept: as urir_records takes them.
    """
    if n_lines <= 0:
        return
    n_urirs = max(1, min(n_lines, urirs or round(n_lines / LINES_PER_URIR)))
    n_hosts = max(1, min(n_urirs, hosts or round(n_lines / LINES_PER_HOST)))
    rng = random.Random(seed)
    host_table = make_hosts(rng, n_hosts)
    urirs_per_host, captures_per_urir = synthetic.allocate(rng, n_lines, n_urirs, n_hosts)
    starts = synthetic._cumulative([0] + urirs_per_host[:-1])
    for h in sorted(range(n_hosts), key=lambda h: host_table[h][0] + ")"):
        start = int(starts[h])
        counts = captures_per_urir[start:start + urirs_per_host[h]]
        for (path, original, cls), count in zip(_host_urirs(rng, urirs_per_host[h]), counts):
            yield from urir_records(rng, host_table[h], path, original, cls, count, revisit, languages_kept)


def cc_line(urlkey, timestamp, fields):
    """One index line (with its newline), formatted as Common Crawl's."""
    return "%s %s %s\n" % (urlkey, timestamp, json.dumps(fields))


def cc_lines(n_lines, seed=0, **kw):
    """Yield n_lines index lines of generate_records, sorted."""
    for record in generate_records(n_lines, seed, **kw):
        yield cc_line(*record)


def write_cc_index(path, n_lines, seed=0, **kw):
    """Write a sorted Common Crawl-style index (gzip if path ends '.gz'); return its line count."""
    return synthetic.write_lines(path, cc_lines(n_lines, seed, **kw))
