"""The input formats, in one registry: how each is recognised, cut into splits and read.

Each ``Format`` says how it knows a file from its start (``sniff``), whether it is a line format
(cut into byte ranges, read a line at a time) or read whole by one map task, and how its captures
(profiler.model.capture) or skip reasons (str) are read. ``format_of`` asks the formats in
registry order; a new format is a module and one entry here (``register`` adds one at run time:
profiler.plugins).
"""

import re
import zlib
from dataclasses import dataclass
from typing import Callable, Optional

from profiler import extras
from profiler.errors import UserError
from profiler.formats import captures as captures_format, cdx, cdxj, cdxserver, crawllog, members, owbcdxj
from profiler.io.readers import iter_lines
from profiler.model import capture as capture_model


class Sample:
    """What recognition reads of a file: its first bytes as stored (``head``), its compression,
    its path (None for a remote file), and its first non-blank lines decompressed, special lines
    included (``lines``; read when first asked for, by ``read_lines``)."""

    def __init__(self, lines=None, head=b"", path=None, compression=None, read_lines=None):
        self.head, self.path, self.compression = head, path, compression
        self._lines, self._read_lines = lines, read_lines
        self.error = None           # why the lines could not all be read

    @property
    def lines(self):
        if self._lines is None:
            self._lines = []
            try:
                for line in self._read_lines():
                    self._lines.append(line)
            except (OSError, EOFError, ValueError, zlib.error) as e:
                self.error = e
        return self._lines

    @property
    def data(self):
        """The lines that are not special (starting '!' or '@')."""
        return [line for line in self.lines if not line.startswith((b"!", b"@"))]

    @property
    def first(self):
        """The first data line, or None."""
        data = self.data
        return data[0] if data else None


@dataclass(frozen=True)
class Format:
    name: str
    title: str                 # what a person calls a file of it ("CDX index"), for messages
    describe: str              # its variants, for docs and help
    lines: bool                # a line format: cut into byte ranges, read a line at a time
    sniff: Callable[[Sample], Optional[dict]]   # what its file's start says ({}, or {'fields': ...}), or None
    read: Callable             # line formats: read(lines, split); others: read(path, opener, **options)
    payloads: bool = False     # its reader reads payloads: takes detect_language= and languages=
    internal: bool = False     # written by archive-profiler itself (not listed to people)


def _warc_read(path, opener=open, **options):
    from profiler.formats import warc
    return warc.iter_captures(path, opener, **options)


def _fastwarc_read(path, opener=open, **options):
    from profiler.formats import warc_fast
    return warc_fast.iter_captures(path, opener, **options)


def _ache_read(path, opener=open):
    from profiler.formats import ache
    return ache.iter_captures(path, opener)


def _wacz_read(path, opener=open, **options):
    from profiler.formats import wacz
    return wacz.iter_captures(path, opener, **options)


def _sniff_wacz(sample):
    """A ZIP file (its local header first) that is a WACZ; any other ZIP file: a reason."""
    if not sample.head.startswith(b"PK\x03\x04") or sample.path is None:
        return None
    from profiler.formats import wacz
    return wacz.sniff(sample.path)


def _whole_gzip(sample):
    """{'whole_gzip': True} for a gzip WARC/ARC that is one gzip stream (read sequentially as it
    inflates: profiler.job.mapside), else {}."""
    if sample.compression == "gzip" and sample.path is not None:
        from profiler.formats import warc
        if warc.gzip_problem(sample.path):
            return {"whole_gzip": True}
    return {}


def _sniff_ache(sample):
    """ACHE's FILES output: a zlib stream (no compression of its own) whose first line is a page."""
    from profiler.formats import ache
    if sample.compression is None and sample.path is not None and ache.is_zlib(sample.head) \
            and ache.sniff(sample.path):
        return {"compression": "deflate"}
    return None


def _sniff_warc(sample):
    first = sample.first
    return _whole_gzip(sample) if first is not None and members.starts_warc_record(first) else None


def _sniff_arc(sample):
    """An ARC file: its filedesc record, or (a part of one) an ARC v1 record header in lines that
    are no CDX layout's (a 7-field CDX line with a port in its SURT looks like one)."""
    first = sample.first
    if first is None:
        return None
    fields = first.replace(b"\t", b" ").split(b" ")       # fields parted by tabs too
    if first.startswith(b"filedesc:") and (not _index_line(fields) or _arc_field_line(sample.lines)):
        return _whole_gzip(sample)
    if len(fields) < 5 or not fields[-1].isdigit():
        return None     # no ARC header (warc.looks_like_arc_record asks this first): warcio not imported
    from profiler.formats import warc
    if warc.looks_like_arc_record(first) and cdx.infer_letters(sample.data) is None:
        return _whole_gzip(sample)
    return None


