"""Seeded synthetic WARC files (tests, benchmarks): synthetic.py's captures as WARC records.

Each capture becomes a response record (HTTP status line, Content-Type, a small text body)
or a revisit of its URI-R's last payload; a share of responses get a request record
before them, and the file starts with a warcinfo record. Bodies are slices of a seeded
text pool chosen by the synthetic digest, so captures that share a digest share their
bytes (and real SHA-1); captures without a digest get no WARC-Payload-Digest header.
Same arguments, same bytes.
"""

import base64
import hashlib
import random
import zlib

from profiler.testing import synthetic

REASONS = {"200": "OK", "301": "Moved Permanently", "302": "Found", "304": "Not Modified",
           "404": "Not Found", "500": "Internal Server Error", "503": "Service Unavailable"}
_WORDS = ("archive web crawl page memento capture index profile record payload digest host "
          "path query news blog image style script library national university").split()


def _iso(ts):
    return "%s-%s-%sT%s:%s:%sZ" % (ts[:4], ts[4:6], ts[6:8], ts[8:10], ts[10:12], ts[12:14])


def _record(rec_type, rng, ts, uri, block, headers=()):
    lines = ["WARC/1.0", "WARC-Type: " + rec_type,
             "WARC-Record-ID: <urn:uuid:%032x>" % rng.getrandbits(128),
             "WARC-Date: " + _iso(ts)]
    if uri:
        lines.append("WARC-Target-URI: " + uri)
    lines.extend(headers)
    lines.append("Content-Length: %d" % len(block))
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + block + b"\r\n\r\n"


def warc_records(n_captures, seed=0, request_share=0.25, max_body=2000, **kw):
    """Yield the bytes of each record (uncompressed) of a synthetic WARC."""
    rng = random.Random(seed * 31 + 7)
    pool = " ".join(rng.choice(_WORDS) for _ in range(60000)).encode("ascii")
    yield _record("warcinfo", rng, "20240101000000", None,
                  b"software: archive-profiler synthetic_warc\r\nformat: WARC File Format 1.0\r\n",
                  ["Content-Type: application/warc-fields"])
    bodies = {}              # synthetic digest -> (body, sha1 base32)
    last = {}                # urlkey -> sha1 of its last 200 payload
    for urlkey, ts, url, mime, status, digest, length in synthetic.generate_captures(n_captures, seed, **kw):
        if mime == "warc/revisit":
            real = last.get(urlkey)
            if real is None:
                continue
            http = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
            yield _record("revisit", rng, ts, url, http, [
                "WARC-Profile: http://netpreserve.org/warc/1.0/revisit/identical-payload-digest",
                "WARC-Payload-Digest: sha1:" + real, "Content-Type: application/http; msgtype=response"])
            continue
        if digest == "-" or digest not in bodies:
            n = min(max_body, max(0, length // 4))
            start = rng.randrange(len(pool) - n)
            body = pool[start:start + n]
            entry = (body, base64.b32encode(hashlib.sha1(body).digest()).decode("ascii"))
            if digest != "-":
                bodies[digest] = entry
        else:
            entry = bodies[digest]
        body, real = entry
        if status == "200":
            last[urlkey] = real
        http = "HTTP/1.1 %s %s\r\n" % (status, REASONS.get(status, "Status"))
        if mime not in ("-", "unk"):
            http += "Content-Type: %s\r\n" % (mime + "; charset=utf-8" if mime == "text/html" else mime)
        http = (http + "Content-Length: %d\r\n\r\n" % len(body)).encode("ascii")
        if rng.random() < request_share:
            yield _record("request", rng, ts, url, b"GET / HTTP/1.1\r\nHost: example\r\n\r\n",
                          ["Content-Type: application/http; msgtype=request"])
        headers = ["Content-Type: application/http; msgtype=response"]
        if digest != "-":
            headers.append("WARC-Payload-Digest: sha1:" + real)
        yield _record("response", rng, ts, url, http + body, headers)


def write_warc(path, n_captures, seed=0, gzip=True, **kw):
    """Write a synthetic WARC (one gzip member per record when gzip); returns the record count."""
    count = 0
    with open(path, "wb") as f:
        for record in warc_records(n_captures, seed, **kw):
            if gzip:
                c = zlib.compressobj(6, zlib.DEFLATED, 31)
                record = c.compress(record) + c.flush()
            f.write(record)
            count += 1
    return count
