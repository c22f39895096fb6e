"""The version of an installed package, as its metadata states it (what a profile's ``!meta``
records of the packages its keys depend on).

The metadata folder beside the package (``NAME-VERSION.dist-info``, as pip installs it) is read
directly: importlib.metadata, which searches every folder of the path, and the email parser it
imports cost a short run more than the rest of its header. A package installed any other way
(an egg, a development install, a zip shipped to tasks) is looked up with importlib.metadata.
"""

import os
import re

#: the most bytes of a METADATA file read for its headers
HEADER_BYTES = 1 << 16
_SEPARATORS = re.compile(r"[-_.]+")


def installed_version(name, module):
    """The version of distribution name, whose imported package is module; None when it has no
    metadata."""
    found = _beside(name, module)
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(name)
    except PackageNotFoundError:                     # shipped without its metadata
        return None


def _beside(name, module):
    """The Version header of the one NAME-*.dist-info beside module's package folder, or None."""
    where = getattr(module, "__file__", None)
    if not where:
        return None
    folder = os.path.dirname(os.path.dirname(where))
    try:
        found = [n for n in os.listdir(folder)
                 if n.endswith(".dist-info") and _normal(n[:-len(".dist-info")].rpartition("-")[0]) == _normal(name)]
    except OSError:
        return None
    if len(found) != 1:
        return None
    try:
        with open(os.path.join(folder, found[0], "METADATA"), "rb") as f:
            head = f.read(HEADER_BYTES)
    except OSError:
        return None
    names = version = None
    for line in head.split(b"\n"):
        line = line.rstrip(b"\r")
        if not line:
            break
        key, _, value = line.partition(b":")
        key = key.strip().lower()
        if key == b"name" and names is None:
            names = value.strip().decode("utf-8", "replace")
        elif key == b"version" and version is None:
            version = value.strip().decode("utf-8", "replace")
    if names is None or _normal(names) != _normal(name) or not version:
        return None
    return version


def _normal(name):
    """A distribution name as PEP 503 compares them."""
    return _SEPARATORS.sub("-", name).lower()