#: the start of the line in an ARC file's filedesc record that names its record header's fields
#: (version 1 and 2 alike)
ARC_FIELD_LINE = b"URL IP-address Archive-date Content-type"


def _arc_field_line(lines):
    """Whether the lines after the first hold an ARC filedesc record's line of field names: an
    ARC file whose first line a damaged gzip member garbled into more fields, never an index."""
    return any(line.startswith(ARC_FIELD_LINE) for line in lines[1:4])


def _index_line(fields):
    """Whether a line starting 'filedesc:' is an index's entry of an ARC file's filedesc record
    (a CDXJ line: its third token a JSON object; a CDX line: seven fields or more, its second a
    timestamp), not the record's own header ('filedesc://NAME IP DATE MIME LENGTH', its second
    field an IP address, which a damaged gzip member may inflate into more fields): an index of
    an ARC file whose entries sort after 'filedesc:' starts with it."""
    return (len(fields) >= 7 and fields[1].isdigit()) or (len(fields) >= 3 and fields[2].lstrip().startswith(b"{"))


def _sniff_cdxj(sample):
    first = sample.first
    if first is None or cdx.is_legend(first):
        return None
    parts = first.split(b" ", 2)
    if len(parts) >= 2 and parts[-1].lstrip().startswith(b"{") and cdxj.zipnum_index(sample.lines):
        return {"format": None, "reason": cdxj.ZIPNUM_INDEX}      # also 'KEY {JSON}' lines (js-wacz's)
    if len(parts) != 3 or not parts[2].lstrip().startswith(b"{"):
        return None
    return {}


def _sniff_cdx(sample):
    """A legend's layout (a legend that names no timestamp or URL: a reason), else a layout
    inferred from the lines (profiler.formats.cdx.infer_letters)."""
    data = sample.data
    if not data:
        return None
    if cdx.is_legend(data[0]):
        try:
            return {"fields": cdx.legend_letters(data[0])}
        except ValueError as e:
            return {"format": None, "reason": str(e)}
    letters = cdx.infer_letters(data)
    return None if letters is None else {"fields": letters, "inferred": True}


def _entries(*formats):
    return {f.name: f for f in formats}


#: the formats, in the order format_of asks them (a CDX layout is inferred only of lines that
#: are no other format's: an ARC file holds CDX lines in its records)
FORMATS = _entries(
    Format("ache", "ACHE crawl output", "ACHE crawler FILES output", False, _sniff_ache, _ache_read),
    Format("captures", "archive-profiler captures file",
           "captures as archive-profiler stores them for itself (nightly; profiler.formats.captures)",
           True, captures_format.sniff, captures_format.captures_of_lines, internal=True),
    # before WARC and ARC: a ZIP whose first member is a plain ARC file has an ARC header in its first line
    Format("wacz", "WACZ package", "WACZ package (a ZIP of WARC and ARC files under archive/)", False, _sniff_wacz,
           _wacz_read, payloads=True),
    Format("warc", "WARC file", "WARC file (gzip per record, whole-file gzip, or plain)", False, _sniff_warc,
           _warc_read, payloads=True),
    Format("arc", "ARC file", "ARC file (gzip per record, whole-file gzip, or plain)", False, _sniff_arc,
           _warc_read, payloads=True),
    Format("crawllog", "Heritrix crawl log", "Heritrix crawl.log (space-padded fields, hop paths; Heritrix 1 and 3, warcprox)",
           True, crawllog.sniff, crawllog.captures_of_lines),
    Format("cdxserver", "CDX server's JSON answer", "a CDX server's JSON answers (pywb and Common Crawl output=json lines; "
           "the Wayback CDX API's output=json array)", True, cdxserver.sniff, cdxserver.captures_of_lines),
    Format("owbcdxj", "OpenWayback CDXJ index", "OpenWayback CDXJ 1.x index ('!OpenWayback-CDXJ 1.0' header; "
           "'SURT W3C-DATE RECORD-TYPE {JSON}' lines)", True, owbcdxj.sniff, owbcdxj.captures_of_lines),
    Format("cdxj", "CDXJ index", "CDXJ index (pywb, ipwb, Common Crawl)", True, _sniff_cdxj, cdxj.captures_of_lines),
    Format("cdx", "CDX index", "CDX index (any legend, or a common layout without one)", True, _sniff_cdx,
           cdx.captures_of_lines),
)
#: readers of WARC files, by name (ARC files and whole-file gzip WARCs are always read with warcio)
WARC_READERS = {"warcio": _warc_read, "fastwarc": _fastwarc_read}


