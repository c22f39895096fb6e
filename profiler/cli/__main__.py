"""python -m profiler.cli: the archive-profiler command."""

from profiler.cli import console_main

console_main()
