"""Merging profiles (or maps) of different captures into one: a k-way merge of sorted files.

For a key, the merged captures are the union of the inputs' captures under it (a key missing
from an input means no capture there: the inputs must share one policy). The rules (docs/toolkit.md,
"Split and merge rules"):

- urim.total and bytes add up; first is the smallest, last the largest: exact, unless an input's
  first or last are bounds (then so are the union's: _first_last_bounds).
- urir, urim.min, urim.max are exact only when the inputs hold disjoint sets of URI-Rs
  (``disjoint`` contains 'urir'): then urir adds up, min is the smallest, max the largest.
- digests and dedup_bytes are exact only when the inputs share no payload digest
  (``disjoint`` contains 'digests'): then they add up.
- Otherwise the written number is what it would be if the inputs were disjoint, and
  ``"bounds": {"urir": [low, high], ...}`` gives the range the true value lies in:
  urir, digests, dedup_bytes: [largest low, sum of highs] (at most urim.total, bytes);
  urim.max: [largest low, sum of highs]; urim.min: [smallest low, min over inputs i of
  (high min_i + sum of the other inputs' high max)]. Bounds of merged inputs carry over, so
  merging is associative.
- A key held by one input only is copied unchanged.
- Inputs have one key layout (their !keys: profiler.files.layout), or layouts that nest: then the
  merge is on the fields every input has (common_layout, Projection: a richer input's lines whose
  other fields are '-'), and a key an input lacks counts none of its captures only where its
  headers say so, else it gets bounds from that input's coarser lines (Absence, with_unknown,
  UNKNOWN_KEYS): how a converted archive_profiler document merges with our profiles.

UKVS maps merge the same way: urim adds up; urir adds up and is marked '-' (upper bound)
unless the URI-R sets are disjoint; marks of the inputs combine ('+' and '+' stay '+', mixed
marks become '~'); an unknown count in one input makes the sum a lower bound ('+').
"""

import contextlib
import datetime
import heapq
import itertools
import os

from profiler import GENERATOR, contract, jsonnum
from profiler.errors import UserError
from profiler.files import coverage, headerpolicy, infiles, insort, layout as layouts, oduprofile, outfiles, ukvs
from profiler.files.infiles import odu_document
from profiler.files.datalines import DataFile, Skipped, skipped_meta
from profiler.files.sortedfile import UnsortedFile
from profiler.files.output import CONTEXT, write_atomic
from profiler.files.pages import original_headers, page_meta
from profiler.files.profilefile import FEATURES, extras, flatten, unflatten
from profiler.io.names import display_name
from profiler.model import criteria

DISJOINT_CHOICES = ("urir", "digests")
ALWAYS_EXACT = ("urim.total", "bytes", "first", "last")
BY_URIR = ("urim.min", "urim.max", "urir")
BY_DIGEST = ("digests", "dedup_bytes")
#: a revisit whose original is in another input was not resolved
REVISITS_PER_INPUT = "resolved within each merged input"


class MergeError(UserError):
    """Inputs that cannot be merged (different policies, kinds or key fields, unsorted)."""


# ---------------------------------------------------------------- values

def _bounds(value, flat):
    b = value.get("bounds") or {}
    return {n: tuple(b[n]) if n in b else (flat[n], flat[n]) for n in FEATURES[:7]}


def combine(values, disjoint=(), counter=None):
    """Merge the parsed JSON values of one key from several inputs into one value dict. Extra
    attributes are kept when every input has the same; else dropped (counted in
    counter['extras_dropped'])."""
    if len(values) == 1:
        return values[0]
    flats = [flatten(v) for v in values]
    lacking = {n for n in FEATURES for f in flats if n not in f}
    if lacking:
        return _combine_partial(values, flats, lacking, disjoint, counter)
    kept_extras = extras(values[0])
    if any(extras(v) != kept_extras for v in values[1:]):
        kept_extras = None
        if counter is not None:
            counter["extras_dropped"] = counter.get("extras_dropped", 0) + 1
    flats = [flatten(v) for v in values]
    bounds = [_bounds(v, f) for v, f in zip(values, flats)]
    out = {
        "urim.total": sum(f["urim.total"] for f in flats),
        "urim.min": min(f["urim.min"] for f in flats),
        "urim.max": max(f["urim.max"] for f in flats),
        "urir": sum(f["urir"] for f in flats),
        "bytes": sum(f["bytes"] for f in flats),
        "digests": sum(f["digests"] for f in flats),
        "dedup_bytes": sum(f["dedup_bytes"] for f in flats),
        "first": min(f["first"] for f in flats),
        "last": max(f["last"] for f in flats),
    }
    b = {n: (sum(x[n][0] for x in bounds), sum(x[n][1] for x in bounds)) for n in ("urim.total", "bytes")}
    # an upper bound caps at the highs of the totals (a written total may be a bound's low)
    caps = {"urir": b["urim.total"][1], "digests": b["urim.total"][1], "dedup_bytes": b["bytes"][1]}
    for names, exact in ((("urir",), "urir" in disjoint), (BY_DIGEST, "digests" in disjoint)):
        for n in names:
            if exact:
                b[n] = (sum(x[n][0] for x in bounds), sum(x[n][1] for x in bounds))
            else:
                b[n] = (max(x[n][0] for x in bounds), min(sum(x[n][1] for x in bounds), caps[n]))
    lows_min = [x["urim.min"][0] for x in bounds]
    highs_min = [x["urim.min"][1] for x in bounds]
    highs_max = [x["urim.max"][1] for x in bounds]
    if "urir" in disjoint:
        b["urim.min"] = (min(lows_min), min(highs_min))
        b["urim.max"] = (max(x["urim.max"][0] for x in bounds), max(highs_max))
    else:
        total_high_max = sum(highs_max)
        b["urim.min"] = (min(lows_min), min(min(h + total_high_max - m for h, m in zip(highs_min, highs_max)),
                                            b["urim.total"][1]))
        b["urim.max"] = (max(x["urim.max"][0] for x in bounds), min(total_high_max, b["urim.total"][1]))
    b.update(_first_last_bounds(values, flats, bounds))
    kept = {n: lh for n, lh in b.items() if lh[0] != lh[1]}
    return unflatten(out, kept, kept_extras)


def _first_last_bounds(values, flats, bounds):
    """{'first': [low, high], 'last': [...]} of the union when an input's first or last are
    bounds, or it may hold no capture (a merge of per-input resolved revisits widens its keys to
    [0, high]: profiler.toolkit.merge.widen): the union's first is at least
    the smallest low and at most the smallest high of the inputs that surely hold a capture (of
    none: the largest high); last the same way round. Empty when every input's are exact and it holds captures."""
    spans = []
    for v, f, x in zip(values, flats, bounds):
        given = v.get("bounds") or {}
        spans.append((tuple(given.get("first", (f["first"], f["first"]))),
                      tuple(given.get("last", (f["last"], f["last"]))), x["urim.total"][0] > 0))
    if all(first[0] == first[1] and last[0] == last[1] and held for first, last, held in spans):
        return {}
    held = [s for s in spans if s[2]]
    first = (min(s[0][0] for s in spans),
             min(s[0][1] for s in held) if held else max(s[0][1] for s in spans))
    last = (max(s[1][0] for s in held) if held else min(s[1][0] for s in spans),
            max(s[1][1] for s in spans))
    return {"first": first, "last": last}


#: what stands in for a feature another producer's line lacks while its inputs are combined
_STAND_IN = {"first": "00000000000000", "last": "00000000000000"}


