"""Exactness under any cut: the map/reduce functions, run without mrjob over random splits,
reducer partitions, table limits and policies, always equal the brute-force oracle."""

import os
import random

import orjson
from hypothesis import given, settings, strategies as st

from profiler.job import digests
from profiler.model import stats
from profiler.model.keys import SuffixTable
from profiler.job.kernels import Kernels
from profiler.job.mapside import CaptureAggregator
from profiler.model.policy import CHOICES, CRITERIA, LEVEL_TYPES, Policy

from helpers.exactness import pure_python
from helpers.oracle import profile as oracle_profile, resolve_revisits
from helpers.random_archives import (HOSTS, PATHS, index_lines, oracle_captures, parse_line, random_captures,
                                     random_languages, random_policy)


def run_without_mrjob(lines, policy, rng):
    """Map over random splits, shuffle into random reducer partitions, three steps."""
    parse = parse_line
    cuts = sorted(rng.sample(range(len(lines) + 1), min(len(lines) + 1, rng.randint(1, 5))))
    bounds = [0] + cuts + [len(lines)]
    records = []
    for lo, hi in zip(bounds, bounds[1:]):
        agg = CaptureAggregator(policy, limit=rng.randint(1, 20))
        for line in lines[lo:hi]:
            if agg.add(parse(line)):
                records.extend(agg.flush())
        records.extend(agg.flush())

    def shuffle(pairs, n_reducers):
        groups = {}
        for key, value in pairs:
            # through JSON, as between steps (a bytes value is JSON already: profiler.job.protocol)
            groups.setdefault(key, []).append(orjson.loads(value if isinstance(value, bytes) else orjson.dumps(value)))
        parts = [[] for _ in range(n_reducers)]
        for key in sorted(groups):
            parts[hash(key) % n_reducers].append((key, groups[key]))
        return parts

    step1 = []
    for part in shuffle(records, rng.randint(1, 4)):
        exp = Kernels(policy).expander(rng.randint(1, 50))   # compiled when built, else profiler.job.expand
        for key, values in part:
            step1.extend(exp.add(key.decode(), values))
        step1.extend(exp.close())
    step2 = []
    suffixes = SuffixTable(policy)
    for part in shuffle(step1, rng.randint(1, 4)):
        table = {}
        for key, values in part:
            if key.startswith(b"D "):
                for k, rec in digests.corrections(values, policy, suffixes, rng.choice([None, rng.randint(1, 40)])):
                    stats.add(table, k, rec)
            else:
                step2.append((key, stats.sum_all(values)))
        step2.extend((b"K " + k.encode(), rec) for k, rec in table.items())
    final = {}
    for part in shuffle(step2, rng.randint(1, 3)):
        for key, values in part:
            final[key[2:].decode()] = tuple(stats.sum_all(values))
    return final


@settings(max_examples=int(os.environ.get("PROPERTY_EXAMPLES", "60")), deadline=None)
@given(st.integers(0, 2 ** 32))
def test_any_cut_equals_oracle(seed):
    check_against_oracle(seed)


@settings(max_examples=int(os.environ.get("PROPERTY_EXAMPLES", "60")), deadline=None)
@given(st.integers(0, 2 ** 32))
def test_any_cut_equals_oracle_pure_python(seed):
    with pure_python():
        check_against_oracle(seed)


def check_against_oracle(seed):
    rng = random.Random(seed)
    policy = random_policy(rng)
    caps = random_captures(rng, wide=True)
    langs = random_languages(rng, caps) if "lang" in policy.names or rng.random() < 0.2 else None
    lines = index_lines(caps, langs)
    if rng.random() < 0.5:
        lines.sort()
    got = run_without_mrjob(lines, policy, rng)
    oracle_caps = oracle_captures(caps, langs)
    expected = oracle_profile(resolve_revisits(oracle_caps), policy)
    assert set(got) == set(expected)
    for key in expected:
        assert got[key] == expected[key], key
