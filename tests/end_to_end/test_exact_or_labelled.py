"""Exact or labelled, over every dimension at once: random archives (CDXJ lines with languages
and WARC file names, revisits whose original is in another file, shared digests across hosts),
cut at random byte places into files given in random order, profiled with random policies that
cross the optional key fields (lang, size, collection, depth, the mime class, the hour; bundled
facetredux and lang policies too), random cores, table limits, split sizes, runners and kernels:
every line equals the brute-force oracle. Then the labelled paths on that profile: compact,
split then merge, merge of profiles sharing URI-Rs, diff, query and lookup: each exact value is
the oracle's, each printed bound holds it."""

import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.accel import fast
from profiler.model.policy import load as load_policy
from profiler.run.profile import run_profile

from helpers.exactness import assert_same_profile, pure_python
from helpers.oracle import collection_of, exact_url_key, profile as oracle_profile, read_profile, resolve_revisits
from helpers.random_archives import normalised_language, random_policy

EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "12"))
#: the labelled paths profile each archive three times and ask every tool: fewer examples
TOOL_EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "4"))

HOSTS = ["com,a)", "com,a,b)", "com,a,b,c)", "org,x)", "uk,co,y)", "uk,co,y,www2)", "uk,co,y,news,a)",
         "1,0,0,127)", "com,example:8080)", "com,blogspot,x)", "fr,z,www)"]
PATHS = ["/", "/d/", "/d/e/f.html", "/d/g?x=1/2", "/d/e/", "/p/q/r/s.png", "/h*", "/h%2A"]
MIMES = ["text/html", "image/png", "unk", "text/css", "video/mp4", "application/pdf",
         "application/vnd.ms-excel", "font/woff2", "application/octet-stream", "text/html; charset=utf-8"]
LENGTHS = [0, 999, 1000, 9999, 10 ** 4, 10 ** 5 - 1, 10 ** 6, 10 ** 7 + 1, 10 ** 9, 3 * 10 ** 9]
LANGUAGES = ["eng", "ara", "fra", "zh-Hant", "de-DE,en", None]
NAMES = ["SITEA-1-2013.warc.gz", "SITEB-7.warc.gz", "nomatch.warc.gz", "caf\u00e9-3.warc", None]
PATTERN = r"^([A-Za-z\u00e9]+)-\d"
DIGESTS = ["D%d" % i for i in range(8)] + ["-"]


def random_archive(rng):
    """Captures (urlkey, timestamp, mime, status, digest, length, lang, name): originals and
    revisits of a few digests shared across hosts."""
    caps = []
    for _ in range(rng.randint(1, 80)):
        urlkey = rng.choice(HOSTS) + rng.choice(PATHS) if rng.random() > 0.04 else "dns:z.example"
        ts = "%d%02d%02d%02d%02d00" % (rng.randint(2010, 2012), rng.randint(1, 12), rng.randint(1, 28),
                                       rng.choice([0, 9, 23]), rng.randrange(60))
        revisit = rng.random() < 0.3
        mime = "warc/revisit" if revisit else rng.choice(MIMES)
        status = "-" if revisit else rng.choice(["200", "404", "301", "-", "503"])
        length = rng.choice(LENGTHS) if rng.random() < 0.3 else rng.randint(0, 2000)
        caps.append((urlkey, ts, mime, status, rng.choice(DIGESTS), length, rng.choice(LANGUAGES),
                     rng.choice(NAMES)))
    return caps


def cdxj_line(cap):
    u, t, m, s, d, n, lang, name = cap
    record = {"url": u if ")" not in u else "http://x/", "mime": m, "status": s, "digest": d, "length": str(n)}
    if lang is not None:
        record["languages"] = lang
    if name is not None:
        record["filename"] = name
    return "%s %s %s\n" % (u, t, json.dumps(record))


def captures_of(paths):
    """The captures of the files cut_into_files wrote (read back from their lines)."""
    caps = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                u, t, block = line.split(" ", 2)
                r = json.loads(block)
                caps.append((u, t, r["mime"], r["status"], r["digest"], int(r["length"]), r.get("languages"),
                             r.get("filename")))
    return caps


def oracle_rows(caps, label="unk"):
    """The oracle's captures, revisits resolved (spec section 1)."""
    rows = []
    for u, t, m, s, d, n, lang, name in caps:
        mime = m.split(";")[0].strip().lower()
        rows.append([u, t, "unk" if mime == "unk" else mime, "unk" if s == "-" else s, d, n,
                     m == "warc/revisit", normalised_language(lang),
                     {"collection": collection_of(name, PATTERN, label)}])
    return resolve_revisits(rows)


