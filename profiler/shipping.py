"""Ship the profiler package to tasks: local, Spark and Hadoop tasks only get the job script."""

import os
import zipfile

import profiler


def package_zip(folder):
    """Write profiler.zip (the package's .py files) into folder; return its path."""
    root = os.path.dirname(os.path.abspath(profiler.__file__))
    path = os.path.join(folder, "profiler.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith(".py"):
                    full = os.path.join(dirpath, name)
                    z.write(full, os.path.join("profiler", os.path.relpath(full, root)))
    return path
