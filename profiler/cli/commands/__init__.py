"""One module per `archive-profiler` subcommand.

Each module defines NAME, HELP, add_arguments(parser) and run(args) -> exit status; the library
work lives in the plain modules of `profiler`, the command modules only wire arguments to them.
Register a new subcommand by adding its module name to SUBCOMMANDS.
"""

SUBCOMMANDS = [
    "profile",
    "report",
    "ukvs",
    "lookup",
    "compact",
    "validate",
    "query",
    "merge",
    "split",
    "export",
    "diff",
    "overlap",
    "nightly",
    "serve",
    "explore",
    "completion",
]
