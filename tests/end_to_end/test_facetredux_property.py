"""FacetRedux's key fields (spec section 2) on random archives, whole profiles against the oracle:
the collection of captures written as CDX (``g``) and CDXJ (``filename``) lines, from a random
pattern's first group, an input's label or the run's; the depth of captures written as a Heritrix
crawl.log with random hop paths, fetch statuses and duplicate annotations; the depth and collection
of captures in WARC files written as Heritrix writes them (metadata records with hopsFromSeed, the
file's own name), read with warcio and fastwarc; with random policies (sizes, mime classes, hours),
compiled and pure Python, whole and cut into small byte ranges, inline and with the local runner."""

import json
import os
import random

import pytest
from hypothesis import example, given, settings, strategies as st

from profiler.accel import fast
from profiler.run.profile import run_profile

from helpers.exactness import assert_same_profile, pure_python
from helpers.oracle import (collection_field, collection_of, hop_depth, profile as oracle_profile, read_profile,
                            resolve_revisits)
from helpers.random_archives import oracle_captures, random_captures, random_policy

EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "30"))
#: seeds whose run is the local runner's over small byte ranges (always among the examples)
LOCAL_SEEDS = {"collections": 33, "depths": 5, "warcs": 17}
#: the kernels a property runs over: the compiled ones (where the extension is built) and Python's
KERNELS = [pytest.param(False, id="compiled",
                        marks=pytest.mark.skipif(fast.load() is None, reason="the C extension is not built (no compiler?)")),
           pytest.param(True, id="pure_python")]

#: patterns whose first group names a collection (one that may be empty, one case-blind, one whose
#: first group may take no part in the match)
PATTERNS = [r"^([A-Za-z]+)-\d", r"^(-|[A-Z]+)", r"^([^-]+)-", r"(?i)-(crawl|web)-", r"^(?:x-)?([a-z]*)",
            r"([0-9]{2,4})\.w?arc", r"^x-([a-z]+)|^([A-Z]+)"]
#: WARC file names: a few collections, names the patterns miss, none ('-'), white space, a
#: brace, a dash, names past the bytes a pattern reads (one cut inside a character)
NAMES = ["SITEA-1-CRAWL-2013.warc.gz", "SITEA-2.warc.gz", "siteb-22-web-x.warc.gz", "SITEB-00001.warc.gz",
         "ARCHIVEIT-1234-Crawl-2013.arc.gz", "nomatch.warc.gz", "12345-only-digits.warc", "-", "x-abc-1.warc",
         "{brace}-7.warc.gz", "--1.warc", "caf\u00e9-3-crawl-.warc.gz", "A" * 1200 + "-1.warc.gz",
         "a\u00e9" * 400 + "-2.warc"]
#: CDX file names besides: a byte that is not UTF-8
CDX_NAMES = NAMES + ["bad\udcffbyte-4.warc.gz", "\udcc3-5.warc"]
#: CDXJ file names (any JSON string): white space and control characters besides
CDXJ_NAMES = NAMES + ["my crawl-9.warc.gz", "tab\there-5.warc", "", None, "nul\u0000x-1.warc"]


def _write_policy(policy, path):
    with open(path, "w") as f:
        json.dump(policy.to_dict(), f)
    return str(path)


def _profile(paths, out, policy_path, rng, pure, **kw):
    """run_profile with a random split size and runner (the local runner in about 1 of 8)."""
    kw.update(policy=policy_path, runner="local" if rng.random() < 0.12 else "inline", cores=2,
              split_size=rng.choice([64 << 20, 300, 1000, 4000]))
    if pure:
        with pure_python():
            return run_profile(paths, out, **kw)
    return run_profile(paths, out, **kw)


def _policy(rng, optional, pure):
    """A random policy with the optional criteria (some of their levels), one the compiled kernels
    take unless pure."""
    return random_policy(rng, optional=optional, compiled=None if pure else fast.load())


