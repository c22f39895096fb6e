"""The input formats, in one registry: how each is recognised, cut into splits and read.

Line formats (CDX, CDXJ) are cut into byte ranges and read a line at a time; archive formats
(WARC/ARC, ACHE) are read whole by one map task. Each format's module gives its captures
(profiler.model.capture) or skip reasons (str); a new format is a module and one entry here.
"""

import importlib
import zlib
from dataclasses import dataclass

from profiler import extras
from profiler.errors import UserError
from profiler.formats import cdx
from profiler.io.readers import iter_lines


@dataclass(frozen=True)
class Format:
    name: str
    module: str              # line formats: lines(lines, split); archives: iter_captures(path, opener)
    whole_file: bool         # read by one map task, never cut into byte ranges
    describe: str


FORMATS = {f.name: f for f in (
    Format("cdx", "profiler.formats.cdx", False, "CDX index (any legend, or a common layout without one)"),
    Format("cdxj", "profiler.formats.cdxj", False, "CDXJ index (pywb, ipwb, Common Crawl)"),
    Format("warc", "profiler.formats.warc", True, "WARC or ARC file (gzip per record, whole-file gzip, or plain)"),
    Format("ache", "profiler.formats.ache", True, "ACHE crawler FILES output"),
)}
#: readers of WARC files, by name (ARC files and whole-file gzip WARCs are always read with warcio)
WARC_READERS = {"warcio": "profiler.formats.warc", "fastwarc": "profiler.formats.warc_fast"}


def format_of(sample):
    """{'format': name, ...} of a file from its first lines (special lines included), or
    {'format': None, 'reason': ...}."""
    data = [line for line in sample if not line.startswith((b"!", b"@"))]
    if not data:
        return {"format": None, "reason": "no index lines"}
    first = data[0]
    if cdx.is_legend(first):
        try:
            return {"format": "cdx", "fields": cdx.legend_letters(first)}
        except ValueError as e:
            return {"format": None, "reason": str(e)}
    if first.startswith((b"WARC/", b"filedesc:")):
        return {"format": "warc"}
    parts = first.split(b" ", 2)
    if len(parts) == 3 and parts[2].lstrip().startswith(b"{"):
        return {"format": "cdxj"}
    letters = cdx.infer_letters(data)
    if letters is None:
        from profiler.formats import warc
        if warc.looks_like_arc_record(first):
            return {"format": "warc"}
        return {"format": None, "reason": "not a CDX/CDXJ index (unrecognised layout)"}
    return {"format": "cdx", "fields": letters, "inferred": True}


def choose_warc_reader(splits, name):
    """Mark WARC splits to be read with reader name (WARC_READERS); a UserError when it is unknown
    or not installed."""
    if name not in WARC_READERS:
        raise UserError("unknown WARC reader %r (choose from %s)" % (name, ", ".join(WARC_READERS)))
    if name == "warcio":
        return splits
    try:
        import fastwarc.warc  # noqa: F401
    except ImportError:
        raise extras.missing("--warc-reader fastwarc", "fastwarc", "fastwarc")
    return [dict(s, reader=name) if s["format"] == "warc" and not s.get("whole_gzip") else s for s in splits]


def require_detection():
    """A UserError when the detect extra (--detect-language) is not installed."""
    from profiler.model import detect
    if not detect.available():
        raise extras.missing("--detect-language", "detect", "Resiliparse, pycld2")


def detect_languages(splits):
    """Mark the WARC/ARC splits to detect the language of HTML that declares none
    (--detect-language; index lines carry their languages and ignore it); a UserError when
    the detect extra is not installed."""
    require_detection()
    return [dict(s, detect_language=True) if _archive(s) else s for s in splits]


def without_languages(splits):
    """Mark the WARC/ARC splits not to read languages (a policy without lang levels: their
    payloads are then only hashed, and every capture's lang is unk)."""
    return [dict(s, read_languages=False) if _archive(s) else s for s in splits]


def _archive(split):
    return FORMATS[split["format"]].module == "profiler.formats.warc"


def _module(name):
    return importlib.import_module(name)


def captures(split, opener=open):
    """Yield captures or skip-reason strs for one split (profiler.formats.inputs.plan_splits).

    File-level failures end the split with a reason ('unreadable_file', 'truncated_file') after
    the lines read so far.
    """
    fmt = FORMATS[split["format"]]
    if fmt.whole_file:
        options = {"detect_language": True} if split.get("detect_language") else {}
        if split.get("read_languages") is False:
            options["languages"] = False
        if split.get("whole_gzip"):     # one gzip stream over all records: read it as it inflates
            yield "not_chunked"
            yield from _module(WARC_READERS["warcio"]).iter_captures(split["path"], opener, inflate=True, **options)
            return
        module = WARC_READERS[split["reader"]] if split.get("reader") else fmt.module
        yield from _module(module).iter_captures(split["path"], opener, **options)
        return
    counts = {}
    lines = iter_lines(split["path"], split.get("start", 0), split.get("end"), split.get("compression"), opener,
                       counts)
    try:
        yield from _module(fmt.module).captures_of_lines(lines, split)
    except EOFError:
        yield "truncated_file"
    except (OSError, zlib.error, ValueError):
        yield "unreadable_file"
    for reason, n in counts.items():
        for _ in range(n):
            yield reason
