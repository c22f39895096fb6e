"""`archive-profiler serve`: the routing service Memento aggregators query."""

from profiler.cli.arguments import cores, positive_int, seconds, whole_number

NAME = "serve"
HELP = "serve lookups and routing over many archives' MementoMaps or profiles (HTTP, JSON)"
DESCRIPTION = ("Answer GET /lookup?url=URL[&datetime=D][&lang=CODE], /route?url=URL[&datetime=D][&lang=CODE]"
               "[&limit=N], /archives "
               "and /health with JSON (lang=CODE, or NAME=VALUE of another optional criterion of the files' keys, "
               "asks for a value), from each archive's sorted UKVS map or CDXJ profile (its !id uri "
               "names the archive; NAME=FILE names it). Files are checked whole, then searched, never loaded; "
               "a new version at the same path (a NAME-latest link moved by nightly) is checked in the "
               "background and served once found good, a bad one leaving the last good one serving. Needs "
               "the serve extra (uvicorn, httptools, uvloop): in the checkout, pip install '.[serve]'.")


def add_arguments(p):
    import argparse

    from profiler.serve.limits import Limits
    p.add_argument("files", nargs="+", metavar="[NAME=]FILE", help="one archive's map or profile")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=whole_number, default=8080, help="port (default 8080; 0: a free one, printed)")
    p.add_argument("--workers", type=cores, default=1, help="worker processes (default 1, at most 1024; one per "
                                                   "core for throughput)")
    p.add_argument("--max-connections", type=positive_int, default=Limits.max_connections, metavar="N",
                   help="connections a worker holds (default %(default)s); at the limit, the one idle longest "
                        "is closed")
    p.add_argument("--max-client-connections", type=positive_int, default=Limits.max_client_connections, metavar="N",
                   help="connections a worker holds from one client address (an IPv6 /64; default "
                        "%(default)s): behind a proxy, raise it")
    p.add_argument("--idle-timeout", type=seconds, default=Limits.idle_timeout, metavar="SECONDS",
                   help="close a connection that sends no request for this long (default %(default)s)")
    p.add_argument("--head-timeout", type=seconds, default=Limits.head_timeout, metavar="SECONDS",
                   help="answer 408 to a request whose head is not whole this long after its first byte "
                        "(default %(default)s)")
    p.add_argument("--write-timeout", type=seconds, default=Limits.write_timeout, metavar="SECONDS",
                   help="drop a connection that leaves an answer unread this long (default %(default)s)")
    p.add_argument("--request-timeout", type=seconds, default=Limits.request_timeout, metavar="SECONDS",
                   help="answer 503 to a request whose answer is not ready this long after it came, and ask no "
                        "more archive for it (default %(default)s)")
    # files are read, never mapped: nothing to let go (an option of earlier command lines, ignored)
    p.add_argument("--max-mapped", type=positive_int, default=None, help=argparse.SUPPRESS)


def run(args):
    from profiler import extras
    from profiler.errors import UserError
    try:
        import httptools  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise extras.missing("serve", "serve", "uvicorn, httptools, uvloop")
    if not 0 <= args.port <= 65535:
        raise UserError("--port must be 0 to 65535")
    if args.workers < 1:
        raise UserError("--workers must be at least 1")
    for name in ("max_connections", "max_client_connections"):
        if getattr(args, name) < 1:
            raise UserError("--%s must be at least 1" % name.replace("_", "-"))
    for name in ("idle_timeout", "head_timeout", "write_timeout", "request_timeout"):
        if not 0 < getattr(args, name) <= 86400:
            raise UserError("--%s must be more than 0 and at most 86400 seconds" % name.replace("_", "-"))
    from profiler.serve.server import serve
    limits = {name: getattr(args, name) for name in ("max_connections", "max_client_connections", "idle_timeout",
                                                     "head_timeout", "write_timeout", "request_timeout")}
    serve(args.files, args.host, args.port, args.workers, "info" if args.verbose else "warning", limits)
    return 0