def _run_meta(out):
    """The output's !meta line of what was read (captures, skipped lines by reason)."""
    with open(out, encoding="utf-8") as f:
        for line in f:
            if line.startswith("!meta ") and '"captures"' in line:
                return json.loads(line[6:])
    raise AssertionError("no !meta line of the inputs in %s" % out)


def _cdx_line(cap, name):
    u, t, m, s, d, n = cap
    return "%s %s %s %s %s %s - - %d 0 %s" % (u, t, u if ")" not in u else "http://x/", m, s, d, n, name)


def _cdxj_line(cap, name, ascii_only=True):
    u, t, m, s, d, n = cap
    record = {"url": u if ")" not in u else "http://x/", "mime": m, "status": s, "digest": d, "length": str(n)}
    if name is not None:
        record["filename"] = name
    return "%s %s %s" % (u, t, json.dumps(record, ensure_ascii=ascii_only))


def check_collections(seed, tmp_path, pure):
    rng = random.Random(seed)
    optional = {"collection"} | {c for c in ("size", "depth") if rng.random() < 0.4}
    policy = _policy(rng, optional, pure)
    pattern = rng.choice(PATTERNS)
    run_label = rng.choice([None, "run-label", "crawl 2013"])
    caps = random_captures(rng, wide=True)
    cdxj = rng.random() < 0.4
    names = [rng.choice(CDXJ_NAMES if cdxj else CDX_NAMES) for _ in caps]
    escaped = rng.random() < 0.5                # CDXJ names as \u escapes, or as UTF-8
    n_files = rng.randint(1, 2)
    parts = [[] for _ in range(n_files)]
    for i in range(len(caps)):
        parts[rng.randrange(n_files)].append(i)
    paths = []
    for k, part in enumerate(parts):
        path = tmp_path / ("part%d.%s" % (k, "cdxj" if cdxj else "cdx"))
        lines = sorted(_cdxj_line(caps[i], names[i], escaped) if cdxj else _cdx_line(caps[i], names[i])
                       for i in part)
        head = "" if cdxj else " CDX N b a m s k r M S V g\n"
        path.write_bytes((head + "".join(line + "\n" for line in lines)).encode("utf-8", "surrogateescape"))
        paths.append(str(path))
    input_labels = [("first", paths[0])] if n_files == 2 and rng.random() < 0.5 else []
    run_field = collection_field(run_label) if run_label else "unk"
    labels = {p: {q: lab for lab, q in input_labels}.get(p) or run_field for p in paths}
    label_of = {}
    for path, part in zip(paths, parts):
        for i in part:
            label_of[i] = labels[path]
    collections = {"pattern": pattern, "label": run_label, "input_labels": input_labels}
    if run_label is None:
        del collections["label"]
    out = str(tmp_path / "out.cdxj")
    _profile(paths, out, _write_policy(policy, tmp_path / "policy.yaml"), rng, pure, collections=collections)
    expected_caps = oracle_captures(caps)
    for i, cap in enumerate(expected_caps):
        cap.append({"collection": collection_of(names[i], pattern, label_of[i])})
    assert _run_meta(out)["captures"] == len(caps)
    assert_same_profile(read_profile(out), oracle_profile(resolve_revisits(expected_caps), policy))


@pytest.mark.parametrize("pure", KERNELS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(0, 2 ** 32))
@example(seed=LOCAL_SEEDS["collections"])
def test_collections_of_random_index_lines_equal_the_oracle(tmp_path_factory, pure, seed):
    check_collections(seed, tmp_path_factory.mktemp("collections"), pure=pure)


URLS = ["http://www.example.fr/", "http://example.com/a/b.html", "https://news.example.org/x/?y=1",
        "http://example.com:8080/p", "http://blog.example.fr/d/e/", "http://example.com/caf%C3%A9"]
CRAWL_MIMES = ["text/html", "text/html;charset=UTF-8", "image/png", "application/pdf", "text/css", "no-type",
               "video/mp4", "application/octet-stream"]
