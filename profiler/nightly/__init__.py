"""`archive-profiler nightly`: keep an archive's profile fresh, unattended (a night: night.py)."""
