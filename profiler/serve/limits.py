"""The bounds a worker of the routing service keeps per connection and client (enforced by
profiler.serve.protocol; `serve` sets them from its options, its workers from the server's)."""


class Limits:
    """The bounds of one worker (the defaults; `serve` sets them from its options)."""

    #: seconds a connection may wait for a request's first byte (after connecting or a response)
    idle_timeout = 5.0
    #: seconds from a request's first byte to the end of its head (a slowloris gets 408)
    head_timeout = 10.0
    #: seconds a response may wait for the client to read it
    write_timeout = 30.0
    #: connections a worker holds in all
    max_connections = 1000
    #: connections a worker holds from one client (an IPv4 address, an IPv6 /64)
    max_client_connections = 64
    #: requests read ahead on one connection while one is answered (HTTP pipelining); past it
    #: the connection closes once those are answered, as HTTP/1.1 lets a server do
    max_pipeline = 16
    #: bytes of answers a worker holds for clients that leave them unread (writing paused), in
    #: all; past it the connection that has left its answer unread longest is dropped
    max_unread = 64 << 20
    #: seconds a request's answer may take, waiting for a thread included; past it 503, and its
    #: work stops before the next archive it would ask
    request_timeout = 10.0
    #: threads of a worker computing answers (its event loop only reads requests and writes
    #: answers: a slow answer never stalls the other clients)
    answer_threads = 4

    @classmethod
    def configure(cls, **values):
        for name, value in values.items():
            if value is not None:
                if not hasattr(cls, name):
                    raise ValueError("no such limit: %s" % name)
                setattr(cls, name, type(getattr(cls, name))(value))

    @classmethod
    def as_dict(cls):
        return {name: getattr(cls, name) for name in ("idle_timeout", "head_timeout", "write_timeout",
                                                      "max_connections", "max_client_connections",
                                                      "max_pipeline", "max_unread", "request_timeout",
                                                      "answer_threads")}
