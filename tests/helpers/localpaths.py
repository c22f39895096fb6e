"""The two paths of the local runner: mrjob's (profiler.runtime.localrunner) and the one without
mrjob (profiler.runtime.localjob), which a local run takes when it asks nothing of mrjob."""

from profiler.runtime import localjob
from profiler.runtime.localrunner import LocalRunner

PATHS = ("mrjob", "direct")


def choose(monkeypatch, path):
    """Make local runs from now on take path ('mrjob': even without mrjob options of their own)."""
    if path == "mrjob":
        monkeypatch.setattr(localjob, "usable", lambda *args, **kwargs: False)


def runs(monkeypatch):
    """The LocalRunner and LocalJob objects made from now on, in order (each has digest_filter and
    merged_steps)."""
    made = []
    for cls in (LocalRunner, localjob.LocalJob):
        real = cls.__init__

        def init(self, *args, _real=real, **kwargs):
            _real(self, *args, **kwargs)
            made.append(self)
        monkeypatch.setattr(cls, "__init__", init)
    return made
