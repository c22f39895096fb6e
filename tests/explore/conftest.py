"""Fixtures of the explorer's tests."""

import pytest

from profiler.explore import index as explore_index


@pytest.fixture
def small_index(monkeypatch):
    """Index every node of a small profile, listing or ranking its children, so that the three
    ways of breaking down by SURT (read, listed, ranked) all run: called with a random.Random."""
    def choose(rng):
        monkeypatch.setattr(explore_index, "SCAN_BYTES", rng.choice([0, 300, 1 << 18]))
        monkeypatch.setattr(explore_index, "LIST_MAX", rng.choice([1, 2, 512]))
        monkeypatch.setattr(explore_index, "TOP", rng.choice([1, 3, 100]))
    return choose
