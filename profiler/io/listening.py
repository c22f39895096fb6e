"""A listening TCP socket for the HTTP services (serve, explore): a mistake in the host or port
is a one-line UserError before anything listens; and whom an accepted connection counts against
(client_key: the bounds of connections per client)."""

import ipaddress
import socket

from profiler.errors import UserError


def listening_socket(host, port, backlog=128):
    """A socket bound to (host, port) and listening (port 0: a free one); answers are small, so
    TCP_NODELAY sends them at once (accepted sockets inherit it)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:      # UnicodeError: a label the IDNA codec refuses
        raise UserError("cannot listen on %s: %s" % (host, e))
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as e:
        sock.close()
        raise UserError("cannot listen on %s port %d: %s" % (host, port, e.strerror or e))
    if family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.listen(backlog)
    return sock


def client_key(client):
    """Whom a connection counts against: its IPv4 address, or its IPv6 address's /64 (one host
    holds a /64); an IPv4 address mapped into IPv6 is the IPv4 address."""
    host = client[0] if client else ""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return host
