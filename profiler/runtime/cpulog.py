"""Where a run's CPU goes, by stage: an opt-in log the benchmarks read (scripts/bench --breakdown).

With ENV naming a file in the environment, every process of a local run appends one line per
stage it ran: ``stage user-seconds system-seconds peak-RSS-KiB``. A task writes its whole
process's use when it ends (its stage is its kind: map, the step's reducers, a task server's
start), the client the CPU of each of its phases as it leaves it, and a reduce task the CPU its
input's merge took apart (``merge`` stages). Lines are appended with one write each, so
processes that end at once do not mix them. Without ENV nothing is measured or written.
"""

import os
import resource
import time

from profiler import contract

ENV = contract.CPU_LOG_ENV


def path(environ=os.environ):
    """The log file of this run, or None when no breakdown is asked for."""
    return environ.get(ENV) or None


def write(stage, user, system, peak_kib=0, environ=os.environ):
    """Append one stage's CPU to the log (nothing when there is none; a log that cannot be
    written is passed over: the run does not depend on it)."""
    target = path(environ)
    if target is None:
        return
    line = ("%s %.6f %.6f %d\n" % (stage.replace(" ", "_"), user, system, peak_kib)).encode("ascii")
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass


def write_process(stage, environ=os.environ):
    """Append this whole process's CPU and peak RSS so far under stage."""
    if path(environ) is None:
        return
    me = resource.getrusage(resource.RUSAGE_SELF)
    write(stage, me.ru_utime, me.ru_stime, me.ru_maxrss, environ)


def write_children(stage, environ=os.environ):
    """Append the CPU of the processes this one has waited for so far under stage."""
    if path(environ) is None:
        return
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    write(stage, kids.ru_utime, kids.ru_stime, kids.ru_maxrss, environ)


class Phases:
    """The client's phases: ``enter(name)`` closes the phase before (its CPU written under its
    name) and opens the next; the first phase is the process's start up to the first enter."""

    def __init__(self, prefix="client", environ=os.environ):
        self.on = path(environ) is not None
        self.prefix, self.environ = prefix, environ
        self.name = "start"             # the interpreter's start and imports up to the first enter
        self.last = _START

    def enter(self, name):
        if not self.on:
            return
        now = resource.getrusage(resource.RUSAGE_SELF)
        write("%s:%s" % (self.prefix, self.name), now.ru_utime - self.last.ru_utime,
              now.ru_stime - self.last.ru_stime, now.ru_maxrss, self.environ)
        self.name, self.last = name, now

    def close(self):
        self.enter("end")


class _Start:
    """The CPU a process has used when it starts."""
    ru_utime = ru_stime = 0.0


_START = _Start()


def timed_chunks(chunks, stage, environ=os.environ):
    """chunks, the CPU of producing them (a merge, a read) written under stage when they end."""
    if path(environ) is None:
        yield from chunks
        return
    spent = 0.0
    iterator = iter(chunks)
    while True:
        started = time.process_time()
        try:
            chunk = next(iterator)
        except StopIteration:
            break
        finally:
            spent += time.process_time() - started
        yield chunk
    write(stage, spent, 0.0, 0, environ)
