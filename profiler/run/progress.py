"""The progress bar of a profile run on a terminal: the whole run's progress (map, the reduce
steps 1-3, writing the profile), captures and their rate, elapsed and time left, drawn (tqdm)
from the tasks' reports (profiler.job.progress) and the runner's own lines (its steps; a
cluster runner's map and reduce percentages)."""

import contextlib
import logging
import os
import re
import sys
import threading

from profiler.job.progress import ENV, INTERVAL, reduce_report_name, report_name, split_length

_STEP = re.compile(r"Running steps? (\d+)(?:-(\d+))? of (\d+)")     # Spark runs steps 1-3 as one
_REDUCER = re.compile(r"running step (\d+), reducer \d+")             # mrjob's local and inline runners
_PERCENT = re.compile(r"map\s+(\d+)%\s+reduce\s+(\d+)%")

#: the phases of a run and their shares of the bar (a guess at their shares of its time: the
#: reduce steps' share of a run grows as its map does less per capture)
MAP, REDUCE_1, REDUCE_2, REDUCE_3, WRITE = range(5)
WEIGHTS = (35, 25, 20, 10, 10)
LABELS = ("step 1/3 map", "step 1/3 reduce", "step 2/3 reduce", "step 3/3 reduce", "writing profile")
#: the bar counts thousandths of the run
UNITS = 1000
BAR_FORMAT = "{desc:<15} {percentage:3.0f}%|{bar}| {stats} {elapsed}<{remaining}"


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
        m = _REDUCER.search(message)
        if m:
            self.progress.reducing(int(m.group(1)) + 1)
            return
        m = _PERCENT.search(message)
        if m:
            self.progress.cluster_percent(int(m.group(1)), int(m.group(2)))


def _bar_class():
    """tqdm with the run's captures and their rate as a field of the bar's format ({stats})."""
    from tqdm import tqdm

    class Bar(tqdm):
        stats = "0 captures"

        @property
        def format_dict(self):
            d = super().format_dict
            d["stats"] = self.stats
            return d
    return Bar