def register(fmt, before=None):
    """Add a format (a plugin's: profiler.plugins), asked after the others, or just before the
    one named ``before``."""
    global FORMATS
    if fmt.name in FORMATS:
        raise ValueError("format %r: not a new name" % fmt.name)
    entries = list(FORMATS.values())
    at = [f.name for f in entries].index(before) if before is not None else len(entries)
    FORMATS = _entries(*entries[:at], fmt, *entries[at:])
    return fmt


#: capture fields a WARC or ARC record gives from one of its WARC headers, {field: (header name,
#: value_of)}: value_of(the header's value, a str, or None without one, an ARC record's too) -> the
#: field's value (profiler.formats.warc.capture_of; warc_header adds one, http_header one of HTTP_HEADERS)
WARC_HEADERS = {}
#: capture fields a WARC or ARC record gives from one of its HTTP response headers (the block's
#: HTTP head: Server, Via, ...), {field: (header name, value_of)}: value_of(the header's value, a
#: str, or None without one or without an HTTP head: a resource record, a revisit without one)
HTTP_HEADERS = {}


def warc_header(field, header, value_of):
    """Have every WARC/ARC capture's field, one a plugin adds (profiler.model.capture.add_field),
    read from the record's WARC header ``header`` by value_of (other formats give the field's
    default); a ValueError when it is no such field or is already read, or the header has no name."""
    WARC_HEADERS[field] = _header_read(field, header, value_of, "WARC")


def http_header(field, header, value_of):
    """As warc_header, from the HTTP response header ``header`` of the record's block."""
    HTTP_HEADERS[field] = _header_read(field, header, value_of, "HTTP")


def index_field(field, name, value_of):
    """As warc_header, from the JSON field ``name`` of an index line's object (a CDXJ's, an
    OpenWayback CDXJ's, a CDX server's answer): Common Crawl's ``charset`` say; value_of gets its value as text (a number's or other
    JSON's as written), or None when the entry has none."""
    cdxj.PLUGIN_FIELDS[field] = _header_read(field, name, value_of, "JSON")


def _header_read(field, header, value_of, kind):
    if field not in capture_model.Capture._fields or field in capture_model.REQUIRED or \
            field in capture_model.DEFAULTS or field in WARC_HEADERS or field in HTTP_HEADERS or \
            field in cdxj.PLUGIN_FIELDS:
        raise ValueError("capture field %r: not one a plugin added (profiler.model.capture.add_field), "
                         "or already read from a header or index field" % (field,))
    if not isinstance(header, str) or not header.strip() or not callable(value_of):
        raise ValueError("capture field %r: a %s name and a function of its value are needed" % (field, kind))
    return header, value_of


def listing(formats=None, conjunction="or"):
    """The formats people give, as words: 'a CDX index, a CDXJ index, ... or ACHE crawl output'."""
    titles = [f.title for f in (formats or FORMATS.values()) if not f.internal]
    titles = [t if t.endswith("output") else ("an " if t[0] in "AEIOU" else "a ") + t for t in titles]
    return titles[0] if len(titles) == 1 else "%s %s %s" % (", ".join(titles[:-1]), conjunction, titles[-1])


def format_of(sample):
    """{'format': name, ...} of a file from a Sample (or a list of its first lines, special lines
    included): what the first format of the registry that knows it says; or {'format': None,
    'reason': ...}."""
    if not isinstance(sample, Sample):
        sample = Sample(list(sample))
    ours = _written_here(sample.lines)
    if ours is None and _headerless_map(sample.data) == "sure":
        ours = HEADERLESS_MAP
    if ours is not None:
        return {"format": None, "reason": ours}
    for fmt in FORMATS.values():
        found = fmt.sniff(sample)
        if found is not None:
            return dict({"format": fmt.name}, **found)
    if not sample.lines and sample.error is not None:
        return {"format": None, "reason": "unreadable: %s" % sample.error}
    if not sample.data:
        return {"format": None, "reason": "no index lines"}
    if _headerless_map(sample.data) is not None:
        return {"format": None, "reason": HEADERLESS_MAP}
    return {"format": None, "reason": "not %s (unrecognised layout)" % listing()}


HEADERLESS_MAP = ("a MementoMap (UKVS) without header lines (its lines are KEY FREQUENCY), not an index or crawl "
                  "file: read it with 'archive-profiler lookup', or combine maps with 'archive-profiler merge'")


