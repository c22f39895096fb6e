"""mrjob jobs of archive-profiler. Each job only wires functions of ``profiler`` into steps."""
