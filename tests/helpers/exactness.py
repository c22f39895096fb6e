"""Generated sorted CDX archives, and the check of a profile against the brute-force oracle."""

import contextlib
import os
import random
import subprocess

from profiler.accel import fast
from profiler.model.policy import load as load_policy

from helpers.oracle import profile as oracle_profile, read_captures, read_profile, resolve_revisits


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


def generate_lines(seed, n_urirs=400, hot=0.0):
    """Sorted 11-field CDX lines with skewed hosts, revisits, shared and missing digests; with
    hot, that share of the other captures holds the first shared digest (most URI-Rs hold it)."""
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
                if hot and rng.random() < hot:
                    digest = SHARED[0]
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



def varied_lines(seed, n_urirs, vary):
    """generate_lines(seed, n_urirs), each line's fields (a list) changed in place by vary."""
    lines = []
    for line in generate_lines(seed, n_urirs=n_urirs):
        fields = line.split()
        vary(fields)
        lines.append(" ".join(fields))
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


def check_against_oracle(paths, out, policy_name):
    policy = load_policy(policy_name)
    expected = oracle_profile(resolve_revisits(read_captures(paths)), policy)
    got = read_profile(out)
    assert_same_profile(got, expected, 10)
    subprocess.run(["sort", "-c", out], check=True, env=dict(os.environ, LC_ALL="C"))
    return len(got)


def assert_same_profile(got, expected, shown=5):
    """{key: oracle tuple} got equals expected: the same keys, the same tuple under each."""
    assert set(got) == set(expected), sorted(set(got) ^ set(expected))[:shown]
    wrong = [k for k in expected if got[k] != expected[k]]
    assert not wrong, [(k, got[k], expected[k]) for k in wrong[:5]]


@contextlib.contextmanager
def pure_python():
    """The Python kernels, not the compiled ones, within the block (profiler.accel.fast.PURE_ENV)."""
    old = os.environ.get(fast.PURE_ENV)
    os.environ[fast.PURE_ENV] = "1"
    try:
        yield
    finally:
        if old is None:
            del os.environ[fast.PURE_ENV]
        else:
            os.environ[fast.PURE_ENV] = old


def without_created(path):
    import re
    with open(path, "rb") as f:
        return re.sub(rb'"created":"[^"]*"', b'"created":""', f.read())