#: fetch statuses: HTTP ones (1xx to 5xx, captures), a DNS lookup, failures, others (not)
FETCH_STATUSES = [200, 200, 200, 301, 404, 500, 503, 100, 103, 1, 0, -1, -2, -6, -404, -9998, 600, 1001]
DIGESTS = ["sha1:D%dXXXXXXXXXXXXXXXXXXXXXXXXXXXX" % i for i in range(6)] + ["-"]
LENGTHS = [0, 1, 999, 1000, 9999, 10 ** 4, 10 ** 6, 10 ** 9, 3 * 10 ** 9]
ANNOTATIONS = ["-", "-", "-", "3t", "duplicate:digest", "warcRevisit:digest", "duplicate:digest,3t",
               "2t,warcRevisit:digest", "dol:1"]
HOP_LETTERS = "LLLLERXIP"


#: fields where a hop path belongs that are none
NOT_HOP_PATHS = ["L-L", "+L", "x+L", "L+3", "LL\u00e9", "--"]


def _hop_path(rng):
    """A hop path: a seed, letters (some past 10), or Heritrix's long form N+LETTERS; now and then
    a field that is no hop path."""
    r = rng.random()
    if r < 0.2:
        return "-"
    if r > 0.97:
        return rng.choice(NOT_HOP_PATHS)
    letters = "".join(rng.choice(HOP_LETTERS) for _ in range(rng.choice([1, 2, 3, 5, 9, 10, 11, 14, 49])))
    if r < 0.85:
        return letters
    return "%d+%s" % (rng.choice([0, 1, 3, 12]), letters)


def _crawl_line(rng):
    """(line, capture or None): a crawl.log line and what the oracle takes from it."""
    status = rng.choice(FETCH_STATUSES)
    hour, minute, ms = rng.randrange(24), rng.randrange(60), rng.randrange(1000)
    day = "2013%02d%02d" % (rng.randint(1, 12), rng.randint(1, 28))
    stamp = "%s-%s-%sT%02d:%02d:30.%03dZ" % (day[:4], day[4:6], day[6:], hour, minute, ms)
    fetch = "-" if rng.random() < 0.15 else "%s%02d%02d29%03d+%d" % (day, hour, minute, ms, rng.randint(1, 900))
    url = "dns:example.com" if status == 1 else rng.choice(URLS)
    hops = "P" if status == 1 else _hop_path(rng)
    mime = "text/dns" if status == 1 else rng.choice(CRAWL_MIMES)
    length = rng.choice(LENGTHS)
    digest = rng.choice(DIGESTS)
    annotations = rng.choice(ANNOTATIONS)
    fields = [stamp, "%5d" % status, "%10s" % (rng.choice(["-", length]) if length == 0 else length), url, hops,
              "-" if hops == "-" else "http://example.com/", mime, "#%03d" % rng.randrange(60), fetch, digest, "-",
              annotations]
    if rng.random() < 0.3:
        fields.append(json.dumps({"contentSize": length + 300, "warcFilename": "SITEA-1.warc.gz"},
                                 separators=(",", ":")))
    return " ".join(fields) + "\n", status, hops


def _oracle_crawl_captures(lines):
    """The oracle's captures of crawl.log lines: HTTP fetch statuses only, the depth of each
    line's hop path."""
    import surt
    caps = []
    for line in lines:
        f = line.split()
        if not 100 <= int(f[1]) <= 599:
            continue
        ts = f[8][:14] if f[8] != "-" else "".join(ch for ch in f[0] if ch.isdigit())[:14]
        revisit = any(a.startswith(("duplicate:", "warcRevisit:")) for a in f[11].split(","))
        mime = f[6].split(";")[0].strip().lower()
        mime = "warc/revisit" if revisit else "unk" if mime == "no-type" else mime
        digest = f[9].split(":")[-1] if f[9] != "-" else "-"
        caps.append([surt.surt(f[3]), ts, mime, f[1], digest, int(f[2]) if f[2] != "-" else 0, revisit, "unk",
                     {"depth": hop_depth(f[4])}])
    return caps


