"""JSON whose integers are exact at any size.

orjson writes and reads integers of 64 bits: it refuses to write a larger one and reads one as
a float. A profile's sums are JSON integers, which have no bound (a sum of lengths may pass
2^64), so every profile and job record goes through ``dumps`` and ``loads``: orjson, and the
standard library's json for the rare text or value orjson cannot hold exactly.
"""

import json
import re

import orjson

#: 19 digits in a row: a number orjson might not hold exactly (-2^63 - 1 has 19, 2^64 has 20)
_LONG_BYTES = re.compile(rb"[0-9]{19}")
_LONG_TEXT = re.compile(r"[0-9]{19}")

#: the longest text orjson reads: under a small limit of address space (RLIMIT_AS) it crashed
#: (SIGSEGV) on a header line of 60 MB, or called it not JSON ("Not enough memory"); the standard
#: library raises MemoryError
ORJSON_MAX = 1 << 20

#: what loads raises on text that is not JSON (orjson's errors are of this class too)
JSONDecodeError = json.JSONDecodeError


def _no_constant(name):
    raise json.JSONDecodeError("not JSON: %s" % name, name, 0)


def _finite(text):
    """A JSON fraction as orjson reads it: one out of a double's range (1e400) is not JSON."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise json.JSONDecodeError("number is infinity when parsed as double", text, 0)
    return value


def dumps(value, option=None):
    """value as JSON bytes, as orjson writes it (compact; option: orjson.OPT_INDENT_2 and
    OPT_SORT_KEYS are kept); integers of any size."""
    try:
        return orjson.dumps(value) if option is None else orjson.dumps(value, option=option)
    except TypeError as e:
        if "64-bit" not in str(e):
            raise
        option = option or 0
        indent = 2 if option & orjson.OPT_INDENT_2 else None
        return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent,
                          sort_keys=bool(option & orjson.OPT_SORT_KEYS),
                          separators=(",", ": ") if indent else (",", ":")).encode("utf-8")


def loads(data):
    """JSON text (bytes or str) -> value, as orjson reads it; integers of any size exact.
    Errors are ValueErrors (json.JSONDecodeError) as orjson's are."""
    long = (_LONG_BYTES if isinstance(data, (bytes, bytearray, memoryview)) else _LONG_TEXT).search(data)
    if long is None and len(data) <= ORJSON_MAX:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as e:
            if str(e).startswith("Not enough memory"):
                raise MemoryError(str(e)) from None
            raise
    if isinstance(data, memoryview):
        data = bytes(data)
    try:
        return json.loads(data, parse_constant=_no_constant, parse_float=_finite)
    except json.JSONDecodeError:
        raise
    except (UnicodeDecodeError, RecursionError, ValueError) as e:
        # ValueError: an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise json.JSONDecodeError("not JSON: %s" % str(e)[:60], "", 0) from None
