"""`archive-profiler lookup`: most-specific-key lookups of URIs in a profile or MementoMap."""

import sys

NAME = "lookup"
HELP = "look URIs up in a CDXJ profile or UKVS map (binary search)"
DESCRIPTION = ("Look a URI (or SURT) up in a sorted CDXJ profile or UKVS/MementoMap: the most "
               "specific key wins (exact URL, deepest path wildcard, host, deepest host-label "
               "wildcard, '*'); a zero count is an explicit 'not held'. Without URI, reads one URI "
               "a line from stdin (batch mode). Prints QUERY, held|not-held|no-match|invalid, the "
               "matched key and its frequency, its level and how the datetime was answered, "
               "tab-separated, one line per query in input order; with --lang, the most specific "
               "key that tells languages answers, and a last column names the language answered "
               "for ('-': no key tells languages, the answer is for any).")


def add_arguments(p):
    p.add_argument("file", metavar="FILE")
    p.add_argument("uri", nargs="?", metavar="URI", help="URI or SURT (- or none: read URIs from stdin, one a line)")
    p.add_argument("--datetime", default=None, metavar="D", help="4 to 14 digits (2013, 201305, ...)")
    p.add_argument("--lang", default=None, metavar="CODE",
                   help="a language (ISO 639-3 such as ara, or a tag such as ar-EG; unk: unknown): needs a "
                        "profile whose keys have lang, or a map made from one")


def run(args):
    from profiler.toolkit.lookup import Lookup, datetime_query, format_answer, language_query
    dt = datetime_query(args.datetime)
    lang = language_query(args.lang)
    out = sys.stdout
    with Lookup(args.file) as index:
        if lang is not None:
            index.check_language()
        if args.uri is not None and args.uri != "-":
            out.write(format_answer(args.uri, index.lookup(args.uri, dt, lang), lang is not None) + "\n")
            return 0
        queries = (line.strip() for line in sys.stdin.buffer)
        buf = []
        for query, answer in index.batch((q for q in queries if q), dt, lang=lang):
            buf.append(format_answer(query.decode("utf-8", "replace"), answer, lang is not None))
            if len(buf) >= 10000:
                out.write("\n".join(buf) + "\n")
                buf = []
        if buf:
            out.write("\n".join(buf) + "\n")
    return 0
