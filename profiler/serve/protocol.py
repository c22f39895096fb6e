"""uvicorn's httptools protocol with bounds on what a client can hold: a request's head (its
bytes, and the time from its first byte to its end), the time a connection may wait idle or
leave a response unread, the requests read ahead on one connection, the connections a worker
holds from one client and in all, and the bytes of answers its clients leave unread in all (each
connection holds the answer it is writing: a thousand clients not reading a large answer held a
thousand of them for the write timeout).

A worker at its limit of connections, from one client or in all, makes room by closing the
connection idle longest (of that client, or of the client holding the most): a flood of idle
or slow connections takes turns with itself and leaves the other clients answered. Only when
every connection is busy is a new one refused (503, closed). uvicorn's own limit
(limit_concurrency) would refuse every client once the flood holds the limit.
"""

import time

import httptools
import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from profiler.io.listening import client_key
from profiler.serve.limits import Limits
from profiler.serve.web import WRITABLE

#: bytes of a request's head read at most (give or take SLICE); more: 431, and the connection closed
MAX_HEAD = 64 * 1024
#: bytes parsed at a time: the head's bound is checked, and the requests read ahead counted, after each
SLICE = 16 * 1024


class Guard:
    """The connections of one worker, by client, and the sweep that times them out (every
    quarter of the shortest timeout, at most every second)."""

    def __init__(self, loop):
        self.loop = loop
        self.clients = {}          # client key -> {connection: None}
        self.count = 0
        self.unread = {}           # connections whose writing is paused -> None, the first paused first
        self.evicted = self.refused = self.timed_out = self.unread_dropped = 0
        self._schedule()

    def _schedule(self):
        every = min(1.0, Limits.idle_timeout / 4, Limits.head_timeout / 4, Limits.write_timeout / 4)
        self.loop.call_later(max(every, 0.05), self.sweep)

    def admit(self, conn):
        """Count a new connection, making room when a limit is reached; False: refuse it."""
        mine = self.clients.get(conn.client_key)
        if mine is not None and len(mine) >= Limits.max_client_connections:
            if not self._evict(mine):
                return False
        if self.count >= Limits.max_connections:
            fullest = max(self.clients.values(), key=len, default={})
            if not self._evict(fullest) and not any(self._evict(c) for c in list(self.clients.values())):
                return False
        self.clients.setdefault(conn.client_key, {})[conn] = None
        self.count += 1
        return True

    def _evict(self, conns):
        """Close the connection of conns that has waited longest without a request in hand."""
        waiting = [c for c in conns if not c.busy()]
        if not waiting:
            return False
        victim = min(waiting, key=lambda c: c.since)
        self.evicted += 1
        victim.drop()
        return True

    def paused(self, conn):
        """conn's client left its answer unread: while the answers left unread pass
        Limits.max_unread, drop the connection (other than conn) that has left its answer
        unread longest."""
        self.unread[conn] = None
        total = sum(c.unread_bytes() for c in self.unread)
        for victim in list(self.unread):
            if total <= Limits.max_unread:
                break
            if victim is not conn:
                total -= victim.unread_bytes()
                del self.unread[victim]
                self.unread_dropped += 1
                victim.transport.abort()

    def forget(self, conn):
        self.unread.pop(conn, None)
        mine = self.clients.get(conn.client_key)
        if mine is not None and mine.pop(conn, 0) is None:
            self.count -= 1
            if not mine:
                del self.clients[conn.client_key]

    def sweep(self):
        now = time.monotonic()
        try:
            for conns in list(self.clients.values()):
                for conn in list(conns):
                    if conn.expired(now):
                        self.timed_out += 1
        finally:
            self._schedule()


_guards = {}


def guard_of(loop):
    guard = _guards.get(loop)
    if guard is None:
        guard = _guards[loop] = Guard(loop)
    return guard


