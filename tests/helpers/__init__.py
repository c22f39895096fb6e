"""Shared test helpers: fixtures' data, the oracle, generators, fake binaries."""
