"""`archive-profiler serve`: the routing service Memento aggregators query."""

from profiler.cli.arguments import positive_int, whole_number

NAME = "serve"
HELP = "serve lookups and routing over many archives' MementoMaps or profiles (HTTP, JSON)"
DESCRIPTION = ("Answer GET /lookup?url=URL[&datetime=D][&lang=CODE], /route?url=URL[&datetime=D][&lang=CODE]"
               "[&limit=N], /archives "
               "and /health with JSON (lang=CODE, or NAME=VALUE of another optional criterion of the files' keys, "
               "asks for a value), from each archive's sorted UKVS map or CDXJ profile (its !id uri "
               "names the archive; NAME=FILE names it). Files are memory-mapped and searched, never loaded; "
               "a new version at the same path (a NAME-latest link moved by nightly) is picked up without "
               "a restart. Needs the serve extra (uvicorn): in the checkout, pip install '.[serve]'.")


def add_arguments(p):
    p.add_argument("files", nargs="+", metavar="[NAME=]FILE", help="one archive's map or profile")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=whole_number, default=8080, help="port (default 8080; 0: a free one, printed)")
    p.add_argument("--max-mapped", type=positive_int, default=None, metavar="MB",
                   help="let a worker's mapped file pages go when it holds more than MB of them: a bounded RSS "
                        "for fewer lookups a second (default: no limit; the pages are page cache either way)")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes (default 1; one per core for "
                                                          "throughput)")


def run(args):
    from profiler import extras
    from profiler.errors import UserError
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        raise extras.missing("serve", "serve", "uvicorn, httptools, uvloop")
    if not 0 <= args.port <= 65535:
        raise UserError("--port must be 0 to 65535")
    if args.workers < 1:
        raise UserError("--workers must be at least 1")
    from profiler.serve.server import serve
    if args.max_mapped is not None and args.max_mapped < 1:
        raise UserError("--max-mapped must be at least 1 (MB)")
    serve(args.files, args.host, args.port, args.workers, "info" if args.verbose else "warning",
          args.max_mapped << 20 if args.max_mapped else None)
    return 0
