"""Feature values of one profile key (spec section 3) and how partial values combine.

A stats record is a list ``[total, min, max, urir, bytes, digests, dedup_bytes, first, last]``.
Once captures are grouped by URI-R every field combines by sum, min or max, so partial
records from any number of mappers, reducers or splits merge exactly.
"""

from profiler import jsonnum

#: the slots of a stats record, and the feature (spec section 3) each one holds
TOTAL, MIN, MAX, URIR, BYTES, DIGESTS, DEDUP, FIRST, LAST = range(9)
FEATURES = ("urim.total", "urim.min", "urim.max", "urir", "bytes", "digests", "dedup_bytes", "first", "last")

NO_FIRST = "~"   # sorts after every timestamp
NO_LAST = ""
NO_MIN = 1 << 62


def of_uri_r(count, nbytes, digests, dedup, first, last):
    """The contribution of one URI-R's captures under one key."""
    return [count, count, count, 1, nbytes, digests, dedup, first, last]


def correction(extra_digests, extra_dedup):
    """Subtract what a digest shared by several URI-Rs was counted too often."""
    return [0, NO_MIN, 0, 0, 0, -extra_digests, -extra_dedup, NO_FIRST, NO_LAST]


def merge_into(a, b):
    """a += b, in place (slots by number: this is the pure-Python reducers' inner loop)."""
    a[0] += b[0]
    if b[1] < a[1]:
        a[1] = b[1]
    if b[2] > a[2]:
        a[2] = b[2]
    a[3] += b[3]
    a[4] += b[4]
    a[5] += b[5]
    a[6] += b[6]
    if b[7] < a[7]:
        a[7] = b[7]
    if b[8] > a[8]:
        a[8] = b[8]


def add(table, key, record):
    """table[key] += record (copying record the first time)."""
    found = table.get(key)
    if found is None:
        table[key] = list(record)
    else:
        merge_into(found, record)


def sum_all(records):
    """Merge an iterable of records into a new one."""
    it = iter(records)
    total = list(next(it))
    for record in it:
        merge_into(total, record)
    return total


def to_json(record):
    """The profile line's JSON block, keys in the spec's order."""
    return jsonnum.dumps({
        "urim": {"total": record[TOTAL], "min": record[MIN], "max": record[MAX]},
        "urir": record[URIR],
        "bytes": record[BYTES],
        "digests": record[DIGESTS],
        "dedup_bytes": record[DEDUP],
        "first": record[FIRST],
        "last": record[LAST],
    })


def from_json(data):
    """Parse a profile line's JSON block back into a record."""
    d = jsonnum.loads(data)
    u = d["urim"]
    return [u["total"], u["min"], u["max"], d["urir"], d["bytes"], d["digests"],
            d["dedup_bytes"], d["first"], d["last"]]


def merge_counts(a, b):
    """Merge nested {name: int or dict} counters (skip reasons, capture totals)."""
    for k, v in b.items():
        if isinstance(v, dict):
            merge_counts(a.setdefault(k, {}), v)
        else:
            a[k] = a.get(k, 0) + v
    return a
