"""The explorer's answers: one question about one profile, its features and its breakdowns.

A question fixes a value of each key field (profiler.explore.questions): a SURT key, and for
each criterion of the file's ``!keys`` a field ('-': any), or a datetime range instead of a
datetime. The answer holds the question's features (the nine of the spec and avg_size; over
a range, the inexact ones with ``bounds``: profiler.toolkit.ranges) and one breakdown per key
field: the rows that refine the question by that field alone (the SURT's children, the
periods of the next datetime level, the MIME types of a category, ...), each with its
features, ranked by one feature.

Every read is bounded: exact keys by binary search (at most BUDGET of them a breakdown), a
breakdown by criterion reads one range of the sorted file (at most MAX_SCAN lines), a SURT
breakdown reads the node's range, or the children's lines the start-up index names
(profiler.explore.index). What a bound cuts short is said in the breakdown's note.

Another producer's profile (profiler.files.layout.is_foreign: some of the criteria, lines in its
value style) is answered from what each line has: a feature a line lacks is null (and listed in
the answer's ``missing``), a derived one is null unless its parts are there, a ranking by a
feature ranks the rows that have it (the others counted in the breakdown's ``unranked``), and
without first and last captures a time breakdown lists the file's datetime lines and a range
cannot be answered. Its !meta policy, if any, is not read: it describes other key fields.
"""

import os
import threading
import time
from collections import OrderedDict

from profiler import jsonnum
from profiler.explore import tree
from profiler.explore.index import MAX_COMBOS, RANKED, Index
from profiler.files import infiles, layout as layouts
from profiler.files.datalines import DamagedFile, foreign_value, inconsistency, unknown_keys, value_problem
from profiler.files.profilefile import FEATURES, flatten
from profiler.model import criteria
from profiler.model.criteria import ANY_FIELD
from profiler.toolkit import ranges
from profiler.toolkit.query import (LISTED_COMPACTED, ROLLED_UP, QueryError, SortedProfile, absent_value,
                                    derived_bounds, feature_value, not_emitted, nothing_held, rank_value)

#: the features of an answer: the spec's nine and FacetRedux's sixth, the average size
SHOWN = FEATURES + ("avg_size",)
#: exact keys one breakdown reads at most
BUDGET = 3000
#: lines one scan reads at most
MAX_SCAN = 40000
#: rows a breakdown returns at most, and by default
MAX_ROWS, ROWS = 500, 25
#: periods a datetime breakdown asks for at most
MAX_PERIODS = 400
#: answers kept for questions asked again (the browser's back button), at most, and their bytes
#: (as JSON) at most in all: a client asking for the largest answers, each question new, held
#: CACHED of them (hundreds of MB); an answer larger than a quarter of it is not kept
CACHED = 256
CACHE_BYTES = 16 << 20


def features(flat):
    """(features, bounds) of a line's flat features, as the explorer's JSON shows them."""
    values = {name: feature_value(flat, name) for name in SHOWN}
    bounds = dict(flat.get("bounds") or {})
    try:
        avg = derived_bounds(flat, "avg_size")
    except KeyError:                # another producer's line without a part of it
        avg = None
    if avg is not None:
        bounds["avg_size"] = avg
    return values, {n: list(bounds[n]) for n in SHOWN if n in bounds}


