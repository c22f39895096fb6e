"""The progress bar of a profile run on a terminal: input read, captures, rate, elapsed and time
left, drawn (tqdm) from the map tasks' reports (profiler.job.progress) and from the runner's own
step lines (a cluster runner's map and reduce percentages)."""

import contextlib
import logging
import os
import re
import sys
import threading

from profiler.job.progress import ENV, INTERVAL, report_name, split_length

_STEP = re.compile(r"Running steps? (\d+)(?:-(\d+))? of (\d+)")     # Spark runs steps 1-3 as one
_PERCENT = re.compile(r"map\s+(\d+)%\s+reduce\s+(\d+)%")


class _RunnerLines(logging.Handler):
    """Reads mrjob's step lines (and a cluster's map/reduce percentages) for the bar."""

    def __init__(self, progress):
        super().__init__(logging.INFO)
        self.progress = progress

    def emit(self, record):
        try:
            message = record.getMessage()
        except Exception:
            return
        m = _STEP.search(message)
        if m:
            self.progress.step(int(m.group(1)), int(m.group(3)), int(m.group(2) or m.group(1)))
            return
        m = _PERCENT.search(message)
        if m:
            self.progress.cluster_percent(int(m.group(1)), int(m.group(2)))


class RunProgress:
    """The bar of one profile run, drawn on stderr while the job runs (a context manager).

    Phases: 'map' (bytes of input read by the tasks on this machine, captures and their rate),
    'reduce' (the runner's steps 2 and 3) and 'write' (the sorted profile).
    """

    def __init__(self, splits, sizes, folder, runner, enabled=True, stream=None):
        self.enabled = enabled
        self.folder = folder
        self.runner = runner
        self.stream = stream or sys.stderr
        self.lengths = {report_name(s): split_length(s, sizes) for s in splits}
        self.total = sum(self.lengths.values())
        self.captures = 0
        self.phase = "map"
        self._bar = None
        self._stop = threading.Event()
        self._thread = None
        self._handler = None
        self._lock = threading.Lock()
        self._steps = None
        self._map_done = False

    def env(self):
        """The task environment that turns reporting on ({} when off)."""
        return {ENV: self.folder} if self.enabled else {}

    def __enter__(self):
        if not self.enabled:
            return self
        from tqdm import tqdm
        os.makedirs(self.folder, exist_ok=True)
        self._bar = tqdm(total=self.total, unit="B", unit_scale=True, unit_divisor=1000, file=self.stream,
                         desc="map", leave=True, mininterval=INTERVAL, **_width(self.stream),
                         bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                                    "[{elapsed}<{remaining}{postfix}]")
        self._handler = _RunnerLines(self)
        logging.getLogger("mrjob").addHandler(self._handler)
        self._thread = threading.Thread(target=self._watch, name="progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind, value, tb):
        if not self.enabled:
            return False
        self._stop.set()
        self._thread.join()
        logging.getLogger("mrjob").removeHandler(self._handler)
        with self._lock:
            if kind is None:
                if self.phase == "map":
                    self._read_reports()
                self._bar.set_description_str("done", refresh=False)
            self._bar.close()
        return False

    @contextlib.contextmanager
    def logging_through(self):
        """Log lines printed above the bar while it is drawn (each handler keeps its level)."""
        if not self.enabled:
            yield
            return
        swapped = []
        for name in ("archive-profiler", "mrjob"):
            for handler in logging.getLogger(name).handlers:
                if isinstance(handler, logging.StreamHandler) and handler.stream is self.stream:
                    swapped.append(handler)
                    handler.setStream(_AboveBar(self.stream))
        try:
            yield
        finally:
            for handler in swapped:
                handler.setStream(self.stream)

    # ------------------------------------------------------------ updates

    def step(self, number, of, last=None):
        with self._lock:
            self._steps = (number, of, last or number)
            if number > 1 and self.phase == "map":
                self.phase = "reduce"
                self._read_reports(finished=True)
            self.phase = "map" if number == 1 else "reduce"
            self._describe()

    def cluster_percent(self, map_pct, reduce_pct):
        """A cluster runner's own progress: its map percentage is the bar's share of the input."""
        with self._lock:
            if self.phase == "map" and self._bar is not None:
                self._bar.n = self.total * map_pct // 100
                self._map_done = map_pct >= 100
                self._bar.set_postfix_str("map %d%% reduce %d%%" % (map_pct, reduce_pct), refresh=False)
                self._bar.refresh()

    def writing(self):
        with self._lock:
            if self._bar is not None:
                self._read_reports(finished=True)
                self.phase = "write"
                self._describe()

    def _describe(self):
        if self._bar is None:
            return
        names = {"map": "map", "reduce": "reduce", "write": "writing the profile"}
        desc = "sort and reduce" if self.phase == "map" and self._map_done else names[self.phase]
        if self._steps and self.phase != "write":
            first, of, last = self._steps
            steps = "step %d" % first if first == last else "steps %d-%d" % (first, last)
            desc = "%s of %d, %s" % (steps, of, desc)
        self._bar.set_description_str(desc, refresh=False)
        self._bar.refresh()

    def _watch(self):
        while not self._stop.wait(INTERVAL):
            with self._lock:
                if self.phase == "map":
                    self._read_reports()
                self._bar.refresh()

    def _read_reports(self, finished=False):
        done, captures = 0, 0
        try:
            names = os.listdir(self.folder)
        except OSError:
            names = []
        for name in names:
            if name not in self.lengths:
                continue
            try:
                with open(os.path.join(self.folder, name), "rb") as f:
                    pos, n, complete = (int(x) for x in f.read().split())
            except (OSError, ValueError):
                continue
            done += self.lengths[name] if complete else min(pos, self.lengths[name])
            captures += n
        if finished and self.runner in ("inline", "local"):
            done = self.total
        if done < self._bar.n and not finished:
            return
        complete = done >= self.total
        if captures > self.captures or complete and not self._map_done:
            self.captures = max(self.captures, captures)
            elapsed = self._bar.format_dict["elapsed"] or 1e-9
            self._bar.set_postfix_str("%s captures, %s/s" % ("{:,}".format(self.captures),
                                                             _short(self.captures / elapsed)), refresh=False)
        self._bar.n = min(done, self.total)
        if complete and not self._map_done:     # the rate is the map tasks', not the whole run's
            self._map_done = True
            self._describe()


def _width(stream):
    """Follow the terminal's size; one that does not tell it (0 x 0) gets 100 columns and a row
    (tqdm hides a bar below a terminal's last row)."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (OSError, AttributeError, ValueError):
        size = os.terminal_size((0, 0))
    return {"dynamic_ncols": True} if size.columns > 0 and size.lines > 0 else {"ncols": 100, "nrows": 24}


class _AboveBar:
    """A stream whose whole lines go above the bar (tqdm.write), not through it."""

    def __init__(self, stream):
        self.stream = stream
        self.pending = ""

    def write(self, text):
        from tqdm import tqdm
        self.pending += text
        if "\n" in self.pending:
            lines, _, self.pending = self.pending.rpartition("\n")
            tqdm.write(lines, file=self.stream)

    def flush(self):
        self.stream.flush()


def _short(x):
    for unit in ("", "k", "M", "G"):
        if x < 1000:
            return "%.0f%s" % (x, unit) if unit == "" else "%.1f%s" % (x, unit)
        x /= 1000.0
    return "%.1fT" % x


def wanted(quiet, stream=None):
    """A bar only on a terminal and without -q."""
    stream = stream or sys.stderr
    try:
        return not quiet and stream.isatty()
    except (AttributeError, ValueError):
        return False
