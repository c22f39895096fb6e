"""The registries as a test finds them, restored after it: what a plugin adds (a capture field,
a criterion, a format, a WARC or HTTP header or index field read, the plugins loaded) stays inside the test that adds it."""

from profiler import plugins
from profiler.formats import cdxj, registry
from profiler.model import capture, criteria


def keep(monkeypatch):
    """Have monkeypatch restore every registry as it is now."""
    monkeypatch.setattr(capture, "Capture", capture.Capture)
    monkeypatch.setattr(capture, "new", capture.new)
    monkeypatch.setattr(criteria, "CRITERIA", criteria.CRITERIA)
    monkeypatch.setattr(registry, "FORMATS", registry.FORMATS)
    monkeypatch.setattr(registry, "WARC_HEADERS", dict(registry.WARC_HEADERS))
    monkeypatch.setattr(registry, "HTTP_HEADERS", dict(registry.HTTP_HEADERS))
    monkeypatch.setattr(cdxj, "PLUGIN_FIELDS", dict(cdxj.PLUGIN_FIELDS))
    monkeypatch.setattr(plugins, "_loaded", [])
