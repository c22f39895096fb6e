"""`archive-profiler merge`: profiles (or maps) of different captures in, one merged file out."""

import sys

from profiler.cli.arguments import add_skip_bad_lines, report_skipped
from profiler.errors import printable

NAME = "merge"
HELP = "merge sorted profiles or UKVS maps of different captures into one"
DESCRIPTION = ("Merge CDXJ profiles made with the same policy (or UKVS maps) into one sorted file, "
               "streaming (k-way merge). urim and bytes add up; urir, urim.min/max, digests and "
               "dedup_bytes are exact only for inputs declared disjoint with --disjoint, otherwise "
               "they get bounds (docs/toolkit.md, 'Split and merge rules'). Every input is checked whole "
               "first: a damaged or unsorted one is refused before anything is written; an unsorted file "
               "another tool wrote (mementomap generate) is sorted on the way in, with a note; an archive "
               "profile of oduwsdl's archive_profiler (JSON) is converted on the way in: the keys that mean "
               "one of this format's (a TLD, a month, a media type), the others skipped and counted. Profiles whose key "
               "fields include another input's (ours and a converted document) merge on the common fields: "
               "lines with another value than '-' in a dropped field are left out, and a key an input lacks "
               "gets bounds when that input's share of it is unknown.")


def add_arguments(p):
    p.add_argument("inputs", nargs="+", metavar="FILE")
    p.add_argument("-o", "--output", required=True, metavar="OUT")
    p.add_argument("--disjoint", action="append", default=[], choices=["urir", "digests"],
                   help="the inputs hold disjoint sets of URI-Rs (urir) or payload digests (digests): "
                        "keeps those features exact (repeatable)")
    p.add_argument("--archive-uri", default=None, help="URI for the !id line (default: the inputs' "
                   "common one, else null)")
    add_skip_bad_lines(p)


def run(args):
    from profiler.toolkit.merge import merge
    summary = merge(args.inputs, args.output, sorted(set(args.disjoint)), args.archive_uri,
                    skip_bad_lines=args.skip_bad_lines)
    report_skipped(summary["skipped"])
    for path, lines in summary["sorted"]:
        _say("archive-profiler: note: %s was not sorted (another tool's file): its %d lines sorted on the way in "
             "(the merged !meta's sorted_inputs)" % (path, lines))
    from profiler.files.oduprofile import describe_skipped
    for path, skipped in summary["converted"]:
        for line in describe_skipped(path, skipped):
            _say("archive-profiler: note: %s (converted: the merged !meta's converted_inputs)" % line)
    projected = summary.get("projected")
    if projected:
        _say("archive-profiler: note: inputs of different key fields merged on keys %s: %s; %d line(s) bounded "
             "where an input's share of the key is unknown (the merged !meta's projected and unknown_keys)" % (
                 " ".join(projected["keys"]), "; ".join(
                     "%s: field(s) %s dropped, %d line(s) with another value than '-' there left out"
                     % (path, " ".join(dropped), n) for path, dropped, n in projected["inputs"]),
                 projected["unknown"]))
    if not args.quiet:
        undeclared = [d for d in ("urir", "digests") if d not in args.disjoint]
        _say("%s: %d lines from %d inputs (%d keys in more than one%s)" % (
            summary["output"], summary["lines"], summary["inputs"], summary["merged_keys"],
            ": bounds where the inputs may share %s; %s if they share none" % (
                " or ".join({"urir": "URI-Rs", "digests": "digests"}[d] for d in undeclared),
                " ".join("--disjoint " + d for d in undeclared))
            if summary["merged_keys"] and undeclared else ""))
    for first, copy in summary["copies"]:
        _say("archive-profiler: warning: %s and %s have the same header lines (one run's file, copied?): if "
             "they are copies, their captures are counted twice" % (first, copy))
    for first, other, shared, n in summary.get("shared_inputs", ()):
        _say("archive-profiler: warning: %s and %s were both profiled from %s%s: if it held the same captures "
             "then, they are counted twice" % (first, other, shared, " (and %d other input(s))" % (n - 1) if n > 1
                                               else ""))
    if summary["extras_dropped"]:
        _say("archive-profiler: warning: %d merged line(s) dropped extra attributes that differed between "
             "the inputs" % summary["extras_dropped"])
    return 0


def _say(text):
    """A line on stderr, its control characters escaped (file names are quoted in it)."""
    print(printable(text), file=sys.stderr)
