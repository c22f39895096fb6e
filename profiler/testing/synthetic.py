"""Seeded generator of realistic synthetic CDX indexes (pure stdlib).

Hosts, URI-Rs and capture counts are drawn up front as small tables; hosts
and then each host's URI-Rs are walked in byte-wise SURT order, so captures
stream out sorted by (urlkey, timestamp) without sorting lines in memory.
Everything derives from one ``random.Random(seed)``: same seed, same bytes.

Scale rule (reference: 1,000,000 lines -> ~375,000 URI-Rs, ~19,000 hosts).
"""

import base64
import calendar
import gzip
import hashlib
import math
import random

LEGEND = " CDX N b a m s k r M S V g"

URIRS_PER_LINE = 0.375
HOSTS_PER_LINE = 0.019

FIRST_YEAR, LAST_YEAR = 1996, 2024
YEARS = list(range(FIRST_YEAR, LAST_YEAR + 1))
YEAR_CUM_WEIGHTS = []
_total = 0.0
for _year in YEARS:
    _total += (_year - FIRST_YEAR + 1) ** 1.3   # weighted toward recent years
    YEAR_CUM_WEIGHTS.append(_total)
YEAR_START = {y: calendar.timegm((y, 1, 1, 0, 0, 0)) for y in YEARS + [LAST_YEAR + 1]}
YEAR_SECONDS = {y: YEAR_START[y + 1] - YEAR_START[y] for y in YEARS}

REVISIT_PROBABILITY = 0.2      # per non-first capture -> ~12% of all captures
UNCHANGED_PROBABILITY = 0.25   # non-revisit recapture with the same payload
NO_DIGEST_PROBABILITY = 0.01


def sha1_base32(data):
    """Base32 SHA-1 of bytes, as found in CDX digest fields."""
    return base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


SPACER_GIF = bytes.fromhex(
    "474946383961010001008000000000" "00ffffff21f90401000000002c000000"
    "0001000100000202440100" "3b")
NOT_FOUND_PAGE = (
    b'<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n'
    b"<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n"
    b"<p>The requested URL was not found on this server.</p>\n</body></html>\n")
EMPTY_DIGEST = sha1_base32(b"")
SPACER_DIGEST = sha1_base32(SPACER_GIF)
NOT_FOUND_DIGEST = sha1_base32(NOT_FOUND_PAGE)
COMMON_DIGESTS = (EMPTY_DIGEST, SPACER_DIGEST, NOT_FOUND_DIGEST)

# (reversed public suffix, weight)
SUFFIXES = [
    ("com", 44), ("org", 10), ("net", 7), ("uk,co", 5), ("uk,ac", 1.5),
    ("uk,gov", 1), ("uk,org", 1), ("de", 6), ("fr", 4), ("jp", 1.5),
    ("jp,co", 2), ("jp,ac", 0.5), ("gov", 2.5), ("edu", 4), ("nl", 2),
    ("info", 1.5), ("ca", 1.5), ("au,com", 1), ("io", 0.5),
]
# The biggest hosts get familiar names: (surt host, netloc, https from year).
FAMOUS_HOSTS = [
    ("com,cnn", "www.cnn.com", 2014),
    ("uk,co,bbc,news", "news.bbc.co.uk", 2017),
    ("com,nytimes", "www.nytimes.com", 2017),
    ("org,wikipedia,en", "en.wikipedia.org", 2011),
    ("gov,whitehouse", "www.whitehouse.gov", 2012),
    ("de,spiegel", "www.spiegel.de", 2016),
    ("edu,mit,web", "web.mit.edu", 2015),
    ("fr,lemonde", "www.lemonde.fr", 2016),
    ("jp,co,yahoo", "www.yahoo.co.jp", 2016),
    ("org,archive", "archive.org", 2013),
    ("com,example:8080", "example.com:8080", 9999),
    ("uk,ac,ox,cs", "www.cs.ox.ac.uk", 2016),
]
WORDS = (
    "alpha apple arrow atlas badger bay bear birch blue bold bridge brook "
    "canyon cedar city clear cloud coast copper coral crane creek crown "
    "delta desert eagle east echo elm ember falcon field fire fish forest "
    "fox frost garden gate global gold green grove harbor hawk hill home "
    "horizon iron island jade key lake lantern leaf light lime lion maple "
    "meadow metro mill moon mountain north oak ocean olive orbit owl palm "
    "park peak pine pixel planet point pond prairie quartz rain raven red "
    "ridge river rock rose sage salt sand sea shadow silver sky snow solar "
    "south spark spring star stone storm summit sun swift tiger timber "
    "trail tree valley vista water wave west willow wind wolf wood zen "
    "news media press post times daily herald tribune journal review "
    "tech soft net data web info labs works systems group shop store "
    "books music films games sports travel food health law art design"
).split()
DIR_WORDS = (
    "news about images img static css js assets blog products docs world "
    "sports archive media uploads files people research events pub data "
    "api v1 v2 en fr de help support library content wp-content themes "
    "includes cgi-bin users staff projects services gallery photos video "
    "downloads reports press 1998 2001 2004 2007 2009 2012 2015 2018 2021 "
    "category tag search forum wiki pages articles shop catalog asia europe "
    "americas business science health tech politics education courses"
).split()
SUB_LABELS = (
    "news blog shop en fr de m static img images media cdn docs support "
    "forum wiki lists library store dev cs math portal"
).split()
QUERY_KEYS = "id page q lang sort cat start year p view ref item".split()

