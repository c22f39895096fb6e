"""`archive-profiler lookup`: most-specific-key lookups of URIs in a profile or MementoMap."""

import sys

from profiler.cli.arguments import add_skip_bad_lines, report_skipped
from profiler.errors import printable

NAME = "lookup"
HELP = "look URIs up in a CDXJ profile or UKVS map (binary search)"
DESCRIPTION = ("Look a URI (or SURT) up in a sorted CDXJ profile or UKVS/MementoMap: the most "
               "specific key wins (exact URL, deepest path wildcard, host, deepest host-label "
               "wildcard, '*'); a zero count is an explicit 'not held'. Without URI, reads one URI "
               "a line from stdin (batch mode). Prints QUERY, held|not-held|no-match|invalid|unknown, the "
               "matched key and its frequency, its level and how the datetime was answered, "
               "tab-separated, one line per query in input order; with --lang (or the option of another "
               "optional criterion), the most specific key that tells languages (its values) answers, "
               "and a last column names the value answered for ('-': no key tells them, the answer is "
               "for any). The file is checked whole when it is first used (cut, malformed or unsorted, it is "
               "refused), remembered for that version of it; with --skip-bad-lines, 'unknown' when the line "
               "that would answer may be one of the damaged lines skipped.")


def _takes(c):
    return c.name == "datetime" or c.optional


def _help(c):
    if c.name == "datetime":
        return "4 to 14 digits (2013, 201305, ...) or a W3C date (2013-05-12, 2013-05-12T08:30:00Z)"
    return "%s: needs a profile whose keys have %s, or a map made from one" % (c.example or c.describe, c.name)


def add_arguments(p):
    from profiler.cli.arguments import add_criteria_options
    p.add_argument("file", metavar="FILE")
    p.add_argument("uri", nargs="?", metavar="URI", help="URI or SURT (- or none: read URIs from stdin, one a line)")
    add_criteria_options(p, _help, _takes)
    p.add_argument("--breakdowns", action="store_true",
                   help="a last column: the matched map line's status and mime breakdowns (JSON; '-': none)")
    add_skip_bad_lines(p)


def run(args):
    from profiler.errors import UserError
    from profiler.model import criteria
    from profiler.toolkit.lookup import (INVALID, MAX_QUERY, UNKNOWN, Lookup, datetime_query, format_answer,
                                         query_lines, value_query)
    dt = datetime_query(args.datetime)
    asked = [(c.name, value_query(c, getattr(args, c.name, None))) for c in criteria.CRITERIA
             if c.optional and _takes(c)]
    asked = [(by, value) for by, value in asked if value is not None]
    if len(asked) > 1:
        raise UserError("ask a value of one criterion at a time, not --%s" % " and --".join(by for by, _ in asked))
    by, value = asked[0] if asked else (criteria.LANG.name, None)
    out = sys.stdout
    with Lookup(args.file, verify=True, tolerant=args.skip_bad_lines) as index:
        report_skipped(index.skipped)
        if value is not None:
            index.check(by)
        unknown = [0]

        def counted(answer):
            unknown[0] += answer.status == UNKNOWN
            return answer

        if args.uri is not None and args.uri != "-":
            answer = counted(index.lookup(args.uri, dt, value, by))
            out.write(format_answer(args.uri, answer, value is not None, args.breakdowns) + "\n")
            _note_unknown(unknown[0], args.file)
            if answer.status == INVALID and not args.quiet:
                out.flush()
                print("archive-profiler: note: %s is not a URI or SURT to look up (http://www.cnn.com/world/, "
                      "www.cnn.com or com,cnn)/world/); all of a domain is query's --surt 'com,cnn,*'"
                      % printable(repr(args.uri[:80])), file=sys.stderr)
            return 0
        from profiler.cli.stdio import refuse_endless_stdin
        refuse_endless_stdin()
        if sys.stdin.isatty() and not args.quiet:
            print("archive-profiler: lookup reads URIs from the terminal, one a line, until Ctrl-D (or give one: "
                  "lookup FILE URI)", file=sys.stderr, flush=True)
        too_long = []
        buf = []
        for query, answer in index.batch(query_lines(sys.stdin.buffer, too_long), dt, value=value, by=by):
            shown = query if len(query) <= MAX_QUERY else query[:64] + b"..."
            buf.append(format_answer(shown.decode("utf-8", "replace"), counted(answer), value is not None,
                                     args.breakdowns))
            if len(buf) >= 10000:
                out.write("\n".join(buf) + "\n")
                buf = []
        if buf:
            out.write("\n".join(buf) + "\n")
        if too_long:
            out.flush()
            print("archive-profiler: note: %d query line(s) longer than %d KiB answered invalid (their first bytes "
                  "shown)" % (len(too_long), MAX_QUERY >> 10), file=sys.stderr)
        _note_unknown(unknown[0], args.file)
    return 0


def _note_unknown(count, path):
    """The note on answers the skipped lines left unknown (stderr, also under -q)."""
    if count:
        sys.stdout.flush()
        print("archive-profiler: note: %s: %d answer(s) unknown: the line that would answer (of the key or a more "
              "specific one) may be one of the damaged lines skipped; a coarser line or no match would be wrong"
              % (path, count), file=sys.stderr)
