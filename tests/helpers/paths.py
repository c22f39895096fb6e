"""Where the project and the shared corpus are."""

import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED_DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")


def shared_data(*parts):
    """Path in ../shared/data; in CI (CI=true) a missing corpus fails, elsewhere it skips."""
    return _shared(os.path.join(SHARED_DATA, *parts), "corpus")


SHARED_SPEC = os.path.join(os.path.dirname(ROOT), "shared", "spec")


def shared_spec(*parts):
    """Path in ../shared/spec (the output contract's master copy); as shared_data, a missing
    folder fails under CI=true and skips elsewhere."""
    return _shared(os.path.join(SHARED_SPEC, *parts), "spec")


def _shared(path, what):
    if not os.path.exists(path):
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("shared %s missing in CI: %s" % (what, path))
        pytest.skip("shared %s not found at %s" % (what, path))
    return path