# (mime class name, weight, [mime variants with weights], extensions,
#  median record length, sigma)
MIME_CLASSES = [
    ("html", 52, [("text/html", 1)],
     ["/", "/", "", ".html", ".html", ".htm", ".php", ".asp", ".aspx",
      ".shtml", ".jsp"], 15000, 0.7),
    ("jpeg", 13, [("image/jpeg", 1)], [".jpg", ".jpg", ".jpeg"], 25000, 1.0),
    ("png", 6, [("image/png", 1)], [".png"], 12000, 1.1),
    ("gif", 5, [("image/gif", 1)], [".gif"], 4000, 1.0),
    ("css", 4, [("text/css", 1)], [".css"], 6000, 0.8),
    ("js", 5, [("application/javascript", 6), ("text/javascript", 3),
               ("application/x-javascript", 2)], [".js"], 15000, 1.0),
    ("pdf", 3, [("application/pdf", 1)], [".pdf"], 200000, 1.2),
    ("json", 2, [("application/json", 1)], [".json", ""], 3000, 1.0),
    ("txt", 1.5, [("text/plain", 1)], [".txt"], 1500, 0.8),
    ("rare", 2.5, [("image/svg+xml", 3), ("image/x-icon", 3),
                   ("application/rss+xml", 2), ("application/xml", 2),
                   ("video/mp4", 1), ("application/x-shockwave-flash", 1),
                   ("font/woff2", 1), ("application/zip", 1),
                   ("audio/mpeg", 1), ("application/msword", 1)],
     None, 30000, 1.5),
]
RARE_EXTENSIONS = {
    "image/svg+xml": ".svg", "image/x-icon": ".ico", "application/rss+xml": ".rss",
    "application/xml": ".xml", "video/mp4": ".mp4", "font/woff2": ".woff2",
    "application/x-shockwave-flash": ".swf", "application/zip": ".zip",
    "audio/mpeg": ".mp3", "application/msword": ".doc",
}
_CLASS_CUM = []
_acc = 0.0
for _cls in MIME_CLASSES:
    _acc += _cls[1]
    _CLASS_CUM.append(_acc)

# Status mixes: (status, cumulative weight) for html-like and other resources.
HTML_STATUSES = (("200", 85), ("301", 89), ("302", 93), ("304", 94), ("404", 99), ("500", 100))
OTHER_STATUSES = (("200", 93), ("301", 94), ("302", 95), ("304", 96.5), ("404", 99.5), ("500", 100))


def default_sizes(n_lines, hosts=None, urirs=None):
    """(n_urirs, n_hosts) for n_lines, following the reference scale rule."""
    if n_lines <= 0:
        return 0, 0
    n_urirs = urirs if urirs else round(n_lines * URIRS_PER_LINE)
    n_urirs = max(1, min(n_lines, n_urirs))
    n_hosts = hosts if hosts else round(n_lines * HOSTS_PER_LINE)
    n_hosts = max(1, min(n_urirs, n_hosts))
    return n_urirs, n_hosts


