"""Splitting a sorted profile or map into pages of at most N data lines that link to each other.

Each page is a complete file: the original's header lines plus one
``!meta {"page":{"number":2,"of":5,"lines":N,"keys":[first key, last key],"first":...,"prev":...,
"next":...,"last":...,"source":...}}`` line (links are the other pages' file names, or URIs
under ``base_uri``), then its slice of the data lines, unchanged. Concatenating the pages' data
lines gives back the original's. Two streaming passes: one counts the lines and checks the order,
one writes; the pages are written into a temporary folder and renamed into place together.
"""

import os
import shutil
import tempfile

from profiler import jsonnum
from profiler.errors import UserError
from profiler.files import layout as layouts, outfiles, ukvs
from profiler.files.output import copy_atomic
from profiler.files.profilefile import is_header, sniff_kind


class SplitError(UserError):
    """A file that cannot be split (unsorted, missing, bad page size)."""


def line_key(line, kind, nkeys=None):
    """The sort key of a data line: the fields before the JSON block (profile) or the frequency (map)."""
    if kind == "cdxj":
        i = line.find(b" {")
        return line[:i] if i > 0 else line.rstrip(b"\r\n")
    return ukvs.parse_record(line, nkeys)[0]


def page_names(prefix, ext, count):
    width = max(5, len(str(count)))
    return ["%s-%0*d%s" % (prefix, width, i, ext) for i in range(1, count + 1)]


def _scan(path, kind, nkeys, max_lines):
    """Count data lines, check they are sorted; return (header lines, [(first key, last key)] per page)."""
    headers, ranges = [], []
    previous, n = None, 0
    with open(path, "rb") as f:
        for lineno, line in enumerate(f, 1):
            if is_header(line) and n == 0:
                headers.append(line.rstrip(b"\r\n"))
                continue
            try:
                key = line_key(line, kind, nkeys)
            except UserError as e:
                raise SplitError("%s: line %d: %s" % (path, lineno, e))
            if previous is not None and key <= previous:
                raise SplitError("%s is not sorted (line %d); run 'archive-profiler validate %s'"
                                 % (path, lineno, path))
            if n % max_lines == 0:
                ranges.append([key, key])
            ranges[-1][1] = key
            previous = key
            n += 1
    return headers, ranges, n


def split(path, max_lines, prefix=None, base_uri=None):
    """Split path into pages PREFIX-00001.EXT ...; returns the list of page paths."""
    if not os.path.isfile(path):
        raise SplitError("input not found: %s" % path)
    if max_lines < 1:
        raise SplitError("--max-lines must be at least 1")
    kind = sniff_kind(path)
    if kind == "cdxj":
        layouts.of_file(path)       # a !keys that names no profile's key fields: a LayoutError
    stem, ext = os.path.splitext(path)
    prefix = prefix if prefix is not None else stem
    if prefix.endswith(os.sep) or os.path.isdir(prefix):     # a folder: NAME-00001.EXT inside it
        if not os.path.isdir(prefix):
            raise SplitError("output folder does not exist: %s" % prefix)
        prefix = os.path.join(prefix, os.path.basename(stem))
    if prefix == outfiles.STDOUT or os.path.basename(prefix).startswith("-"):
        raise SplitError("split writes files: give a prefix that does not start with '-' (-o PREFIX)")
    folder = os.path.dirname(os.path.abspath(prefix))
    if not os.path.isdir(folder):
        raise SplitError("output folder does not exist: %s" % folder)
    nkeys = ukvs.key_count(ukvs.read_headers(path)[0]) if kind == "ukvs" else None
    headers, ranges, total = _scan(path, kind, nkeys, max_lines)
    count = max(1, len(ranges))
    names = page_names(os.path.basename(prefix), ext, count)
    links = [(base_uri or "") + n for n in names]
    targets = [outfiles.target(os.path.join(folder, name), [path]) for name in names]
    headers_sorted = headers == sorted(headers)
    work = tempfile.mkdtemp(prefix=".split-", dir=folder)
    try:
        with open(path, "rb") as f:
            for _ in headers:
                f.readline()
            for i, name in enumerate(names):
                lines = min(max_lines, total - i * max_lines)
                page = {"number": i + 1, "of": count, "lines": lines,
                        "keys": [k.decode("utf-8", "replace") for k in ranges[i]] if ranges else [],
                        "self": links[i], "first": links[0], "prev": links[i - 1] if i else None,
                        "next": links[i + 1] if i + 1 < count else None, "last": links[-1],
                        "source": os.path.basename(path)}
                meta = b"!meta " + jsonnum.dumps({"page": page})
                head = sorted(headers + [meta]) if headers_sorted else headers + [meta]
                with open(os.path.join(work, name), "wb") as out:
                    for h in head:
                        out.write(h + b"\n")
                    for _ in range(lines):
                        line = f.readline()
                        out.write(line if line.endswith(b"\n") else line + b"\n")
        out_paths = []
        for name, real in zip(names, targets):
            page = os.path.join(work, name)
            os.chmod(page, 0o644)
            if os.path.dirname(os.path.abspath(real)) == os.path.abspath(folder):
                os.replace(page, real)
            else:                               # a link to a file elsewhere: written through
                copy_atomic(page, real)
            out_paths.append(os.path.join(folder, name))
        return out_paths
    finally:
        shutil.rmtree(work, ignore_errors=True)
