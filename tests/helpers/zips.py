"""Zips of packages, as tasks get them (--py-files)."""

import os
import zipfile


def write_zip(path, root, names):
    """A zip at path of the files and folders names under root, at their paths from root."""
    with zipfile.ZipFile(path, "w") as z:
        for name in names:
            top = os.path.join(root, name)
            for folder, _, files in os.walk(top) if os.path.isdir(top) else [(root, [], [name])]:
                for f in files:
                    if "__pycache__" not in folder:
                        full = os.path.join(folder, f)
                        z.write(full, os.path.relpath(full, root))


def run_from_zips(folder, dependency, code):
    """Run code with `python -S` (no site-packages) and only profiler.model and the package named
    dependency on sys.path, both from zips in folder, as tasks get them; its finished process."""
    import importlib
    import subprocess
    import sys
    from helpers.paths import ROOT
    package = importlib.import_module(dependency)
    write_zip(os.path.join(folder, "profiler.zip"), ROOT, ["profiler/__init__.py", "profiler/model"])
    write_zip(os.path.join(folder, "deps.zip"), os.path.dirname(os.path.dirname(package.__file__)), [dependency])
    prelude = "import sys; sys.path[:0] = [%r, %r]; " % (os.path.join(folder, "profiler.zip"),
                                                          os.path.join(folder, "deps.zip"))
    return subprocess.run([sys.executable, "-S", "-c", prelude + code], capture_output=True, text=True, timeout=60)