_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_B32_PAIRS = [a + b for a in _B32 for b in _B32]       # 10 bits -> 2 chars
_PAIR_SHIFTS = tuple(range(150, -1, -10))


def random_digest(rng):
    """A random 32-char base32 SHA-1 string (= b32encode of 20 random bytes)."""
    bits = rng.getrandbits(160)
    return "".join([_B32_PAIRS[(bits >> s) & 1023] for s in _PAIR_SHIFTS])


def _pick(rng, weighted):
    """Pick from [(value, weight), ...]."""
    return rng.choices([v for v, _ in weighted], [w for _, w in weighted])[0]


def _status(rng, cumulative):
    r = rng.random() * 100
    for status, bound in cumulative:
        if r < bound:
            return status
    return "200"


def _name_label(rng):
    """A plausible registered-domain label."""
    r = rng.random()
    if r < 0.35:
        return rng.choice(WORDS) + rng.choice(WORDS)
    if r < 0.65:
        consonants, vowels = "bcdfghklmnprstvz", "aeiou"
        label = "".join(rng.choice(consonants) + rng.choice(vowels)
                        for _ in range(rng.randint(2, 3)))
        return label + (rng.choice("nrstx") if rng.random() < 0.4 else "")
    if r < 0.8:
        return rng.choice(WORDS) + "-" + rng.choice(WORDS)
    if r < 0.9:
        return rng.choice(WORDS) + str(rng.randint(1, 99))
    return rng.choice(WORDS) + rng.choice(("ly", "ify", "hub", "zone", "online", "web"))


def _random_host(rng):
    """(surt host, netloc, https from year) of a random host."""
    suffix = _pick(rng, SUFFIXES)
    name = _name_label(rng)
    subs = []
    r = rng.random()
    if r < 0.04:
        subs = [rng.choice(SUB_LABELS), rng.choice(SUB_LABELS)]
    elif r < 0.18:
        subs = [rng.choice(SUB_LABELS)]
    labels = suffix.split(",") + [name] + subs        # reversed order
    key = ",".join(labels)
    host = ".".join(reversed(labels))
    if not subs and rng.random() < 0.7:
        host = "www." + host
    if rng.random() < 0.01:
        port = rng.choice(("8080", "8000", "81", "8888", "8081"))
        return key + ":" + port, host + ":" + port, 9999
    https_year = 9999 if rng.random() < 0.15 else rng.randint(2010, 2021)
    return key, host, https_year


def make_hosts(rng, n_hosts, host=None):
    """n_hosts distinct hosts in size-rank order (largest first): FAMOUS_HOSTS, then random ones.
    host(rng, famous or None) builds one (default: the famous tuple as it is, or _random_host)."""
    host = host or (lambda rng, famous=None: famous if famous is not None else _random_host(rng))
    hosts, seen = [], set()
    for famous in FAMOUS_HOSTS[:n_hosts]:
        hosts.append(host(rng, famous))
        seen.add(famous[0])
    while len(hosts) < n_hosts:
        host_ = host(rng)
        if host_[0] not in seen:
            seen.add(host_[0])
            hosts.append(host_)
    return hosts


def _histogram(rng, n_bins, n_draws, cum_weights):
    """Counts of n_draws weighted draws over n_bins."""
    counts = [0] * n_bins
    for i in rng.choices(range(n_bins), cum_weights=cum_weights, k=n_draws):
        counts[i] += 1
    return counts


def _cumulative(weights):
    total, cum = 0.0, []
    for w in weights:
        total += w
        cum.append(total)
    return cum


def allocate(rng, n_lines, n_urirs, n_hosts):
    """URI-Rs per host (Zipf-like) and captures per URI-R (heavy-tailed).

    Returns (urirs_per_host, captures_per_urir); URI-Rs of host h are a
    contiguous slice, the first one being the host's root page.
    """
    host_weights = [1.0 / (rank + 6) ** 1.05 for rank in range(n_hosts)]
    extra = _histogram(rng, n_hosts, n_urirs - n_hosts, _cumulative(host_weights))
    urirs_per_host = [1 + e for e in extra]
    weights = []
    for count in urirs_per_host:
        weights.append(min(rng.paretovariate(1.45), 400.0) * 8)   # root page
        weights.extend(min(rng.paretovariate(1.45), 400.0) for _ in range(count - 1))
    extra = _histogram(rng, n_urirs, n_lines - n_urirs, _cumulative(weights))
    return urirs_per_host, [1 + e for e in extra]