def _combine_partial(values, flats, lacking, disjoint, counter):
    """combine() of lines of which some lack features (another producer's profiles: the CDXJ
    blog's {"urim": {...}, "urir": N}): the features every input has are combined by the same
    rules, the others left out (urim.min goes with urim.max, whose highs bound it)."""
    if "urim.max" in lacking:
        lacking = lacking | {"urim.min"}
    filled = []
    for v, f in zip(values, flats):
        full = {n: f.get(n, _STAND_IN.get(n, 0)) for n in FEATURES}
        bounds = {n: b for n, b in (v.get("bounds") or {}).items() if n not in lacking}
        filled.append(unflatten(full, bounds, extras(v)))
    merged = combine(filled, disjoint, counter)
    flat = {n: x for n, x in flatten(merged).items() if n not in lacking}
    bounds = {n: b for n, b in (merged.get("bounds") or {}).items() if n not in lacking}
    return unflatten(flat, bounds, extras(merged))


def combine_marks(marks):
    """Marks of numbers that were added: '' exact, '+'/'-' when all inexact ones agree, else '~'."""
    found = set(marks) - {""}
    if not found:
        return ""
    return found.pop() if len(found) == 1 else "~"


def combine_frequencies(freqs, disjoint=()):
    """Merge the Frequency values of one key from several UKVS maps."""
    if len(freqs) == 1:
        return freqs[0]

    def add(counts, marks, extra):
        known = [c for c in counts if c is not None]
        if not known:
            return None, ""
        marks = [m for c, m in zip(counts, marks) if c is not None] + extra
        if len(known) < len(counts):
            marks.append("+")
        return sum(known), combine_marks(marks)

    urim, urim_mark = add([f.urim for f in freqs], [f.urim_mark for f in freqs], [])
    urir, urir_mark = add([f.urir for f in freqs], [f.urir_mark for f in freqs],
                          [] if "urir" in disjoint else ["-"])
    return ukvs.Frequency(urim, urim_mark, urir, urir_mark)


# ---------------------------------------------------------------- streams

def _stream(index, records):
    """(key, input index, record) of an input's checked records (profiler.files.datalines: in
    byte order, each line of the right shape)."""
    for record in records:
        yield record.key, index, record


def _grouped(streams):
    """(key, {input index: record}, in input order) for every key of the k-way merge."""
    key, found = None, {}
    for k, i, record in heapq.merge(*streams):
        if k != key:
            if found:
                yield key, found
            key, found = k, {}
        found[i] = record
    if found:
        yield key, found


def _block(raw):
    if raw is None:
        return None
    try:
        value = jsonnum.loads(raw)
    except jsonnum.JSONDecodeError:
        try:
            value = ukvs.relaxed_json_loads(raw.decode("utf-8", "replace"))
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _breakdown_key(name):
    """The test of a breakdown's keys: datetimes or ranges (the seed's), or a criterion's fields."""
    if name == "datetime":
        return lambda field: ukvs.datetime_span(field) is not None
    pattern = criteria.FIELD_PATTERNS[name]
    return lambda field: field != "-" and bool(pattern.match(field.encode("utf-8", "replace")))


#: a map line's breakdowns: by datetime, by each optional criterion ({"lang": {"ara": "12/3"}})
breakdown_fields = criteria.derived(lambda chosen: {name: _breakdown_key(name) for name in
                                                    ("datetime",) + tuple(c.name for c in chosen
                                                                          if c.name != "datetime")})


def combine_blocks(raws, freqs, disjoint=(), counter=None):
    """The JSON block of a merged map line, from its inputs' blocks (bytes or None): a lone block
    is kept as it is; breakdowns (by datetime, by lang) add up per entry when every input has
    one (an input whose breakdown is not complete makes the sums lower bounds); the rollup mark
    stays if any input has it; other attributes stay when all inputs agree. What cannot be kept
    is counted in counter['extras_dropped']."""
    if len(raws) == 1:
        return raws[0]
    blocks = [_block(r) for r in raws]
    if all(b is None for b in blocks):
        return None
    out, dropped = {}, False
    names = []
    for b in blocks:
        for name in b or ():
            if name not in names:
                names.append(name)
    for name in names:
        values = [b.get(name) if b else None for b in blocks]
        if name == "rollup":
            if any(v is True for v in values):
                out[name] = True
        elif name in breakdown_fields():
            merged = _merge_breakdowns(values, freqs, disjoint, breakdown_fields()[name])
            if merged is None:
                dropped = True
            else:
                out[name] = merged
        elif all(v == values[0] for v in values) and all(b is not None and name in b for b in blocks):
            out[name] = values[0]
        else:
            dropped = True
    if dropped and counter is not None:
        counter["extras_dropped"] = counter.get("extras_dropped", 0) + 1
    return jsonnum.dumps(out) if out else None


def _merge_breakdowns(values, freqs, disjoint, valid=_breakdown_key("datetime")):
    """Breakdowns ({datetime or criterion field: frequency}) of one key added up, or None.
    ``valid`` tests a breakdown key."""
    parsed = []
    for value, freq in zip(values, freqs):
        if not isinstance(value, dict):
            return None
        entries = {}
        for field, f in value.items():
            text = str(f) if isinstance(f, int) and not isinstance(f, bool) else f
            if not isinstance(text, str) or not valid(field):
                return None
            try:
                entries[field] = ukvs.parse_frequency(text.encode("ascii", "replace"))
            except ValueError:
                return None
        total = sum(e.urim or 0 for e in entries.values())
        complete = (freq.urim is not None and not freq.urim_mark and total == freq.urim
                    and all(e.urim is not None and not e.urim_mark for e in entries.values()))
        parsed.append((entries, complete))
    out = {}
    for field in sorted({f for entries, _ in parsed for f in entries}):
        present = [entries[field] for entries, _ in parsed if field in entries]
        combined = combine_frequencies(present, disjoint) if len(present) > 1 else present[0]
        if any(field not in entries and not complete for entries, complete in parsed):
            combined = combined._replace(urim_mark=combine_marks([combined.urim_mark, "+"]))
        out[field] = ukvs.format_frequency(combined)
    return out


# ---------------------------------------------------------------- headers

def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def header_dict(headers):
    """A profile's header lines as {'meta': [each !meta value], name: value of the first other}."""
    out = {"meta": []}
    for name, value in headers:
        if name[1:] == "meta":
            out["meta"].append(value)
        else:
            out.setdefault(name[1:], value)
    return out


def _origin(meta):
    """What names the captures a profile counts: its run's inputs and its creation time (the
    !meta of a profile run or a merge), or None when it does not say."""
    run = next((m for m in meta if isinstance(m, dict) and isinstance(m.get("inputs"), list)), None)
    about = next((m for m in meta if isinstance(m, dict) and isinstance(m.get("created"), str)
                  and "policy" in m), None)
    if run is None or about is None:
        return None
    return jsonnum.dumps([run["inputs"], about["created"], about["policy"]])


def refuse_pages_of_two_splits(paths, headers):
    """A MergeError when two inputs are pages of one profile (the same !meta inputs, created and
    policy) but not two pages of one split: a page left over from an earlier split into more pages,
    or a page given twice, whose captures the other pages count too. Pages of one split are fine."""
    seen = {}
    for path, h in zip(paths, headers):
        page = page_meta(h)
        origin = _origin(header_dict(h)["meta"]) if page else None
        if origin is None:
            continue
        split = (page.get("source"), page.get("of"))
        for other, other_page, other_split in seen.get(origin, []):
            if split == other_split and page.get("number") != other_page.get("number"):
                continue
            raise MergeError("%s and %s are page %s of %s and page %s of %s of %s: merged, its captures would count "
                             "twice (%s)" % (other, path, other_page.get("number"), other_page.get("of"),
                                             page.get("number"), page.get("of"), page.get("source"),
                                             "a page left over from an earlier split?" if split != other_split
                                             else "one page given twice"))
        seen.setdefault(origin, []).append((path, page, split))