def check_depths(seed, tmp_path, pure):
    rng = random.Random(seed)
    optional = {"depth"} | {c for c in ("size", "collection") if rng.random() < 0.4}
    policy = _policy(rng, optional, pure)
    lines = [_crawl_line(rng)[0] for _ in range(rng.randint(1, 80))]
    n_files = rng.randint(1, 2)
    files = [[] for _ in range(n_files)]
    for line in lines:
        files[rng.randrange(n_files)].append(line)
    paths = []
    for k, part in enumerate(files):
        path = tmp_path / ("crawl%d.log" % k)
        path.write_text("".join(part), encoding="utf-8")
        paths.append(str(path))
    paths = [p for p, part in zip(paths, files) if part]
    # a crawl.log names no WARC file: its captures take their input's label, else the run's
    run_label = rng.choice([None, "run-label"])
    input_labels = [("first", paths[0])] if rng.random() < 0.4 else []
    collections = {"pattern": rng.choice([None, PATTERNS[0]]), "input_labels": input_labels}
    if run_label:
        collections["label"] = run_label
    out = str(tmp_path / "out.cdxj")
    _profile(paths, out, _write_policy(policy, tmp_path / "policy.yaml"), rng, pure, collections=collections)
    expected_caps, skipped = [], {}
    for line in lines:
        code = int(line.split()[1])
        if not 100 <= code <= 599:
            reason = "dns_fetch" if code == 1 else "failed_fetch" if code <= 0 else "other_fetch_status"
            skipped[reason] = skipped.get(reason, 0) + 1
    for path in paths:
        label = "first" if input_labels and path == paths[0] else run_label or "unk"
        with open(path, encoding="utf-8") as f:
            for cap in _oracle_crawl_captures(f.readlines()):
                cap[8]["collection"] = label
                expected_caps.append(cap)
    meta = _run_meta(out)
    assert (meta["captures"], meta.get("skipped", {})) == (len(expected_caps), skipped)
    assert_same_profile(read_profile(out), oracle_profile(resolve_revisits(expected_caps), policy))


@pytest.mark.parametrize("pure", KERNELS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(0, 2 ** 32))
@example(seed=LOCAL_SEEDS["depths"])
def test_depths_of_a_random_crawl_log_equal_the_oracle(tmp_path_factory, pure, seed):
    check_depths(seed, tmp_path_factory.mktemp("crawllog"), pure=pure)


#: WARC files' own names (the name a pattern reads for a WARC file)
WARC_NAMES = ["SITEA-1-CRAWL-2013.warc.gz", "siteb-22-web-x.warc", "nomatch.warc.gz", "--1.warc",
              "caf\u00e9-3-crawl-.warc.gz", "x-abc-1.warc"]
WARC_URLS = ["http://example.fr/", "http://example.fr/a", "http://example.fr/b.css", "https://news.example.org/x/y",
             "http://example.com:8080/p?q=1"]