class BoundedHttpTools(HttpToolsProtocol):
    """HttpToolsProtocol with the bounds of Limits and MAX_HEAD (see the module's text)."""

    _head = 0                     # bytes read of the head being read (counted by SLICE)
    _in_head = False              # a request's first byte read, its head not yet whole
    _closing = False              # reading stopped: the requests read are answered, then closed
    _write_paused_at = None
    _guard = None
    _cycles = ()                  # the requests read and not yet answered, the one answered first
    _answer_bytes = 0             # the size of the last answer's body written

    def connection_made(self, transport):
        super().connection_made(transport)
        self.client_key = client_key(self.client)
        self.since = time.monotonic()
        guard = guard_of(self.loop)
        if not guard.admit(self):
            guard.refused += 1
            self._answer_and_close(503, "too many connections: try again later")
            return
        self._guard = guard

    def connection_lost(self, exc):
        if self._guard is not None:
            self._guard.forget(self)
            self._guard = None
        # uvicorn tells only the newest request read (self.cycle): the one being answered would
        # write the rest of its answer to the closed transport (uvloop raises: a traceback logged)
        for cycle in self._cycles:
            if not cycle.response_complete:
                cycle.disconnected = True
        super().connection_lost(exc)

    def busy(self):
        """A request in hand: being answered, queued, or its response being written."""
        return bool(self.pipeline) or (self.cycle is not None and not self.cycle.response_complete)

    def drop(self):
        """Close a connection idle or in the middle of a head, to make room."""
        if self._guard is not None:
            self._guard.forget(self)
            self._guard = None
        self.transport.close()

    def expired(self, now):
        """Close the connection when it passed a timeout; True when it did."""
        if self.transport.is_closing():
            return False
        if self.busy():                 # answers owed first; a client not reading them is dropped
            if self._write_paused_at is None or now - self._write_paused_at <= Limits.write_timeout:
                return False
            self.transport.abort()
        elif self._in_head and now - self.since > Limits.head_timeout:
            self._answer_and_close(408, "request head not received in %g s" % Limits.head_timeout)
        elif not self._in_head and now - self.since > Limits.idle_timeout:
            self.transport.close()
        else:
            return False
        return True

    def send_400_response(self, msg):
        """A request the parser refuses: a JSON error like every other answer (uvicorn's is text)."""
        self._answer_and_close(400, "not an HTTP/1.1 request this server reads (its request line or a "
                                    "header cannot be parsed)")

    def _answer_and_close(self, status, message):
        body = orjson.dumps({"error": message})
        reason = {400: b"Bad Request", 408: b"Request Timeout", 431: b"Request Header Fields Too Large",
                  503: b"Service Unavailable"}[status]
        self.transport.write(b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                             b"connection: close\r\n\r\n%s" % (status, reason, len(body), body))
        self.transport.close()

    def _stop_reading(self):
        """Read no more: answer the requests read, the last one with connection: close."""
        self._closing = True
        self.flow.pause_reading()
        if self.pipeline:
            self.pipeline[0][0].keep_alive = False
        elif self.cycle is not None:
            self.cycle.keep_alive = False
        if not self.busy():
            self.transport.close()

    def data_received(self, data):
        if self._closing or self.transport.is_closing():
            return
        self._unset_keepalive_if_required()
        for at in range(0, len(data), SLICE):
            piece = data[at:at + SLICE]
            try:
                self.parser.feed_data(piece)
            except httptools.HttpParserError:
                if self.busy() or self._closing:
                    self._stop_reading()    # answers are owed first, in order: no 400 ahead of them
                else:
                    self.send_400_response("Invalid HTTP request received.")
                return
            except httptools.HttpParserUpgrade:
                self._stop_reading()        # no protocol but HTTP/1.1 is served
                return
            if self._in_head:
                self._head += len(piece)
                if self._head > MAX_HEAD:
                    if self.busy():
                        self._stop_reading()
                    else:
                        self._answer_and_close(431, "request head longer than %d bytes" % MAX_HEAD)
                    return
            if self._closing:
                return

    def on_message_begin(self):
        self._in_head, self._head, self.since = True, 0, time.monotonic()
        super().on_message_begin()

    def on_headers_complete(self):
        self._in_head = False
        if self._closing:
            return
        if len(self.pipeline) >= Limits.max_pipeline:
            self._stop_reading()
            return
        super().on_headers_complete()
        self._cycles = [c for c in self._cycles if not c.response_complete] + [self.cycle]
        self.cycle.send = _sized(self, self.cycle.send)
        self.cycle.scope.setdefault("extensions", {})[WRITABLE] = self.writable
        if any(name == b"transfer-encoding" or name == b"content-length" and value.strip() != b"0"
               for name, value in self.headers):
            self.cycle.keep_alive = False   # a body is never read: the connection closes after the answer

    def on_body(self, body):
        if not self._closing:
            super().on_body(body)

    def on_message_complete(self):
        if not self._closing:
            super().on_message_complete()

    def on_response_complete(self):
        super().on_response_complete()
        if self._closing:
            self.flow.pause_reading()
            if not self.busy() and not self.transport.is_closing():
                self.transport.close()
        elif not self.busy() and not self._in_head:
            self.since = time.monotonic()

    async def writable(self):
        """Return once the client has read the answers before (as far as the transport holds
        them; at once when the connection is lost): the next answer is computed only then."""
        if self.flow.write_paused and not self.transport.is_closing():
            await self.flow.drain()

    def unread_bytes(self):
        """What this connection holds of answers not yet read: the transport's buffer, at least
        the last answer written (uvloop holds an answer's bytes whole until the last is sent)."""
        return max(self.transport.get_write_buffer_size(), self._answer_bytes)

    def pause_writing(self):
        self._write_paused_at = time.monotonic()
        super().pause_writing()
        if self._guard is not None:
            self._guard.paused(self)

    def resume_writing(self):
        self._write_paused_at = None
        if self._guard is not None:
            self._guard.unread.pop(self, None)
        super().resume_writing()


def _sized(conn, send):
    """A cycle's ASGI send, noting the size of each answer's body on its connection."""
    async def sized(message):
        if message.get("type") == "http.response.body":
            conn._answer_bytes = len(message.get("body", b""))
        await send(message)
    return sized