def refuse_some_pages(paths, headers):
    """A MergeError when some pages of a split profile or map are given without the others: a
    merge of one layout reads a key without a line as none held, and the keys of the pages not
    given would be (a merge of inputs of other key fields bounds the keys an input lacks
    instead: _merge_projected)."""
    splits = {}
    for path, h in zip(paths, headers):
        page = page_meta(h)
        if page is not None:
            whole = jsonnum.dumps([[n, v] for n, v in original_headers(h)])
            splits.setdefault((page.get("source"), page.get("of"), whole), []).append((path, page))
    for (source, total, _), given in splits.items():
        missing = sorted(set(range(1, total + 1)) - {page.get("number") for _, page in given}) \
            if isinstance(total, int) else []
        if missing:
            raise MergeError("%s is page %s of %s of %s, and page(s) %s are not given: merged, its keys on them would "
                             "read as none held; give every page" % (
                                 given[0][0], given[0][1].get("number"), total, source,
                                 ", ".join(map(str, missing[:5])) + (", ..." if len(missing) > 5 else "")))


def _common(values, what, paths):
    for v, p in zip(values[1:], paths[1:]):
        if v != values[0]:
            raise MergeError("cannot merge: %s and %s have different %s" % (paths[0], p, what))
    return values[0]


def exact_in(meta_list):
    """Features an input declares exact (all of them for a profile that was not merged)."""
    for m in meta_list:
        if isinstance(m, dict) and isinstance(m.get("merge"), dict):
            return set(m["merge"].get("exact", FEATURES))
    return set(FEATURES)


def exact_features(input_exact, disjoint):
    """The features exact on every line of a merge of inputs with these exact-feature sets."""
    exact = set.intersection(*input_exact) if input_exact else set(FEATURES)
    if len(input_exact) > 1:
        if "urir" not in disjoint:
            exact -= set(BY_URIR)
        if "digests" not in disjoint:
            exact -= set(BY_DIGEST)
    return [n for n in FEATURES if n in exact]


def _archive_uri(ids, archive_uri):
    if archive_uri is not None:
        return archive_uri
    uris = {i.get("uri") if isinstance(i, dict) else None for i in ids}
    return uris.pop() if len(uris) == 1 else None


def _counted(meta, name, kind, path):
    """A !meta field of one input the merged !meta adds up: its value, or a MergeError."""
    value = meta.get(name)
    ok = isinstance(value, kind) and not isinstance(value, bool) and (
        kind is not int or value >= 0) and (kind is not dict or all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value.values()))
    if value is not None and not ok:
        raise MergeError("%s: its !meta %s is %s, not %s" % (path, name, jsonnum.dumps(value)[:40].decode(
            "utf-8", "replace"), {int: "a whole number", list: "a list", dict: "an object of counts"}[kind]))
    return value


def profile_headers(paths, headers, disjoint, archive_uri=None, created=None, skipped=None, bound_revisits=True,
                    sorted_inputs=None, converted=None):
    """The '!' lines of a merged profile, in byte order. Inputs of different key layouts (their
    !keys) are a LayoutError. ``skipped``: {file: counts} of the damaged lines left out;
    ``bound_revisits``: whether keys of revisits resolved per input get bounds (the !meta says
    so, with the ABSENT_KEYS note); ``sorted_inputs``: {file: lines} sorted on the way in;
    ``converted``: {file: what its conversion kept and skipped} of archive_profiler documents."""
    layout = layouts.require_same("merge", paths, [layouts.of_headers(h, p) for h, p in zip(headers, paths)])
    hs = [header_dict(h) for h in headers]
    abouts = [next((m for m in h["meta"] if isinstance(m, dict) and "policy" in m), {}) for h in hs]
    runs = [next((m for m in h["meta"] if isinstance(m, dict) and "inputs" in m), {}) for h in hs]
    pages = [next((m["page"] for m in h["meta"] if isinstance(m, dict) and isinstance(m.get("page"), dict)), None)
             for h in hs]
    one_file = all(pages) and len({(p.get("source"), p.get("of")) for p in pages}) == 1
    if one_file:
        runs = runs[:1]    # pages of one split file: one set of captures, resolved as one
    policy = _common([a.get("policy") for a in abouts], "policies (a key missing from one would "
                     "read as zero captures)", paths)
    given = [a.get("revisits") for a in abouts]
    revisits = _common(["resolved" if str(v).startswith("resolved") else v for v in given],
                       "revisit handling", paths)
    exact = exact_features([exact_in(h["meta"]) for h in hs], disjoint)
    run_meta = _run_meta(runs, paths)
    if revisits == "resolved" and (REVISITS_PER_INPUT in given
                                   or ("urir" not in disjoint and len(paths) > 1 and not one_file)):
        revisits = REVISITS_PER_INPUT
        exact = []          # keys with a mime or status get bounds (bound_revisit_keys)
    about = {"type": "ArchiveProfile", "generator": GENERATOR, "created": created or _now(),
             "policy": policy, "revisits": revisits,
             "merge": {"parts": [_shown_path(p) for p in paths], "disjoint": sorted(disjoint),
                       "exact": exact, "bounds": [n for n in FEATURES if n not in exact]}}
    return _header_lines(hs, layout.fields, run_meta, about, archive_uri, skipped,
                         revisits == REVISITS_PER_INPUT and bound_revisits, sorted_inputs, converted)


def _shown_path(path):
    """An input's absolute path as !meta names it (bytes that are not UTF-8 as \\xNN: JSON holds text);
    a descriptor's name (/dev/stdin < FILE) by the file it names (it names another file in every
    process), as profile names its inputs."""
    from profiler.formats.inputs import named_file
    return display_name(named_file(os.path.abspath(path)))


def _run_meta(runs, paths):
    """The merged run !meta: the inputs' files, captures and skips added up."""
    inputs, captures, skipped, skipped_files = [], 0, {}, []
    for r, path in zip(runs, paths):
        inputs += _counted(r, "inputs", list, path) or []
        captures += _counted(r, "captures", int, path) or 0
        for k, v in (_counted(r, "skipped", dict, path) or {}).items():
            skipped[k] = skipped.get(k, 0) + v
        skipped_files += _counted(r, "skipped_files", list, path) or []
    run_meta = {"inputs": inputs, "captures": captures, "skipped": dict(sorted(skipped.items()))}
    if skipped_files:
        run_meta["skipped_files"] = skipped_files
    return run_meta


def _header_lines(hs, fields, run_meta, about, archive_uri, skipped_lines, absent_keys, sorted_inputs, converted):
    """A merged profile's '!' lines in byte order, its merge !meta (about) completed with the
    notes every merge gives."""
    if skipped_lines:
        about["merge"]["skipped_lines"] = skipped_lines
    if absent_keys:
        about["merge"]["absent_keys"] = ABSENT_KEYS
    if sorted_inputs:
        about["merge"]["sorted_inputs"] = {_shown_path(p): n for p, n in sorted_inputs.items()}
    if converted:
        about["merge"]["converted_inputs"] = {_shown_path(p): m for p, m in converted.items()}
    lines = [b"!context " + jsonnum.dumps(CONTEXT),
             b"!id " + jsonnum.dumps({"uri": _archive_uri([h.get("id") for h in hs], archive_uri)}),
             b"!keys " + jsonnum.dumps(list(fields)),
             b"!meta " + jsonnum.dumps(run_meta),
             b"!meta " + jsonnum.dumps(about)]
    return sorted(lines)


