"""Whether a profile's lines are what the policy its !meta names writes, all of them.

A merge reads a key an input has no line for as none of its captures because that input's
policy would have written it (profiler.toolkit.merge), so a header naming another policy than
the one that wrote the lines (a !meta edited, or copied from another profile) makes merged
counts wrong without a word. Two things a header that lies shows: a line of a key its policy
never writes (a status code under a policy of status classes), and a SURT whose lines at one
datetime level (its years) do not add up to its all-time line where the policy writes both
(a policy of years read over lines written without them, or a line missing: a file cut at
a line end, which nothing else tells from a shorter file)."""

from profiler import jsonnum
from profiler.files.datalines import DamagedFile
from profiler.model import criteria

#: what the error says the file should be
_HINT = "its !meta policy does not describe its lines: make it again with the policy that wrote it"


#: what a SURT's lines that do not add up say
_MISSING = ("a line is missing (the file cut at a line end, a line removed) or its !meta names another policy "
            "than the one that wrote it: make it again")


class HeaderLies(DamagedFile):
    """A profile whose lines its header's policy does not write (the message names the line)."""

    def __init__(self, path, lineno, problem, hint=_HINT):
        super().__init__("%s line %d: %s; %s" % (path, lineno, problem, hint))
        self.lineno, self.problem = lineno, problem


def policy_of(headers):
    """The Policy a profile's !meta names, when its lines are all that policy wrote (complete,
    and no line skipped by a merge, no bounded keys); else None."""
    for m in (v for n, v in headers if n == "!meta" and isinstance(v, dict)):
        merge = m.get("merge")
        if isinstance(merge, dict) and (merge.get("skipped_lines") or merge.get("unknown_keys")
                                        or merge.get("converted_inputs")):
            return None
    return complete_policy(headers)


def complete_policy(headers):
    """The Policy of a profile whose missing lines mean no captures (its policy's keys): not
    compacted, not a page; else None."""
    from profiler.model.policy import Policy, PolicyError
    metas = [v for n, v in headers if n[1:] == "meta" and isinstance(v, dict)]
    if any("compacted" in m or "page" in m for m in metas):
        return None
    for m in metas:
        if isinstance(m.get("policy"), dict):
            try:
                return Policy.from_dict(m["policy"])
            except (PolicyError, ValueError, TypeError, KeyError, AttributeError):
                return None
    return None


def check(path, headers, layout, records):
    """Raise HeaderLies at the first line (a Record of profiler.files.datalines) its header's
    policy does not write, or the first SURT whose datetime lines do not add up; nothing to check
    when the header names no policy its lines can be held to (policy_of)."""
    policy = policy_of(headers)
    if policy is None or any(c.name not in policy.levels for c in layout.criteria):
        return
    from profiler.model.keys import key_level
    from profiler.model.emitted import not_emitted
    at = layout.names.index(criteria.DATETIME.name) if criteria.DATETIME.name in layout.names else None
    group = surt_level = last_surt = None
    written = {}        # (SURT level, the levels of each field) -> whether the policy writes such keys
    sum_levels = {}     # SURT level -> the datetime levels its lines add up at
    field_levels = {}   # (field position, value) -> its levels
    for r in records:
        fields = r.key.decode("utf-8", "surrogateescape").split(" ")
        surt = fields[0]
        new_surt = surt != last_surt
        if new_surt:
            surt_level, last_surt = key_level(surt, policy.registered_domains), surt
        levels = [surt_level]
        for i, (c, v) in enumerate(zip(layout.criteria, fields[1:])):
            found = field_levels.get((i, v))
            if found is None:
                if len(field_levels) > 4096:
                    field_levels.clear()
                found = field_levels[(i, v)] = c.field_levels(v)
            levels.append(found)
        levels = tuple(levels)
        why = None
        if new_surt or not written.get(levels, False):
            try:        # its SURT's host and path depth once, its fields' levels once per kind
                why = not_emitted(policy, fields, layout)
            except (ValueError, KeyError, IndexError):
                why = "its level cannot be told"
            if why is None:
                written[levels] = True
        if why is not None:
            raise HeaderLies(path, r.lineno, "%r is no key of its policy (%s: %s)"
                             % (r.key[:80].decode("utf-8", "replace"), policy.name, why))
        if at is None:
            continue
        if new_surt:
            if group is not None:
                group.settle()
            group = _Sums(path, surt, policy, layout, at, surt_level, sum_levels)
        group.add(r, fields[1:])
    if group is not None:
        group.settle()


class _Sums:
    """One SURT's all-time captures and its captures at each datetime level the policy writes
    alone beside its all-time line (the others '-'), which must be equal."""

    def __init__(self, path, surt, policy, layout, at, surt_level, known):
        self.path, self.surt, self.policy, self.at = path, surt, policy, at
        self.levels = known.get(surt_level)
        if self.levels is None:
            self.levels = known[surt_level] = _sum_levels(policy, layout.names[at], surt_level)
        self.total, self.sums, self.exact, self.lineno = 0, dict.fromkeys(self.levels, 0), True, None

    def add(self, r, values):
        if not self.levels:
            return
        others = values[:self.at] + values[self.at + 1:]
        if others.count(criteria.ANY_FIELD) != len(others):
            return
        value = r.value if r.value is not None else jsonnum.loads(r.json)
        total = value.get("urim", {}).get("total") if isinstance(value.get("urim"), dict) else None
        if not isinstance(total, int) or "bounds" in value:
            self.exact = False
            return
        self.lineno = r.lineno
        field = values[self.at]
        if field == criteria.ANY_FIELD:
            self.total += total
            return
        for level in criteria.DATETIME.field_levels(field):
            if level in self.sums:
                self.sums[level] += total

    def settle(self):
        if not self.exact:
            return
        for level, found in sorted(self.sums.items()):
            if found != self.total:
                raise HeaderLies(self.path, self.lineno, "the %s lines of %r add up to %d captures, its all-time "
                                 "line to %d, though its policy (%s) writes both" % (
                                     level, self.surt[:80], found, self.total, self.policy.name), _MISSING)


def _sum_levels(policy, name, surt_level):
    """The levels of datetime ``name`` a SURT of ``surt_level`` has lines at with every other
    field '-', when it also has its all-time line."""
    combos = [dict(zip(policy.names, combo)) for combo in policy.emit.get(surt_level, ())]
    levels = set()
    if any(all(v == criteria.ANY for v in combo.values()) for combo in combos):
        for combo in combos:
            if combo[name] != criteria.ANY and all(v == criteria.ANY for n, v in combo.items() if n != name):
                levels.add(combo[name])
    return frozenset(levels)