def oracle_of(caps, policy, label="unk"):
    """The oracle's profile of the captures (spec sections 1 to 3)."""
    return oracle_profile(oracle_rows(caps, label), policy)


def cut_into_files(folder, caps, rng, stem="part"):
    """The archive's lines (sorted, or in random order) cut at random byte places (each moved to the
    next line end) into files, returned in random order."""
    lines = [cdxj_line(c) for c in caps]
    if rng.random() < 0.7:
        lines.sort()
    else:
        rng.shuffle(lines)
    data = "".join(lines).encode("utf-8")
    cuts = sorted({data.find(b"\n", rng.randrange(len(data))) + 1 for _ in range(rng.randint(0, 4))})
    bounds = [0] + [c for c in cuts if 0 < c < len(data)] + [len(data)]
    paths = []
    for k, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        path = os.path.join(folder, "%s%d.cdxj" % (stem, k))
        with open(path, "wb") as f:
            f.write(data[lo:hi])
        paths.append(path)
    rng.shuffle(paths)
    return paths


def choose_policy(rng, folder):
    """A bundled policy with optional fields, or a random custom one crossing some of them."""
    r = rng.random()
    if r < 0.15:
        return "facetredux", load_policy("facetredux")
    if r < 0.25:
        return "lang", load_policy("lang")
    optional = {c for c in ("lang", "size", "collection", "depth") if rng.random() < 0.6}
    pure = None
    policy = random_policy(rng, optional=optional, compiled=pure)
    path = os.path.join(folder, "policy.yaml")
    with open(path, "w") as f:
        json.dump(policy.to_dict(), f)
    return path, policy


def profile_randomly(paths, out, policy_arg, rng, label=None):
    """run_profile with random runner, cores, split size, table limit and kernels."""
    runner = "local" if rng.random() < 0.25 else "inline"
    extra = ["--table-limit", str(rng.choice([1, 2, 7, 50]))] if runner == "inline" or rng.random() < 0.2 else []
    kw = dict(policy=policy_arg, runner=runner, cores=rng.randint(1, 3), extra_args=extra,
              split_size=rng.choice([64 << 20, 150, 700, 3000]),
              collections=dict({"pattern": PATTERN}, **({"label": label} if label else {})))
    if rng.random() < 0.4 or fast.load() is None:
        with pure_python():
            return run_profile(paths, out, **kw)
    return run_profile(paths, out, **kw)


def random_case(tmp_path_factory, seed, name):
    """One drawn case: (its rng, a folder, the policy's argument and policy, the captures, the
    files they are cut into, the profile's path)."""
    rng = random.Random(seed)
    folder = str(tmp_path_factory.mktemp(name))
    policy_arg, policy = choose_policy(rng, folder)
    caps = random_archive(rng)
    paths = cut_into_files(folder, caps, rng)
    return rng, folder, policy_arg, policy, caps, paths, os.path.join(folder, "out.cdxj")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2 ** 32))
def test_profiles_of_random_cuts_runners_and_optional_fields_equal_the_oracle(tmp_path_factory, seed):
    rng, folder, policy_arg, policy, caps, paths, out = random_case(tmp_path_factory, seed, "exact")
    label = rng.choice([None, "run-label"])
    profile_randomly(paths, out, policy_arg, rng, label)
    assert_same_profile(read_profile(out), oracle_of(caps, policy, label or "unk"))


# ---------------------------------------------------------------- the labelled paths

#: the features of a profile line, as query flattens them, in the oracle tuple's order
FLAT = ["urim.total", "urim.min", "urim.max", "urir", "bytes", "digests", "dedup_bytes", "first", "last"]


def key_fields_of(path):
    """The file's !keys."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("!keys "):
                return json.loads(line[6:])
    return ["surt", "datetime", "mime", "status"]


def outside(flat, true):
    """The features whose value (exact) differs from the true one, or whose bounds miss it."""
    wrong = []
    for name, value in zip(FLAT, true):
        bounds = flat.get("bounds", {}).get(name)
        if bounds is not None:
            if not bounds[0] <= value <= bounds[1]:
                wrong.append((name, value, bounds))
        elif flat.get(name) != value:
            wrong.append((name, value, flat.get(name)))
    return wrong


def holds_all_of(line_key, key):
    """Whether the line of line_key holds every capture of key: its SURT is key's or a wildcard
    (string prefix) over it, its datetime '-' or a prefix of key's, every other field '-'."""
    a, b = line_key.split(" "), key.split(" ")
    surt_holds = a[0] == b[0] or a[0] == "*" or a[0].endswith("*") and b[0].startswith(a[0][:-1])
    return surt_holds and (a[1] == "-" or b[1].startswith(a[1])) and all(f == "-" for f in a[2:])