def map_headers(paths, headers, disjoint, archive_uri=None, created=None, skipped=None, nkeys=None,
                sorted_inputs=None):
    """The '!' lines of a merged UKVS map, in byte order. Maps whose lines break down by other
    criteria (one by lang, one not) are not merged: a line without the breakdown would hide
    the other's languages; nor are maps broken down by a criterion not registered here (a
    plugin's, its module not named), whose breakdowns would be dropped from the lines in both. ``skipped``: {file: counts} of the damaged lines left out; ``nkeys``:
    the inputs' numbers of key fields (a map without !fields, as ``mementomap generate`` writes
    it, has the usual ones); ``sorted_inputs``: {file: lines} sorted on the way in."""
    hs = [header_dict(h) for h in headers]
    usual = {1: {"keys": ["surt"], "values": ["frequency"]},
             2: {"keys": ["surt", "datetime"], "values": ["frequency"]}}
    fields = _common([h.get("fields") or usual.get(n) for h, n in zip(hs, nkeys or [None] * len(hs))],
                     "!fields", paths)
    by = [ukvs.breakdowns(h) for h in headers]
    for p, other in zip(paths[1:], by[1:]):
        if other != by[0]:
            raise MergeError("cannot merge: %s breaks its lines down by %s, %s by %s" % (
                paths[0], " ".join(by[0]) or "nothing", p, " ".join(other) or "nothing"))
    unknown = [n for n in by[0] if n not in criteria.BY_NAME]
    if unknown:       # a plugin's criterion not loaded: its breakdowns could not add up, only be dropped
        raise MergeError("cannot merge: %s breaks its lines down by %s, a criterion not loaded here (a plugin's: "
                         "name its module in %s)" % (paths[0], " ".join(unknown), contract.PLUGINS_ENV))
    refuse_maps_of_other_policies(paths, headers)
    exact_urir = "urir" in disjoint or len(paths) == 1
    meta = {"type": "MementoMap", "generator": GENERATOR, "created": created or _now(),
            "merge": {"parts": [_shown_path(p) for p in paths], "disjoint": sorted(disjoint),
                      "exact": ["urim"] + (["urir"] if exact_urir else []),
                      "part_meta": [h["meta"] for h in hs]}}
    if skipped:
        meta["merge"]["skipped_lines"] = skipped
    if sorted_inputs:
        meta["merge"]["sorted_inputs"] = {_shown_path(p): n for p, n in sorted_inputs.items()}
    if by[0]:
        meta[ukvs.BREAKDOWN_META] = by[0]
    out = [("!context", ukvs.CONTEXT),
           ("!id", {"uri": _archive_uri([h.get("id") for h in hs], archive_uri)}),
           ("!fields", fields or {"keys": ["surt"], "values": ["frequency"]}),
           ("!meta", meta)]
    return sorted(ukvs.header_line(n, v) for n, v in out)


# ---------------------------------------------------------------- merge

def merged_profile_lines(paths, disjoint_of, counter, skipped=None):
    """The 'key value' lines of sorted profiles merged: a key's values combined, disjoint_of(key)
    naming the features (urir, digests) whose inputs hold disjoint URI-Rs or digests under it.
    counter counts lines, merged keys and keys with bounds. Every line of every input is checked
    (profiler.files.datalines): a damaged one is a one-line error, or with ``skipped`` (one
    Skipped or None per input: the merge command's --skip-bad-lines) counted and left out; a
    nightly fold stays strict, so that a damaged profile is rebuilt. A key held by one input is
    copied as it is."""
    skipped = skipped or [None] * len(paths)
    streams = [_stream(i, DataFile(p, "cdxj").records(s, parse=False))
               for i, (p, s) in enumerate(zip(paths, skipped))]
    counter.setdefault("bounded", 0)
    for key, found in _grouped(streams):
        records = list(found.values())
        counter["lines"] += 1
        if len(records) == 1:
            yield key + b" " + records[0].json
            continue
        counter["merged"] += 1
        merged = combine([r.value if r.value is not None else jsonnum.loads(r.json) for r in records],
                         disjoint_of(key), counter)
        counter["bounded"] += "bounds" in merged
        yield key + b" " + jsonnum.dumps(merged)


#: the features a key with a mime or status gets bounds for when revisits may resolve elsewhere
REVISIT_BOUNDED = ("urim.total", "urim.min", "urim.max", "urir", "bytes", "digests", "dedup_bytes", "first", "last")
#: lines of one SURT held to find their '- -' lines; past it, the envelope is taken from the
#: SURT's all-time line (or the root's)
GROUP_LIMIT = 100000
#: the merged !meta's "merge" note for keys without a line when revisits were resolved per input
#: (read by query: profiler.toolkit.query)
ABSENT_KEYS = ("a key with a resolved criterion (mime, status, lang) other than '-' that has no line may "
               "hold revisits resolved in another input: each feature within [0, the high of the line of "
               "its SURT and datetime whose resolved criteria are '-' (else its SURT's all-time line)]")


def bound_revisit_keys(lines, counter, layout=criteria.CORE_LAYOUT):
    """Bounds for keys with a resolved criterion (mime, status, lang: what a revisit takes from
    its original) other than '-' in a merge of inputs whose revisits were resolved each on its
    own: a revisit whose original is in another input resolves to other values from scratch, so
    such a key may lose or gain captures. Its true features lie within [0, the same SURT and
    datetime's all-'-' line's high] (that line's captures do not depend on resolution), its
    first/last within that line's first and last. A from-scratch key the inputs lack (all its
    captures revisits resolved elsewhere) gets no line: the merged !meta's "absent_keys" note
    (ABSENT_KEYS) carries that possibility once, and query answers such a key with the same
    bounds (docs/toolkit.md, "Split and merge rules")."""
    state = {"root": None, "all_time": None}
    surt, section = None, []
    for line in lines:
        i = line.find(b" {")
        fields = line[:i].split(b" ")
        if fields[0] != surt:
            if section:
                yield from _bound_section(section, state, counter, layout)
            surt, section = fields[0], []
        section.append((fields, line, i))
        if len(section) > GROUP_LIMIT:      # a hostile number of mimes: bound them as they come
            yield from _bound_section(section, state, counter, layout)
            section = []
    if section:
        yield from _bound_section(section, state, counter, layout)


def _bound_section(section, state, counter, layout):
    """The lines of one SURT (sorted: by datetime, then the other criteria), bounded. A key's
    envelope is the line of the same fields with its resolved criteria '-' (the other optional
    ones, size, collection, depth, are a capture's own, whatever it resolves to), else that of
    its datetime alone, else its SURT's all-time line, else the root's; else, when the policy
    writes none of those, the sum of the lines that part the same captures by the resolved
    criteria at the key's levels (partition_envelope)."""
    dt_at = layouts.index(layout, criteria.DATETIME.name)
    resolved = [layouts.index(layout, c.name) for c in layout.criteria if c.resolved]
    own = [j for j in range(1, len(layout.fields)) if j not in resolved]

    def rest(fields):
        return tuple(fields[j] for j in resolved)

    def others(fields):
        return tuple(fields[j] for j in own)

    anys = (b"-",) * len(resolved)
    envelopes = {}
    for fields, line, i in section:
        if rest(fields) == anys:
            envelopes[others(fields)] = jsonnum.loads(line[i + 1:])
    surt = section[0][0][0]
    no_others = (b"-",) * len(own)
    if no_others in envelopes:
        state["all_time"] = (surt, envelopes[no_others])
        if surt == b"*":
            state["root"] = envelopes[no_others]
    fallback = state["all_time"][1] if state["all_time"] and state["all_time"][0] == surt else state["root"]
    parts = None
    for fields, line, i in section:
        if rest(fields) == anys:
            yield line
            continue
        dt_only = tuple(fields[j] if j == dt_at else b"-" for j in own)
        envelope = envelopes.get(others(fields)) or envelopes.get(dt_only) or fallback
        if envelope is None:
            if parts is None:               # the section's lines by their fields but the resolved ones
                parts = {}
                for f, whole, k in section:
                    parts.setdefault(others(f), []).append((f, whole[k + 1:]))
            envelope = partition_envelope(fields, parts.get(others(fields), ()), layout)
        counter["bounded"] = counter.get("bounded", 0) + (b"bounds" not in line[i:])
        yield fields_line(line[:i], widen(jsonnum.loads(line[i + 1:]), envelope))


