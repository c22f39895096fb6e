"""The kernels of the job's steps, compiled or pure Python: chosen here, once per task.

The compiled kernels (profiler.accel) and the pure-Python ones (profiler.job) write the same
bytes. The compiled ones run when the extension loads and supports the policy: every level of
its criteria projects in a way the extension knows, within the bounds it declares (criteria of a
key, levels of a criterion, combinations of a SURT level, characters of a prefix); otherwise, or
with ARCHIVE_PROFILER_PURE_PYTHON=1, Python runs. The reduce side takes each criterion's values
as the map side wrote them, whatever their source; the compiled map side parses a split when the
extension parses its line format and finds every criterion's value itself (its SOURCES): a
criterion of another source (one a plugin adds) is read by the format's Python reader, and its
values go on to the compiled reduce side.
"""

from profiler.accel import fast
from profiler.job import bigsums
from profiler.model import criteria


def supports(module, policy):
    """Whether the compiled module can run a policy's reduce steps (step 1's expander, step 2's
    corrections, the readers of steps 2 and 3)."""
    projections = set(getattr(module, "PROJECTIONS", ()))
    most = {name: getattr(module, name, 0) for name in ("MAX_CRITERIA", "MAX_LEVELS", "MAX_COMBINATIONS", "MAX_PREFIX")}
    return (len(policy.criteria) <= most["MAX_CRITERIA"]
            and all(len(c.levels) <= most["MAX_LEVELS"] and all(
                level.kind in projections and level.n <= most["MAX_PREFIX"] for level in c.levels)
                for c in policy.criteria)
            and all(len(combos) <= most["MAX_COMBINATIONS"] for combos in policy.combo_sets))


def finds_values(module, policy):
    """Whether the compiled map side finds every criterion's value of a policy in the lines it
    parses (each one's origin, its source field or derivation, is among the module's SOURCES),
    and the policy has no plugin's criterion, whose values the Python map side checks
    (profiler.job.cells.CellKeys.bad_value)."""
    sources = set(getattr(module, "SOURCES", ()))
    return all(c.origin in sources and c in criteria.BUILT_IN for c in policy.criteria)


def task_preloads(policy):
    """What a policy's tasks read before their first record ('module:function'): a process that
    forks tasks may read it once for all of them (profiler.runtime.forkserver)."""
    out = []
    if policy.registered_domains:
        out.append("profiler.model.domains:load")
    if any(c.source == "lang" for c in policy.criteria):
        out.append("profiler.model.language:load")
    return tuple(out)


class Kernels:
    """The compiled kernels for a policy, or None in ``module`` when Python's run."""

    def __init__(self, policy, module=None, pure=False):
        self.policy = policy
        if pure:
            module = None
        elif module is None:
            module = fast.load()
        self.module = module if module is not None and supports(module, policy) else None

    @property
    def compiled(self):
        return self.module is not None

    @property
    def kind(self):
        """'compiled' or 'pure Python': which code the steps run (the tasks' counters say it)."""
        return "compiled" if self.compiled else "pure Python"

    def budget(self, split):
        """The most a split's lengths may add up to, or None (Python's integers have no bound)."""
        return bigsums.budget(split) if self.compiled else None

    def expander(self, limit):
        """Step 1's reducer logic (and step 2's corrections): profiler.job.expand.Expander, or the
        compiled one."""
        if self.module is None:
            from profiler.job.expand import Expander
            return Expander(self.policy, limit)
        return fast.compiled_expander(self.module, self.policy, limit)

    def parses(self, line_format):
        """Whether the compiled map side reads splits of a line format ('cdx', 'cdxj'): the
        extension says which it parses (LINE_FORMATS), and it finds the policy's values there."""
        return self.module is not None and line_format in getattr(self.module, "LINE_FORMATS", ()) \
            and finds_values(self.module, self.policy)

    def aggregator(self, resolve_revisits, limit, letters):
        """The compiled map-side aggregator with a CDX parser for layout letters, or a CDXJ parser
        when letters is None (None in Python)."""
        if self.module is None:
            return None
        return fast.compiled_aggregator(self.module, self.policy, resolve_revisits, limit, letters)

    def __repr__(self):
        return "Kernels(%s, %s)" % (self.policy.name, self.kind)