def ask(path, fields, key):
    """query's answer to one whole key: its flat value (bounds included), or None (no line, no bounds)."""
    from profiler.toolkit.query import query
    found, note, _ = query(path, dict(zip(fields, key.split(" "))))
    assert len(found) <= 1, found
    return found[0][1] if found else note


def check_answers(path, truth, rng, n=40, absent=()):
    """Each of n random keys of truth (and the absent ones: no capture) asked of path: exact and
    equal, or bounded around the truth. Returns the wrong answers."""
    fields = key_fields_of(path)
    keys = sorted(truth)
    wrong = []
    held = read_profile(path)
    for key in rng.sample(keys, min(n, len(keys))):
        flat = ask(path, fields, key)
        if isinstance(flat, dict) and not outside(flat, truth[key]):
            continue
        # no line and no bounds: only where no line holds its captures, and never "none are held"
        if isinstance(flat, dict) or any(holds_all_of(k, key) for k in held) or "none are held" in (flat or ""):
            wrong.append((key, truth[key], flat))
    zero = (0, 0, 0, 0, 0, 0, 0, None, None)
    for key in absent:
        flat = ask(path, fields, key)
        if isinstance(flat, dict) and any(flat.get("bounds", {}).get(f, (flat.get(f),) * 2)[0] not in (0, None)
                                    for f in FLAT[:7]):
            wrong.append((key, zero, flat))
    return wrong


def absent_keys(truth, rng, n=10):
    """Keys the policy could write but the archive has no capture under: another year on a held key."""
    out = []
    for key in rng.sample(sorted(truth), min(n, len(truth))):
        parts = key.split(" ")
        if parts[1] != "-" and parts[1][:4].isdigit():
            parts[1] = "1999" + parts[1][4:]
            if " ".join(parts) not in truth:
                out.append(" ".join(parts))
    return out


def data_lines(path):
    with open(path, "rb") as f:
        return [line for line in f if not line.startswith((b"!", b"@"))]


def candidates(urlkey):
    """The SURT keys a lookup of urlkey may answer from, most specific first (spec section 6)."""
    out = [exact_url_key(urlkey)]
    if ")" in urlkey:
        host, path = urlkey.split(")", 1)
        dirs = path.split("?")[0].split("#")[0].split("/")[1:-1]
        out += [host + ")/" + "/".join(dirs[:k]) + "/*" for k in range(len(dirs), 0, -1)]
        out.append(host + ")/*")
        labels = host.split(",")
        out += [",".join(labels[:k]) + ",*" for k in range(len(labels) - 1, 0, -1)]
    return out + ["*"]


def check_lookups(path, truth, caps):
    """lookup (batch, by SURT) of each URI-R and of some it does not hold: the most specific
    all-time line of the oracle's profile, its urim/urir."""
    import subprocess
    import sys
    n = len(key_fields_of(path))
    rest = " -" * (n - 1)
    queries = sorted({c[0] for c in caps if ")" in c[0]} | {h + "/zz/none.html" for h in HOSTS})
    run = subprocess.run([sys.executable, "-m", "profiler.cli", "lookup", path], input="\n".join(queries) + "\n",
                         capture_output=True, text=True)
    assert run.returncode in (0, 1), run.stderr
    answers = [line.split("\t") for line in run.stdout.splitlines()]
    assert len(answers) == len(queries), run.stdout
    wrong = []
    for q, answer in zip(queries, answers):
        expected = next((k + rest for k in candidates(q) if k + rest in truth), None)
        if expected is None:
            ok = answer[1] == "no-match"
        else:
            t = truth[expected]
            ok = answer[1] == "held" and answer[2] == expected and answer[3] == "%d/%d" % (t[0], t[3])
        if not ok:
            wrong.append((q, expected, expected and truth[expected], answer))
    return wrong


