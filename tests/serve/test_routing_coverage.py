"""Coverage, the router's rule (profiler.files.coverage): a map made from a profile lists every URI-R
it holds, so a URI it does not list is not held there; compaction marks the lines it rolls
children into, so no held URI is ever left out (recall 100%), whatever the quota."""

import os
import random

from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.testing import synthetic
from profiler.toolkit.compact import compact_file
from profiler.files.coverage import listed
from profiler.errors import UserError
from profiler.toolkit.lookup import HELD, Lookup
from profiler.run.profile import run_profile
from profiler.files.ukvs import profile_to_map


def routed(path, urlkeys):
    with Lookup(path) as lk:
        return {q for q, a in lk.batch(sorted(urlkeys))
                if a.status == HELD and listed(lk.coverage, a.urlkey, a.key, a.rollup)}


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10 ** 6), share=st.floats(0.2, 0.9), policy=st.sampled_from(["default", "urls", "hosts"]),
       quotas=st.lists(st.integers(2, 200), min_size=1, max_size=3))
def test_held_uris_stay_routed_and_unheld_hosts_are_not(tmp_path_factory, seed, share, policy, quotas):
    folder = tmp_path_factory.mktemp("cov")
    rng = random.Random(seed)
    lines = [line.rstrip("\n") for line in synthetic.cdx_lines(1500, seed=seed % 1000)]
    kept = [line for line in lines if rng.random() < share]
    held = {line.split(" ", 1)[0] for line in kept}
    absent = {line.split(" ", 1)[0] for line in lines} - held
    cdx = folder / "a.cdx"
    cdx.write_text(synthetic.LEGEND + "\n" + "\n".join(kept) + "\n")
    profile = folder / "a.cdxj"
    run_profile([str(cdx)], str(profile), policy=policy)
    full = folder / "a.ukvs"
    profile_to_map(str(profile), str(full), ("surt",))
    # the full map (and the profile itself) route exactly the held URI-Rs at their level
    for path in (full, profile):
        got = routed(str(path), held | absent)
        assert held <= got
        if policy == "urls":
            assert got == held
    made_up = {"zz,nowhere%d)/x" % rng.randrange(10 ** 6) for _ in range(20)}
    assert not routed(str(full), made_up)
    # compacted to any quota: every held URI-R still routed (rollup lines stand for them)
    n = sum(1 for line in open(full, "rb") if not line.startswith(b"!"))
    for q in quotas:
        small = folder / ("c%d.ukvs" % q)
        try:
            compact_file(str(full), str(small), max_lines=max(q, n // q))
        except UserError:
            continue
        assert held <= routed(str(small), held | absent)
