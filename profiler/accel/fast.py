"""The optional compiled hot path (profiler/accel/_apfast.c): found, shipped to tasks, or not used.

``load()`` returns the extension module or None: from the installed package, else from a
task's working directory or a folder on sys.path (Spark's files), where the client ships the
built file (``shipped_files()``; Python cannot import it from profiler.zip), else from a package
installed on the node. Tasks that cannot load it run the pure-Python code, which
gives the same bytes. ``ARCHIVE_PROFILER_PURE_PYTHON=1`` forces the pure-Python code (tests
compare both).
"""

import importlib.machinery
import importlib.util
import os
import sys

from profiler.model import criteria
from profiler import contract

PURE_ENV = contract.PURE_ENV
MODULE = "profiler.accel._apfast"
#: the SURT levels in the order the extension takes their combination sets
LEVELS = ("root", "tld", "suffix", "domain", "subdomain", "host", "path", "url")
#: the extension's numbers of the projection kinds (profiler.model.criteria.PROJECTIONS)
PROJECTION_CODE = {criteria.IDENTITY: 1, criteria.PREFIX: 2, criteria.CATEGORY: 3, criteria.CLASS: 4,
                   criteria.MIME_CLASS: 5}

_loaded = {}


def load():
    """The extension module, or None (not built, not shipped, other ABI, or disabled)."""
    if os.environ.get(PURE_ENV):
        return None
    if "module" not in _loaded:
        _loaded["module"] = _find()
    return _loaded["module"]


def _find():
    try:
        from profiler.accel import _apfast
        return _apfast
    except ImportError:
        pass
    for path in _candidates():
        try:
            loader = importlib.machinery.ExtensionFileLoader(MODULE, path)
            spec = importlib.util.spec_from_file_location(MODULE, path, loader=loader)
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
            return module
        except ImportError:         # another ABI or architecture: the next one may load
            continue
    return None


def _candidates():
    """Built extensions a task may load when profiler comes from a zip: shipped ones in its working
    directory (Hadoop, local) or a folder on sys.path (Spark's files), then one installed on the
    node (an EMR or Dataproc bootstrap builds it for the node's architecture)."""
    names = ["_apfast" + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES]
    folders = list(dict.fromkeys([os.getcwd()] + [p for p in sys.path if p and os.path.isdir(p)]))
    for inner in ((), ("profiler", "accel")):
        for folder in folders:
            for name in names:
                path = os.path.join(folder, *inner, name)
                if os.path.isfile(path):
                    yield path


def shipped_files():
    """Paths of the built extension to ship to tasks (--files): none when it is not built."""
    try:
        from profiler.accel import _apfast
    except ImportError:
        return []
    path = getattr(_apfast, "__file__", None)
    return [path] if path and os.path.isfile(path) else []


def kind():
    """'compiled' or 'pure Python': whether this process can load the extension."""
    return "compiled" if load() is not None else "pure Python"


def _criteria_spec(policy):
    """The policy's criteria as the extension takes them: per criterion, its levels' (projection,
    length) by level code, and a revisit's value when its original is not found (None: its own)."""
    return tuple((tuple((PROJECTION_CODE[level.kind], level.n) for level in c.levels), c.revisit)
                 for c in policy.criteria)


def compiled_expander(module, policy, limit):
    """The compiled Expander for a policy (step 1, and step 2's corrections of shared digests)."""
    codes = [{level: c.code(level) for level in (criteria.ANY,) + c.level_names} for c in policy.criteria]
    sets = [[tuple(code[level] for code, level in zip(codes, combo)) for combo in combos]
            for combos in policy.combo_sets]
    registered = None
    if policy.registered_domains:            # keys.registered_labels, asked once per host
        from profiler.model.domains import registered_domain_labels as registered
    return module.Expander(sets, tuple(policy.set_of[lt] for lt in LEVELS), policy.host_depth,
                           policy.path_depth, policy.exact_urls, limit, _criteria_spec(policy), registered)


def compiled_aggregator(module, policy, resolve_revisits, limit, letters):
    """The compiled map-side aggregator for a policy, with its parser of CDX lines of layout letters
    or of CDXJ lines (letters None)."""
    return module.Aggregator(policy.period_len, resolve_revisits, limit, letters,
                             tuple(c.origin for c in policy.criteria), _criteria_spec(policy))


#: a task's malloc: requests past this are their own mappings (glibc's default moves from 128 KiB up)
MMAP_THRESHOLD = 32 << 20
#: free memory at the heap's top past this is given back to the system
TRIM_THRESHOLD = 32 << 20


def tune_allocator():
    """Fixed malloc thresholds for a task process (glibc): its buffers of a few MiB stay in the heap
    instead of being fresh pages at each use. True when set; False without the extension or glibc."""
    module = load()
    return bool(module is not None and module.tune_allocator(MMAP_THRESHOLD, TRIM_THRESHOLD))
