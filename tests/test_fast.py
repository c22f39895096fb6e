"""The compiled hot path (profiler/_apfast.c) against the pure-Python code and the oracle,
and which of the two the tasks of each runner ran."""

import os
import random

import orjson
import pytest

from oracle import profile as oracle_profile, resolve_revisits
from test_exactness_property import cdx_lines, random_captures, random_policy
from test_shipping import _python_without_profiler
from profiler import cdx, fast, stats
from profiler.expand import Expander
from profiler.mapside import CaptureAggregator
from profiler.pipeline import run_profile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")

compiled = pytest.mark.skipif(fast.load() is None, reason="the C extension is not built (no compiler?)")


def _map(lines, policy, rng, resolve):
    parse = cdx.make_parser("N b a m s k r M S V g")
    agg = CaptureAggregator(policy.period_len, resolve_revisits=resolve, limit=rng.randint(1, 20))
    records = []
    for line in lines:
        if agg.add(parse(line)):
            records.extend(agg.flush())
    records.extend(agg.flush())
    groups = {}
    for key, value in records:
        if key != b"!meta":
            groups.setdefault(key, []).append(orjson.loads(orjson.dumps(value)))
    return groups


def _reduce(expander, groups, order):
    """Key records summed by key; digest records sorted (their cut into records may differ)."""
    out = []
    for key in order:
        out.extend(expander.add(key.decode(), groups[key]))
    out.extend(expander.close())
    keys, digests = {}, []
    for key, value in out:
        if key.startswith(b"K "):
            stats.add(keys, key, value)
        else:
            assert key.startswith(b"D ")
            digests.append((key, value[0], sorted(map(tuple, value[1]))))
    return keys, sorted(digests)


@compiled
@pytest.mark.parametrize("seed", range(300))
def test_compiled_expander_equals_python(seed):
    rng = random.Random(seed)
    policy = random_policy(rng)
    lines = cdx_lines(random_captures(rng))
    if rng.random() < 0.5:
        lines.sort()
    groups = _map(lines, policy, rng, rng.random() < 0.8)
    order = sorted(groups) if rng.random() < 0.7 else rng.sample(sorted(groups), len(groups))
    limit = rng.randint(1, 50)
    assert _reduce(fast.expander(policy, limit), groups, order) == _reduce(Expander(policy, limit), groups, order)


@compiled
def test_compiled_expander_type():
    from profiler.policy import load
    assert type(fast.expander(load("default"), 10)).__module__ == "profiler._apfast"


def test_pure_python_when_disabled(monkeypatch):
    from profiler.policy import load
    monkeypatch.setenv(fast.PURE_ENV, "1")
    assert fast.load() is None and fast.kind() == "pure Python"
    assert isinstance(fast.expander(load("default"), 10), Expander)


def _lines(path):
    with open(path, "rb") as f:
        return [line for line in f if b'"created"' not in line]


def _task_kinds(summary):
    return {name: n for step in summary["counters"] for name, n in step.get("tasks", {}).items()}


@compiled
def test_local_tasks_load_the_shipped_extension_and_match_pure_python(tmp_path, monkeypatch):
    """Tasks import profiler from profiler.zip only: the .so comes as a shipped file (--files)."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.delenv(fast.PURE_ENV, raising=False)
    python = _python_without_profiler(tmp_path)
    out_c, out_py = str(tmp_path / "c.cdxj"), str(tmp_path / "py.cdxj")
    summary = run_profile([SAMPLE], out_c, runner="local", cores=1, extra_args=["--python-bin", python])
    assert _task_kinds(summary) == {"step-1 reducers (compiled)": summary["counters"][0]["tasks"][
        "step-1 reducers (compiled)"]}
    monkeypatch.setenv(fast.PURE_ENV, "1")
    summary = run_profile([SAMPLE], out_py, runner="local", cores=1, extra_args=["--python-bin", python])
    assert set(_task_kinds(summary)) == {"step-1 reducers (pure Python)"}
    assert _lines(out_c) == _lines(out_py)


@compiled
def test_tasks_without_the_shipped_file_fall_back_to_python(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.setattr(fast, "shipped_files", lambda: [])
    python = _python_without_profiler(tmp_path)
    out = str(tmp_path / "p.cdxj")
    summary = run_profile([SAMPLE], out, runner="local", cores=1, extra_args=["--python-bin", python])
    assert set(_task_kinds(summary)) == {"step-1 reducers (pure Python)"}
    assert summary["lines"] > 1000


@pytest.mark.parametrize("seed", range(40))
def test_both_paths_equal_the_oracle(seed, monkeypatch):
    """The inline runner's whole job (both paths) against the brute-force oracle."""
    rng = random.Random(seed)
    policy = random_policy(rng)
    caps = random_captures(rng)
    lines = cdx_lines(caps)
    oracle_caps = [[u, t, m, "unk" if s == "-" else s, d, n, m == "warc/revisit"] for u, t, m, s, d, n in caps]
    expected = oracle_profile(resolve_revisits(oracle_caps), policy)
    for pure in ("", "1"):
        monkeypatch.setenv(fast.PURE_ENV, pure)
        groups = _map(lines, policy, rng, True)
        keys, _ = _reduce(fast.expander(policy, rng.randint(1, 50)), groups, sorted(groups))
        # step 1 only: shared digests are corrected in step 2, so compare the digest-free fields
        got = {k[2:].decode(): (v[0], v[1], v[2], v[3], v[4], v[7], v[8]) for k, v in keys.items()}
        want = {k: (v[0], v[1], v[2], v[3], v[4], v[7], v[8]) for k, v in expected.items()}
        assert got == want
