"""End to end: every line of the profile equals a brute-force oracle over the same captures."""

import os
import random
import subprocess

import pytest

from oracle import profile as oracle_profile, read_captures, read_profile, resolve_revisits
from profiler.job.pipeline import run_profile
from profiler.model.policy import load as load_policy

HOSTS = (["com,cnn)", "com,cnn,edition)", "com,cnn,money)", "uk,co,bbc)", "uk,co,bbc,news)",
          "uk,co,bbc,news,live)", "org,iana)", "de,zew)", "com,example:8080)", "gov,epa)"]
         + ["com,site%02d)" % i for i in range(25)])
PATHS = ["/", "/a/", "/a/b/c.html", "/a/b/", "/x/y?z=1/2", "/star*", "/a/b/c/d/e.png", "/index.html",
         "/world/asia/index.html", "/world/europe/", "/q?x=a/b"]
MIMES = ["text/html", "text/html", "text/html", "image/jpeg", "image/png", "text/css",
         "application/pdf", "application/javascript", "unk"]
STATUSES = ["200"] * 8 + ["301", "302", "404", "500", "-"]
SHARED = ["3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", "SHAREDSPACERGIF2222222222222222A", "ERRORPAGE404XXXXXXXXXXXXXXXXXXXX"]


def _digest(rng):
    return "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(32))


def generate_lines(seed, n_urirs=400):
    """Sorted 11-field CDX lines with skewed hosts, revisits, shared and missing digests."""
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) ** 1.2 for i in range(len(HOSTS))]
    urlkeys = set()
    while len(urlkeys) < n_urirs:
        if rng.random() < 0.02:
            urlkeys.add("dns:host%d.example.org" % rng.randrange(5))
            continue
        host = rng.choices(HOSTS, weights)[0]
        path = rng.choice(PATHS)
        if rng.random() < 0.5:
            path = path.rsplit("/", 1)[0] + "/p%d.html" % rng.randrange(40)
        urlkeys.add(host + path)
    lines = []
    for urlkey in sorted(urlkeys):
        originals = []
        for _ in range(min(int(rng.paretovariate(1.3)), 30)):
            ts = "%04d%02d%02d%02d%02d%02d" % (rng.randint(2009, 2014), rng.randint(1, 12), rng.randint(1, 28),
                                               rng.randrange(24), rng.randrange(60), rng.randrange(60))
            r = rng.random()
            if originals and r < 0.25:
                digest = rng.choice(originals)
                mime, status, length = "warc/revisit", "-", rng.randint(300, 600)
            elif r < 0.28:
                digest, mime, status, length = _digest(rng), "warc/revisit", "-", rng.randint(300, 600)
            else:
                digest = rng.choice(SHARED) if r < 0.36 else "-" if r < 0.39 else _digest(rng)
                if digest != "-" and originals and r > 0.95:
                    digest = originals[0]
                mime, status = rng.choice(MIMES), rng.choice(STATUSES)
                length = rng.randint(0, 50000)
                if digest != "-":
                    originals.append(digest)
            original = urlkey if ")" not in urlkey else "http://example/"
            lines.append("%s %s %s %s %s %s - - %d %d f.warc.gz"
                         % (urlkey, ts, original, mime, status, digest, length, rng.randrange(10 ** 6)))
    lines.sort()
    return lines


def write_files(folder, lines, n_files=3, seed=0, shuffle=False):
    """Spread lines over files in runs, so that some URI-Rs span files."""
    rng = random.Random(seed)
    if shuffle:
        lines = list(lines)
        rng.shuffle(lines)
    buckets = [[] for _ in range(n_files)]
    i = 0
    while i < len(lines):
        run = rng.randint(1, 7)
        rng.choice(buckets).extend(lines[i:i + run])
        i += run
    paths = []
    for k, bucket in enumerate(buckets):
        path = os.path.join(folder, "part%d.cdx" % k)
        with open(path, "w") as f:
            f.write(" CDX N b a m s k r M S V g\n")
            f.writelines(l + "\n" for l in bucket)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    lines = generate_lines(seed=7)
    return folder, lines, write_files(str(folder), lines)


