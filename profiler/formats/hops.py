"""The depth of WARC captures from Heritrix metadata records (spec section 2, ``depth``).

Heritrix writes a response, its request and then a metadata record of the same WARC-Target-URI
(WARC-Concurrent-To the response; ``application/warc-fields``) whose ``hopsFromSeed:`` field is
the capture's hop path (``-`` or empty a seed, else its hop letters; ``N+LETTERS`` past 50 hops).
A seed's record has the label ``seed:`` instead, and no hopsFromSeed (Heritrix 1 and 3 write the
path only when it is not blank): depth 0.
A reader asked for depths turns such a record into a ``HopsNote`` (a skip reason that carries
its URL and depth); ``with_depths`` gives the capture before it, when of the same URL, that
depth, and lets the note on as the plain reason ``metadata_record``.
"""

import re

from profiler.formats.cdx import urlkey
from profiler.formats.crawllog import depth as hop_depth
from profiler.model.normalise import UNKNOWN

#: the bytes of a metadata record read for its hopsFromSeed field
BODY_BYTES = 1 << 16
_FIELD = re.compile(rb"^hopsFromSeed:[ \t]*([^\r\n]*)", re.M)
_SEED = re.compile(rb"^seed:[ \t]*\r?$", re.M)


class HopsNote(str):
    """The reason 'metadata_record', with the urlkey and depth a metadata record gives."""

    def __new__(cls, key, depth):
        note = super().__new__(cls, "metadata_record")
        note.key, note.depth = key, depth
        return note


def note(url, body):
    """The HopsNote of a metadata record of target url (bytes) and body (its first bytes), or the
    plain reason when it names no hop path."""
    m = _FIELD.search(body)
    key = urlkey(None, url) if url else None
    if key is None or (m is None and _SEED.search(body) is None):
        return "metadata_record"
    path = m.group(1).strip() if m is not None else b"-"
    return HopsNote(key, hop_depth(path or b"-"))


def with_depths(found):
    """Captures and reasons of a reader, each capture given the depth of the metadata record of
    its URL that follows it (before the next capture); notes as plain reasons."""
    held = None
    for item in found:
        if item.__class__ is HopsNote:
            if held is not None and held.urlkey == item.key and held.depth == UNKNOWN:
                held = held._replace(depth=item.depth)
            yield "metadata_record"
        elif isinstance(item, str):
            yield item
        else:
            if held is not None:
                yield held
            held = item
    if held is not None:
        yield held
