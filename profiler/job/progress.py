"""A task's progress reports: how far a map task has read its split, and a reduce task its
input, for the client's bar.

Tasks that run on this machine (the inline, local and Spark local runners) write how far they
are into a folder the client watches (named by ENV in their environment; the bar is
profiler.run.progress). Without ENV a task reports nothing and pays nothing.
"""

import contextlib
import hashlib
import os
import time

from profiler import contract

#: the environment variable naming the folder map tasks report into
ENV = contract.PROGRESS_ENV
#: seconds between two reports of a task, and between two redraws of the bar
INTERVAL = 0.5


def report_name(split):
    """The name of a split's report file in the folder."""
    key = "%s\0%s" % (split.get("path_hex") or split.get("path"), split.get("start") or 0)
    return hashlib.sha1(key.encode("utf-8", "surrogateescape")).hexdigest()[:20]


class TaskProgress:
    """A map task's reports on one split: bytes of the file read (compressed bytes for a
    compressed file) and captures parsed, at most every INTERVAL seconds."""

    def __init__(self, split, environ=os.environ):
        folder = environ.get(ENV)
        self.path = os.path.join(folder, report_name(split)) if folder and os.path.isdir(folder) else None
        self.start = split.get("start") or 0
        self.end = split.get("end")
        self._file = None
        self._next = 0.0

    def __bool__(self):
        return self.path is not None

    def opener(self, opener):
        """The opener, recording the file it opens (its position is the bytes read)."""
        if self.path is None:
            return opener

        @contextlib.contextmanager
        def tracked(path, mode="rb"):
            with opener(path, mode) as f:
                self._file = f
                try:
                    yield f
                finally:
                    self._file = None
        return tracked

    def update(self, captures):
        now = time.monotonic()
        if self.path is None or now < self._next:
            return
        self._next = now + INTERVAL
        try:
            pos = self._file.tell() - self.start if self._file is not None else 0
        except (OSError, ValueError, AttributeError):
            pos = 0
        if self.end is not None:
            pos = min(pos, self.end - self.start)
        self._write(b"%d %d 0" % (max(pos, 0), captures))

    def done(self, captures):
        if self.path is not None:
            self._write(b"0 %d 1" % captures)

    def _write(self, data):
        if not _report(self.path, data):
            self.path = None


def reduce_report_name(step_num, task_num):
    """The name of a reduce task's report file (step_num from 0, as mrjob counts)."""
    return "reduce-%d-%05d" % (step_num, task_num)


class ReduceProgress:
    """A reduce task's reports: bytes of its input read, of how many, at most every INTERVAL
    seconds (``read total done``)."""

    def __init__(self, step_num, task_num, environ=os.environ):
        folder = environ.get(ENV)
        ok = folder and os.path.isdir(folder)
        self.path = os.path.join(folder, reduce_report_name(step_num, task_num)) if ok else None

    def chunks(self, chunks, total):
        """The buffers of chunks, reporting their bytes read of total (None or 0: not known, no
        report)."""
        if self.path is None or not total:
            yield from chunks
            return
        read, next_report = 0, 0.0
        for chunk in chunks:
            read += len(chunk)
            now = time.monotonic()
            if now >= next_report and self.path is not None:
                next_report = now + INTERVAL
                self._write(b"%d %d 0" % (min(read, total), total))
            yield chunk
        self._write(b"%d %d 1" % (total, total))

    def _write(self, data):
        if self.path is not None and not _report(self.path, data):
            self.path = None


def _report(path, data):
    """Replace a report file with data; False when the folder is gone (the client has ended)."""
    tmp = path + ".%d.tmp" % os.getpid()
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        return False
    return True


def split_length(split, sizes):
    """Bytes of the file a split covers (sizes: path -> file size)."""
    end = split.get("end")
    if end is None:
        end = sizes.get(split["path"], 0)
    return max(0, end - (split.get("start") or 0))
