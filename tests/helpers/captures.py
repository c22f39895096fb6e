"""Captures in tests, by name: a reader's fields compared by name, never by position."""

from profiler.model import capture


def fields(c, *names):
    """The named fields of a capture, as a tuple."""
    return tuple(getattr(c, name) for name in names)


def expected(**values):
    """The capture a reader should give: these fields, every other one its default."""
    return capture.Capture(**values)


def warc_readers():
    """The WARC readers to hold to one another: warcio's, and fastwarc's where it is installed."""
    from profiler.formats import warc
    readers = [warc.iter_captures]
    try:
        import fastwarc  # noqa: F401
        from profiler.formats import warc_fast
        readers.append(warc_fast.iter_captures)
    except ImportError:
        pass
    return readers
