"""python -m profiler.cli: the archive-profiler command."""

from profiler.cli.main import console_main

console_main()