def _heritrix_warc(rng, gzip):
    """(bytes, oracle captures): a WARC as Heritrix writes one (response or revisit, its request,
    then sometimes a metadata record of the same URL, WARC-Concurrent-To it, with hopsFromSeed)."""
    import io
    import surt
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=gzip)
    caps, bodies = [], []
    for n in range(rng.randint(1, 12)):
        url = rng.choice(WARC_URLS)
        date = "2013-%02d-%02dT%02d:%02d:00Z" % (rng.randint(1, 12), rng.randint(1, 28), rng.randrange(24),
                                                rng.randrange(60))
        status, mime = rng.choice([("200 OK", "text/html"), ("404 Not Found", "text/html"), ("200 OK", "image/png"),
                                   ("301 Moved", "text/html")])
        http = StatusAndHeaders(status, [("Content-Type", mime)], protocol="HTTP/1.1")
        headers = {"WARC-Date": date}
        if bodies and rng.random() < 0.25:
            digest = rng.choice(bodies)
            record = writer.create_revisit_record(url, digest, "http://example.fr/", "2013-01-01T00:00:00Z",
                                                  http_headers=http)
            record.rec_headers.replace_header("WARC-Date", date)
        else:
            body = rng.choice([b"<html>a</html>", b"<html>b</html>", b"x" * rng.choice([10, 2000])])
            record = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http,
                                               warc_headers_dict=headers)
            bodies.append(record.rec_headers.get_header("WARC-Payload-Digest"))
        start = out.tell()
        writer.write_record(record)
        # the record's stored length: its gzip member, or the record without the two CRLFs that
        # close it (the length warcio's ArchiveIterator gives an uncompressed record)
        length = out.tell() - start - (0 if gzip else 4)
        rid = record.rec_headers.get_header("WARC-Record-ID")
        writer.write_record(writer.create_warc_record(url, "request", payload=io.BytesIO(b"GET / HTTP/1.1\r\n\r\n"),
                                                      warc_headers_dict={"WARC-Concurrent-To": rid}))
        depth = "unk"
        r = rng.random()
        if r < 0.8:
            hops = _hop_path(rng) if r < 0.7 else ""
            other = r < 0.1                     # a record of another URL gives nothing
            body = "via: http://example.fr/\r\nhopsFromSeed: %s\r\nsourceTag: http://example.fr/\r\n" % hops
            writer.write_record(writer.create_warc_record(
                "http://example.fr/elsewhere" if other else url, "metadata", payload=io.BytesIO(body.encode()),
                warc_content_type="application/warc-fields", warc_headers_dict={"WARC-Concurrent-To": rid}))
            depth = "unk" if other else hop_depth(hops or "-")
        revisit = record.rec_type == "revisit"
        caps.append([surt.surt(url), "".join(ch for ch in date if ch.isdigit()), "warc/revisit" if revisit else mime,
                     status[:3], record.rec_headers.get_header("WARC-Payload-Digest").split(":")[-1].upper(), length,
                     revisit, "unk", {"depth": depth}])
    return out.getvalue(), caps


def check_warc_depths(seed, tmp_path, pure):
    rng = random.Random(seed)
    optional = {"depth", "collection"} | ({"size"} if rng.random() < 0.4 else set())
    policy = _policy(rng, optional, pure)
    pattern, run_label = rng.choice(PATTERNS), rng.choice([None, "run-label"])
    names = rng.sample(WARC_NAMES, rng.randint(1, 2))
    run_field = collection_field(run_label) if run_label else "unk"
    expected_caps, paths = [], []
    for name in names:
        data, caps = _heritrix_warc(rng, gzip=name.endswith(".gz"))
        path = tmp_path / name
        path.write_bytes(data)
        paths.append(str(path))
        for cap in caps:
            cap[8]["collection"] = collection_of(name, pattern, run_field)
        expected_caps.extend(caps)
    collections = {"pattern": pattern}
    if run_label:
        collections["label"] = run_label
    out = str(tmp_path / "out.cdxj")
    kw = {"warc_reader": rng.choice(["warcio", "fastwarc"])}
    _profile(paths, out, _write_policy(policy, tmp_path / "policy.yaml"), rng, pure, collections=collections, **kw)
    assert _run_meta(out)["captures"] == len(expected_caps)
    assert_same_profile(read_profile(out), oracle_profile(resolve_revisits(expected_caps), policy))


def rng_pure(seed):
    """Pure Python kernels for half the seeds (compiled ones only where built)."""
    return seed % 2 == 1 or fast.load() is None


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(0, 2 ** 32))
@example(seed=LOCAL_SEEDS["warcs"])
def test_depths_and_collections_of_random_heritrix_warcs_equal_the_oracle(tmp_path_factory, seed):
    check_warc_depths(seed, tmp_path_factory.mktemp("warc"), pure=rng_pure(seed))

