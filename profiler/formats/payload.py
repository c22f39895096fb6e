"""The start of an HTTP payload, decoded as it streams by: what a page's language is read from.

``read_start`` gives the payload's first HTML_PREFIX_BYTES after its transfer coding
(chunked) and content coding (gzip, x-gzip, deflate) are undone, as warcio's
``content_stream()`` undoes them, fallbacks included: a body sent as chunked that does not
parse as chunks, or declared compressed that does not inflate, is read as it is. The raw
bytes are handed on as they are read (the digest is computed in the same pass). Decoding
stops at the bound, or after RAW_LIMIT raw bytes that have not given it (a hostile
encoding): memory stays bounded however long the record, and a 64 KiB start never needs
more raw bytes than that in any sane encoding.
"""

import zlib
from typing import NamedTuple

from profiler.model.language import HTML_PREFIX_BYTES

#: raw payload bytes after which decoding gives up (1-byte chunks need 6 raw bytes a byte)
RAW_LIMIT = 64 * HTML_PREFIX_BYTES
#: content codings undone; others (br) are read as stored, as warcio does without brotli
CODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
_BUF = 1 << 16
_SIZE_LINE = 64                   # warcio reads a chunk-size line with readline(64)
_MAX_CHUNK = 2 ** 31              # warcio's sanity bound on a chunk size


class Start(NamedTuple):
    """The decoded start of a payload."""
    data: bytes        # at most the limit
    cut: bool          # the payload may go on past data (the bound, or decoding gave up)
    raw: int           # raw bytes read from the stream


class _Dechunker:
    """Chunked transfer coding undone a piece at a time, with warcio's ChunkedDataReader's
    fallback: a size line that does not parse (the body was not chunked after all, or no
    longer is) and what follows are passed on as they are."""

    def __init__(self):
        self.state, self.line, self.left, self.crlf = "size", b"", 0, b""

    @property
    def done(self):
        return self.state == "done"

    def feed(self, data):
        """Decoded pieces of the next raw bytes."""
        out, pos, n = [], 0, len(data)
        while pos < n:
            state = self.state
            if state == "plain":
                out.append(data[pos:] if pos else data)
                break
            if state == "done":
                break
            if state == "size":
                take = data[pos:pos + _SIZE_LINE - len(self.line)]
                nl = take.find(b"\n")
                if nl >= 0:
                    take = take[:nl + 1]
                self.line += take
                pos += len(take)
                if nl >= 0 or len(self.line) >= _SIZE_LINE:
                    size = _chunk_size(self.line)
                    if size is None:
                        out.append(self.line)
                        self.state = "plain"
                    elif size == 0:
                        self.state, self.crlf = "last", b""
                    else:
                        self.state, self.left, self.crlf = ("data" if size > 0 else "crlf"), size, b""
            elif state == "data":
                piece = data[pos:pos + self.left]
                out.append(piece)
                pos += len(piece)
                self.left -= len(piece)
                if not self.left:
                    self.state = "crlf"
            else:                                    # crlf after a chunk, or after the last one
                take = data[pos:pos + 2 - len(self.crlf)]
                self.crlf += take
                pos += len(take)
                if len(self.crlf) == 2:
                    if self.crlf == b"\r\n":
                        self.state, self.line = ("size" if state == "crlf" else "done"), b""
                    else:                            # a wrong size or trailers: the rest as it is
                        if state == "last":
                            out.append(self.line)
                        self.state = "plain"
        return out

    def end(self):
        """Pieces left when the raw bytes end (a size line cut short is passed on)."""
        return [self.line] if self.state == "size" and self.line else []


def _chunk_size(line):
    """A chunk-size line's size, as warcio reads it, or None when it is not one."""
    if line[-2:] != b"\r\n":
        return None
    try:
        size = int(line[:-2].split(b";", 1)[0], 16)
    except ValueError:
        return None
    return size if size <= _MAX_CHUNK else None


class _Inflater:
    """A content coding undone, as warcio's BufferedReader does: data that does not inflate
    before anything has come out is passed on as it is (deflate tries zlib, then raw deflate);
    an error after that ends the output."""

    def __init__(self, encoding):
        self.wbits = CODINGS[encoding]
        self.d = zlib.decompressobj(self.wbits)
        self.produced = 0
        self.failed = False

    @property
    def finished(self):
        """The compressed stream has ended: no more output will come."""
        return self.d is not None and self.d.eof

    def feed(self, data, most):
        if self.d is None:
            return data
        if self.failed:
            return b""
        try:
            out = self.d.decompress(data, most)
        except zlib.error:
            if self.produced:
                self.failed = True
                return b""
            if self.wbits == zlib.MAX_WBITS:             # deflate without the zlib header
                self.wbits = -zlib.MAX_WBITS
                self.d = zlib.decompressobj(self.wbits)
                return self.feed(data, most)
            self.d = None
            return data
        self.produced += len(out)
        return out


def read_start(stream, header, on_raw=None, limit=HTML_PREFIX_BYTES, raw_limit=RAW_LIMIT):
    """The first limit bytes of a payload after its transfer and content codings (a Start).

    stream: the raw payload (after the HTTP head), read from where it is; header(name): an
    HTTP header's value or None; on_raw(bytes): sees every raw byte read, in order. The
    stream is left where reading stopped: the caller reads the rest.
    """
    dechunk = _Dechunker() if "chunked" in (header("Transfer-Encoding") or "").lower() else None
    encoding = (header("Content-Encoding") or "").strip().lower()
    inflate = _Inflater(encoding) if encoding in CODINGS else None
    out, have, raw, ended = [], 0, 0, False
    while have < limit:
        buf = stream.read(_BUF)
        if buf:
            raw += len(buf)
            if on_raw is not None:
                on_raw(buf)
            pieces = dechunk.feed(buf) if dechunk is not None else (buf,)
        else:
            ended = True
            pieces = dechunk.end() if dechunk is not None else ()
        for piece in pieces:
            if inflate is not None:
                piece = inflate.feed(piece, limit - have)
            if piece:
                piece = piece[:limit - have]
                out.append(piece)
                have += len(piece)
                if have >= limit:
                    break
        if ended or (dechunk is not None and dechunk.done) or (inflate is not None and inflate.finished):
            ended = True
            break
        if (inflate is not None and inflate.failed) or raw >= raw_limit:
            break
    return Start(b"".join(out), not ended or have >= limit, raw)
