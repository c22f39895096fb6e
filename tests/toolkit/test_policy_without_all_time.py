"""A profile whose policy writes no line of all time (by month alone, by year alone): a lookup
without a date, or of a coarser date than its lines, found no line and said no-match while the
profile holds the URI, and `ukvs` wrote an empty map. Both now say why they cannot answer, in
one line; a lookup at the lines' level answers as before."""

import os
import subprocess
import sys

import pytest

from profiler.model import policy as policies
from profiler.run.profile import run_profile

from helpers.damage import one_line_error

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")

POLICY = """name: by-%(level)s
host_depth: 3
path_depth: 0
registered_domains: true
levels:
  datetime: [year, month]
emit:
  root: [{datetime: [%(level)s]}]
  tld: [{datetime: [%(level)s]}]
  suffix: [{datetime: [%(level)s]}]
  domain: [{datetime: [%(level)s]}]
  subdomain: [{datetime: [%(level)s]}]
  host: [{datetime: [%(level)s]}]
  path: none
"""


def cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "profiler.cli", *args], capture_output=True, text=True,
                          input=stdin, timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))


@pytest.fixture(scope="module", params=["month", "year"])
def by_period(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("by-" + request.param)
    policy = folder / "policy.yaml"
    policy.write_text(POLICY % {"level": request.param})
    out = folder / "p.cdxj"
    run_profile([SAMPLE], str(out), policy=str(policy), created="2026-01-01T00:00:00Z")
    host = next(line.split(b" ")[:2] for line in open(out, "rb") if b")/* " in line)
    return request.param, str(out), host[0].decode(), host[1].decode()


def test_a_lookup_the_lines_cannot_answer_says_so(by_period):
    level, profile, host, period = by_period
    for dt in [[]] + ([["--datetime", period[:4]]] if level == "month" else []):
        for r in (cli("lookup", profile, host, *dt), cli("lookup", profile, *dt, stdin=host + "\n")):
            assert one_line_error(r.returncode, r.stderr, "cannot answer a lookup", "by-" + level,
                                  "its lines are by " + level), r.stderr
            assert r.stdout == ""
    r = cli("lookup", profile, host, "--datetime", period)
    assert r.returncode == 0 and r.stdout.split("\t")[1:3] == ["held", "%s %s - -" % (host, period)], r.stdout


def test_a_map_of_such_a_profile_is_refused(by_period, tmp_path):
    level, profile, _, _ = by_period
    for keys in ("surt", "surt,datetime"):
        out = tmp_path / "m.ukvs"
        r = cli("ukvs", profile, "-o", str(out), "--keys", keys)
        assert one_line_error(r.returncode, r.stderr, "writes no line of all time", "by " + level), r.stderr
        assert not out.exists()


def test_nightly_refuses_a_map_of_such_a_policy(by_period, tmp_path):
    level, profile, _, _ = by_period
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY % {"level": level})
    config = tmp_path / "n.yaml"
    config.write_text("name: t\ninputs: [%s]\noutput_dir: out\npolicy: policy.yaml\nmementomap: surt\n" % SAMPLE)
    (tmp_path / "out").mkdir()
    r = cli("nightly", "--config", str(config))
    said = r.stdout + r.stderr
    assert r.returncode == 2 and "mementomap needs a policy that writes lines of all time" in said, said
    assert not [n for n in os.listdir(str(tmp_path / "out")) if n.endswith((".cdxj", ".ukvs"))]


def test_every_bundled_policy_writes_lines_of_all_time():
    for name in policies.available():
        assert policies.load(name).writes_plain_lines(), name