def _segment(rng):
    word = rng.choice(WORDS)
    r = rng.random()
    if r < 0.3:
        return word + "-" + rng.choice(WORDS)
    if r < 0.55:
        return word + str(rng.randint(1, 9999))
    if r < 0.65:
        return word + "_" + rng.choice(WORDS)
    return word


def _query(rng):
    """(original query, SURT query): distinct keys, SURT has them sorted."""
    keys = rng.sample(QUERY_KEYS, rng.choice((1, 1, 1, 2, 2, 3)))
    pairs = [(k, str(rng.randint(1, 5000)) if rng.random() < 0.7 else rng.choice(WORDS))
             for k in keys]
    original = "&".join(k + "=" + v for k, v in pairs)
    return original, "&".join(k + "=" + v for k, v in sorted(pairs))


def _make_urir(rng, class_index):
    """(surt path, original path) for a new URI-R of a MIME class."""
    name, _, variants, extensions = MIME_CLASSES[class_index][:4]
    depth = rng.choices((0, 1, 2, 3, 4), (20, 35, 25, 13, 7))[0]
    if name == "json":
        dirs = ["api"] + [rng.choice(DIR_WORDS) for _ in range(max(0, depth - 1))]
    else:
        dirs = [rng.choice(DIR_WORDS) for _ in range(depth)]
    prefix = "/" + "".join(d + "/" for d in dirs)
    if extensions is None:
        ext = RARE_EXTENSIONS[_pick(rng, variants)]
    else:
        ext = rng.choice(extensions)
    if ext == "/":
        # Directory index: SURT drops the trailing slash.
        if not dirs:
            dirs = [rng.choice(DIR_WORDS)]
            prefix = "/" + dirs[0] + "/"
        original = prefix
        surt_path = prefix[:-1]
    else:
        if name == "gif" and rng.random() < 0.15:
            leaf = rng.choice(("spacer", "pixel", "1x1", "blank", "clear"))
        else:
            leaf = _segment(rng)
        original = surt_path = prefix + leaf + ext
    if name in ("html", "json") and rng.random() < 0.15:
        q_original, q_surt = _query(rng)
        original += "?" + q_original
        surt_path += "?" + q_surt
    return surt_path, original


def make_host_urirs(rng, count):
    """count distinct (surt path, original path, class index), root page first."""
    urirs = {"/": ("/", 0)}
    if count >= 3 and rng.random() < 0.5:
        urirs["/robots.txt"] = ("/robots.txt", 8)
    while len(urirs) < count:
        class_index = rng.choices(range(len(MIME_CLASSES)), cum_weights=_CLASS_CUM)[0]
        surt_path, original = _make_urir(rng, class_index)
        if surt_path in urirs:
            continue
        urirs[surt_path] = (original, class_index)
    return [(path, original, cls) for path, (original, cls) in urirs.items()]


def _between(random_, low, high):
    """Uniform int in [low, high] from a random() function (cheaper than randint)."""
    return low + int(random_() * (high - low + 1))


def _year_in_range(year):
    """Reflect a year back into FIRST_YEAR..LAST_YEAR."""
    if year > LAST_YEAR:
        year = 2 * LAST_YEAR - year
    if year < FIRST_YEAR:
        year = 2 * FIRST_YEAR - year
    return min(LAST_YEAR, max(FIRST_YEAR, year))


def _timestamps(rng, count):
    """count distinct capture times (epoch seconds), sorted, clustered in years."""
    random_ = rng.random
    n_clusters = 1
    if count > 1:
        mean_extra = 0.3 + 0.5 * math.log(count)
        n_clusters = min(count, 1 + int(rng.expovariate(1.0 / mean_extra)))
    first = rng.choices(YEARS, cum_weights=YEAR_CUM_WEIGHTS)[0]
    years = [first]
    for _ in range(n_clusters - 1):
        if random_() < 0.6:
            step = _between(random_, 1, 6)
            year = first + (step if random_() < 0.5 else -step)
        else:
            year = rng.choices(YEARS, cum_weights=YEAR_CUM_WEIGHTS)[0]
        years.append(_year_in_range(year))
    times = set()
    n_years = len(years)
    while len(times) < count:
        year = years[int(random_() * n_years)]
        if random_() < 0.15:
            year = _year_in_range(year + (1 if random_() < 0.5 else -1))
        times.add(YEAR_START[year] + int(random_() * YEAR_SECONDS[year]))
    return sorted(times)


