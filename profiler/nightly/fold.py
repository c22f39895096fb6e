"""Folding a night's profile into the published one: a streaming merge with per-key rules.

Two profiles of the same policy over disjoint URI-R and digest sets merge exactly: every
feature adds up or takes the min/max (profiler.toolkit.merge.combine with both disjoint). When some
of the night's URI-Rs or digests were seen before, only the keys those captures touch can be
wrong: ``keys_urir`` and ``keys_digest`` name them, and there the merge writes bounds (urir and
urim.min/max; digests and dedup_bytes) as `archive-profiler merge` does. Every other key is
exact, and the header's ``merge.exact`` lists the features exact on every line.
"""

from profiler import jsonnum
from profiler.files import layout as layouts
from profiler.files.output import header_lines, write_atomic
from profiler.files.profilefile import FEATURES, iter_raw, read_header
from profiler.toolkit.merge import exact_in, header_dict, exact_features, merged_profile_lines

BOTH = ("digests", "urir")


def run_meta(path):
    """The first '!meta' object (inputs, captures, skipped) and the about object of a profile."""
    metas = header_dict(read_header(path))["meta"]
    run = next((m for m in metas if isinstance(m, dict) and "inputs" in m), {})
    about = next((m for m in metas if isinstance(m, dict) and "policy" in m), {})
    return run, about


def combined_run_meta(runs):
    """Inputs (sorted), captures and skip counts of several profiles' captures together.

    'unusable_file' counts are left out of ``skipped``: output.header_lines adds one per
    skipped file, as for a profile made in one run.
    """
    inputs, captures, skipped, skipped_files = set(), 0, {}, {}
    for run in runs:
        inputs.update(run.get("inputs", []))
        captures += run.get("captures", 0)
        for reason, n in (run.get("skipped") or {}).items():
            if reason != "unusable_file":
                skipped[reason] = skipped.get(reason, 0) + n
        for item in run.get("skipped_files", []):
            skipped_files[item["path"]] = item
    return sorted(inputs), {"captures": captures, "skipped": skipped}, \
        [skipped_files[p] for p in sorted(skipped_files)]


def exact_after(old_about, keys_urir, keys_digest):
    """The features exact on every line of the folded profile: merge.exact_features of the old
    profile and the night's (exact), disjoint where no key has captures seen before."""
    disjoint = [f for f, keys in (("urir", keys_urir), ("digests", keys_digest)) if not keys]
    return exact_features([exact_in([old_about]), set(FEATURES)], disjoint)


def headers(runs, about, archive_uri, policy_dict, resolve_revisits, exact, created=None,
            extra_skipped_files=(), language_detection=None):
    """The '!' lines of a folded profile: those of a one-run profile of all its inputs, plus,
    when some numbers are bounds, the merge note other tools read ('merge.exact')."""
    inputs, meta, skipped_files = combined_run_meta(list(runs) + [{"skipped_files": list(extra_skipped_files)}])
    lines = header_lines(archive_uri, policy_dict, inputs, meta, skipped_files, resolve_revisits, created,
                         language_detection=language_detection)
    if len(exact) == len(FEATURES):
        return lines
    note = {"exact": exact, "bounds": [f for f in FEATURES if f not in exact],
            "how": "nightly fold: keys touched by URI-Rs or digests seen on earlier nights carry bounds"}
    out = []
    for line in lines:
        if line.startswith(b"!meta ") and b'"policy"' in line:
            value = jsonnum.loads(line[6:])
            value["merge"] = note
            line = b"!meta " + jsonnum.dumps(value)
        out.append(line)
    return sorted(out)


def fold(old_path, delta_path, out_path, header, keys_urir=frozenset(), keys_digest=frozenset()):
    """Write old + delta (None: no new captures) into out_path atomically. Returns counts. A key
    the night's captures of URI-Rs (digests) seen before touch (keys_urir, keys_digest) is merged
    without taking them as disjoint; a damaged value is a MergeError (a UserError), and so are
    profiles of different key layouts (their !keys: a LayoutError)."""
    paths = [old_path] + ([delta_path] if delta_path else [])
    layouts.require_same("fold", paths, [layouts.of_file(p) for p in paths])
    counts = {"lines": 0, "merged": 0, "bounded": 0}

    def disjoint_of(key):
        return [f for f, keys in (("digests", keys_digest), ("urir", keys_urir)) if key not in keys]

    def lines():
        yield from header
        yield from merged_profile_lines(paths, disjoint_of, counts)
    write_atomic(out_path, lines())
    return counts


def profile_keys(path):
    """The set of data-line keys of a profile."""
    return frozenset(key for _, key, _ in iter_raw(path))
