"""nightly's approximate folds against the brute-force oracle: over several nights of random new
inputs (recaptures, revisits whose originals came on earlier nights, digests shared across
nights) and removed inputs, every number of the published profile is the oracle's value for the
union of the inputs in the folder, or carries bounds that hold it."""

import os
import random

from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.files.profilefile import FEATURES, flatten, iter_data
from profiler.model.policy import load as load_policy

from helpers.nightly_archive import Archive
from helpers.oracle import profile as oracle_profile, read_captures, resolve_revisits
from helpers.random_archives import cdx_lines, random_captures

NAMES = ("urim.total", "urim.min", "urim.max", "urir", "bytes", "digests", "dedup_bytes", "first", "last")


def _night_file(a, name, caps):
    with open(os.path.join(a.inputs, name), "wb") as f:
        f.write(b" CDX N b a m s k r M S V g\n" + b"".join(line + b"\n" for line in cdx_lines(caps)))


def _check_against_oracle(a, policy):
    paths = sorted(os.path.join(a.inputs, n) for n in os.listdir(a.inputs))
    truth = oracle_profile(resolve_revisits(read_captures(paths)), policy)
    got = {k.decode(): v for k, v in iter_data(a.latest)}
    for key, value in got.items():
        if key not in truth:        # only a bounded line may hold nothing
            assert (value.get("bounds") or {}).get("urim.total", [1])[0] == 0, (key, value)
    for key, row in truth.items():
        assert key in got, ("no line", key)
        true, value = dict(zip(NAMES, row)), got[key]
        bounds, flat = value.get("bounds") or {}, flatten(value)
        for name in FEATURES:
            low, high = bounds.get(name, (flat[name], flat[name]))
            assert low <= true[name] <= high, (key, name, low, true[name], high)


def _retagged(cap, night, seen, rng):
    """The capture with a digest of this night's own, or now and then another URI-R's digest of
    an earlier night (a digest seen before, of no capture of this URI-R)."""
    others = sorted(d for u, d in seen if d != "-" and (cap[0], d) not in seen)
    if cap[4] == "-":
        return cap
    digest = rng.choice(others) if others and rng.random() < 0.04 else "N%d%s" % (night, cap[4])
    return cap[:4] + (digest,) + cap[5:]


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2 ** 32))
def test_property_approximate_nights_hold_the_truth(tmp_path_factory, capsys, seed):
    """Four nights of random inputs, some removed later, folded with on_overlap: approximate:
    after each night every published number holds the oracle's value for the inputs then."""
    tmp = tmp_path_factory.mktemp("no")
    rng = random.Random(seed)
    a = Archive(tmp, on_overlap="approximate", max_approximate_nights=10, policy="default")
    policy = load_policy("default")
    names, seen = [], set()
    for night in range(4):
        name = "night-%d.cdx" % night
        caps = random_captures(rng)
        if rng.random() < 0.85:     # a night that may fold approximately: no URI-R's digest seen before
            caps = [_retagged(c, night, seen, rng) for c in caps]
        seen.update((c[0], c[4]) for c in caps)
        _night_file(a, name, caps)
        names.append(name)
        if night >= 2 and rng.random() < 0.4:
            gone = names.pop(rng.randrange(len(names) - 1))
            os.remove(os.path.join(a.inputs, gone))
        status, line = a.night(capsys)
        assert status == 0, line
        _check_against_oracle(a, policy)