def _timestamp14(seconds, _cache={}):
    """Epoch seconds -> 14-digit timestamp string."""
    day = seconds // 86400
    date = _cache.get(day)
    if date is None:
        y, m, d = _civil_from_days(day)
        date = _cache[day] = "%04d%02d%02d" % (y, m, d)
    rest = seconds - day * 86400
    return "%s%02d%02d%02d" % (date, rest // 3600, rest // 60 % 60, rest % 60)


def _civil_from_days(z):
    """Days since 1970-01-01 -> (year, month, day) (proleptic Gregorian)."""
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def _clamp_length(rng, median, sigma, low, high):
    return int(min(high, max(low, rng.lognormvariate(math.log(median), sigma))))


def urir_captures(rng, urlkey, netloc, https_year, original_path, class_index, count):
    """Yield the count captures of one URI-R, in timestamp order."""
    name, _, variants, _, median, sigma = MIME_CLASSES[class_index]
    mime = _pick(rng, variants) if len(variants) > 1 else variants[0][0]
    is_html = name == "html"
    statuses = HTML_STATUSES if is_html else OTHER_STATUSES
    is_spacer = name == "gif" and original_path.rsplit("/", 1)[-1].split(".")[0] in (
        "spacer", "pixel", "1x1", "blank", "clear")
    base_length = _clamp_length(rng, median, sigma, 300, 20000000)
    if is_spacer:
        base_length = rng.randint(400, 700)
    http_url = "http://" + netloc + original_path
    https_url = "https://" + netloc + original_path
    https_from = "%04d" % min(https_year, 9999)
    last_payload = None          # (digest, length) of the latest original 200
    random_ = rng.random
    for i, seconds in enumerate(_timestamps(rng, count)):
        timestamp = _timestamp14(seconds)
        original = https_url if timestamp[:4] >= https_from else http_url
        if i and last_payload and random_() < REVISIT_PROBABILITY:
            yield (urlkey, timestamp, original, "warc/revisit", "-",
                   last_payload[0], _between(random_, 300, 600))
            continue
        status = _status(rng, statuses)
        capture_mime = mime
        if status == "200":
            if is_spacer:
                digest, length = SPACER_DIGEST, base_length
            elif last_payload and random_() < UNCHANGED_PROBABILITY:
                digest, length = last_payload[0], last_payload[1] + _between(random_, -40, 40)
            elif is_html and random_() < 0.005:
                digest, length = EMPTY_DIGEST, _between(random_, 250, 450)
            else:
                digest = random_digest(rng)
                length = max(200, int(base_length * (0.8 + 0.4 * random_())))
            r = random_()
            if r < 0.004:
                capture_mime = "unk"
            elif r < 0.008:
                capture_mime = "-"
        elif status in ("301", "302"):
            capture_mime = "text/html" if random_() < 0.9 else "-"
            digest = EMPTY_DIGEST if random_() < 0.35 else random_digest(rng)
            length = _between(random_, 300, 800)
        elif status == "304":
            capture_mime = "-" if random_() < 0.5 else mime
            digest, length = EMPTY_DIGEST, _between(random_, 250, 500)
        elif status == "404":
            capture_mime = "text/html"
            if random_() < 0.3:
                digest, length = NOT_FOUND_DIGEST, _between(random_, 650, 800)
            else:
                digest, length = random_digest(rng), _between(random_, 800, 12000)
        else:
            capture_mime = "text/html"
            digest, length = random_digest(rng), _between(random_, 500, 4000)
        if random_() < NO_DIGEST_PROBABILITY:
            digest = "-"
        elif status == "200":
            last_payload = (digest, length)
        yield (urlkey, timestamp, original, capture_mime, status, digest, length)


def generate_captures(n_lines, seed=0, hosts=None, urirs=None):
    """Yield n_lines captures (urlkey, timestamp, original, mime, status,
    digest, length), byte-wise sorted by (urlkey, timestamp).

    hosts / urirs override the number of distinct hosts / URI-Rs.
    """
    n_urirs, n_hosts = default_sizes(n_lines, hosts, urirs)
    if not n_lines:
        return
    rng = random.Random(seed)
    host_table = make_hosts(rng, n_hosts)
    urirs_per_host, captures_per_urir = allocate(rng, n_lines, n_urirs, n_hosts)
    starts = _cumulative([0] + urirs_per_host[:-1])
    # ')' ends every host prefix, so host order decides urlkey order across hosts.
    order = sorted(range(n_hosts), key=lambda h: host_table[h][0] + ")")
    for h in order:
        key, netloc, https_year = host_table[h]
        start = int(starts[h])
        urirs_ = make_host_urirs(rng, urirs_per_host[h])
        counts = captures_per_urir[start:start + len(urirs_)]
        prefix = key + ")"
        for (path, original, cls), count in sorted(zip(urirs_, counts)):
            yield from urir_captures(rng, prefix + path, netloc, https_year,
                                     original, cls, count)


def cdx_lines(n_lines, seed=0, **kw):
    """Yield 11-field CDX lines (with newline) for generate_captures()."""
    random_ = random.Random(seed * 7919 + 17).random
    offset = 0
    for urlkey, timestamp, original, mime, status, digest, length in generate_captures(
            n_lines, seed, **kw):
        warc = "crawl-%s-%05d.warc.gz" % (timestamp[:4], int(random_() * 1000))
        yield "%s %s %s %s %s %s - - %d %d %s\n" % (
            urlkey, timestamp, original, mime, status, digest, length, offset, warc)
        offset += length + int(random_() * 2000)


class _Output:
    """Binary output file; gzip (deterministic header) for '.gz' paths."""

    def __init__(self, path):
        self.raw = open(path, "wb")
        self.out = self.raw
        if str(path).endswith(".gz"):
            self.out = gzip.GzipFile(filename="", mode="wb", fileobj=self.raw,
                                     mtime=0, compresslevel=6)

    def write_text(self, text):
        self.out.write(text.encode("ascii"))

    def close(self):
        if self.out is not self.raw:
            self.out.close()
        self.raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def write_cdx(path, n_lines, seed=0, **kw):
    """Write a sorted 11-field CDX (gzip if path ends '.gz'); return line count."""
    return write_lines(path, cdx_lines(n_lines, seed, **kw), LEGEND + "\n")


def write_lines(path, lines, head=""):
    """Write head then lines (gzip if path ends '.gz') in batches; return the number of lines."""
    written = 0
    batch = []
    with _Output(path) as out:
        if head:
            out.write_text(head)
        for line in lines:
            batch.append(line)
            if len(batch) >= 20000:
                out.write_text("".join(batch))
                written += len(batch)
                batch = []
        out.write_text("".join(batch))
        written += len(batch)
    return written


def write_cdx_parts(paths, n_lines, seed=0, shuffle=False, **kw):
    """Spread one generated index over several CDX files; return per-file counts.

    Lines go to the files round-robin in runs of 1-64 lines, so some URI-Rs'
    captures land in more than one file. Without shuffle each file stays
    sorted; with shuffle each file's lines are shuffled (held in memory).
    """
    paths = list(paths)
    rng = random.Random(seed * 104729 + 3)
    counts = [0] * len(paths)
    outputs = [_Output(p) for p in paths]
    held = [[] for _ in paths]
    try:
        for out in outputs:
            out.write_text(LEGEND + "\n")
        part, run_left = 0, rng.randint(1, 64)
        for line in cdx_lines(n_lines, seed, **kw):
            if run_left == 0:
                part, run_left = (part + 1) % len(paths), rng.randint(1, 64)
            run_left -= 1
            counts[part] += 1
            if shuffle:
                held[part].append(line)
            else:
                outputs[part].write_text(line)
        if shuffle:
            for out, lines in zip(outputs, held):
                rng.shuffle(lines)
                out.write_text("".join(lines))
    finally:
        for out in outputs:
            out.close()
    return counts
