"""Read lines of an index file, or of one byte range of it; plain, gzip or bz2."""

import bz2
import zlib

GZIP_MAGIC = b"\x1f\x8b"
BZ2_MAGIC = b"BZh"
#: the first bytes of compressions that are not read, by name: zstd (a frame, or the skippable
#: frame of its dictionary that starts a .warc.zst) and xz
UNREAD_MAGICS = ((b"\x28\xb5\x2f\xfd", "zstd"), (b"\x5d\x2a\x4d\x18", "zstd"), (b"\xfd7zXZ\x00", "xz"))
#: a UTF-8 byte order mark, passed over at the start of a file
BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20
#: bytes of decompressed data taken at a time (bounds a compression bomb's memory)
_OUT = 1 << 20
#: the longest index line read; a longer one is skipped and counted as line_too_long
MAX_LINE = 1 << 20


def compression_of(head):
    """'gzip', 'bz2' or None from the first bytes of a file."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(BZ2_MAGIC):
        return "bz2"
    return None


def unread_compression(head):
    """'zstd' or 'xz' when the first bytes of a file are those of a compression not read, else None."""
    for magic, name in UNREAD_MAGICS:
        if head.startswith(magic):
            return name
    return None


def iter_gzip_members(fileobj):
    """Yield the decompressed bytes of a (multi-member) gzip file, one member at a time, at most
    _OUT bytes at a time (a gzip bomb never inflates at once).

    Members are kept apart: a member that does not end with a newline (ZipNum blocks)
    gets one, so lines of two members are never joined. A truncated last member
    raises EOFError after its complete lines.
    """
    data = fileobj.read(_CHUNK)
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        last = b"\n"
        while True:
            out = d.decompress(data, _OUT)
            data = d.unconsumed_tail
            if not data and not d.eof:
                data = fileobj.read(_CHUNK)
                if not data:
                    out += d.flush()
            if out:
                last = out[-1:]
                yield out
            if d.eof:
                data = d.unused_data
                break
            if not data:
                raise EOFError("truncated gzip member")
        if last != b"\n":
            yield b"\n"
        if not data:
            data = fileobj.read(_CHUNK)


def iter_bz2_streams(fileobj):
    """Yield the decompressed bytes of a (multi-stream) bz2 file, at most _OUT bytes at a time;
    a truncated file raises EOFError after every block it holds whole."""
    data = fileobj.read(_CHUNK)
    if not data:
        return
    d = bz2.BZ2Decompressor()
    while True:
        out = d.decompress(data, _OUT)
        if out:
            yield out
        if d.eof:
            data = d.unused_data or fileobj.read(_CHUNK)
            if not data:
                return
            d = bz2.BZ2Decompressor()
        elif d.needs_input:
            data = fileobj.read(_CHUNK)
            if not data:
                raise EOFError("truncated bz2 stream")
        else:
            data = b""


def lines_of_chunks(chunks):
    """The lines (without newlines) of a stream of byte chunks."""
    rest = b""
    for chunk in chunks:
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        yield from lines
    if rest:
        yield rest


def iter_lines(path, start=0, end=None, compression=None, opener=open, counts=None):
    """Yield lines (without line ending) whose first byte lies in [start, end).

    Hadoop LineRecordReader semantics: a range that does not start at 0 skips the
    partial line it starts in; the line that crosses ``end`` belongs to this range.
    Compressed files are always read whole. (The lines of iter_chunks' buffers.)
    """
    for chunk in iter_chunks(path, start, end, compression, opener, counts):
        lines = chunk.split(b"\n")
        if not lines[-1]:               # the chunk ended with a newline
            lines.pop()
        for line in lines:
            yield line[:-1] if line.endswith(b"\r") else line


def iter_chunks(path, start=0, end=None, compression=None, opener=open, counts=None):
    """Like iter_lines, but yields buffers of whole lines ('\n'-separated, the last one maybe
    without '\n'): the same lines, for parsers that take many at once. A line longer than
    MAX_LINE bytes is left out and counted in counts['line_too_long'] (memory stays bounded)."""
    with opener(path, "rb") as f:
        if compression == "gzip":
            yield from whole_lines(_without_bom(iter_gzip_members(f)), counts)
        elif compression == "bz2":
            yield from whole_lines(_without_bom(iter_bz2_streams(f)), counts)
        else:
            yield from _ranged_chunks(f, start, end, counts)


def _without_bom(chunks):
    """The chunks of a file's bytes without a UTF-8 byte order mark at its start (no part of its
    first line: an editor's, never a key's)."""
    first = True
    for chunk in chunks:
        if first and chunk:
            first = False
            if chunk.startswith(BOM):
                chunk = chunk[len(BOM):]
                if not chunk:
                    continue
        yield chunk


def whole_lines(chunks, counts=None, max_line=None):
    """Buffers of whole lines of a stream of byte chunks (the last one maybe without '\\n').
    A line longer than max_line bytes (MAX_LINE by default) is left out and counted in
    counts['line_too_long'] (chunks are at most max_line bytes: only a line carried over from one
    chunk to the next can be too long, so the rule does not depend on where the chunks are cut)."""
    limit = MAX_LINE if max_line is None else max_line
    rest = b""
    skipping = False            # inside a line too long to keep
    for chunk in chunks:
        if skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                continue
            chunk, skipping = chunk[nl + 1:], False
        if rest:
            nl = chunk.find(b"\n")
            if nl < 0:
                rest += chunk
                if _too_long(len(rest), counts, limit):
                    rest, skipping = b"", True
                continue
            if _too_long(len(rest) + nl, counts, limit):
                rest, chunk = b"", chunk[nl + 1:]
            else:
                chunk = rest + chunk
                rest = b""
        cut = chunk.rfind(b"\n") + 1
        rest = chunk[cut:]
        if cut:
            yield chunk[:cut]
        if _too_long(len(rest), counts, limit):
            rest, skipping = b"", True
    if rest:
        yield rest


def _too_long(size, counts, limit=None):
    """Whether a line of size bytes is longer than limit (MAX_LINE by default): one counted in
    counts['line_too_long'] when it is."""
    if size <= (MAX_LINE if limit is None else limit):
        return False
    _count("line_too_long", counts)
    return True


def _count(reason, counts):
    if counts is not None:
        counts[reason] = counts.get(reason, 0) + 1


def _ranged_chunks(f, start, end, counts=None):
    """Buffers of whole lines of a plain file: the lines whose first byte lies in [start, end);
    a line longer than MAX_LINE is left out and counted (as whole_lines). A file that ends before
    end (it shrank since its splits were planned) is counted in counts['shrunk_file']."""
    first = b""                 # a file's first bytes, read to look for a byte order mark (no seek:
    if start > 0:               # a stream that cannot seek is read from 0)
        f.seek(start - 1)
        pos = start - 1 + _skip_line(f)
    else:
        first = f.read(len(BOM))
        pos, first = (len(BOM), b"") if first == BOM else (0, first)     # a byte order mark: no part of a line
    rest = b""                  # the bytes from pos on not yet given out
    skip_at = None              # inside a line too long to keep: the offset of the next byte read
    while end is None or pos < end:
        chunk, first = (first, b"") if first else (f.read(_CHUNK), b"")
        if not chunk:
            if end is not None and (skip_at if skip_at is not None else pos + len(rest)) < end:
                _count("shrunk_file", counts)       # the file ends before the end planned from its size
            if rest:
                yield rest
            return
        if skip_at is not None:
            nl = chunk.find(b"\n")
            if nl < 0:
                skip_at += len(chunk)
                continue
            pos, chunk, skip_at = skip_at + nl + 1, chunk[nl + 1:], None
            if end is not None and pos >= end:
                return
        if rest:
            nl = chunk.find(b"\n")
            if nl < 0:
                rest += chunk
                if _too_long(len(rest), counts):
                    skip_at, rest = pos + len(rest), b""
                continue
            if _too_long(len(rest) + nl, counts):
                pos, rest, chunk = pos + len(rest) + nl + 1, b"", chunk[nl + 1:]
                if end is not None and pos >= end:
                    return
        buf = rest + chunk if rest else chunk
        cut = buf.rfind(b"\n") + 1          # buf[:cut]: whole lines, starting at pos
        rest = buf[cut:]
        if end is None or pos + cut <= end:
            pos += cut
            if cut:
                yield buf[:cut]
            if _too_long(len(rest), counts):
                skip_at, rest = pos + len(rest), b""
            continue
        # the line that starts before end and ends after it is the last one
        last = buf.find(b"\n", end - pos - 1) + 1
        yield buf[:last]
        return
    # the last line begins before end: ours even when it crosses end
    if rest and pos < end:
        yield rest


def _skip_line(f):
    """Read past the rest of the current line without holding it; the bytes read."""
    n = 0
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            return n
        nl = chunk.find(b"\n")
        if nl >= 0:
            f.seek(nl + 1 - len(chunk), 1)
            return n + nl + 1
        n += len(chunk)
