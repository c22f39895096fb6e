"""A growing test archive for the nightly tests: CDX and WARC files arriving night after night.

``Archive`` writes files into an input folder and a nightly config beside it, runs
`archive-profiler nightly` (in process, or as a subprocess to be killed), and profiles the same
inputs from scratch for comparison.
"""

import os
import subprocess
import sys

import yaml

from profiler.cli import main as cli
from profiler.nightly import fold as nightly_fold
from profiler.testing import synthetic, synthetic_warc
from profiler.run.profile import run_profile
from profiler.files.profilefile import FEATURES, flatten, iter_data

ARCHIVE_URI = "https://archive.example.org/"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def captures_by_host(n_lines, seed):
    """The generator's captures grouped by host, in order: [[capture, ...], ...]."""
    groups, host = [], None
    for c in synthetic.generate_captures(n_lines, seed):
        h = c[0].split(")", 1)[0]
        if h != host:
            groups.append([])
            host = h
        groups[-1].append(c)
    return groups


def cdx_text(captures, tag=""):
    """11-field CDX of captures; ``tag`` makes every digest unique to this file."""
    lines = [synthetic.LEGEND]
    for urlkey, ts, url, mime, status, digest, length in captures:
        if digest != "-" and tag:
            digest = tag + digest
        lines.append("%s %s %s %s %s %s - - %d 0 night.warc.gz" % (urlkey, ts, url, mime, status, digest, length))
    return "\n".join(lines) + "\n"


class Archive:
    def __init__(self, root, **settings):
        self.root = str(root)
        self.inputs = os.path.join(self.root, "in")
        self.out = os.path.join(self.root, "out")
        os.makedirs(self.inputs, exist_ok=True)
        self.config = os.path.join(self.root, "nightly.yaml")
        self.settings = dict({"inputs": ["in"], "output_dir": "out", "runner": "inline",
                              "archive_uri": ARCHIVE_URI, "keep": 3}, **settings)
        self.configure()

    def configure(self, **changes):
        self.settings.update(changes)
        with open(self.config, "w") as f:
            yaml.safe_dump(self.settings, f)

    # ---------------------------------------------------------------- files arriving

    def add_cdx(self, name, captures, tag=""):
        path = os.path.join(self.inputs, name)
        data = cdx_text(captures, tag).encode("ascii")
        if name.endswith(".gz"):
            import gzip
            data = gzip.compress(data, mtime=0)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def add_warc(self, name, n_captures, seed):
        path = os.path.join(self.inputs, name)
        synthetic_warc.write_warc(path, n_captures, seed)
        return path

    def add_bytes(self, name, data):
        path = os.path.join(self.inputs, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    # ---------------------------------------------------------------- runs

    def night(self, capsys):
        """Run nightly in process: (exit status, summary line)."""
        status = cli.main(["nightly", "--config", self.config, "-q"])
        return status, capsys.readouterr().out.strip()

    def start(self, stall=None):
        """Run nightly as a subprocess in its own process group (to be killed); with stall, one that
        stops at that stage (tests/helpers/stalled_nightly.py)."""
        command = [sys.executable, "-m", "profiler.cli"] if stall is None else \
            [sys.executable, os.path.join(ROOT, "tests", "helpers", "stalled_nightly.py"), stall, "--"]
        return subprocess.Popen(command + ["nightly", "--config", self.config],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                env=dict(os.environ, PYTHONPATH=ROOT), start_new_session=True)

    @property
    def latest(self):
        return os.path.join(self.out, "archive-latest.cdxj")

    @property
    def state_dir(self):
        return os.path.join(self.out, ".nightly")

    def versions(self):
        return sorted(n for n in os.listdir(self.out) if n.endswith(".cdxj") and "latest" not in n)

    def scratch(self):
        """A profile of every input now in the folder, made from scratch (same policy and URI)."""
        out = os.path.join(self.root, "scratch.cdxj")
        kw = {k: self.settings[k] for k in ("policy", "resolve_revisits", "detect_language") if k in self.settings}
        run_profile([self.inputs], out, archive_uri=ARCHIVE_URI, **kw)
        return out


def run_meta(path):
    """The profile's run '!meta' (inputs, captures, skips), its skipped files in path order."""
    run = nightly_fold.run_meta(path)[0]
    return dict(run, skipped_files=sorted(run.get("skipped_files", []), key=lambda i: i["path"]))


def about_meta(path):
    """The profile's '!meta' with the policy (type, generator, created, merge note)."""
    return nightly_fold.run_meta(path)[1]


def assert_same_profile(published, scratch):
    """Same data lines and the same inputs, captures and skips as the profile made from scratch."""
    with open(published, "rb") as a, open(scratch, "rb") as b:
        data_a = [line for line in a if not line.startswith(b"!")]
        data_b = [line for line in b if not line.startswith(b"!")]
    assert len(data_a) == len(data_b)
    assert data_a == data_b
    assert run_meta(published) == run_meta(scratch)


def check_within_bounds(published, scratch):
    """Every line equals the scratch one, or its bounds hold the scratch value: (exact lines, bounded)."""
    a = dict(iter_data(scratch))
    b = dict(iter_data(published))
    assert a.keys() == b.keys()
    exact = bounded = 0
    for key, truth in a.items():
        got = b[key]
        bounds = got.get("bounds", {})
        ft, fg = flatten(truth), flatten(got)
        for f in FEATURES:
            if f in bounds:
                low, high = bounds[f]
                assert low <= ft[f] <= high, (key, f, ft[f], bounds[f])
            else:
                assert ft[f] == fg[f], (key, f, ft[f], fg[f])
        if bounds:
            bounded += 1
        else:
            exact += 1
    return exact, bounded
