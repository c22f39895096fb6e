"""Ship the profiler package to tasks: local, Spark and Hadoop tasks only get the job script.

Python imports a zip's modules with zipimport, which never writes bytecode: a task that finds
only .py files compiles every module it imports, in every task. So beside each .py the zip
holds the bytecode this Python compiled for it (``name.pyc``, the layout zipimport looks for). zipimport checks it against
the .py in the zip (timestamp and size, or hash); a task on another Python version finds
another magic number and compiles the .py, as it would without it.
"""

import importlib.util
import os
import py_compile
import zipfile

import profiler

#: the zip's name
ZIP_NAME = "profiler.zip"
#: packages tasks never import: the client's commands and tools, and the test-data generators
NOT_SHIPPED = ("cli", "nightly", "report", "run", "serve", "testing", "toolkit")
#: pure-Python packages tasks import that a node's Python may lack (languages, registered
#: domains): shipped in the zip with their data files, read through importlib.resources
DEPENDENCIES = ("langcodes", "publicsuffixlist")


def package_zip(folder):
    """Write profiler.zip (the .py files tasks import and their bytecode, and DEPENDENCIES) into
    folder; return its path."""
    root = os.path.dirname(os.path.abspath(profiler.__file__))
    path = os.path.join(folder, ZIP_NAME)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        _add_package(z, root, "profiler", NOT_SHIPPED, data=False)
        for name in DEPENDENCIES:
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.submodule_search_locations:
                _add_package(z, list(spec.submodule_search_locations)[0], name, (), data=True)
    return path


def _add_package(z, root, name, left_out, data):
    """A package's .py files (with their bytecode) into z under name/; with data, its other files."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__"
                             and not (dirpath == root and d in left_out))
        for filename in sorted(filenames):
            full = os.path.join(dirpath, filename)
            arcname = os.path.join(name, os.path.relpath(full, root))
            if filename.endswith(".py"):
                z.write(full, arcname)
                code = bytecode(full)
                if code is not None:
                    z.writestr(arcname[:-3] + ".pyc", code)
            elif data and not filename.endswith((".pyc", ".so", ".pyd")):
                z.write(full, arcname)


def bytecode(path):
    """The bytecode this Python cached for the source file path, compiled into its cache when it
    is missing or stale; None when it cannot be had (unwritable cache, a syntax error)."""
    data = _cached(path)
    if data is None:
        try:
            py_compile.compile(path, doraise=True)
        except (OSError, py_compile.PyCompileError):
            return None
        data = _cached(path)
    return data


def _cached(path):
    """The cached .pyc of path when it is current for its source, else None."""
    try:
        with open(importlib.util.cache_from_source(path), "rb") as f:
            data = f.read()
        st = os.stat(path)
    except (OSError, NotImplementedError, ValueError):
        return None
    if len(data) < 16 or data[:4] != importlib.util.MAGIC_NUMBER:
        return None
    flags = int.from_bytes(data[4:8], "little")
    if flags & 1:       # hash-based: zipimport checks the hash against the .py in the zip
        with open(path, "rb") as f:
            current = importlib.util.source_hash(f.read()) == data[8:16]
    else:
        current = (flags == 0 and int.from_bytes(data[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF
                   and int.from_bytes(data[12:16], "little") == st.st_size & 0xFFFFFFFF)
    return data if current else None
