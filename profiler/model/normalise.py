"""Capture field normalisation (spec section 1).

Every function takes the raw bytes of one index field and returns a str, or
``None`` when the value is invalid and the capture must be skipped.
"""

import functools
import re

UNKNOWN = "unk"
#: lengths from here on are bad_length
MAX_LENGTH = 1 << 64
REVISIT_MIME = "warc/revisit"

_UNSAFE = re.compile("[\x00-\x20\x7f\udc80-\udcff]")
#: forms that say no type; and the bare names of the mime class level (criteria.MIME_CLASSES), no
#: media types: a type 'code' would share its key with the class 'code' of other captures
_UNKNOWN_MIMES = {"", "-", "unk", "unknown", "no-type", "none", "html", "image", "media", "document", "code", "other"}

_mime_cache = {}
_status_cache = {}


def key_field(raw):
    """Bytes -> str safe for a key field: white space, control bytes and invalid UTF-8 percent-encoded.

    >>> key_field(b"com,example)/a b")
    'com,example)/a%20b'
    >>> key_field(b"com,example)/caf\\xe9")
    'com,example)/caf%E9'
    >>> key_field(b"{weird}")
    '%7Bweird}'
    """
    text = raw.decode("utf-8", "surrogateescape")
    if _UNSAFE.search(text):
        text = _UNSAFE.sub(_escape, text)
    if text.startswith("{"):                    # a field never starts the value block (spec 4)
        text = "%7B" + text[1:]
    return text


def _escape(match):
    code = ord(match.group())
    return "%%%02X" % (code - 0xDC00 if code >= 0xDC00 else code)


def timestamp(raw):
    """14-digit timestamp, padded to the earliest valid datetime it stands for (spec section
    1); None when invalid. A component holding a given digit must be in range, and the day in its
    month (leap years as the Gregorian calendar has them; a leap second is valid).

    >>> timestamp(b"2013"), timestamp(b"201305"), timestamp(b"20131")
    ('20130101000000', '20130501000000', '20131001000000')
    >>> timestamp(b"20131301000000") is None, timestamp(b"20132") is None, timestamp(b"20130230") is None
    (True, True, True)
    """
    n = len(raw)
    if n < 4 or n > 14 or not raw.isdigit():
        return None
    if n < 14:
        raw = raw + b"0" * (14 - n)
        if n < 6 and raw[4:6] == b"00":         # a month or day wholly or half padded: its first
            raw = raw[:4] + b"01" + raw[6:]     # valid value
        if n < 8 and raw[6:8] == b"00":
            raw = raw[:6] + b"01" + raw[8:]
    if n > 4 and not b"01" <= raw[4:6] <= b"12":
        return None
    if n > 6 and not b"01" <= raw[6:8] <= b"31":
        return None
    if n > 8 and raw[8:10] > b"23":
        return None
    if n > 10 and raw[10:12] > b"59":
        return None
    if n > 12 and raw[12:14] > b"60":
        return None
    if raw[:4] == b"0000" or (n > 6 and int(raw[6:8]) > days_in_month(int(raw[:4]), int(raw[4:6]))):
        return None                             # no year 0, no 30 February: not a datetime
    return raw.decode("ascii")


#: the most digits of a CDXJ timestamp: 14, and a fraction of a second down to nanoseconds
MAX_FRACTION_DIGITS = 23


def fractional_timestamp(raw):
    """timestamp() of a CDX or CDXJ entry's timestamp, whose digits past the fourteenth are a
    fraction of a second, dropped as a WARC-Date's fraction is (ArchiveWeb.page and wabac.js
    index in milliseconds, and pywb and OpenWayback write 17 digits in some indexes); the
    profile keeps 14 digits (spec section 1).

    >>> fractional_timestamp(b"20220916191507333"), fractional_timestamp(b"20221316191507333") is None
    ('20220916191507', True)
    """
    if 14 < len(raw) <= MAX_FRACTION_DIGITS and raw.isdigit():
        raw = raw[:14]
    return timestamp(raw)


_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def days_in_month(year, month):
    """The days of a month of the Gregorian calendar."""
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return _DAYS[month] + leap


def mime(raw):
    """Lower case, parameters and white space stripped, cut at white space within (as the WARC
    and ACHE readers cut a Content-Type, and pywb's indexer); unknown forms -> 'unk'.

    >>> mime(b"Text/HTML; charset=UTF-8"), mime(b" text/html charset=UTF-8")
    ('text/html', 'text/html')
    >>> mime(b"-"), mime(b"/"), mime(b"text/*")
    ('unk', 'unk', 'unk')
    """
    value = _mime_cache.get(raw)
    if value is None:
        words = raw.split(b";", 1)[0].split(None, 1)
        text = key_field(words[0].lower() if words else b"")
        value = UNKNOWN if text in _UNKNOWN_MIMES or not_a_media_type(text) else text
        if len(_mime_cache) < 10000:
            _mime_cache[raw] = value
    return value


def not_a_media_type(text):
    """True for a type no level could tell from another level's key: no top-level type ('/',
    '/html': its category would be itself, a type's spelling) or a wildcard subtype ('text/*',
    '*/*': a category's spelling, whose line counts every text type).

    >>> not_a_media_type("/html"), not_a_media_type("text/*"), not_a_media_type("text/html")
    (True, True, False)
    """
    return text.startswith("/") or text.endswith("/*")


