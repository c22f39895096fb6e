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