def check_dated_lookups(path, truth, caps):
    """lookup of each capture's URI-R at its own day, and in its own language: held (never a
    false negative), with the count of the line it names as the oracle has it."""
    from profiler.toolkit.lookup import HELD, Lookup
    fields = key_fields_of(path)
    wrong = []
    with Lookup(path) as index:
        for row in oracle_rows(caps):
            asks = [dict(dt=row[1][:rng_len]) for rng_len in (4, 6, 8, 10, 14)]
            if "lang" in fields:
                asks.append(dict(value=row[7]))
            rest = " -" * (len(fields) - 2)
            for ask_ in asks:
                # the lines it reads: all time, and the day, month and year no finer than asked
                dts = ["-"] + [row[1][:k] for k in (4, 6, 8) if k <= len(ask_.get("dt", ""))]
                if not any(c + " " + d + rest in truth for c in candidates(row[0]) for d in dts):
                    continue                # the policy writes no line this lookup reads
                a = index.lookup_urlkey(row[0], **ask_)
                key = a.key.decode() if isinstance(a.key, bytes) else a.key
                t = truth.get(key)
                ok = a.status == HELD and (t is None and key in read_profile(path) or
                                           t is not None and (a.frequency.urim, a.frequency.urir) == (t[0], t[3]))
                if not ok:
                    wrong.append((row[:2], ask_, a, t))
    return wrong


def check_map(profile, truth, folder):
    """The UKVS map of a profile: each line's urim/urir the oracle's all-time line's, or, marked,
    a bound of it ('-' upper, '+' lower)."""
    from profiler.files.ukvs import profile_to_map, read_map
    path = os.path.join(folder, os.path.basename(profile) + ".ukvs")
    profile_to_map(profile, path)
    rest = " -" * (len(key_fields_of(profile)) - 1)
    wrong = []
    for key, f in read_map(path)[1]:
        key = key.decode("utf-8") if isinstance(key, bytes) else key
        t = truth.get(key + rest, (0, 0, 0, 0))
        for value, mark, true in ((f.urim, f.urim_mark, t[0]), (f.urir, f.urir_mark, t[3])):
            if not (mark == "" and value == true or mark == "-" and value >= true or mark == "+" and value <= true
                    or mark == "~"):
                wrong.append((key, f, t[:4]))
    return wrong


def diff_against(old, new, old_truth, new_truth):
    """diff OLD NEW's changed keys and deltas against the oracles' profiles of both."""
    from profiler.toolkit.diff import diff
    found, _ = diff(old, new)
    got = {key.decode("utf-8"): (change, o, n) for key, change, o, n in found}
    wrong = []
    for key in sorted(set(old_truth) | set(new_truth)):
        a, b = old_truth.get(key), new_truth.get(key)
        if a == b:
            if key in got:
                wrong.append((key, "not a change", got[key]))
            continue
        change = "appeared" if a is None else "vanished" if b is None else \
            "grew" if b[0] > a[0] else "shrank" if b[0] < a[0] else "changed"
        if key not in got or got[key][0] != change:
            wrong.append((key, change, got.get(key)))
        elif a is not None and b is not None and (outside(got[key][1], a) or outside(got[key][2], b)):
            wrong.append((key, a, b, got[key]))
    return wrong