def status(raw):
    """Three-digit HTTP status or 'unk'.

    >>> status(b"200"), status(b"-"), status(b"30x")
    ('200', 'unk', 'unk')
    """
    value = _status_cache.get(raw)
    if value is None:
        value = raw.decode("ascii") if len(raw) == 3 and raw.isdigit() else UNKNOWN
        if len(_status_cache) < 10000:
            _status_cache[raw] = value
    return value


def digest(raw):
    """Algorithm prefix stripped, upper-cased; '-' when unknown.

    >>> digest(b"sha1:b2ltwwpuoyah7uipq7zupq4vmbsvc36a")
    'B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A'
    """
    if not raw or raw == b"-":
        return "-"
    i = raw.find(b":")
    if i >= 0:
        raw = raw[i + 1:]
        if not raw:
            return "-"
    return key_field(raw.upper())


#: the digits of MAX_LENGTH: a length of more is invalid
_LENGTH_DIGITS = len(str(MAX_LENGTH))


def length(raw):
    """Stored record length; '-', missing or invalid -> 0 (second item False when invalid).

    A length of 2**64 or more (no record is that long: a broken field) is invalid, however many
    digits it has (past 20 without leading zeros, never read as an int).

    >>> length(b"1043"), length(b"-"), length(b"x"), length(b"18446744073709551616")
    ((1043, True), (0, True), (0, False), (0, False))
    """
    if raw.isdigit():
        if len(raw) > _LENGTH_DIGITS:
            raw = raw.lstrip(b"0") or b"0"
            if len(raw) > _LENGTH_DIGITS:
                return 0, False
        value = int(raw)
        return (value, True) if value < MAX_LENGTH else (0, False)
    if not raw or raw == b"-":
        return 0, True
    return 0, False


@functools.lru_cache(maxsize=1 << 16)
def status_class(code):
    """'200' -> '2xx'; anything outside 1xx-5xx -> 'unk'."""
    first = code[0]
    return first + "xx" if first in "12345" and code != UNKNOWN else UNKNOWN


@functools.lru_cache(maxsize=1 << 16)
def mime_category(value):
    """Coarse FacetRedux-style category: the top-level type, 'text/html' -> 'text/*'."""
    i = value.find("/")
    return value[:i] + "/*" if i > 0 else value


#: FacetRedux's size classes of a capture's length (spec section 2): (upper bound, exclusive; class),
#: decimal bounds, the last class open-ended
SIZE_BOUNDS = ((10 ** 3, "0-1k"), (10 ** 4, "1k-10k"), (10 ** 5, "10k-100k"), (10 ** 6, "100k-1m"),
               (10 ** 7, "1m-10m"), (10 ** 8, "10m-100m"), (10 ** 9, "100m-1g"))
SIZE_CLASSES = tuple(name for _, name in SIZE_BOUNDS) + ("1g+",)


def size_class(length):
    """A length's size class: '0-1k' below 1,000 bytes, ... '1g+' from 10^9 on (lower bounds inclusive).

    >>> size_class(0), size_class(999), size_class(1000), size_class(10 ** 9)
    ('0-1k', '0-1k', '1k-10k', '1g+')
    """
    for bound, name in SIZE_BOUNDS:
        if length < bound:
            return name
    return "1g+"


#: depths from here on share one class
DEEP = 10


#: the depth fields of a capture
DEPTH_CLASSES = tuple(str(n) for n in range(DEEP)) + ("%d+" % DEEP, UNKNOWN)


def depth_class(hops):
    """Hops from the seed as a key field: '0' .. '9', then '10+'."""
    return str(hops) if hops < DEEP else "%d+" % DEEP


#: the key fields of the names that are spelt as a reserved field: '-' (any) and 'unk' (a capture
#: of no collection), their first character percent-encoded
_RESERVED_COLLECTIONS = {"-": "%2D", UNKNOWN: "%75nk"}


def collection(raw):
    """A collection's name (bytes) as a key field: '%' as '%25' (so that 'a b' and 'a%20b' stay two
    collections), white space, control bytes and invalid UTF-8 percent-encoded (key_field), '-'
    (any) as '%2D' and 'unk' (what a capture of no collection has) as '%75nk'; None when it is empty.

    >>> collection(b"crawl 2013"), collection(b"-"), collection(b""), collection(b"crawl%202013")
    ('crawl%202013', '%2D', None, 'crawl%25202013')
    >>> collection(b"unk"), collection(b"UNK")
    ('%75nk', 'UNK')
    """
    if not raw:
        return None
    text = key_field(raw.replace(b"%", b"%25"))
    return _RESERVED_COLLECTIONS.get(text, text)


def collection_name(field):
    """The name (bytes) a collection's key field (str) stands for: the field percent-decoded.

    >>> collection_name("crawl%202013"), collection_name("100%25")
    (b'crawl 2013', b'100%')
    """
    from urllib.parse import unquote_to_bytes
    return unquote_to_bytes(field.encode("utf-8", "surrogateescape"))