def partition_envelope(fields, lines, layout):
    """A value holding every capture of a key (fields: bytes) whatever its revisits resolve to,
    from lines (fields, JSON bytes) of its SURT: those of the same datetime and other optional
    fields whose resolved criteria are '-' where the key's are and at one of the same levels
    where not. The policy writes a key's level combination for every value, so each capture
    under the SURT, datetime and other fields is counted in exactly one of them: their highs
    summed bound the key's counts, their first and last its first and last."""
    resolved = [layouts.index(layout, c.name) for c in layout.criteria if c.resolved]
    by_index = {layouts.index(layout, c.name): c for c in layout.criteria}

    def levels(j, value):
        return set(by_index[j].field_levels(value.decode("utf-8", "replace")))

    wanted = {j: levels(j, fields[j]) for j in resolved}
    total = {name: 0 for name in REVISIT_BOUNDED[:7]}
    first = last = None
    for other, value in lines:
        if len(other) != len(fields) or any(other[j] != fields[j] for j in range(len(fields)) if j not in wanted):
            continue
        if any(not (levels(j, other[j]) & wanted[j]) for j in wanted):
            continue
        parsed = jsonnum.loads(value)
        flat, bounds = flatten(parsed), parsed.get("bounds") or {}
        for name in total:
            total[name] += bounds.get(name, (None, flat.get(name, 0)))[1]
        lo, hi = bounds.get("first", (flat.get("first"),))[0], bounds.get("last", (None, flat.get("last")))[1]
        first = lo if first is None or (lo is not None and lo < first) else first
        last = hi if last is None or (hi is not None and hi > last) else last
    value = {"urim": {"total": total["urim.total"], "min": total["urim.min"], "max": total["urim.max"]},
             "urir": total["urir"], "bytes": total["bytes"], "digests": total["digests"],
             "dedup_bytes": total["dedup_bytes"]}
    if first is not None and last is not None:
        value.update(first=first, last=last)
    return value


#: the value of a key no input holds: no captures (bounds added by widen)
ZERO = {"urim": {"total": 0, "min": 0, "max": 0}, "urir": 0, "bytes": 0, "digests": 0, "dedup_bytes": 0}


def fields_line(key, value):
    return key + b" " + jsonnum.dumps(value)


def widen(value, envelope):
    """A value with bounds widened to the envelope's (see bound_revisit_keys)."""
    flat = flatten(value)
    env = flatten(envelope)
    bounds = {n: tuple(v) for n, v in (value.get("bounds") or {}).items()}
    env_bounds = envelope.get("bounds") or {}
    for name in REVISIT_BOUNDED[:7]:
        source = "urim.max" if name in ("urim.min", "urim.max") else name
        high = env_bounds.get(source, (None, env.get(source, 0)))[1]
        own = bounds.get(name, (flat.get(name, 0), flat.get(name, 0)))
        bounds[name] = (0, max(high, own[1]))
    first, last = env.get("first"), env.get("last")
    if isinstance(first, str) and isinstance(last, str):
        for name in ("first", "last"):
            v = flat.setdefault(name, first if name == "first" else last)
            bounds[name] = (min(first, v), max(last, v))
    return unflatten(flat, bounds, extras(value))


def merge(paths, out_path, disjoint=(), archive_uri=None, created=None, bound_revisits=True,
          skip_bad_lines=False):
    """Merge sorted profiles or UKVS maps into out_path (written atomically; '-' standard
    output). Every input is read whole and checked first (profiler.files.datalines), so a damaged
    or unsorted one is refused before anything is written; an unsorted file another tool wrote
    (``mementomap generate``'s) is sorted on the way in instead (profiler.files.insort: temporary
    files in the output's folder, removed after), counted in the summary's "sorted" and the
    merged !meta. An archive profile of oduwsdl's archive_profiler (JSON) is converted on the way
    in (profiler.files.oduprofile: the keys that mean one of ours), its skipped keys counted in
    the summary's "converted" and the merged !meta. ``skip_bad_lines``: damaged lines are left
    out, counted in the merged !meta and the summary. Returns a summary."""
    if not paths:
        raise MergeError("nothing to merge")
    twice = infiles.repeated(paths)
    if twice is not None:                                       # its captures would count twice
        raise MergeError("%s and %s are the same file: merged with itself, its captures would count twice; "
                         "give it once" % twice)
    # the sort's temp files beside the file written: outfiles.target resolves 'LINK/..' and a
    # link as the system does (abspath takes '..' lexically: another folder, maybe another disk)
    folder = None if out_path == "-" else os.path.dirname(os.path.abspath(outfiles.target(out_path, paths)))
    if out_path != "-":
        outfiles.refuse_inputs(out_path, paths)                 # an input is never replaced
    with contextlib.ExitStack() as stack:
        read, sorted_inputs, converted, marginals, left_out = [], {}, {}, {}, {}
        for p in paths:
            if odu_document(p):
                conversion = stack.enter_context(oduprofile.ConvertedCopy(p, folder, skip_bad_lines))
                converted[p] = conversion.meta()
                marginals[p] = conversion.marginals
                read.append(conversion.path)
                continue
            copy = _sorted_if_foreign(p, folder, skip_bad_lines, stack)
            read.append(copy.path if copy else p)
            if copy:
                sorted_inputs[p] = copy.lines
                if copy.skipped_long:
                    left_out[p] = copy.skipped_long
        try:
            summary = _merge(paths, read, out_path, disjoint, archive_uri, created, bound_revisits,
                             skip_bad_lines, sorted_inputs, converted, marginals, left_out)
        except UserError as e:
            message = str(e)
            for p, r in zip(paths, read):
                if r != p:
                    message = message.replace(r, "%s (%s)" % (p, "converted" if p in converted else "sorted"))
            if converted and isinstance(e, layouts.LayoutError):
                message += (" (an archive_profiler document converts to keys %s: it merges with profiles whose "
                            "key fields include those)" % " ".join(oduprofile.KEYS))
            if message == str(e):
                raise
            raise type(e)(message) from e
    summary["sorted"] = sorted(sorted_inputs.items())
    summary["converted"] = [(p, m["skipped"]) for p, m in converted.items()]
    own = [p for p, r in zip(paths, read) if r == p]
    summary["copies"] = _copies(own)
    summary["shared_inputs"] = _shared_inputs(own, summary["copies"])
    return summary


def _shared_inputs(paths, copies):
    """(path, other path, an input file both name, how many they share) of inputs profiled from
    some of the same files (their !meta inputs; not copies, already named, nor pages of one
    split): if those files held the same captures then, a merge counts them twice."""
    named, out, told = [], [], {frozenset(pair) for pair in copies}
    for path in paths:
        headers = DataFile(path).headers
        if page_meta(headers) is not None:
            continue
        meta = header_dict(headers)["meta"]
        run = next((m for m in meta if isinstance(m, dict) and isinstance(m.get("inputs"), list)), None)
        inputs = {i for i in run["inputs"] if isinstance(i, str)} if run else set()
        for other, other_inputs in named:
            shared = inputs & other_inputs
            if shared and frozenset((other, path)) not in told:
                out.append((other, path, min(shared), len(shared)))
        named.append((path, inputs))
    return out


def _copies(paths):
    """Pairs of inputs whose header lines are the same and say when they were made (a !meta
    "created"): copies of one run's file, whose captures a merge counts twice."""
    seen, out = {}, []
    for path in paths:
        headers = tuple(DataFile(path).raw_headers)
        if not any(h[1:5] == b"meta" and b'"created"' in h for h in headers):
            continue
        if headers in seen:
            out.append((seen[headers], path))
        else:
            seen[headers] = path
    return out


def _write(out_path, headers, data):
    """Write the headers and data lines to out_path atomically; the number of data lines."""
    written = [0]

    def lines():
        yield from headers
        for line in data:
            written[0] += 1
            yield line

    write_atomic(out_path, lines())
    return written[0]


def _sorted_if_foreign(path, folder, skip_bad_lines, stack):
    """A SortedCopy of an input another tool wrote whose lines are out of order, else None."""
    found = DataFile(path)
    if insort.written_here(found.headers):
        return None
    try:
        found.check(Skipped(path) if skip_bad_lines else None)
        return None
    except UnsortedFile:
        return stack.enter_context(insort.SortedCopy(path, folder, skip_long=skip_bad_lines))