@settings(max_examples=TOOL_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2 ** 32))
def test_compact_split_merge_diff_query_and_lookup_hold_the_oracle(tmp_path_factory, seed):
    from profiler.toolkit.compact import compact_file
    from profiler.toolkit.merge import merge
    from profiler.toolkit.split import split
    rng, folder, policy_arg, policy, caps, paths, out = random_case(tmp_path_factory, seed, "labelled")
    profile_randomly(paths, out, policy_arg, rng)
    truth = oracle_of(caps, policy)
    assert_same_profile(read_profile(out), truth)
    absent = absent_keys(truth, rng)

    # query on the exact profile: every answer exact
    assert check_answers(out, truth, rng, absent=absent) == []
    # lookup: the most specific all-time line; the map
    assert check_lookups(out, truth, caps) == []
    assert check_map(out, truth, folder) == []
    assert check_dated_lookups(out, truth, caps) == []

    # compact: the lines it keeps are exact, a rolled-up key is answered with bounds that hold
    lines = len(data_lines(out))
    compacted = os.path.join(folder, "compacted.cdxj")
    try:
        compact_file(out, compacted, max_lines=max(2, int(lines * rng.uniform(0.2, 0.9))) + 8)
    except Exception as e:               # a quota out of reach is a user error, nothing written
        assert "quota" in str(e) or "cannot" in str(e), e
    else:
        kept = read_profile(compacted)
        assert all(truth[k] == v for k, v in kept.items())
        assert check_answers(compacted, truth, rng, n=60, absent=absent) == []

    # split then merge: the profile again
    pages = split(out, rng.randint(1, max(1, lines // 2)), prefix=os.path.join(folder, "page"))
    merged = os.path.join(folder, "merged.cdxj")
    merge(pages, merged)
    assert read_profile(merged) == truth

    # merge of profiles of parts that share URI-Rs (files of the cut): bounds hold the truth
    if len(paths) > 1:
        k = rng.randint(1, len(paths) - 1)
        parts = [paths[:k], paths[k:]]
        part_outs, part_caps = [], []
        for i, part in enumerate(parts):
            po = os.path.join(folder, "p%d.cdxj" % i)
            profile_randomly(part, po, policy_arg, rng)
            part_outs.append(po)
        merged = os.path.join(folder, "overlap.cdxj")
        merge(part_outs, merged)
        assert check_answers(merged, truth, rng, n=60, absent=absent) == []
        assert check_map(merged, truth, folder) == []
        # merging merged files stays sound: one part's profile again, cut in two, merged in twice
        if len(parts[1]) > 1:
            halves = [os.path.join(folder, "q%d.cdxj" % i) for i in range(2)]
            profile_randomly(parts[1][:1], halves[0], policy_arg, rng)
            profile_randomly(parts[1][1:], halves[1], policy_arg, rng)
            inner = os.path.join(folder, "inner.cdxj")
            merge(halves, inner)
            nested = os.path.join(folder, "nested.cdxj")
            merge([part_outs[0], inner], nested)
            assert check_answers(nested, truth, rng, n=60, absent=absent) == []
        # diff of one part's profile and the whole's: exact, its changes the oracles'
        assert diff_against(part_outs[0], out, oracle_of(captures_of(parts[0]), policy), truth) == []


def test_serve_answers_equal_the_oracle_on_exact_and_merged_profiles(tmp_path):
    """The routing service's /lookup, over a real HTTP server, for every URI-R of random archives
    and hosts they do not hold: on the exact profile the oracle's most specific all-time line
    (key, urim/urir); on a merge of profiles sharing URI-Rs, the same key held, urim exact and an
    inexact urir marked as the upper bound it is."""
    import urllib.parse
    from profiler.toolkit.merge import merge
    from helpers.serving import Server
    rng = random.Random(20261127)
    specs, checks = [], []
    for n in range(3):
        folder = str(tmp_path / ("a%d" % n))
        os.makedirs(folder)
        policy_arg, policy = choose_policy(rng, folder)
        caps = random_archive(rng)
        paths = cut_into_files(folder, caps, rng)
        while len(paths) < 2:
            paths = cut_into_files(folder, caps + caps[:1], rng)
            caps = captures_of(paths)
        out = os.path.join(folder, "out.cdxj")
        profile_randomly(paths, out, policy_arg, rng)
        truth = oracle_of(caps, policy)
        parts = [os.path.join(folder, "p%d.cdxj" % i) for i in range(2)]
        profile_randomly(paths[:1], parts[0], policy_arg, rng)
        profile_randomly(paths[1:], parts[1], policy_arg, rng)
        merged = os.path.join(folder, "merged.cdxj")
        merge(parts, merged)
        specs += ["exact%d=%s" % (n, out), "merged%d=%s" % (n, merged)]
        checks.append((caps, truth, len(key_fields_of(out))))
    server = Server(specs, workers=1)
    try:
        wrong = []
        for n, (caps, truth, nfields) in enumerate(checks):
            rest = " -" * (nfields - 1)
            for q in sorted({c[0] for c in caps if ")" in c[0]} | {h + "/zz/none.html" for h in HOSTS}):
                status, body = server.get("/lookup?url=" + urllib.parse.quote(q, safe=""))
                assert status == 200, body
                answers = {a["archive"]: a for a in body["archives"]}
                expected = next((k + rest for k in candidates(q) if k + rest in truth), None)
                for name in ("exact%d" % n, "merged%d" % n):
                    a = answers[name]
                    if expected is None:
                        ok = a["answer"] == "no-match"
                    else:
                        t = truth[expected]
                        urim, urir = a["frequency"].split("/")
                        ok = a["answer"] == "held" and a["key"] == expected and urim == str(t[0]) and (
                            urir == str(t[3]) or name.startswith("merged") and urir.endswith("-")
                            and int(urir[:-1]) >= t[3])
                    if not ok:
                        wrong.append((name, q, expected, expected and truth[expected], a))
        assert wrong == []
    finally:
        server.stop()