class Explorer:
    """One profile opened for questions: its sorted file, policy and start-up index."""

    def __init__(self, path, name=None):
        self.path = path
        self.index = None
        self.profile = SortedProfile(path, what="explore")
        self.layout = self.profile.layout
        # lines may lack features: another producer's, or a merge's keys bounded by coarser lines
        self.foreign = layouts.is_foreign(self.layout) or unknown_keys(self.profile.headers)
        self.policy = self.profile.policy() if not self.foreign else None
        self.name = name or _archive_uri(self.profile.headers) or path
        # the index and single-line reads go through one more descriptor of the very file checked
        # (the path may name another file by now, or a FIFO: opened without waiting, compared)
        self._reader = infiles.open_regular(path)
        checked = self.checked = infiles.identity(os.fstat(self.profile.sorted.f.fileno()))
        if infiles.identity(os.fstat(self._reader.fileno())) != checked:
            self.close()
            raise DamagedFile("%s changed while it was opened: ask again once it is written" % path)
        started = time.monotonic()
        try:
            self.index = Index(path, self._reader, self.profile.sorted.start, self._present, self.foreign)
        except BaseException:
            self.close()
            raise
        self.index_seconds = time.monotonic() - started
        self.lock = threading.Lock()
        self._cache = OrderedDict()
        self._sizes = {}            # bytes of each answer kept, as JSON
        self.cache_bytes = 0
        self.levels = {}            # datetime levels of a key, by the policy: shared by every question
        self.seen = {}              # lines read, by key: shared by every question (bounded)
        if self.policy is not None:
            # a first question would otherwise wait for the Public Suffix List to load
            not_emitted(self.policy, ["com,example)/*"] + [ANY_FIELD] * len(self.layout.names), self.layout)

    def unchanged(self):
        """Whether the file read is still as it was checked (not written since, whatever its
        path names now): its size and mtime (its ctime moves when a rename takes its name)."""
        try:
            return infiles.identity(os.fstat(self._reader.fileno()))[:4] == self.checked[:4]
        except (OSError, ValueError, AttributeError):
            return False

    def close(self):
        self.profile.close()
        self._reader.close()
        if self.index is not None:
            self.index.close()

    def _lines(self):
        """A ranges.Lines for one part of an answer: its own budget, the explorer's caches."""
        return ranges.Lines(self.profile, BUDGET, self.levels, self.seen, self.index.find, self.policy)

    def _present(self, surt):
        return bool(self.profile.sorted.group(surt + b" "))

    def describe(self):
        """The profile as /api/profiles lists it."""
        crit = []
        for c in self.layout.criteria:
            crit.append({"name": c.name, "levels": [lv.name for lv in c.coarse_to_fine], "describe": c.describe})
        return {"name": self.name, "file": self.path, "keys": list(self.layout.fields), "criteria": crit,
                "policy": self.policy.name if self.policy is not None else None,
                "lines": self.index.lines, "indexed_nodes": len(self.index.nodes),
                "range_levels": [lv.name for lv in ranges.prefix_levels()],
                "features": list(SHOWN), "ranked": list(RANKED)}

    def answer(self, question):
        """The answer (a dict, JSON-ready) to a Question (profiler.explore.questions)."""
        cache_key = question.cache_key()
        with self.lock:
            found = self._cache.get(cache_key)
            if found is not None:
                self._cache.move_to_end(cache_key)
                return dict(found, kept=True, milliseconds=0.0, cpu_milliseconds=0.0)
            started, cpu = time.monotonic(), time.thread_time()
            out = self._answer(question)
            out["milliseconds"] = round((time.monotonic() - started) * 1000, 1)
            out["cpu_milliseconds"] = round((time.thread_time() - cpu) * 1000, 1)
            out["kept"] = False
            self._keep(cache_key, out)
            return out

    def _keep(self, key, out):
        """Keep an answer, the least recently asked let go past CACHED answers or CACHE_BYTES."""
        size = len(jsonnum.dumps(out))
        if size > CACHE_BYTES // 4:
            return
        self._cache[key] = out
        self._sizes[key] = size
        self.cache_bytes += size
        while len(self._cache) > CACHED or self.cache_bytes > CACHE_BYTES:
            gone, _ = self._cache.popitem(last=False)
            self.cache_bytes -= self._sizes.pop(gone)

    # ------------------------------------------------------------ the question

    def _answer(self, q):
        fields = q.fields(self.layout)
        out = {"profile": self.name, "question": q.as_dict(self.layout), "key": None, "status": None,
               "note": None, "features": None, "bounds": {}, "exact": [], "periods": None}
        lines = self._lines()
        shown = list(fields)
        if q.range is not None:
            shown[self.layout.fields.index(criteria.DATETIME.name)] = q.range.text
        out["key"] = " ".join(shown)
        try:
            if q.range is None:
                key = " ".join(fields)
                value = lines.value(fields)
                flat = flatten(value) if value is not None else None
                if value is not None and value.get("bounds"):
                    flat["bounds"] = value["bounds"]
                out["key"] = key
            else:
                found = ranges.answer(lines, dict(zip(self.layout.fields, fields)), q.range)
                out["key"], flat, out["periods"] = found.key, found.flat, found.pieces
                if not ranges.may_hold(flat):
                    flat = None
        except QueryError as e:
            out["status"], out["note"] = "unanswerable", str(e)
            flat = None
        if (out["status"] is None and flat is None and q.range is None and self.profile.compacted()
                and not (self.policy is not None and not_emitted(self.policy, fields, self.layout))):
            envelope = self.profile.envelope(fields)
            out["note"] = ROLLED_UP % ("its bounds; " if envelope is not None else "")
            if envelope is not None:
                flat = absent_value(envelope)
            else:
                out["status"] = "unanswerable"
        if out["status"] is None:
            if flat is None and q.range is not None:
                sure, out["note"] = nothing_held(self.profile, dict(zip(self.layout.fields, fields)), q.range.text,
                                                 without="a time range")
                out["status"] = "none" if sure else "unanswerable"
            elif flat is None:
                reason = not_emitted(self.policy, fields, self.layout) if self.policy is not None else None
                out["status"] = "unanswerable" if reason else "none"
                out["note"] = ("this profile cannot answer it: its policy (%s) does not write that key (%s)"
                               % (self.policy.name, reason) if reason else "no captures")
            else:
                out["status"] = "answered"
                out["features"], out["bounds"] = features(flat)
                out["exact"] = [n for n in SHOWN if n not in out["bounds"]]
                if self.foreign:
                    out["missing"] = [n for n in out["exact"] if out["features"][n] is None]
                    out["exact"] = [n for n in out["exact"] if n not in out["missing"]]
        out["surt_label"] = tree.label(fields[0])
        out["path"] = [{"key": h, "label": tree.label(h)} for h in reversed(tree.holders(fields[0]))
                       if h == "*" or self._present(h.encode("utf-8", "surrogateescape"))]
        out["breakdowns"] = [self._surt_breakdown(q, fields)] + [
            self._breakdown(q, fields, i, c) for i, c in enumerate(self.layout.criteria, 1)]
        for b in out["breakdowns"]:
            if not b["rows"] and not b["note"]:
                b["note"] = self._why_empty(b, fields, q)
            elif b["rows"] and not b["note"] and self.profile.compacted():
                b["note"], b["complete"] = LISTED_COMPACTED, False
        return out

    def _why_empty(self, b, fields, q):
        """Why a breakdown has no row, for a person."""
        shown = " ".join(fields[1:]) if q.range is None else " ".join([q.range.text] + fields[2:])
        if b["field"] == "surt":
            return ("no key below %s has a line for '%s': this profile does not break %s down by SURT for "
                    "this question" % (fields[0], shown, tree.label(fields[0])))
        i = self.layout.fields.index(b["field"])
        c = self.layout.criteria[i - 1]
        if self.policy is not None:
            reasons = []
            for sample in c.samples:
                probe = list(fields)
                probe[i] = sample
                reasons.append(not_emitted(self.policy, probe, self.layout))
            if all(reasons):
                return "the profile's policy (%s) writes no line of %s with a %s: %s" % (
                    self.policy.name, " ".join(fields), c.name, reasons[0])
        return "no line of this profile refines %s by %s" % (" ".join(fields), c.name)

    # ------------------------------------------------------------ rows

    def _row(self, fields, flat, value, key=None):
        values, bounds = features(flat)
        return {"value": value, "label": tree.label(value) if value == fields[0] else value,
                "key": key or " ".join(fields), "features": values, "bounds": bounds}

    def _ranked(self, rows, q, out, sort=None):
        sort = sort or q.sort
        if self.foreign:
            # only the rows that have the feature are ranked by it; the others are counted
            have = [r for r in rows if r["features"][sort] is not None or sort in r["bounds"]]
            lacking = len(rows) - len(have)
            out["unranked"] = out.get("unranked", 0) + lacking
            if lacking:
                out["note"] = _joined(out["note"], ["%d of the rows have no %s (another producer's profile): "
                                                    "not ranked by it" % (lacking, sort)])
            rows = have
        rows.sort(key=lambda r: rank_value(r["features"], sort), reverse=True)
        return rows[:q.limit]

    def _range_rows(self, q, candidates, lines):
        """(rows, notes) over the question's range for candidate key fields [(value, fields)]:
        the rows of the candidates the profile cannot answer over it are left out and counted
        in one note."""
        rows, notes, refused = [], [], []
        for value, fields in candidates:
            try:
                found = ranges.answer(lines, dict(zip(self.layout.fields, fields)), q.range)
            except ranges.RangeError as e:
                if lines.reads > lines.budget:
                    notes.append("stopped after %d lines read: narrow the question" % lines.budget)
                    break
                refused.append((value, str(e)))
                continue
            if ranges.may_hold(found.flat):
                rows.append(self._row(fields, found.flat, value, found.key))
        if refused:
            notes.append("%d of the values cannot be answered over %s and are left out (%s): %s" % (
                len(refused), q.range.text, ", ".join(v for v, _ in refused[:5]) + (", ..." if len(refused) > 5
                                                                                    else ""), refused[0][1]))
        return rows, notes

    # ------------------------------------------------------------ by SURT

    def _surt_breakdown(self, q, fields):
        node = fields[0]
        out = {"field": "surt", "level": "children", "levels": ["children"], "rows": [],
               "total": 0, "complete": True, "note": None}
        if not node.endswith("*"):
            out["note"] = "%s is one URL: it has no SURT below it" % node
            return out
        suffix = fields[1:]
        lines = self._lines()
        indexed = self.index.node(node)
        rows = []
        if q.range is not None:
            suffix = list(suffix)
            suffix[0] = ANY_FIELD
        if indexed is None:
            children, by_child, complete = self._scan_children(node, suffix)
            out["complete"] = complete
            if not complete:
                out["note"] = ("more than %d lines under %s: the children of its first %d lines only"
                               % (MAX_SCAN, node, MAX_SCAN))
            if q.range is None:
                rows = [self._row([c] + fields[1:], flatten(by_child[c]), c) for c in children if c in by_child]
            else:
                candidates = [(c, [c] + suffix) for c in children if c in by_child]
                for c, f in candidates:
                    lines.know(f, by_child[c])
                rows, notes = self._range_rows(q, candidates, lines)
                out["note"] = _joined(out["note"], notes)
            out["total"] = len(rows) if q.range is not None else len([c for c in children if c in by_child])
        elif indexed.children is not None:
            candidates = [(c, [c] + suffix) for c in indexed.children]
            if q.range is None:
                for value, f in candidates:
                    found = self._value(lines, f)
                    if found is None:
                        continue
                    if found is False:
                        out["complete"], out["note"] = False, "stopped after %d lines read" % BUDGET
                        break
                    rows.append(self._row(f, found, value))
            else:
                rows, notes = self._range_rows(q, candidates, lines)
                out["note"] = _joined(out["note"], notes)
            out["total"] = len(rows)
        elif indexed.rankings is not None:
            rows = self._ranked_children(q, indexed, fields, suffix, lines, out)
            out["sort"] = q.sort if q.sort in RANKED else "urim.total"
        else:
            out["complete"] = False
            out["note"] = ("%s has %d children, more than this explorer indexes: ask about a narrower SURT"
                           % (node, indexed.count))
        out["rows"] = self._ranked(rows, q, out, out.get("sort"))
        return out

    def _value(self, lines, fields):
        """A key's flat features, None when it has no line, False past the budget."""
        try:
            value = lines.value(fields)
        except ranges.RangeError:
            return False
        if value is None:
            return None
        flat = flatten(value)
        if value.get("bounds"):
            flat["bounds"] = value["bounds"]
        return flat

    def _scan_children(self, node, suffix):
        """(children of node in key order, {child: its line's value at suffix}, complete)."""
        start = tree.prefix(node).encode("utf-8", "surrogateescape")
        want = "".join(" " + f for f in suffix).encode("utf-8", "surrogateescape")
        keys, values, n = [], {}, 0
        complete = True
        last = None
        for line in self.profile.sorted.iter_from(start):
            n += 1
            if n > MAX_SCAN:
                complete = False
                break
            i = line.find(b" {")
            if i < 0:
                continue
            key = line[:i]
            j = key.find(b" ")
            if j < 0:
                j = len(key)                # another producer's profile keyed by the SURT alone
            surt = key[:j].decode("utf-8", "surrogateescape")
            if surt != last:
                keys.append(surt)
                last = surt
            if key[j:] == want:
                values[surt] = _load(line[i + 1:], self.path, key, self.foreign)
        return tree.children(node, keys), values, complete

    def _ranked_children(self, q, indexed, fields, suffix, lines, out):
        """A big node's children from the start-up index's rankings."""
        sort = q.sort if q.sort in RANKED else "urim.total"
        if sort != q.sort:
            out["note"] = "%s has %d children: they are ranked by %s here (the index ranks %s)" % (
                indexed.key, indexed.count, sort, ", ".join(RANKED))
        if q.range is None:
            ranking = indexed.rankings.get(" ".join(suffix))
            if ranking is None:
                if not indexed.every_suffix:
                    out["complete"] = False
                    out["note"] = ("%s has %d children; the start-up index ranks their lines of the %d most common "
                                   "key suffixes, and not of '%s': ask about a narrower SURT"
                                   % (indexed.key, indexed.count, MAX_COMBOS, " ".join(suffix)))
                return []
            n, offsets = ranking
            rows = []
            for at in offsets[sort][:q.limit]:
                key, flat = self._line_at(at)
                surt = key.split(" ", 1)[0]
                rows.append(self._row([surt] + fields[1:], flat, surt, key))
            out["total"] = n
            lacking = indexed.lacking[" ".join(suffix)][sort] if indexed.lacking is not None else 0
            if lacking:
                out["unranked"] = lacking
                out["note"] = _joined(out["note"], ["%d of the %d children have no %s (another producer's "
                                                    "profile): not ranked by it" % (lacking, n, sort)])
            out["complete"] = n - lacking <= len(offsets[sort])
            if not out["complete"]:
                out["note"] = _joined(out["note"], ["the %d largest by %s of %d children"
                                                    % (len(offsets[sort]), sort, n)])
            return rows
        # over a range: candidates from the rankings of the periods the range meets, at the
        # coarsest level the index has; the `limit` with the largest sums there are answered
        wanted = []
        for lv in ranges.prefix_levels():
            combos = [" ".join([p] + list(suffix[1:])) for p in _limited(ranges.periods(
                max(q.range.lo, "00010101000000"), min(q.range.hi, "99991231235959"), lv.n), MAX_PERIODS)]
            wanted = [c for c in combos if c in indexed.rankings]
            if wanted:
                break
        everything = " ".join(suffix)
        scores = {}
        for combo in wanted + [everything]:
            ranking = indexed.rankings.get(combo)
            if ranking is None:
                continue
            for at in ranking[1][sort][:q.limit]:
                key, flat = self._line_at(at)
                surt = key.split(" ", 1)[0]
                scores[surt] = scores.get(surt, 0) + (0 if combo == everything else feature_value(flat, sort) or 0)
        chosen = sorted(scores, key=lambda k: -scores[k])[:q.limit]
        rows, notes = self._range_rows(q, [(c, [c] + list(suffix)) for c in chosen], lines)
        out["complete"] = False
        out["total"] = indexed.count
        out["note"] = _joined(out["note"], notes + [
            "%s has %d children: ranked here are the %d with the most %s in the periods of the range, among the "
            "top %d of each period and of all time" % (indexed.key, indexed.count, len(chosen), sort, q.limit)])
        return rows

    def _line_at(self, at):
        f = self._reader
        f.seek(at)
        line = f.readline().rstrip(b"\n")
        i = line.find(b" {")
        key = line[:i]
        value = _load(line[i + 1:], self.path, key, self.foreign)
        flat = flatten(value)
        if value.get("bounds"):
            flat["bounds"] = value["bounds"]
        return key.decode("utf-8", "surrogateescape"), flat

    # ------------------------------------------------------------ by criterion

    def _breakdown(self, q, fields, i, c):
        if c.name == criteria.DATETIME.name:
            return self._by_datetime(q, fields, i, c)
        return self._by_scan(q, fields, i, c)

    def _by_scan(self, q, fields, i, c, in_time=False):
        """A breakdown by criterion c from one range of the file: the lines sharing the
        question's fields before c's (``in_time``: the datetime lines of another producer's
        profile, in time order)."""
        out = {"field": c.name, "level": None, "levels": [], "rows": [], "total": 0,
               "complete": True, "note": None}
        current = fields[i]
        base = list(fields)
        if q.range is not None:
            base[1] = ANY_FIELD
        head = (" ".join(base[:i]) + " ").encode("utf-8", "surrogateescape")
        tail = base[i + 1:]
        found = {}
        n = 0
        for line in self.profile.sorted.iter_from(head):
            n += 1
            if n > MAX_SCAN:
                out["complete"] = False
                out["note"] = "more than %d lines to read: the values of the first %d only" % (MAX_SCAN, MAX_SCAN)
                break
            k = line.find(b" {")
            if k < 0:
                continue
            key = line[:k].decode("utf-8", "surrogateescape").split(" ")
            if len(key) != len(fields) or key[i + 1:] != tail or not _refines(c, key[i], current):
                continue
            found[key[i]] = (key, line[k + 1:])
        by_level, certain = {}, set()
        for value in found:
            at = c.field_levels(value)
            if len(at) == 1:
                certain.update(at)
            for level in at:
                by_level.setdefault(level, []).append(value)
        if certain:         # a level of only fields that fit others too ('unk') is not written here
            by_level = {level: values for level, values in by_level.items() if level in certain}
        order = [lv.name for lv in c.coarse_to_fine if lv.name in by_level]
        out["levels"] = order
        if not order:
            if current != ANY_FIELD:
                out["note"] = "nothing below %s %s in this profile" % (c.name, current)
            return out
        level = q.levels.get(c.name)
        if level not in by_level:
            level = next((lv for lv in order if len(by_level[lv]) > 1), order[0])
        out["level"] = level
        values = by_level[level]
        if q.range is None:
            rows = [self._row(found[v][0], _flat(found[v][1], self.path, found[v][0], self.foreign), v) for v in values]
        else:
            lines = self._lines()
            for v in values:
                lines.know(found[v][0], _load(found[v][1], self.path, found[v][0], self.foreign))
            rows, notes = self._range_rows(q, [(v, found[v][0]) for v in values], lines)
            out["note"] = _joined(out["note"], notes)
        out["total"] = len(rows)
        if in_time:
            out["order"] = "time"
            out["rows"] = sorted(rows, key=lambda r: r["value"])
        else:
            out["rows"] = self._ranked(rows, q, out)
        return out

    def _by_datetime(self, q, fields, i, c):
        out = {"field": c.name, "level": None, "levels": [], "rows": [], "total": 0,
               "complete": True, "note": None}
        lines = self._lines()
        probe = list(fields)
        probe[i] = ANY_FIELD
        whole = self._value(lines, probe)
        if whole and ("first" not in whole or "last" not in whole):     # another producer's line
            if q.range is None:
                return self._by_scan(q, fields, i, c, in_time=True)
            out["note"] = ("the line of %r has no first and last capture (another producer's profile): a range "
                           "cannot be answered from it" % " ".join(probe))
            return out
        first = whole["first"] if whole else None
        levels = [lv for lv in lines.levels(probe, i, first)]
        current = fields[i]
        if q.range is None and current != ANY_FIELD:
            levels = [lv for lv in levels if lv.n > len(current)]
        out["levels"] = [lv.name for lv in levels]
        if not levels:
            out["note"] = ("this profile has no finer datetime lines for this key" if current != ANY_FIELD or q.range
                           else "this profile has no datetime lines for this key")
            return out
        chosen = q.levels.get(c.name)
        if chosen is None and q.range is not None:
            ends = [len(end) for end in q.range.text.split(":") if end]
            chosen = next((lv.name for lv in levels if lv.n == max(ends)), None)
        level = next((lv for lv in levels if lv.name == chosen), levels[0])
        out["level"] = level.name
        if not whole:
            out["note"] = "no captures"
            return out
        values = dict(zip(self.layout.fields, probe))
        rng = q.range
        if rng is None and current != ANY_FIELD:
            rng = ranges.Range(ranges.start(current), ranges.end(current), current)
        lo, hi = max(whole["first"], rng.lo if rng else ranges.FIRST), min(whole["last"], rng.hi if rng else ranges.LAST)
        periods = list(_limited(ranges.periods(lo, hi, level.n), MAX_PERIODS + 1)) if lo <= hi else []
        if len(periods) > MAX_PERIODS:
            out["complete"] = False
            out["note"] = "more than %d %ss: pick a coarser level or a shorter range" % (MAX_PERIODS, level.name)
            return out
        rows = []
        if q.range is None:
            for period in periods:
                f = list(probe)
                f[i] = period
                found = self._value(lines, f)
                if found is False:
                    out["complete"], out["note"] = False, "stopped after %d lines read" % BUDGET
                    break
                if found:
                    rows.append(self._row(f, found, period))
        else:
            try:
                for found in ranges.series(lines, values, level.name, q.range):
                    period = found.key.split(" ")[i]
                    f = list(probe)
                    f[i] = period
                    rows.append(self._row(f, found.flat, period, found.key))
            except ranges.RangeError as e:
                out["complete"], out["note"] = False, str(e)
        out["total"] = len(rows)
        out["order"] = "time"
        out["rows"] = rows
        return out


