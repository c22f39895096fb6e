#!/usr/bin/env python3
"""Microseconds per call of the per-capture language and domain functions.

normalise_language and primary_language (memoised, and first calls of distinct tags),
html_language on page prefixes (a page declaring <html lang> at its top, a page with a 30 KB
head and no declaration, the shared corpus's HTML responses when ../shared/data is there),
registered_domain_labels (memoised, and distinct hosts). Prints a markdown table.

Usage: scripts/bench_language.py [--data DIR]
"""

import argparse
import contextlib
import logging
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from profiler.model import domains, language  # noqa: E402
from profiler.model.language import html_language, normalise_language, primary_language, read_prefix  # noqa: E402

DECLARED = (b'<!DOCTYPE html>\n<html lang="en-GB" class="no-js"><head><meta charset="utf-8">'
            b"<title>News</title>" + b'<link rel="stylesheet" href="/s.css">' * 20 + b"</head><body>" + b"<p>text</p>" * 3000)
UNDECLARED = (b'<!DOCTYPE html>\n<!--[if IE 8]><html class="ie8"><![endif]--><html class="no-js"><head>'
              b'<meta charset="utf-8"><meta name="viewport" content="width=device-width">'
              + b'<meta property="og:x" content="y">' * 40 + b"<script>" + b"var a = {b: 1, c: '<div>'};\n" * 1100
              + b"</script></head><body>" + b"<p>text</p>" * 3000)


def per_call(function, args_list, repeat=3):
    """Best of repeat: microseconds per call over args_list."""
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        for args in args_list:
            function(*args)
        seconds = (time.perf_counter() - start) / len(args_list)
        best = seconds if best is None else min(best, seconds)
    return best * 1e6


def first_calls(function, cache_clear, args_list):
    """Microseconds per call with the memo emptied before every call."""
    total = 0.0
    for args in args_list:
        cache_clear()
        start = time.perf_counter()
        function(*args)
        total += time.perf_counter() - start
    return total / len(args_list) * 1e6


def corpus_prefixes(data):
    from warcio.archiveiterator import ArchiveIterator
    logging.getLogger("warcio").setLevel(logging.CRITICAL)
    out = []
    for folder, _, names in sorted(os.walk(data)):
        for name in sorted(names):
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as f, contextlib.redirect_stderr(open(os.devnull, "w")):
                    if not f.read(16).startswith((b"\x1f\x8b", b"WARC/", b"filedesc:")):
                        continue
                    f.seek(0)
                    for record in ArchiveIterator(f, arc2warc=True):
                        http = record.http_headers
                        if record.rec_type == "response" and http and "html" in (http.get_header("Content-Type") or ""):
                            out.append((read_prefix(record.content_stream()), http.get_header("Content-Language")))
            except Exception:
                continue
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.path.join(os.path.dirname(ROOT), "shared", "data"))
    args = parser.parse_args(argv)
    tags = ["en", "en-US", "ar-EG", "zh-Hant", "fre", "pt_BR", "und", "x-foo", "de-DE-1901", "iw"]
    distinct = ["%s-%s" % (t, r) for t in ("en", "fr", "de", "es", "ja", "ar") for r in ("US", "GB", "CA", "AU", "FR", "DE", "ES", "JP")]
    hosts = ["uk,co,bbc,news", "com,cnn,edition", "com,example:8080", "jp,kawasaki,foo,bar", "1,0,0,127"]
    many_hosts = ["com,site%d,www" % i for i in range(20000)]
    language.normalise_language("en")                     # the registry is read on the first call
    domains.registered_domain_labels("com,example")       # and the list
    rows = [
        ("normalise_language, memoised", per_call(normalise_language, [(t,) for t in tags] * 2000)),
        ("normalise_language, first call of a tag", first_calls(normalise_language, language._normalise.cache_clear,
                                                                 [(t,) for t in distinct])),
        ("normalise_language, tags langcodes has not seen either", per_call(
            normalise_language, [("%s-x-t%d" % (t, i),) for i, t in enumerate(tags * 200)], repeat=1)),
        ("primary_language('eng,fra'), memoised", per_call(primary_language, [("eng,fra",)] * 20000)),
        ("html_language, <html lang> at the top", per_call(html_language, [(DECLARED, None)] * 2000)),
        ("html_language, no declaration, 30 KB head", per_call(html_language, [(UNDECLARED, "en")] * 300)),
        ("registered_domain_labels, memoised", per_call(domains.registered_domain_labels, [(h,) for h in hosts] * 4000)),
        ("registered_domain_labels, distinct hosts", per_call(domains.registered_domain_labels, [(h,) for h in many_hosts],
                                                              repeat=1)),
    ]
    if os.path.isdir(args.data):
        prefixes = corpus_prefixes(args.data)
        if prefixes:
            mean = sum(len(p) for p, _ in prefixes) / len(prefixes)
            rows.append(("html_language, the corpus's %d HTML responses (mean prefix %.0f bytes)" % (len(prefixes), mean),
                         per_call(html_language, prefixes * 5)))
    print("| call | µs per call |\n|---|---:|")
    for name, us in rows:
        print("| %s | %.2f |" % (name, us))


if __name__ == "__main__":
    main()
