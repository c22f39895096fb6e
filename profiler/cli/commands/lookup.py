"""`archive-profiler lookup`: most-specific-key lookups of URIs in a profile or MementoMap."""

import sys

NAME = "lookup"
HELP = "look URIs up in a CDXJ profile or UKVS map (binary search)"
DESCRIPTION = ("Look a URI (or SURT) up in a sorted CDXJ profile or UKVS/MementoMap: the most "
               "specific key wins (exact URL, deepest path wildcard, host, deepest host-label "
               "wildcard, '*'); a zero count is an explicit 'not held'. Without URI, reads one URI "
               "a line from stdin (batch mode). Prints QUERY, held|not-held|no-match|invalid, the "
               "matched key and its frequency, tab-separated, one line per query in input order.")


def add_arguments(p):
    p.add_argument("file", metavar="FILE")
    p.add_argument("uri", nargs="?", metavar="URI", help="URI or SURT (- or none: read URIs from stdin, one a line)")
    p.add_argument("--datetime", default=None, metavar="D", help="4 to 14 digits (2013, 201305, ...)")


def run(args):
    from profiler.toolkit.lookup import Lookup, datetime_query, format_answer
    dt = datetime_query(args.datetime)
    out = sys.stdout
    with Lookup(args.file) as index:
        if args.uri is not None and args.uri != "-":
            out.write(format_answer(args.uri, index.lookup(args.uri, dt)) + "\n")
            return 0
        queries = (line.strip() for line in sys.stdin.buffer)
        buf = []
        for query, answer in index.batch((q for q in queries if q), dt):
            buf.append(format_answer(query.decode("utf-8", "replace"), answer))
            if len(buf) >= 10000:
                out.write("\n".join(buf) + "\n")
                buf = []
        if buf:
            out.write("\n".join(buf) + "\n")
    return 0