def _limited(iterable, n):
    for i, x in enumerate(iterable):
        if i >= n:
            return
        yield x


def _refines(c, value, current):
    """Whether a key field refines the question's field of criterion c ('-': every value)."""
    if value == ANY_FIELD:
        return False
    if current == ANY_FIELD:
        return True
    if value == current:
        return False
    return any(c.level(name).field(value) == current for name in c.field_levels(current) if name != criteria.ANY)


def _load(raw, path, key, foreign=False):
    """A line's parsed value, checked: ours has every feature; another producer's (``foreign``)
    is one of the value styles, read as ours (profiler.files.datalines.foreign_value)."""
    try:
        value = jsonnum.loads(raw)
    except jsonnum.JSONDecodeError:
        value = None
    if foreign and value is not None:
        try:
            return foreign_value(value)
        except ValueError:
            value = None
    problem = None
    if isinstance(value, dict) and ranges.complete(value):
        problem = value_problem(value) if not foreign else None
        problem = problem or inconsistency(value)
        if problem is None:
            return value
    shown = key.decode("utf-8", "replace") if isinstance(key, bytes) else " ".join(key)
    what = "one of the value styles profiles are written in" if foreign else "with every feature"
    why = "is damaged (%s)" % problem if problem else "is not a profile line %s" % what
    raise QueryError("%s: the line of key %r %s; run 'archive-profiler validate %s'" % (path, shown, why, path))


def _flat(raw, path, key, foreign=False):
    value = _load(raw, path, key, foreign)
    flat = flatten(value)
    if value.get("bounds"):
        flat["bounds"] = value["bounds"]
    return flat


def _joined(note, more):
    parts = ([note] if note else []) + [m for m in more if m]
    seen = []
    for p in parts:
        if p not in seen:
            seen.append(p)
    return "; ".join(seen) or None


def _archive_uri(headers):
    for name, value in headers:
        if name == "!id" and isinstance(value, dict) and isinstance(value.get("uri"), str):
            return value["uri"]
    return None
