"""Splitting a sorted profile or map into pages of at most N data lines that link to each other.

Each page is a complete file: the original's header lines plus one
``!meta {"page":{"number":2,"of":5,"lines":N,"keys":[first key, last key],"first":...,"prev":...,
"next":...,"last":...,"source":...}}`` line (links are the other pages' file names, or URIs
under ``base_uri``), then its slice of the data lines, unchanged. Concatenating the pages' data
lines gives back the original's. Two streaming passes: one counts the lines and checks every one
(profiler.files.datalines), one writes; the pages are written into a temporary folder and renamed
into place together, each keeping the mode of the page it replaces (profiler.files.outfiles).
"""

import os
import shutil

from profiler import jsonnum
from profiler.io.names import display_name
from profiler.errors import UserError
from profiler.files import outfiles, pages
from profiler.files.datalines import DataFile, Skipped, skipped_meta
from profiler.files.output import copy_atomic


#: the folder the pages are written in before they are renamed into place, beside them
WORK_PREFIX = ".split-"


class SplitError(UserError):
    """A file that cannot be split (unsorted, missing, bad page size)."""


def page_names(prefix, ext, count):
    width = max(5, len(str(count)))
    return ["%s-%0*d%s" % (prefix, width, i, ext) for i in range(1, count + 1)]


def _scan(found, max_lines, skipped):
    """[(first key, last key)] per page and the number of data lines, every line checked
    (profiler.files.datalines: damaged or unsorted, the file is refused before a page is written)."""
    ranges, n = [], 0
    for record in found.records(skipped, parse=False):
        if n % max_lines == 0:
            ranges.append([record.key, record.key])
        ranges[-1][1] = record.key
        n += 1
    return ranges, n


def split(path, max_lines, prefix=None, base_uri=None, skipped=None):
    """Split path into pages PREFIX-00001.EXT ...; returns the list of page paths. ``skipped``
    (a profiler.files.datalines.Skipped): damaged lines are left out of the pages and counted,
    in each page's !meta too; otherwise they are refused."""
    if max_lines < 1:
        raise SplitError("--max-lines must be at least 1")
    found = DataFile(path)          # a regular file holding a profile or map, its !keys known
    pages.require_whole(path, found.headers, "split")
    stem, ext = os.path.splitext(path)
    prefix = prefix if prefix is not None else stem
    if prefix.endswith(os.sep) or os.path.isdir(prefix):     # a folder: NAME-00001.EXT inside it
        if not os.path.isdir(prefix):
            raise SplitError("output folder does not exist: %s" % prefix)
        prefix = os.path.join(prefix, os.path.basename(stem))
    for what, text in (("the prefix", prefix), ("--base-uri", base_uri or "")):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise SplitError("%s is not UTF-8 (the pages' links, JSON, hold it): %s" % (what, text))
    if prefix == outfiles.STDOUT or os.path.basename(prefix).startswith("-"):
        raise SplitError("split writes files: give a prefix that does not start with '-' (-o PREFIX)")
    folder = os.path.dirname(os.path.abspath(prefix))
    if os.pardir in os.path.dirname(prefix).split(os.sep):    # 'LINK/..': the folder the system means
        folder = os.path.realpath(os.path.dirname(prefix))
    if not os.path.isdir(folder):
        raise SplitError("output folder does not exist: %s" % folder)
    headers = found.raw_headers
    ranges, total = _scan(found, max_lines, skipped)
    count = max(1, len(ranges))
    names = page_names(os.path.basename(prefix), ext, count)
    links = [(base_uri or "") + n for n in names]
    targets = [outfiles.target(os.path.join(folder, name), [path]) for name in names]
    headers_sorted = headers == sorted(headers)
    again = None if skipped is None else Skipped(path)
    records = found.records(again, parse=False)
    # the work folder is removed through its folder's descriptor: a folder renamed while it is
    # split keeps no work folder of ours (by path it was left there, with the pages written)
    # (recorded with SIGINT, SIGTERM and SIGHUP held: a signal as it is made leaves none behind)
    folder_fd = os.open(folder, outfiles.FOLDER_HANDLE)
    made = []
    try:
        work = outfiles.work_folder(WORK_PREFIX, folder, record=made.append)  # (a killed split's removed first)
        for i, name in enumerate(names):
            lines = min(max_lines, total - i * max_lines)
            page = {"number": i + 1, "of": count, "lines": lines,
                    "keys": [k.decode("utf-8", "replace") for k in ranges[i]] if ranges else [],
                    "self": links[i], "first": links[0], "prev": links[i - 1] if i else None,
                    "next": links[i + 1] if i + 1 < count else None, "last": links[-1],
                    "source": display_name(os.path.basename(path))}
            if skipped is not None and skipped.count:
                page["skipped_lines"] = skipped_meta([skipped])
            meta = b"!meta " + jsonnum.dumps({"page": page})
            head = sorted(headers + [meta]) if headers_sorted else headers + [meta]
            with open(os.path.join(work, name), "wb") as out:
                for h in head:
                    out.write(h + b"\n")
                for _ in range(lines):
                    record = next(records, None)
                    if record is None:
                        raise SplitError("%s changed while it was split: split it again" % path)
                    out.write(record.line + b"\n")
        if next(records, None) is not None:
            raise SplitError("%s changed while it was split: split it again" % path)
        out_paths = []
        for name, real in zip(names, targets):
            page = os.path.join(work, name)
            if os.path.dirname(os.path.abspath(real)) == os.path.abspath(folder):
                with open(page, "rb+") as f:
                    outfiles.keep_mode(f.fileno(), outfiles.replaced(real))
                os.replace(page, real)
            else:                               # a link to a file elsewhere: written through
                copy_atomic(page, real)
            out_paths.append(os.path.join(folder, name))
        return out_paths
    finally:
        for work in made:
            shutil.rmtree(os.path.basename(work), ignore_errors=True, dir_fd=folder_fd)
        os.close(folder_fd)