def _headerless_map(data):
    """Whether data lines are a UKVS map's without its header lines (as the MementoMap paper
    prints one): None if not; 'sure' when a frequency has its '/' (no index line has one there),
    else 'maybe' (a line 'KEY 20130101000000 {...}' is also a CDXJ index's)."""
    found = [_MAP_LINE.match(line.rstrip(b"\r")) for line in data]
    if not found or not all(found):
        return None
    return "sure" if any(m.group(1) or m.group(2) for m in found) else "maybe"


#: a UKVS/MementoMap data line (spec section 5): a SURT, maybe a datetime, a frequency, maybe a block
_MAP_COUNT = rb"(?:0|[1-9][0-9]*)[+~-]?"
_MAP_LINE = re.compile(rb"\A[^ \t{]+(?:[ \t]+[0-9:]+)?[ \t]+(?:%s(/(?:%s)?)?|(/)(?:%s)?)(?:[ \t]+\{.*\})?\Z"
                       % (_MAP_COUNT, _MAP_COUNT, _MAP_COUNT))


#: the !context of the files archive-profiler writes, and what to call them when given to profile
WRITTEN_HERE = ((b"/contexts/archiveprofiles", "an archive profile"), (b"/contexts/ukvs", "a MementoMap (UKVS)"))


def _written_here(lines):
    """Why a profile or a map (its '!context' line among its first lines) is no input to profile,
    or None: a map's lines were taken for a CDX index (an empty profile, exit 0)."""
    for line in lines:
        if not line.startswith(b"!"):
            return None
        if line.startswith(b"!context"):
            for context, what in WRITTEN_HERE:
                if context in line:
                    return ("%s, not an index or crawl file: profile the captures it was made from, or "
                            "combine profiles with 'archive-profiler merge'" % what)
    return None


def line_formats():
    """The names of the line formats (cut into byte ranges)."""
    return tuple(name for name, f in FORMATS.items() if f.lines)


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
    """Mark the splits of formats that read payloads (WARC, ARC) to detect the language of HTML
    that declares none (--detect-language; index lines carry their languages and ignore it); a
    UserError when the detect extra is not installed."""
    require_detection()
    return [dict(s, detect_language=True) if FORMATS[s["format"]].payloads else s for s in splits]


def with_depths(splits):
    """Mark the splits of formats that read payloads to read Heritrix metadata records' hop paths
    (a policy with the depth criterion; profiler.formats.hops)."""
    return [dict(s, read_depths=True) if FORMATS[s["format"]].payloads else s for s in splits]


def without_languages(splits):
    """Mark the splits of formats that read payloads not to read languages (a policy without lang
    levels: their payloads are then only hashed, and every capture's lang is unk)."""
    return [dict(s, read_languages=False) if FORMATS[s["format"]].payloads else s for s in splits]


def captures(split, opener=open):
    """Yield captures or skip-reason strs for one split (profiler.formats.inputs.plan_splits).

    File-level failures end the split with a reason ('unreadable_file', 'truncated_file') after
    the lines read so far.
    """
    fmt = FORMATS[split["format"]]
    if not fmt.lines and split.get("collection") is not None:
        # a file read whole is of one collection, named in the client (profiler.model.collection)
        label = split["collection"].get("label") or capture_model.DEFAULTS["collection"]
        for found in _whole_file_captures(fmt, split, opener):
            yield found if found.__class__ is str else found._replace(collection=label)
        return
    yield from _whole_file_captures(fmt, split, opener) if not fmt.lines else _line_captures(fmt, split, opener)


def _whole_file_captures(fmt, split, opener):
    """Captures or skip reasons of a file one task reads whole (WARC, ARC, ACHE)."""
    options = {}
    if fmt.payloads:
        if split.get("detect_language"):
            options["detect_language"] = True
        if split.get("read_languages") is False:
            options["languages"] = False
        if split.get("read_depths"):
            options["depths"] = True
    if split.get("whole_gzip"):     # one gzip stream over all records: read it as it inflates
        yield "not_chunked"
        yield from fmt.read(split["path"], opener, inflate=True, **options)
        return
    read = WARC_READERS[split["reader"]] if split.get("reader") else fmt.read
    yield from read(split["path"], opener, **options)


def _line_captures(fmt, split, opener):
    """Captures or skip reasons of a split of a line format's file."""
    counts = {}
    lines = iter_lines(split["path"], split.get("start", 0), split.get("end"), split.get("compression"), opener,
                       counts)
    try:
        yield from fmt.read(lines, split)
    except EOFError:
        yield "truncated_file"
    except (OSError, zlib.error, ValueError):
        yield "unreadable_file"
    for reason, n in counts.items():
        for _ in range(n):
            yield reason