def _merge(paths, read, out_path, disjoint, archive_uri, created, bound_revisits, skip_bad_lines, sorted_inputs,
           converted=None, marginals=None, left_out=None):
    """``left_out``: {path: [(line number, Bad)]} of the lines too long to sort that the sort of
    a foreign input left out (insort.SortedCopy.skipped_long), counted with its skipped lines."""
    bad = set(disjoint) - set(DISJOINT_CHOICES)
    if bad:
        raise MergeError("--disjoint takes %s, not %s" % (" or ".join(DISJOINT_CHOICES), sorted(bad)[0]))
    files = [DataFile(r) for r in read]
    for f, p in zip(files[1:], paths[1:]):
        if f.kind != files[0].kind:
            names = {"cdxj": "a CDXJ profile", "ukvs": "a UKVS map"}
            raise MergeError("cannot merge: %s is %s, %s %s: merge profiles, or maps, or make the maps again "
                             "from the merged profile" % (paths[0], names[files[0].kind], p, names[f.kind]))
    kind = files[0].kind
    if kind == "cdxj":
        refuse_pages_of_two_splits(paths, [f.headers for f in files])
    if kind == "ukvs":
        _common([f.nkeys for f in files], "numbers of key fields", paths)
    checked = [Skipped(p) if skip_bad_lines else None for p in paths]
    for f, s in zip(files, checked):
        f.check(s, header_policy=kind == "cdxj" and len(files) > 1)
    for p, s in zip(paths, checked):
        for lineno, bad in (left_out or {}).get(p, ()):
            s.add(lineno, bad)
    skipped_lines = skipped_meta(checked)
    skipped = [Skipped(p) if skip_bad_lines else None for p in paths]
    counter = {"lines": 0, "merged": 0}
    common = common_layout(paths, [f.layout for f in files]) if kind == "cdxj" else None
    if len(files) > 1:
        refuse_compacted(paths, files)
    if common is None:
        refuse_some_pages(paths, [f.headers for f in files])
    if common is not None:
        return _merge_projected(paths, read, files, out_path, common, disjoint, archive_uri, created,
                                bound_revisits, skip_bad_lines, checked, skipped_lines, sorted_inputs,
                                converted or {}, marginals or {})
    if kind == "cdxj":
        input_headers = [f.headers for f in files]
        headers = profile_headers(paths, input_headers, disjoint, archive_uri, created, skipped_lines,
                                  bound_revisits, sorted_inputs, converted)
        layout = files[0].layout

        per_input = bound_revisits and any(b'"absent_keys"' in h for h in headers)

        def data():
            lines = merged_profile_lines(read, lambda key: disjoint, counter, skipped)
            return bound_revisit_keys(lines, counter, layout) if per_input else lines
    else:
        headers = map_headers(paths, [f.headers for f in files], disjoint, archive_uri, created, skipped_lines,
                              [f.nkeys for f in files], sorted_inputs)
        streams = [_stream(i, f.records(s)) for i, (f, s) in enumerate(zip(files, skipped))]

        spans = _SpansOfOneSurt(paths) if files[0].nkeys == 2 else None

        def data():
            for key, found in _grouped(streams):
                if spans is not None:
                    spans.add(key, found)
                records = list(found.values())
                counter["lines"] += 1
                counter["merged"] += len(records) > 1
                freqs = [r.value for r in records]
                line = key + b" " + ukvs.format_frequency(combine_frequencies(freqs, disjoint)).encode("ascii")
                block = combine_blocks([r.json for r in records], freqs, disjoint, counter)
                yield line + b" " + block if block else line

    written = _write(out_path, headers, data())
    return {"output": out_path, "kind": kind, "inputs": len(paths), "lines": written,
            "merged_keys": counter["merged"], "extras_dropped": counter.get("extras_dropped", 0),
            "skipped": [s for s in checked if s is not None and s.count]}


class _SpansOfOneSurt:
    """The datetime spans of the merged lines of one SURT of surt,datetime maps: a span written
    two ways ('2013' and '2013:2013', '-' and ':') would be two lines, each some inputs' count,
    and a lookup would answer from one of them; such maps are refused (a UserError)."""

    def __init__(self, paths):
        self.paths = paths
        self.surt, self.seen = None, {}

    def add(self, key, found):
        surt, _, field = key.rpartition(b" ")
        if surt != self.surt:
            self.surt, self.seen = surt, {}
        span = ukvs.datetime_span(field.decode("ascii", "replace"))
        other = self.seen.setdefault(span, (field, found))
        if other[0] != field:
            names = sorted({self.paths[i] for i in list(other[1]) + list(found)})
            raise UserError("cannot merge %s: they write the period %r of %s also as %r (one period, two keys: the "
                            "merged map would hold two lines for it, each some inputs' count); write it alike"
                            % (" and ".join(names), field.decode("utf-8", "replace")[:40],
                               surt.decode("utf-8", "replace")[:80], other[0].decode("utf-8", "replace")[:40]))


# ---------------------------------------------------------------- inputs of different key fields

#: the merged !meta's "merge" note on the keys an input has no line for, in a merge of inputs of
#: different key fields (read as words; ``query`` answers a key without a line as unknown)
UNKNOWN_KEYS = ("a key an input has no line for holds none of that input's captures when the input is a "
                "complete profile (not compacted, not a page, no line skipped) whose policy writes such keys; "
                "otherwise (an archive_profiler document: counts per TLD, month and media type only; a profile "
                "that is compacted, a page, has lines skipped or whose policy lacks the key's level) that input's "
                "captures under the key are unknown, between 0 and the least of its lines of coarser keys that "
                "contain the key (its TLD's line, its year's or month's, its media type's, its total): the "
                "merged line then writes the other inputs' sum, with bounds from that sum (low) to that sum plus "
                "the coarser line's count (high), and leaves out the features such an input does not bound "
                "(bytes, digests, dedup_bytes, first, last)")
#: the features a merged line keeps when an input's share of its key is unknown
UNKNOWN_BOUNDED = ("urim.total", "urim.min", "urim.max", "urir")
#: the lines of coarser keys (the root's and TLDs') kept per input to bound keys it lacks; past
#: it, fewer coarser keys are known (the bounds stay sound, or the key cannot be bounded) and a
#: document's months, TLDs and media types are not added up
COARSE_LIMIT = 100000


def refuse_compacted(paths, files):
    """A MergeError for a compacted input among other profiles or maps: its keys without a line may hold
    captures that compaction rolled up into coarser lines, which merging would count as none (the
    merged line written exact, the sum of the others), or, merged on fewer key fields, as an
    unknown share that leaves lines without bytes, which the toolkit then refuses."""
    for path, found in zip(paths, files):
        if coverage.compacted(found.headers):
            what = "profile" if found.kind == "cdxj" else "map"
            raise MergeError("cannot merge %s: a compacted %s (!meta compacted), whose keys without a line "
                             "may hold captures rolled up into coarser lines, which a merge would count as none; "
                             "merge the %ss it was compacted from, then compact" % (path, what, what))


def refuse_maps_of_other_policies(paths, headers):
    """A MergeError for maps made from profiles of different policies (their !meta source policy
    or coverage): a key one policy writes and the other never does would be copied from the
    maps that have it, written exact, though the others hold captures under it in a coarser line."""
    for path, found in zip(paths[1:], headers[1:]):
        same, names = coverage.same_map_policy(headers[0], found)
        if not same:
            raise MergeError("cannot merge: %s and %s are maps made from profiles of different policies (%s, %s): "
                             "a key one of them never writes would read as none of its captures; merge the "
                             "profiles, or maps of one policy" % (paths[0], path, str(names[0])[:40],
                                                                  str(names[1])[:40]))


