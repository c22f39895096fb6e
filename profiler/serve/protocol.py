"""uvicorn's httptools protocol with a bound on a request's head (the request line and headers:
httptools itself keeps reading a header however long it is)."""

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: bytes of a request's head read at most; more: 431, and the connection closed
MAX_HEAD = 64 * 1024


class BoundedHttpTools(HttpToolsProtocol):
    """HttpToolsProtocol answering 431 to a request whose head passes MAX_HEAD bytes."""

    _head = 0
    _in_body = False

    def data_received(self, data):
        if not self._in_body:
            self._head += len(data)
            if self._head > MAX_HEAD:
                body = b'{"error":"request head longer than %d bytes"}' % MAX_HEAD
                self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                                     b"content-type: application/json\r\ncontent-length: %d\r\n"
                                     b"connection: close\r\n\r\n%s" % (len(body), body))
                self.transport.close()
                return
        super().data_received(data)

    def on_headers_complete(self):
        self._in_body = True
        super().on_headers_complete()

    def on_message_complete(self):
        self._head, self._in_body = 0, False
        super().on_message_complete()
