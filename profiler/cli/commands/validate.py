"""`archive-profiler validate`: check CDXJ profiles and UKVS maps; problems by line number."""

import sys

from profiler.cli.arguments import whole_number

NAME = "validate"
HELP = "check CDXJ profiles and UKVS maps (grammar, byte-wise order, duplicate keys, features)"
DESCRIPTION = ("Check CDXJ archive profiles and UKVS maps: no empty lines or CR, single-space "
               "delimiters, header lines first, as many key fields as !keys/!fields declare, valid "
               "single-line JSON, byte-wise order without duplicate keys, consistent features. A UKVS map "
               "may align its columns with runs of blanks and write relaxed JSON (unquoted names), as "
               "the UKVS seed does. Prints FILE:LINE: problem for each problem and FILE:LINE: note: for "
               "what is allowed but worth knowing (unknown attributes, odd !meta content); exits 1 when "
               "a file is invalid.")


def add_arguments(p):
    p.add_argument("files", nargs="+", metavar="FILE", help="files to check; - reads standard input")
    p.add_argument("--type", choices=["cdxj", "ukvs"], default=None,
                   help="file type (default: from the header lines, else the first data line)")
    p.add_argument("--max-problems", type=whole_number, default=50, metavar="N",
                   help="problems listed per file (all are counted; default 50)")


def run(args):
    from profiler.errors import printable
    from profiler.files.validate import validate

    status = 0
    for path in args.files:
        if path == "-":
            report = _validate_stdin(args)
        else:
            report = validate(path, args.type, args.max_problems)
        shown = printable(path)
        for problem in report.problems:
            print("%s:%d: %s" % (shown, problem.lineno, printable(problem.message)))
        if not args.quiet:
            for note in report.notes:
                print("%s:%d: note: %s" % (shown, note.lineno, printable(note.message)))
        kind = "CDXJ profile" if report.kind == "cdxj" else "UKVS map"
        if report.ok:
            if not args.quiet:
                print("%s: valid %s, %d data lines" % (shown, kind, report.data_lines), file=sys.stderr)
        else:
            status = 1
            more = report.count - len(report.problems)
            print("%s: INVALID %s: %d problem(s)%s" % (shown, kind, report.count,
                  " (%d not listed)" % more if more else ""), file=sys.stderr)
    return status


def _validate_stdin(args):
    """validate reads a file twice (headers, then lines): standard input goes to a temp file
    first, removed after."""
    import shutil
    import tempfile
    from profiler.cli.stdio import refuse_endless_stdin
    from profiler.files.infiles import InputError
    from profiler.files.validate import validate
    refuse_endless_stdin()
    with tempfile.NamedTemporaryFile(prefix="archive-profiler-stdin-", suffix=".txt") as f:
        shutil.copyfileobj(sys.stdin.buffer, f, 1 << 20)
        f.flush()
        try:
            return validate(f.name, args.type, args.max_problems)
        except InputError as e:
            raise InputError(str(e).replace(f.name, "standard input"))