class RunProgress:
    """The bar of one profile run, drawn on stderr while the job runs (a context manager).

    Its percentage is the run's: the phases (LABELS) in order, each its WEIGHTS share, with the
    progress inside a phase from the tasks' reports (map: bytes of input read; a reduce step:
    bytes of its input read) or a cluster runner's percentages. The rate is the captures read
    per second of the run so far, redrawn as the run goes.
    """

    def __init__(self, splits, sizes, folder, runner, enabled=True, stream=None):
        self.enabled = enabled
        self.folder = folder
        self.runner = runner
        self.stream = stream or sys.stderr
        self.lengths = {report_name(s): split_length(s, sizes) for s in splits}
        self.total = sum(self.lengths.values())
        self.captures = 0
        self.phase = MAP
        self.fraction = 0.0                 # of the phase
        self.span = None                    # (first, last) step a runner runs as one (Spark's 1-3)
        self.cluster = None                 # a cluster runner's own percentages of its step
        self._bar = None
        self._stop = threading.Event()
        self._thread = None
        self._handler = None
        self._lock = threading.Lock()

    def env(self):
        """The task environment that turns reporting on ({} when off)."""
        return {ENV: self.folder} if self.enabled else {}

    def __enter__(self):
        if not self.enabled:
            return self
        os.makedirs(self.folder, exist_ok=True)
        self._bar = _bar_class()(total=UNITS, file=self.stream, desc=LABELS[MAP], leave=True,
                                 mininterval=INTERVAL, bar_format=BAR_FORMAT, **_width(self.stream))
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
                self._read_map_reports()
                self.phase, self.fraction = WRITE, 1.0
                self._show("done")
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
        """The runner starts step number (to last, when it runs several as one) of of."""
        with self._lock:
            last = last or number
            self.span = (number, last) if last > number else None
            if number > 1:
                self._enter(REDUCE_1 + number - 1)
            self._show()

    def reducing(self, step_number):
        """The runner starts a reduce task of step step_number (from 1)."""
        with self._lock:
            self._enter(REDUCE_1 + step_number - 1)
            self._show()

    def cluster_percent(self, map_pct, reduce_pct):
        """A cluster runner's own progress of its current step: step 1's map percentage is the
        map phase's, a reduce percentage the step's reduce phase's."""
        with self._lock:
            if self._bar is None:
                return
            self.cluster = "map %d%% reduce %d%%" % (map_pct, reduce_pct)
            if self.phase == MAP and map_pct < 100:
                self.fraction = max(self.fraction, map_pct / 100.0)
            else:
                self._enter(max(self.phase, REDUCE_1))
                self.fraction = max(self.fraction, reduce_pct / 100.0)
            self._show()

    def writing(self):
        """The job has run: the profile is being written."""
        with self._lock:
            if self._bar is not None:
                self._read_map_reports()
                self._enter(WRITE)
                self._show()

    def _enter(self, phase):
        if phase > self.phase:
            left_map = self.phase == MAP
            self.phase, self.fraction = phase, 0.0
            if left_map:
                self._read_map_reports()        # the captures counted to the end

    def _label(self):
        if self.span and self.phase in (REDUCE_1, REDUCE_2, REDUCE_3):
            return "steps %d-%d reduce" % self.span
        return LABELS[self.phase]

    def _show(self, label=None):
        if self._bar is None:
            return
        done = sum(WEIGHTS[:self.phase]) + WEIGHTS[self.phase] * min(1.0, self.fraction)
        units = int(UNITS * done / sum(WEIGHTS))
        self._bar.n = max(self._bar.n, min(units, UNITS if label == "done" else UNITS - 6))   # 100 % when done
        elapsed = self._bar.format_dict["elapsed"] or 1e-9
        if self.captures or not self.cluster:
            self._bar.stats = "%s captures %s/s" % ("{:,}".format(self.captures), _short(self.captures / elapsed))
        else:                               # a cluster's tasks report nothing to this machine
            self._bar.stats = self.cluster
        self._bar.set_description_str(label or self._label(), refresh=False)
        self._bar.refresh()

    def _watch(self):
        while not self._stop.wait(INTERVAL):
            with self._lock:
                if self.phase == MAP:
                    self._read_map_reports()
                elif self.phase in (REDUCE_1, REDUCE_2, REDUCE_3) and not self.span:
                    self._read_reduce_reports(self.phase - REDUCE_1)
                self._show()

    def _reports(self, names):
        """{name: (three numbers)} of the report files of names (a set, or a predicate)."""
        out = {}
        try:
            listed = os.listdir(self.folder)
        except OSError:
            return out
        for name in listed:
            if not names(name):
                continue
            try:
                with open(os.path.join(self.folder, name), "rb") as f:
                    values = tuple(int(x) for x in f.read().split())
            except (OSError, ValueError):
                continue
            if len(values) == 3:
                out[name] = values
        return out

    def _read_map_reports(self):
        done, captures = 0, 0
        for name, (pos, n, complete) in self._reports(self.lengths.__contains__).items():
            done += self.lengths[name] if complete else min(pos, self.lengths[name])
            captures += n
        self.captures = max(self.captures, captures)
        if self.phase == MAP and self.total:
            self.fraction = max(self.fraction, min(1.0, done / self.total))
            if done >= self.total:
                self._enter(REDUCE_1)

    def _read_reduce_reports(self, step_index):
        prefix = reduce_report_name(step_index, 0)[:-5]
        reports = self._reports(lambda name: name.startswith(prefix) and not name.endswith(".tmp"))
        read = sum(r[0] for r in reports.values())
        total = sum(r[1] for r in reports.values())
        if total:
            self.fraction = max(self.fraction, min(1.0, read / total))


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
