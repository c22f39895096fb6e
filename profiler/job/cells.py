"""Map records: the cells of one URI-R, as the map side writes them and step 1 reads them.

A cell is one distinct (criterion values, digest, revisit) among a URI-R's captures in a split,
with [count, bytes, largest length, first, last]. The values are one per criterion of the policy
(profiler.model.criteria), the datetime cut to the policy's finest level; a revisit whose
original is looked up in step 1 has '' for the values it will take from it. A cell is written
as the list ``[values..., digest, revisit, count, bytes, largest length, first, last]``, or for
one capture ``[values..., digest, revisit, 1, bytes, timestamp]`` (its largest length is its
bytes and its last timestamp its first: a fifth less of the map output).
"""

from operator import attrgetter

from profiler.model import criteria

#: slots of a cell's counts
COUNT, BYTES, MAXLEN, FIRST, LAST = range(5)

assert criteria.CRITERIA[0] is criteria.DATETIME and criteria.DATETIME.source == "timestamp" \
    and not criteria.DATETIME.optional


class CellKeys:
    """capture (profiler.model.capture.Capture) -> its cell key (values..., digest, revisit)
    under a policy: each criterion's value read from the capture field its source names (and
    derived from it, for a criterion that derives its value: Criterion.value_of)."""

    def __init__(self, policy, resolve_revisits=True):
        chosen = policy.criteria
        self.k = len(chosen)
        self.period_len = policy.period_len
        self.resolve = resolve_revisits
        rest = [c.source for c in chosen[1:]]
        if any(c.derive is not None for c in chosen[1:]):      # a value derived from its field (size)
            self._rest = lambda capture, chosen=chosen[1:]: tuple(c.value_of(capture) for c in chosen)
        else:
            self._rest = (lambda capture: ()) if not rest else \
                (lambda capture, get=attrgetter(rest[0]): (get(capture),)) if len(rest) == 1 else attrgetter(*rest)
        self._blank = tuple("" if c.resolved else None for c in chosen[1:])
        self._own = [i for i, c in enumerate(chosen[1:]) if not c.resolved]
        #: the plugins' criteria, whose values are checked (bad_value), by position in a cell key
        self.checked = [(i, c) for i, c in enumerate(chosen) if c not in criteria.BUILT_IN]

    def bad_value(self, ck):
        """The skip reason of a cell key holding a value of a plugin's criterion that is no key
        field of it (criteria.is_field: blank, '-', too long, not its pattern, a field another of its
        levels writes for other values): 'bad_NAME'; else
        None. A revisit's '' waits for its original's value, checked with the original."""
        for i, c in self.checked:
            value = ck[i]
            if not (value == "" and ck[self.k + 1] and c.resolved) and not criteria.is_field(c, value):
                return "bad_" + c.name
        return None

    def __call__(self, capture):
        period = capture.timestamp[:self.period_len]
        if capture.revisit and self.resolve:
            blank = self._blank
            if self._own:
                rest = self._rest(capture)
                blank = tuple(rest[i] if b is None else b for i, b in enumerate(blank))
            return (period,) + blank + (capture.digest, 1)
        return (period,) + tuple(self._rest(capture)) + (capture.digest, 0)


def cell_items(ck, c):
    """A cell as the map side writes it (see the module docstring)."""
    if c[COUNT] == 1:
        return list(ck) + [1, c[BYTES], c[FIRST]]
    return list(ck) + c


def full_cell(cell, k):
    """A written cell in its long form (k: the policy's number of criteria)."""
    n = len(cell)
    if n == k + 5:
        return cell[:k + 4] + [cell[k + 3], cell[k + 4], cell[k + 4]]
    if n != k + 7:
        raise ValueError("a cell has %d or %d items, not %d" % (k + 5, k + 7, n))
    return cell