def common_layout(paths, found):
    """The layout the inputs are projected onto: None when every input has the same key fields;
    the layout of the input whose key fields (by name) are a subset of every other's; else the
    LayoutError of files whose key fields differ."""
    if all(layout == found[0] for layout in found[1:]):
        return None
    fewest = min(found, key=lambda layout: len(layout.names))
    if all(set(fewest.names) <= set(layout.names) for layout in found):
        for path, layout in zip(paths, found):
            if [n for n in layout.names if n in fewest.names] != list(fewest.names):
                raise layouts.LayoutError(
                    "cannot merge: %s has its key fields in another order (%s) than %s (%s): a merge streams "
                    "sorted files, so their common fields must come in one order"
                    % (path, layouts.describe(layout), paths[found.index(fewest)], layouts.describe(fewest)))
        return fewest
    return layouts.require_same("merge", paths, found)


class Projection:
    """An input's lines projected onto fewer key fields: the lines whose other fields are all '-',
    with those fields removed; the others left out and counted (``left_out``)."""

    def __init__(self, layout, common):
        self.keep = [layout.fields.index(f) for f in common.fields]
        self.extra = [i for i, f in enumerate(layout.fields) if f not in common.fields]
        self.dropped = [layout.fields[i] for i in self.extra]
        self.left_out = 0

    def key(self, key):
        fields = key.split(b" ")
        if any(fields[i] != b"-" for i in self.extra):
            self.left_out += 1
            return None
        return b" ".join(fields[i] for i in self.keep)


def _projected_stream(index, records, projection, path, common):
    """(key, input index, record) of an input's records, projected; the projected keys must stay
    in byte order (a field with a byte below the space could reorder them: refused)."""
    before = None
    for record in records:
        key = projection.key(record.key) if projection else record.key
        if key is None:
            continue
        if before is not None and not before < key:
            raise MergeError("cannot merge: %s: its lines are out of order once projected onto keys %s (%s "
                             "after %s)" % (path, layouts.describe(common), _shown(key), _shown(before)))
        before = key
        yield key, index, record


def _shown(key):
    return key[:80].decode("utf-8", "replace")


def _fields(key):
    return tuple(key.decode("utf-8", "surrogateescape").split(" "))


def _tld(surt):
    """The TLD line's SURT ('com,*') that counts the captures of a SURT under it, or None."""
    i = min((j for j in (surt.find(","), surt.find(")")) if j > 0), default=-1)
    if i <= 0 or "*" in surt[:i]:
        return None
    return surt[:i] + ",*"


def _coarse(fields):
    """Whether a key is the root's or a TLD's (the lines kept to bound keys an input lacks)."""
    return fields[0] == "*" or (fields[0].endswith(",*") and fields[0].count(",") == 1)


def _highs(value):
    """(urim.total, urir, urim.max) highs of a line (its bounds' highs; a feature it lacks: its
    total), or None for a line without urim.total (another producer's value style)."""
    flat = flatten(value)
    bounds = value.get("bounds") or {}
    if "urim.total" not in flat:
        return None

    def high(name):
        if name in bounds:
            return bounds[name][1]
        return flat.get(name, flat.get("urim.total", 0))
    return high("urim.total"), high("urir"), high("urim.max")


class Absence:
    """What an input without a line for a key says of the key's captures (in the common layout's
    fields, str): none (``zero``), or an unknown amount within ``envelope``: the least of its
    coarser lines' highs {urim.total, urir, urim.max}, or None when nothing bounds it."""

    def __init__(self, common, coarse, headers=None, layout=None, damaged=False, marginals=None):
        self.common, self.coarse, self.marginals = common, coarse, marginals
        self.layout = layout
        self.policy = None
        self.per_input_revisits = False
        if headers is not None and not damaged:
            self.policy = headerpolicy.complete_policy(headers)
            self.per_input_revisits = any(
                n[1:] == "meta" and isinstance(v, dict) and isinstance(v.get("merge"), dict)
                and v["merge"].get("absent_keys") for n, v in headers)

    def zero(self, fields):
        if self.policy is None:
            return False
        from profiler.model.emitted import not_emitted
        values = dict(zip(self.common.fields, fields))
        full = [fields[0]] + [values.get(n, "-") for n in self.layout.names]
        if self.per_input_revisits and any(values.get(c.name, "-") != "-" for c in self.layout.criteria
                                           if c.resolved):
            return False
        try:
            return not_emitted(self.policy, full, self.layout) is None
        except (ValueError, KeyError, IndexError):
            return False

    def envelope(self, fields):
        found = []
        names = self.common.names
        coarser = [c.coarser_fields(f) for c, f in zip(self.common.criteria, fields[1:])]   # the registry's levels
        surts = [s for s in (fields[0], _tld(fields[0]), "*") if s]
        for surt in dict.fromkeys(surts):
            if surt != fields[0] and surt != "*" and not fields[0].startswith(surt[:-1]):
                continue
            for rest in itertools.product(*coarser):
                key = (surt,) + rest
                if key != tuple(fields) and key in self.coarse:
                    line = self.coarse[key]
                    found.append(line if isinstance(line, tuple) else _highs(line))
        if self.marginals is not None:
            found += self._from_marginals(fields[0], dict(zip(names, fields[1:])))
        found = [f for f in found if f is not None]
        if not found:
            return None
        total = min(f[0] for f in found)
        return {"urim.total": total, "urir": min(min(f[1] for f in found), total),
                "urim.max": min(min(f[2] for f in found), total)}

    def _from_marginals(self, surt, values):
        """An archive_profiler document's bounds besides its lines: its total; none under a TLD it
        lacks, a datetime's months added up and a media type's (category's) types, when those
        sections cover the total."""
        m = self.marginals
        out = []
        if m["total"] is not None:
            out.append((m["total"],) * 3)
        dt, mime = values.get("datetime", "-"), values.get("mime", "-")
        tld = _tld(surt)
        if m.get("tlds") and tld and surt.startswith(tld[:-1]) and (tld,) + ("-",) * len(values) not in self.coarse:
            out.append((0, 0, 0))
        if m["months"] and dt != "-" and dt.isdigit() and len(dt) >= 4:
            prefix = dt[:6] if len(dt) >= 6 else dt
            out.append(self._added(lambda k: k[0] == "*" and k[2] == "-" and k[1] != "-"
                                   and k[1].startswith(prefix)))
        if m["mimes"] and mime != "-":
            category = mime[:-1] if mime.endswith("/*") else None
            out.append(self._added(lambda k: k[0] == "*" and k[1] == "-" and k[2] != "-"
                                   and (k[2] == mime or (category is not None and k[2].startswith(category)))))
        return out

    def parts(self, fields):
        """The document's lines that add up to a key it has no line for (its total: its months or
        media types; a year: its months; a media category: its types), when those cover the
        total; None otherwise ([]: no captures there)."""
        m = self.marginals
        if m is None or fields[0] != "*" or m["total"] is None:
            return None
        values = dict(zip(self.common.names, fields[1:]))
        dt, mime = values.get("datetime", "-"), values.get("mime", "-")
        if any(v != "-" for n, v in values.items() if n not in ("datetime", "mime")):
            return None
        months = [v for k, v in self.coarse.items() if k[0] == "*" and k[1] != "-" and k[2] == "-"]
        types = [v for k, v in self.coarse.items() if k[0] == "*" and k[1] == "-" and k[2] != "-"]
        if dt == "-" and mime == "-":
            return months if m["months"] else types if m["mimes"] else None
        if mime == "-" and len(dt) == 4 and dt.isdigit() and m["months"]:
            return [v for k, v in self.coarse.items() if k[0] == "*" and k[1][:4] == dt and k[2] == "-"]
        if dt == "-" and mime.endswith("/*") and m["mimes"]:
            return [v for k, v in self.coarse.items() if k[0] == "*" and k[1] == "-" and k[2] != mime
                    and k[2].startswith(mime[:-1])]
        return None

    def _added(self, test):
        highs = [_highs(v) for k, v in self.coarse.items() if len(k) == 3 and test(k)]
        if None in highs:
            return None
        return tuple(sum(h[i] for h in highs) for i in range(3))


