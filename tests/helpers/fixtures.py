"""The files of tests/data: tiny real-shaped inputs of every format, a broken one of each, and
their golden profiles (tests/data/golden/NAME.POLICY.cdxj), compared as text.

scripts/make_fixtures.py writes them; tests/data/README.md says where each comes from.
"""

import os
import re
import tempfile

from helpers.paths import ROOT

DATA = os.path.join(ROOT, "tests", "data")
GOLDEN = os.path.join(DATA, "golden")
#: inputs profiled with a policy besides the default one
OTHER_POLICIES = {"cdx11-legend.cdx": ("default",), "cdxj-commoncrawl.cdxj": ("lang",), "warc-commoncrawl.warc.gz": ("lang",)}


def names():
    """The input files, sorted."""
    return sorted(n for n in os.listdir(DATA) if os.path.isfile(os.path.join(DATA, n)) and n != "README.md")


def path(name):
    """The path of an input of tests/data."""
    found = os.path.join(DATA, name)
    assert os.path.isfile(found), "no fixture %s" % name
    return found


def policies(name):
    return ("hosts",) + OTHER_POLICIES.get(name, ())


def golden(name, policy="hosts"):
    """The path of the golden profile of an input under a bundled policy."""
    return os.path.join(GOLDEN, "%s.%s.cdxj" % (name, policy))


def profile_text(name, policy="hosts", **kw):
    """The profile of one input (inline runner), as text the same on every machine and day: its
    creation time and the generator's version blanked, the inputs by file name."""
    from profiler.run.profile import run_profile
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "p.cdxj")
        run_profile([path(name)], out, policy=policy, archive_uri="https://archive.example.org/", **kw)
        with open(out, encoding="utf-8") as f:
            text = f.read()
    text = re.sub(r'"created":"[^"]*"', '"created":""', text)
    text = re.sub(r'"generator":"archive-profiler/[^"]*"', '"generator":"archive-profiler"', text)
    return text.replace(DATA + os.sep, "")
