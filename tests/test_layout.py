"""The package layout holds (docs/architecture.md): the packages in one order from the bottom up,
each importing only those below it; no import cycle between modules or packages; no private name
used across packages; mrjob known only to the runtime (and the client reading its output)."""

import ast
import os

from helpers.paths import ROOT

PACKAGE = os.path.join(ROOT, "profiler")

#: the packages from the bottom up: each imports only packages before it (and the shared
#: top-level modules); packages on one row are peers and import none of each other
ORDER = (
    ("model", "io"),
    ("accel",),
    ("formats",),
    ("job",),
    ("files",),
    ("runtime",),
    ("run",),
    ("toolkit", "report"),
    ("nightly", "serve", "explore"),
    ("cli",),
    ("testing",),
)
RANK = {package: rank for rank, row in enumerate(ORDER) for package in row}
TOP_LEVEL = {"profiler", "profiler.errors", "profiler.jsonnum", "profiler.contract", "profiler.extras",
             "profiler.plugins"}


def modules():
    """{module name: path} of every module of the profiler package."""
    found = {}
    for folder, dirs, names in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                found[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return found


def imports(path, name, top_level_only):
    """(module imported, names imported from it) of a module's import statements."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    nodes = tree.body if top_level_only else ast.walk(tree)
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            yield base, tuple(alias.name for alias in node.names)


def package_of(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[0] == "profiler") else None


def _resolve(module, names, known):
    """The project modules an import statement loads."""
    out = []
    if module in known:
        out.append(module)
    for n in names:
        if "%s.%s" % (module, n) in known:
            out.append("%s.%s" % (module, n))
    return out


def test_no_import_cycles_between_modules():
    known = modules()
    graph = {m: set() for m in known}
    for m, path in known.items():
        for module, names in imports(path, m, top_level_only=True):
            for target in _resolve(module, names, known):
                if target != m and not m.startswith(target + "."):    # a package's own __init__
                    graph[m].add(target)
    state, cycles = {}, []

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2
    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert not cycles, "import cycles: %s" % [" -> ".join(c) for c in cycles]


def test_no_private_name_is_imported_from_another_package():
    known = modules()
    found = []
    for m, path in known.items():
        for module, names in imports(path, m, top_level_only=False):
            if not module.startswith("profiler") or package_of(module) == package_of(m):
                continue
            found += ["%s imports %s from %s" % (m, n, module) for n in names if n.startswith("_") and not n.startswith("__")]
    assert not found


def test_no_private_attribute_of_another_package_is_used():
    """module._name where module is imported from another package of profiler."""
    known = modules()
    found = []
    for m, path in known.items():
        tree = ast.parse(open(path, encoding="utf-8").read())
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("profiler"):
                for alias in node.names:
                    target = "%s.%s" % (node.module, alias.name)
                    if target in known and package_of(target) != package_of(m):
                        aliases[alias.asname or alias.name] = target
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__") \
                    and isinstance(node.value, ast.Name) and node.value.id in aliases:
                found.append("%s uses %s.%s" % (m, aliases[node.value.id], node.attr))
    assert not found


def package_imports():
    """{(importer's package, imported package): [module importing, ...]} across packages."""
    known = modules()
    found = {}
    for m, path in known.items():
        own = package_of(m)
        if m in TOP_LEVEL:
            continue
        for module, names in imports(path, m, top_level_only=False):
            if not module.startswith("profiler") or module in TOP_LEVEL:
                continue
            other = package_of(module)
            if other is not None and other != own:
                found.setdefault((own, other), []).append(m)
    return found


def test_every_package_has_a_place_in_the_order():
    packages = {package_of(m) for m in modules() if m not in TOP_LEVEL}
    assert packages == set(RANK), "packages without a place in ORDER, or gone: %s" % (packages ^ set(RANK))


def test_packages_import_only_the_packages_below_them():
    found = ["%s imports %s (%s)" % (own, other, ", ".join(sorted(set(users))))
             for (own, other), users in sorted(package_imports().items()) if RANK[other] >= RANK[own]]
    assert not found


def test_no_import_cycle_between_packages():
    graph = {}
    for own, other in package_imports():
        graph.setdefault(own, set()).add(other)

    def reaches(start, goal, seen):
        for nxt in graph.get(start, ()):
            if nxt == goal or (nxt not in seen and not seen.add(nxt) and reaches(nxt, goal, seen)):
                return True
        return False
    assert not [p for p in graph if reaches(p, p, set())]


def test_shared_top_level_modules_import_no_package():
    known = modules()
    found = ["%s imports %s" % (m, module) for m in TOP_LEVEL if m in known and m != "profiler"
             for module, _ in imports(known[m], m, top_level_only=False)
             if module.startswith("profiler.") and module not in TOP_LEVEL]
    assert not found


def test_mrjob_is_known_only_to_the_runtime_and_the_job_script():
    known = modules()
    found = [m for m, path in known.items() if package_of(m) not in ("runtime", "run")
             for module, _ in imports(path, m, top_level_only=False) if module.split(".")[0] == "mrjob"]
    client_users = [m for m, path in known.items() if package_of(m) == "run"
                    for module, _ in imports(path, m, top_level_only=False) if module.split(".")[0] == "mrjob"]
    assert not found
    assert client_users in ([], ["profiler.run.profile"]), client_users   # the client reads the runner's output


def test_no_test_module_imports_another():
    tests = os.path.join(ROOT, "tests")
    found = []
    for folder, dirs, names in os.walk(tests):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "helpers")]
        for name in names:
            if name.endswith(".py"):
                tree = ast.parse(open(os.path.join(folder, name), encoding="utf-8").read())
                for node in ast.walk(tree):
                    if isinstance(node, ast.ImportFrom) and node.module and \
                            node.module.split(".")[-1].startswith("test_"):
                        found.append("%s imports %s" % (name, node.module))
    assert not found
