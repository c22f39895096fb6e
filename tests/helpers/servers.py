"""A test plugin of a criterion an HTTP response header gives, as a site would write one from
docs/architecture.md: ``server``, the first word of a response's ``Server`` header in lower case
(profiler.formats.registry.http_header), two levels: ``product`` (the value, ``nginx/1.18.0``)
and ``name`` (a CATEGORY: ``nginx/*``; a value without a '/' is its own name, ``apache``). Its
``levels_of`` places a field with a '/' that does not end ``/*`` at ``product`` only, so a
value whose CATEGORY is itself though it has a '/' (``/x``: a hostile server's header) would
be written at ``name`` where readers take it for no key of the policy: the map side counts it as
a skip, ``bad_server`` (profiler.model.criteria.is_field).
"""

from profiler.formats import registry
from profiler.model import capture, criteria, normalise


def product(text):
    """'nginx/1.18.0 (Ubuntu)' -> 'nginx/1.18.0'; None or blank -> 'unk'."""
    words = (text or "").split()
    return words[0].lower() if words else normalise.UNKNOWN


def _levels(field):
    if field.endswith("/*"):
        return ("name",)
    return ("product",) if "/" in field else ("product", "name")


SERVER = criteria.Criterion(
    "server", "server", (criteria.Level("product", criteria.IDENTITY), criteria.Level("name", criteria.CATEGORY)),
    ("product",), _levels, ("nginx/1.18.0", "nginx/*"), r"-|[!-~]+",
    "'-', a server product (nginx/1.18.0) or name (nginx/*)", optional=True, example="nginx/1.18.0 or nginx/*")


def write_warc(path, values):
    """A plain WARC of one response per Server header value (bytes), each of its own host
    (h0.example.com, ...)."""
    with open(path, "wb") as f:
        for i, server in enumerate(values):
            body = b"<html>%d</html>" % i
            block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nServer: " + server + b"\r\n\r\n" + body
            f.write(b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://h%d.example.com/\r\n"
                    b"WARC-Date: 2020-01-01T00:00:%02dZ\r\nWARC-Record-ID: <urn:uuid:%d>\r\n"
                    b"Content-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n"
                    % (i, i, i, len(block)) + block + b"\r\n\r\n")


def register():
    capture.add_field("server", normalise.UNKNOWN)
    criteria.register(SERVER)
    registry.http_header("server", "Server", product)


#: a policy of the criterion: both levels at the root, the name alone per registered domain
POLICY = {
    "name": "server",
    "host_depth": 3,
    "registered_domains": True,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "server": ["product", "name"]},
    "emit": {"root": {"datetime": ["any", "year"], "server": ["any", "product", "name"]},
             "tld": {"server": ["any", "product", "name"]}, "suffix": "none", "domain": {"server": ["any", "name"]},
             "subdomain": "none", "host": {"server": ["any", "product", "name"]}, "path": "none"},
}
