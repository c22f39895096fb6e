"""Exporting a profile as JSON-LD (the CDXJ blog's serialisation): one JSON document whose
``@context`` and ``@id`` are the profile's, its ``!meta`` lines under ``meta``, and its lines
nested per key field (SURT, then datetime, mime, status, ... as its ``!keys`` name them) under
``profile``: ``{"com,cnn)/world": {"-": {"-": {"-": {"urim": {...}, ...}}}, "2013": {...}}}``.

The file is sorted, so the lines sharing a key's leading fields are contiguous: the document is
written as the lines are read, keeping only the open fields of the line before (memory bounded
by the number of key fields, whatever the file's size). Each line's value is written as the
profile has it (its numbers exact: profiler.jsonnum); the file is checked whole first
(profiler.files.datalines), so a damaged one is refused before anything is written.
"""

from profiler import jsonnum
from profiler.errors import UserError
from profiler.files import pages
from profiler.files.datalines import DataFile
from profiler.files.output import write_atomic

CONTEXT = "http://oduwsdl.github.io/contexts/archiveprofiles"
FORMATS = ("jsonld",)


def _header(headers, name):
    return [v for n, v in headers if n == name]


def jsonld_chunks(path, skipped=None, counter=None):
    """The JSON-LD document of a checked profile, as byte chunks (a line's worth each);
    ``counter["lines"]`` counts the data lines."""
    found = DataFile(path, "cdxj")
    pages.require_whole(path, found.headers, "export")
    found.check(skipped)
    headers = found.headers
    context = next(iter(_header(headers, "!context")), [CONTEXT])
    ids = _header(headers, "!id")
    uri = ids[0].get("uri") if ids and isinstance(ids[0], dict) else None
    yield b'{"@context":' + jsonnum.dumps(context) + b',"@id":' + jsonnum.dumps(uri) + b","
    yield b'"keys":' + jsonnum.dumps(list(found.layout.fields)) + b","
    yield b'"meta":' + jsonnum.dumps([m for m in _header(headers, "!meta")]) + b","
    yield b'"profile":{'
    again = None if skipped is None else type(skipped)(path)
    open_fields = []            # the key fields whose objects are open, outermost first
    first = [True]              # whether the innermost open object has no member yet
    for record in found.records(again, parse=False):
        fields = record.key.split(b" ")
        same = 0
        while same < len(open_fields) and same < len(fields) - 1 and open_fields[same] == fields[same]:
            same += 1
        out = [b"}" * (len(open_fields) - same)]
        del open_fields[same:]
        del first[same + 1:]
        for field in fields[same:-1]:
            out.append((b"" if first[-1] else b",") + _name(field) + b":{")
            first[-1] = False
            open_fields.append(field)
            first.append(True)
        out.append((b"" if first[-1] else b",") + _name(fields[-1]) + b":" + record.json)
        first[-1] = False
        if counter is not None:
            counter["lines"] = counter.get("lines", 0) + 1
        yield b"".join(out)
    yield b"}" * len(open_fields) + b"}}"
    if again is not None and again.count != skipped.count:
        raise UserError("%s changed while it was read: export it again" % path)


def _name(field):
    return jsonnum.dumps(field.decode("utf-8", "replace"))


def export(path, out_path, fmt="jsonld", skipped=None):
    """Write a profile as ``fmt`` (jsonld) to out_path (atomically; '-' standard output).
    Returns the number of data lines written."""
    if fmt not in FORMATS:
        raise UserError("--format takes %s, not %s" % (" or ".join(FORMATS), fmt))
    counter = {"lines": 0}
    write_atomic(out_path, jsonld_chunks(path, skipped, counter))
    return counter["lines"]
