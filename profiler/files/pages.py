"""Split pages read as one file: the pages `archive-profiler split` writes (each with a
``!meta {"page": {...}}`` line linking first, prev, next and last) found from any one page, or
from their folder, and searched as one sorted file.

Every page holds the original's header lines: pages whose header lines differ (of two versions
of the file, mixed) are refused. Only local links are followed: a link is a file name in the page's own folder (no folder part,
no scheme); any other link (a URI under a base URI, a path elsewhere) is refused, so a page
cannot make a lookup read another file of the machine.
"""

import os

from profiler.errors import UserError
from profiler.files.sortedfile import SortedLines, UnsortedFile
from profiler.files.ukvs import read_headers


class PageError(UserError):
    """Pages that cannot be read as one file (a missing page, a link that is not local)."""


def page_meta(headers):
    """The page description of a file's headers, or None."""
    for name, value in headers:
        if name[1:] == "meta" and isinstance(value, dict) and isinstance(value.get("page"), dict):
            return value["page"]
    return None


def require_whole(path, headers, what):
    """PageError when the file is one page of several that `split` wrote: a command that reads a
    profile or map whole (``what``: its name) would answer from a part of it as if it were all
    (a key on another page read as none held). lookup and serve read a page with its others."""
    meta = page_meta(headers)
    total = meta.get("of") if meta is not None else None
    if total == 1 or meta is None:
        return
    raise PageError("%s is page %s of %s of %s: %s reads a whole file; give %s, or merge the pages into one "
                    "first (archive-profiler merge PAGE... -o FILE)" % (
                        path, meta.get("number"), total, meta.get("source"), what, meta.get("source")))


def original_headers(headers):
    """A page's header lines but its page line: the original's, the same on every page of one split."""
    return [(name, value) for name, value in headers
            if not (name[1:] == "meta" and isinstance(value, dict) and isinstance(value.get("page"), dict))]


def _same_split(pages):
    """PageError unless every page holds the header lines of the first (pages of two versions of
    a file, mixed, would be searched as one)."""
    first = original_headers(pages[0][1])
    for path, headers, _, meta in pages[1:]:
        if original_headers(headers) != first:
            raise PageError("%s is page %s of another version of %s: its header lines differ from page 1's "
                            "(pages of two splits mixed): split the file again" % (path, meta.get("number"),
                                                                                   meta.get("source")))


def _local(folder, link, what):
    if not isinstance(link, str) or not link or "/" in link or "\\\\" in link or link in (".", "..") \
            or ":" in link.split("/")[0] and "://" in link:
        raise PageError("%s link %r is not a file beside the page: only local pages are followed" % (what, link))
    return os.path.join(folder, link)


def find_pages(path):
    """The pages of a split file as [(path, headers, data offset, page meta)], in page order, from
    one of its pages or their folder; None when path is a file that is not a page."""
    if os.path.isdir(path):
        return _pages_in_folder(path)
    headers, start = read_headers(path)
    meta = page_meta(headers)
    if meta is None:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    total = meta.get("of")
    if not isinstance(total, int) or total < 1:
        raise PageError("%s: a page without its page count" % path)
    current = _local(folder, meta.get("first"), "first")
    pages, seen = [], set()
    while current is not None:
        real = os.path.realpath(current)
        if real in seen or len(pages) >= total:
            raise PageError("%s: the pages' next links go round in a circle" % path)
        seen.add(real)
        if not os.path.isfile(current):
            raise PageError("page %d of %d is missing: %s" % (len(pages) + 1, total, current))
        h, s = read_headers(current)
        m = page_meta(h)
        if m is None or m.get("of") != total or m.get("source") != meta.get("source") \
                or m.get("number") != len(pages) + 1:
            raise PageError("%s is not page %d of %d of %s" % (current, len(pages) + 1, total, meta.get("source")))
        pages.append((current, h, s, m))
        nxt = m.get("next")
        current = _local(folder, nxt, "next") if nxt is not None else None
    if len(pages) != total:
        raise PageError("%s: %d of the %d pages found" % (path, len(pages), total))
    _same_split(pages)
    return pages


def _pages_in_folder(folder):
    found = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not os.path.isfile(path) or name.startswith("."):
            continue
        try:
            headers, start = read_headers(path)
        except (OSError, ValueError, UserError):
            continue
        meta = page_meta(headers)
        if meta is not None:
            found.setdefault((meta.get("source"), meta.get("of")), []).append((path, headers, start, meta))
    if not found:
        raise PageError("%s holds no split pages" % folder)
    if len(found) > 1:
        raise PageError("%s holds the pages of more than one file (%s): give one page" % (
            folder, ", ".join(sorted(str(s) for s, _ in found))))
    (source, total), pages = found.popitem()
    pages.sort(key=lambda p: p[3].get("number") or 0)
    numbers = [p[3].get("number") for p in pages]
    if numbers != list(range(1, (total or 0) + 1)):
        missing = sorted(set(range(1, (total or 0) + 1)) - set(numbers))
        raise PageError("%s: page(s) %s of %s's %s missing" % (folder, missing[:5], source, total))
    _same_split(pages)
    return pages


class PagedLines:
    """The data lines of pages in page order, searched by prefix like one SortedLines (each page
    bisected on its own; a prefix's lines may run over a page boundary)."""

    def __init__(self, pages, key, mapped=False, ends=None, opener=None, identities=None):
        """``ends``: where each page's lines end (SortedLines), when known; ``opener``: path ->
        the reader a page is read with (SortedLines), instead of opening it; ``identities``: the
        version of each page that was checked (SortedLines)."""
        self.path = pages[0][0]
        self.pages = []
        previous = None
        for (path, _, start, meta), end, identity in zip(pages, ends or [None] * len(pages),
                                                         identities or [None] * len(pages)):
            keys = meta.get("keys") or []
            first, last = (k.encode("utf-8", "surrogateescape") for k in keys) if len(keys) == 2 else (None, None)
            if previous is not None and first is not None and not previous < first:
                raise UnsortedFile("%s: its first key does not sort after the page before's last" % path)
            previous = last if last is not None else previous
            try:
                lines = SortedLines(path, start, key=key, mapped=mapped, end=end,
                                    reader=opener(path) if opener else None, identity=identity)
            except BaseException:
                self.close()
                raise
            self.pages.append((first, last, lines))
        self.seeks = 0

    def forget_block(self):
        """Drop the blocks held from the last reads of every page."""
        for _, _, lines in self.pages:
            lines.forget_block()

    def group(self, prefix, forward=False):
        out = []
        for first, last, lines in self.pages:
            # a page's lines run from its first key's line to its last key's (key, a space, the rest)
            if first is not None and (last + b"\xff" < prefix or (first > prefix and not first.startswith(prefix))):
                continue
            out += lines.group(prefix, forward)
        return out

    def release_pages(self):
        for _, _, lines in self.pages:
            lines.release_pages()

    def close(self):
        for _, _, lines in self.pages:
            lines.close()
