"""Fixtures shared by the tests of profiler.files."""

import os

import pytest

from helpers.paths import ROOT
from profiler.run.profile import run_profile

SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    """The bundled sample's default profile, made once per test module (its tests may write files
    beside it)."""
    path = tmp_path_factory.mktemp("p") / "p.cdxj"
    run_profile([SAMPLE], str(path), created="2026-01-01T00:00:00Z")
    return str(path)
