"""`archive-profiler explore`: a web page for exploring profiles, and the JSON API under it."""

from profiler.cli.arguments import whole_number

NAME = "explore"
HELP = "explore profiles in a web browser: features and breakdowns, refined click by click (HTTP, JSON)"
DESCRIPTION = ("Serve a web page over one or more CDXJ profiles (NAME=FILE names one): pick a value of any key "
               "field (SURT, time or a range of it, MIME type, status, and the profile's other criteria), see "
               "all features and the breakdown by every other field, refine by clicking a row. Every state "
               "is a URL; /api/answer answers the same questions as JSON. Answers come from binary "
               "searches of the sorted files and a small index built at start. Stop with Ctrl-C.")


def add_arguments(p):
    p.add_argument("files", nargs="+", metavar="[NAME=]PROFILE", help="a CDXJ profile")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=whole_number, default=8080, help="port (default 8080; 0: a free one, printed)")


def run(args):
    from profiler.errors import UserError
    from profiler.explore.server import explore
    if not 0 <= args.port <= 65535:
        raise UserError("--port must be 0 to 65535")
    try:
        explore(args.files, args.host, args.port)
    except KeyboardInterrupt:
        pass
    return 0
