"""Which kernels a policy gets (profiler.job.kernels): the compiled ones within every bound the
extension declares, Python's past any of them (never an error in C), and the compiled reduce side
over the Python map side for a criterion whose values the C does not find."""

import pytest

from profiler.accel import fast
from profiler.job.kernels import Kernels, finds_values, supports
from profiler.model import capture, criteria
from profiler.model.criteria import IDENTITY, PREFIX, Criterion, Level
from profiler.model.policy import Policy
from profiler.run.profile import run_profile

from helpers import throwaway
from helpers.registries import keep
from helpers.oracle import profile as oracle_profile, read_profile, resolve_revisits

MODULE = fast.load()
compiled = pytest.mark.skipif(MODULE is None, reason="the C extension is not built (no compiler?)")


def added(name, levels):
    """An optional criterion of these levels, reading a capture field of its name."""
    capture.add_field(name, "unk")
    return criteria.register(Criterion(name, name, tuple(levels), (levels[0].name,), lambda field: (levels[0].name,),
                                       ("unk",), r"-|[a-z0-9]+", "a test criterion", optional=True))


@pytest.fixture
def registries(monkeypatch):
    """The registries as they are, restored after the test."""
    keep(monkeypatch)


def policy_of(levels, emit="all"):
    return Policy({"host_depth": 2, "levels": levels, "emit": {"root": emit, "tld": "none", "domain": "none",
                                                                "host": "none"}})


@compiled
def test_the_extension_declares_its_bounds():
    assert (MODULE.MAX_CRITERIA, MODULE.MAX_LEVELS, MODULE.MAX_COMBINATIONS, MODULE.MAX_PREFIX) == (6, 6, 256, 255)
    every = {c.name: list(c.level_names) for c in criteria.CRITERIA}
    assert supports(MODULE, policy_of(every)) and finds_values(MODULE, policy_of(every))


def past_bounds():
    """(what, policy) past each bound of the extension, with criteria registered for it."""
    base = {"datetime": ["year", "month", "day"], "mime": ["type", "category"], "status": ["class", "code"],
            "lang": ["code"]}
    added("c5", [Level("v", IDENTITY)])
    added("c6", [Level("v", IDENTITY)])
    added("c7", [Level("v", IDENTITY)])
    added("many", [Level("p%d" % n, PREFIX, n) for n in range(1, 8)])
    added("long", [Level("p", PREFIX, 256)])
    two = added("two", [Level("a", PREFIX, 1), Level("b", PREFIX, 2)])
    return [
        ("criteria", policy_of(dict(base, c5=["v"], c6=["v"], c7=["v"]), emit=[{"datetime": ["any", "year"]}])),
        ("combinations", policy_of(dict(base, c5=["v"], two=list(two.level_names)))),
        ("levels", policy_of(dict(base, many=["p1", "p7"]), emit=[{"many": ["any", "p7"]}])),
        ("prefix", policy_of(dict(base, long=["p"]), emit=[{"long": ["any", "p"]}])),
    ]


@compiled
def test_a_policy_past_a_bound_runs_the_python_kernels(registries):
    cases = past_bounds()
    assert len(cases[0][1].criteria) == MODULE.MAX_CRITERIA + 1
    assert len(cases[1][1].criteria) <= MODULE.MAX_CRITERIA
    assert len(cases[1][1].emit["root"]) == 4 * 3 * 3 * 2 * 2 * 3 > MODULE.MAX_COMBINATIONS
    for what, policy in cases:
        assert not supports(MODULE, policy), what
        kernels = Kernels(policy, MODULE)
        assert not kernels.compiled and kernels.kind == "pure Python" and not kernels.parses("cdx"), what
        from profiler.job.expand import Expander
        assert isinstance(kernels.expander(10), Expander), what
    with pytest.raises(ValueError):             # what the extension does with one: never asked now
        fast.compiled_expander(MODULE, cases[0][1], 10)
    with pytest.raises(ValueError):
        fast.compiled_expander(MODULE, cases[1][1], 10)


def test_a_policy_past_a_bound_profiles_as_the_oracle_says(registries, tmp_path):
    """The Python fallback, end to end (inline): a URL list whose captures give a scheme, the
    criteria past the extension's count unknown to every reader ('unk')."""
    throwaway.register()
    [(_, policy)] = [case for case in past_bounds() if case[0] == "criteria"]
    policy = Policy(dict(policy.to_dict(), levels=dict(policy.to_dict()["levels"], scheme=["name"]),
                         emit={"root": [{"datetime": ["any", "year"], "scheme": ["any", "name"], "c7": ["any", "v"]}],
                               "tld": [{"scheme": ["any", "name"]}]}))
    lines = ["2020010%d000000 %s://h%d.example.com/p" % (i % 9 + 1, ("http", "https", "ftp")[i % 3], i % 4)
             for i in range(40)]
    path = tmp_path / "urls.txt"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "p.cdxj"
    summary = run_profile([str(path)], str(out), policy=policy, split_size=300)
    counted = {name for step in summary["counters"] for group in step.values() for name in group}
    assert "step-1 reducers (pure Python)" in counted and "step-1 reducers (compiled)" not in counted
    from profiler.formats.cdx import urlkey
    caps = [[urlkey(None, line.split()[1].encode()), line.split()[0], "unk", "unk", "-", 0, False, "unk",
             {"scheme": line.split()[1].split(":")[0]}] for line in lines]
    assert read_profile(str(out)) == oracle_profile(resolve_revisits(caps), policy)


@compiled
def test_a_criterion_the_map_side_does_not_find_runs_the_compiled_reduce_side(registries):
    throwaway.register()
    policy = Policy(throwaway.POLICY)
    kernels = Kernels(policy, MODULE)
    assert supports(MODULE, policy) and not finds_values(MODULE, policy)
    assert kernels.compiled and not kernels.parses("cdx") and not kernels.parses("cdxj")
    assert type(kernels.expander(10)).__module__ == MODULE.__name__