def _check_against_oracle(paths, out, policy_name):
    policy = load_policy(policy_name)
    expected = oracle_profile(resolve_revisits(read_captures(paths)), policy)
    got = read_profile(out)
    assert set(got) == set(expected), (sorted(set(got) ^ set(expected))[:10])
    wrong = [k for k in expected if got[k] != expected[k]]
    assert not wrong, [(k, got[k], expected[k]) for k in wrong[:5]]
    subprocess.run(["sort", "-c", out], check=True, env=dict(os.environ, LC_ALL="C"))
    return len(got)


@pytest.mark.parametrize("policy_name", ["full", "default"])
def test_every_line_matches_oracle(corpus, tmp_path, policy_name):
    folder, lines, paths = corpus
    out = str(tmp_path / "p.cdxj")
    summary = run_profile(paths, out, policy=policy_name, runner="inline", split_size=3000)
    assert summary["splits"] > len(paths)          # files were cut into several splits
    n = _check_against_oracle(paths, out, policy_name)
    assert n > (2000 if policy_name == "full" else 100)


def test_shuffled_input_gives_the_same_profile(corpus, tmp_path):
    folder, lines, paths = corpus
    shuffled = write_files(str(tmp_path), lines, n_files=2, seed=3, shuffle=True)
    a, b = str(tmp_path / "a.cdxj"), str(tmp_path / "b.cdxj")
    run_profile(paths, a, policy="full", created="X")
    run_profile(shuffled, b, policy="full", created="X")
    assert _data_lines(a) == _data_lines(b)


def _data_lines(path):
    with open(path, "rb") as f:
        return [l for l in f if not l.startswith(b"!")]


def _without_created(path):
    import re
    with open(path, "rb") as f:
        return re.sub(rb'"created":"[^"]*"', b'"created":""', f.read())


def test_inline_and_local_runners_write_identical_bytes(corpus, tmp_path):
    folder, lines, paths = corpus
    a, b = str(tmp_path / "inline.cdxj"), str(tmp_path / "local.cdxj")
    run_profile(paths, a, policy="full", runner="inline", split_size=3000)
    summary = run_profile(paths, b, policy="full", runner="local", split_size=3000, cores=3)
    assert summary["splits"] >= 2
    assert summary["parts"] >= 3, summary["parts"]
    assert _without_created(a) == _without_created(b)


def test_legend_order_and_compression_do_not_change_the_profile(corpus, tmp_path):
    """A legend in another field order, gzip, bz2 and CDXJ copies of the same captures."""
    import bz2
    import gzip
    import json
    folder, lines, paths = corpus
    order = "g V S M r k s m a b N".split()
    standard = "N b a m s k r M S V g".split()
    permuted = [" CDX " + " ".join(order)]
    cdxj = []
    for line in lines:
        f = dict(zip(standard, line.split()))
        permuted.append(" ".join(f[c] for c in order))
        cdxj.append("%s %s %s" % (f["N"], f["b"], json.dumps(
            {"url": f["a"], "mime": f["m"], "status": f["s"], "digest": "sha1:" + f["k"].lower(),
             "length": f["S"]})))
    text = "\n".join(permuted) + "\n"
    (tmp_path / "permuted.cdx").write_text(text)
    with gzip.open(tmp_path / "permuted.cdx.gz", "wt") as f:
        f.write(text)
    with bz2.open(tmp_path / "permuted.cdx.bz2", "wt") as f:
        f.write(text)
    (tmp_path / "copy.cdxj").write_text("\n".join(cdxj) + "\n")
    reference = str(tmp_path / "ref.cdxj")
    run_profile(paths, reference, policy="default")
    expected = _data_lines(reference)
    for name in ("permuted.cdx", "permuted.cdx.gz", "permuted.cdx.bz2", "copy.cdxj"):
        out = str(tmp_path / (name + ".profile"))
        run_profile([str(tmp_path / name)], out, policy="default", split_size=5000)
        assert _data_lines(out) == expected, name


def test_any_table_limit_writes_the_same_bytes(corpus, tmp_path):
    """--table-limit (steps 1 and 2 flush and spill more often) changes memory, not the profile."""
    folder, lines, paths = corpus
    a, b = str(tmp_path / "default.cdxj"), str(tmp_path / "small.cdxj")
    run_profile(paths, a, policy="full", runner="inline", split_size=3000)
    run_profile(paths, b, policy="full", runner="inline", split_size=3000, extra_args=["--table-limit", "3"])
    assert _without_created(a) == _without_created(b)
