"""Sorting another tool's profile or map on the way in (``mementomap generate`` writes its
lines unsorted): an external sort with bounded memory.

The header lines stay first; the data lines are read in runs of at most RUN_BYTES, each run
sorted by the key the readers check the order of (profiler.files.datalines) and written to a
temporary file in the given folder (the output's, or $TMPDIR), and the runs merged into one
more temporary file, which is checked like any input. Every temporary file is removed when the
caller is done (SortedCopy is a context manager), or by the next sort in that folder when a
killed run left it (profiler.files.outfiles.owned_temp). Only files another tool wrote are sorted:
an unsorted file this tool wrote is damaged and refused (profiler.files.datalines).
"""

import heapq
import os
import tempfile

from profiler.files import infiles, outfiles
from profiler.files.datalines import DamagedFile, DataFile, written_here  # noqa: F401 (merge's test)
from profiler.files.datalines import MAX_LINE, Bad, physical_lines

#: the bytes of data lines sorted in memory at once
RUN_BYTES = 32 << 20
PREFIX = ".archive-profiler-sort-"


class SortedCopy:
    """A sorted copy of a file (``path``: the copy; ``lines``: its data lines), made in
    ``folder`` and removed on exit. A line longer than datalines.MAX_LINE is never held (it is
    damaged: its sorted place would need it whole): a DamagedFile, or with ``skip_long`` left
    out of the copy and listed in ``skipped_long`` ((line number in source, Bad)) for the
    caller's count of skipped lines."""

    def __init__(self, source, folder=None, run_bytes=RUN_BYTES, skip_long=False):
        self.source = source
        self.folder = folder or tempfile.gettempdir()
        self.run_bytes = run_bytes
        self.skip_long = skip_long
        self.skipped_long = []
        self.made = []
        self.path = None
        self.lines = 0

    def _temp(self):
        if not self.made:                       # the first: those a killed sort left go first
            outfiles.remove_stale_owned(self.folder, PREFIX, ".tmp")
        path, fd = outfiles.owned_temp(self.folder, PREFIX, ".tmp", record=self.made.append)
        return os.fdopen(fd, "wb"), path

    def __enter__(self):
        try:
            self._sort()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for path in self.made:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        self.made = []

    def _sort(self):
        found = DataFile(self.source)
        key_of = found.checker.key_of
        runs, run, size = [], [], 0
        with infiles.open_regular(self.source) as f:
            if infiles.identity(os.fstat(f.fileno())) != found.identity:
                raise DamagedFile("%s changed while it was read: read it again when it is written" % self.source)
            headers = [f.read(found.data_offset)]
            lineno = len(found.raw_headers)
            for offset, line, whole, long, after in physical_lines(f, found.data_offset):
                lineno += 1
                if long:
                    bad = Bad("too_long", "a line of %d bytes, longer than %d MiB" % (after - offset - 1,
                                                                                      MAX_LINE >> 20))
                    if not self.skip_long:
                        raise DamagedFile("%s line %d: %s; --skip-bad-lines skips such lines, counted"
                                          % (self.source, lineno, bad))
                    self.skipped_long.append((lineno, bad))
                    continue
                if not whole:
                    raise DamagedFile("%s: the file was cut short: its last line (%d bytes) has no newline"
                                      % (self.source, len(line)))
                line += b"\n"
                run.append(line)
                size += len(line)
                self.lines += 1
                if size >= self.run_bytes:
                    runs.append(self._write_run(run, key_of))
                    run, size = [], 0
        if run or not runs:
            runs.append(self._write_run(run, key_of))
        out, self.path = self._temp()
        with out:
            out.writelines(headers)
            files = [open(p, "rb") for p in runs]
            try:
                out.writelines(heapq.merge(*files, key=lambda line: key_of(line.rstrip(b"\r\n"))))
            finally:
                for r in files:
                    r.close()
        for p in runs:
            os.unlink(p)
            self.made.remove(p)

    def _write_run(self, lines, key_of):
        lines.sort(key=lambda line: key_of(line.rstrip(b"\r\n")))
        out, path = self._temp()
        with out:
            out.writelines(lines)
        return path