def with_unknown(value, envelope):
    """A merged value widened by an unknown share of other inputs within envelope (see
    UNKNOWN_KEYS): written as it is (the low), bounded up to it plus the envelope; the features
    the envelope does not bound left out."""
    flat = flatten(value)
    have = value.get("bounds") or {}

    def lh(name):
        return tuple(have[name]) if name in have else (flat[name], flat[name])

    total = lh("urim.total")
    t_high = total[1] + envelope["urim.total"]
    bounds = {"urim.total": (total[0], t_high)}
    if "urir" in flat:
        low, high = lh("urir")
        bounds["urir"] = (low, min(high + envelope["urir"], t_high))
    if "urim.max" in flat:
        low, high = lh("urim.max")
        bounds["urim.max"] = (low, min(high + envelope["urim.max"], t_high))
    if "urim.min" in flat:
        low, high = lh("urim.min")
        bounds["urim.min"] = (min(low, 1), min(high + envelope["urim.max"], t_high))
    out = {n: flat[n] for n in UNKNOWN_BOUNDED if n in flat}
    kept = {n: b for n, b in bounds.items() if n in out and b[0] != b[1]}
    return unflatten(out, kept, extras(value))


def _present_bounds_only(lines):
    """Lines whose bounds name only features they hold (widen bounds all seven counts)."""
    for line in lines:
        if b'"bounds"' in line:
            i = line.find(b" {")
            value = jsonnum.loads(line[i + 1:])
            flat = flatten(value)
            bounds = {n: b for n, b in (value.get("bounds") or {}).items() if n in flat}
            if len(bounds) < len(value["bounds"]):
                line = fields_line(line[:i], unflatten(flat, bounds, extras(value)))
        yield line


def projected_headers(paths, headers, common, projections, disjoint, archive_uri=None, created=None,
                      skipped=None, bound_revisits=True, sorted_inputs=None, converted=None):
    """The '!' lines of a merge of inputs of different key fields projected onto ``common``: no
    policy (the merged keys are no policy's); the fields each richer input dropped and its lines
    left out (``projected``); the UNKNOWN_KEYS note; revisits as profile_headers says them."""
    hs = [header_dict(h) for h in headers]
    abouts = [next((m for m in h["meta"] if isinstance(m, dict) and "policy" in m), {}) for h in hs]
    runs = [next((m for m in h["meta"] if isinstance(m, dict) and "inputs" in m), {}) for h in hs]
    given = [a.get("revisits") for a in abouts if a.get("revisits") is not None]
    kinds = {"resolved" if str(v).startswith("resolved") else v for v in given}
    if len(kinds) > 1:
        raise MergeError("cannot merge: the inputs have different revisit handling (%s)"
                         % ", ".join(sorted(str(k) for k in kinds)))
    revisits = kinds.pop() if kinds else None
    if revisits == "resolved" and (REVISITS_PER_INPUT in given or "urir" not in disjoint):
        revisits = REVISITS_PER_INPUT
    run_meta = _run_meta(runs, paths)
    about = {"type": "ArchiveProfile", "generator": GENERATOR, "created": created or _now(),
             "policy": None, "revisits": revisits,
             "merge": {"parts": [_shown_path(p) for p in paths], "disjoint": sorted(disjoint),
                       "exact": [], "bounds": list(FEATURES),
                       "projected": {_shown_path(p): {"dropped_fields": pr.dropped, "lines_left_out": pr.left_out}
                                     for p, pr in zip(paths, projections) if pr is not None},
                       "unknown_keys": UNKNOWN_KEYS}}
    return _header_lines(hs, common.fields, run_meta, about, archive_uri, skipped,
                         revisits == REVISITS_PER_INPUT and bound_revisits, sorted_inputs, converted)


def _merge_projected(paths, read, files, out_path, common, disjoint, archive_uri, created, bound_revisits,
                     skip_bad_lines, checked, skipped_lines, sorted_inputs, converted, marginals):
    """merge() of profiles whose key fields differ but nest: each richer input projected onto the
    common fields (Projection), keys an input lacks bounded by what its absence says (Absence,
    with_unknown), revisits resolved per input bounded as in a merge of one layout."""
    projections = [Projection(f.layout, common) if f.layout != common else None for f in files]

    def streams():
        return [_projected_stream(i, DataFile(r, "cdxj").records(Skipped(p) if skip_bad_lines else None,
                                                                 parse=False),
                                  pr, p, common)
                for i, (p, r, pr) in enumerate(zip(paths, read, projections))]

    coarse = [{} for _ in paths]
    marginals = dict(marginals)
    for stream in streams():            # the first pass: lines left out, root and TLD lines
        for key, i, record in stream:
            fields = _fields(key)
            if not _coarse(fields):
                continue
            if len(coarse[i]) >= COARSE_LIMIT:
                if paths[i] in marginals:       # its sections can no longer be added up
                    marginals[paths[i]] = dict(marginals[paths[i]], months=False, mimes=False, tlds=False)
                continue
            value = record.value if record.value is not None else jsonnum.loads(record.json)
            kept = value if paths[i] in marginals else _highs(value)
            if kept is not None:
                coarse[i][fields] = kept
    absences = [Absence(common, coarse[i], None if p in converted else f.headers, f.layout,
                        bool(checked[i] is not None and checked[i].count), marginals.get(p))
                for i, (p, f) in enumerate(zip(paths, files))]
    headers = projected_headers(paths, [f.headers for f in files], common, projections, disjoint, archive_uri,
                                created, skipped_lines, bound_revisits, sorted_inputs, converted)
    per_input = bound_revisits and any(b'"absent_keys"' in h for h in headers)
    counter = {"lines": 0, "merged": 0, "bounded": 0, "unknown": 0}
    for pr in projections:
        if pr is not None:
            pr.left_out = 0

    def merged():
        for key, found in _grouped(streams()):
            counter["lines"] += 1
            fields, shares = None, []
            envelope = {"urim.total": 0, "urir": 0, "urim.max": 0}
            for i, absence in enumerate(absences):
                if i in found:
                    continue
                fields = fields or _fields(key)
                if absence.zero(fields):
                    continue
                parts = absence.parts(fields)
                if parts is not None:
                    shares += parts
                    continue
                share = absence.envelope(fields)
                if share is None:
                    raise MergeError("cannot merge: %s has no line for %s nor for a coarser key that bounds it "
                                     "(its total, a TLD, a month or media type)" % (paths[i], _shown(key)))
                for n in envelope:
                    envelope[n] += share[n]
            records = [found[i] for i in sorted(found)]
            if len(records) == 1 and not envelope["urim.total"] and not shares:
                yield key + b" " + records[0].json
                continue
            values = [r.value if r.value is not None else jsonnum.loads(r.json) for r in records]
            counter["merged"] += len(values) > 1
            if shares:          # a document's lines that add up to the key: one more input of it
                values.append(combine(shares) if len(shares) > 1 else shares[0])
            value = combine(values, disjoint, counter) if len(values) > 1 else values[0]
            if envelope["urim.total"]:
                if "urim.total" not in flatten(value):
                    raise MergeError("cannot merge: %s has no urim.total to bound by another input's unknown "
                                     "share (another producer's value style)" % _shown(key))
                counter["unknown"] += 1
                value = with_unknown(value, envelope)
            yield key + b" " + jsonnum.dumps(value)

    def data():
        lines = merged()
        return _present_bounds_only(bound_revisit_keys(lines, counter, common)) if per_input else lines

    written = _write(out_path, headers, data())
    return {"output": out_path, "kind": "cdxj", "inputs": len(paths), "lines": written,
            "merged_keys": counter["merged"], "extras_dropped": counter.get("extras_dropped", 0),
            "skipped": [s for s in checked if s is not None and s.count],
            "projected": {"keys": list(common.fields), "unknown": counter["unknown"],
                          "inputs": [(p, pr.dropped, pr.left_out) for p, pr in zip(paths, projections)
                                     if pr is not None]}}
