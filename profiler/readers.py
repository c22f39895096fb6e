"""Read lines of an index file, or of one byte range of it; plain, gzip or bz2."""

import bz2
import zlib

GZIP_MAGIC = b"\x1f\x8b"
BZ2_MAGIC = b"BZh"
_CHUNK = 1 << 20


def compression_of(head):
    """'gzip', 'bz2' or None from the first bytes of a file."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(BZ2_MAGIC):
        return "bz2"
    return None


def iter_gzip_members(fileobj):
    """Yield the decompressed bytes of a (multi-member) gzip file, one member at a time.

    Members are kept apart: a member that does not end with a newline (ZipNum blocks)
    gets one, so lines of two members are never joined. A truncated last member
    raises EOFError after its complete lines.
    """
    data = fileobj.read(_CHUNK)
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        last = b"\n"
        while True:
            out = d.decompress(data)
            if out:
                last = out[-1:]
                yield out
            if d.eof:
                data = d.unused_data
                break
            data = fileobj.read(_CHUNK)
            if not data:
                raise EOFError("truncated gzip member")
        if last != b"\n":
            yield b"\n"
        if not data:
            data = fileobj.read(_CHUNK)


def lines_of_chunks(chunks):
    """The lines (without newlines) of a stream of byte chunks."""
    rest = b""
    for chunk in chunks:
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        yield from lines
    if rest:
        yield rest


def iter_lines(path, start=0, end=None, compression=None, opener=open):
    """Yield lines (without line ending) whose first byte lies in [start, end).

    Hadoop LineRecordReader semantics: a range that does not start at 0 skips the
    partial line it starts in; the line that crosses ``end`` belongs to this range.
    Compressed files are always read whole. (The lines of iter_chunks' buffers.)
    """
    for chunk in iter_chunks(path, start, end, compression, opener):
        lines = chunk.split(b"\n")
        if not lines[-1]:               # the chunk ended with a newline
            lines.pop()
        for line in lines:
            yield line[:-1] if line.endswith(b"\r") else line


def iter_chunks(path, start=0, end=None, compression=None, opener=open):
    """Like iter_lines, but yields buffers of whole lines ('\n'-separated, the last one maybe
    without '\n'): the same lines, for parsers that take many at once."""
    with opener(path, "rb") as f:
        if compression == "gzip":
            yield from whole_lines(iter_gzip_members(f))
        elif compression == "bz2":
            yield from whole_lines(_read_all(bz2.BZ2File(f)))
        else:
            yield from _ranged_chunks(f, start, end)


def whole_lines(chunks):
    """Buffers of whole lines of a stream of byte chunks (the last one maybe without '\\n')."""
    rest = b""
    for chunk in chunks:
        buf = rest + chunk
        cut = buf.rfind(b"\n") + 1
        rest = buf[cut:]
        if cut:
            yield buf[:cut]
    if rest:
        yield rest


def _ranged_chunks(f, start, end):
    """Buffers of whole lines of a plain file: the lines whose first byte lies in [start, end)."""
    if start > 0:
        f.seek(start - 1)
        pos = start - 1 + len(f.readline())
    else:
        pos = 0
    rest = b""
    while end is None or pos < end:
        chunk = f.read(_CHUNK)
        if not chunk:
            if rest:
                yield rest
            return
        buf = rest + chunk
        cut = buf.rfind(b"\n") + 1          # buf[:cut]: whole lines, starting at pos
        rest = buf[cut:]
        if end is None or pos + cut <= end:
            pos += cut
            if cut:
                yield buf[:cut]
            continue
        # the line that starts before end and ends after it is the last one
        last = buf.find(b"\n", end - pos - 1) + 1
        yield buf[:last]
        return
    # the last line begins before end: ours even when it crosses end
    if rest and pos < end:
        yield rest


def _read_all(f):
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            return
        yield chunk
