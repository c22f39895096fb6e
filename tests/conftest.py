import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (ROOT, os.path.dirname(os.path.abspath(__file__))):     # the project; tests/ for helpers
    if path not in sys.path:
        sys.path.insert(0, path)


@pytest.fixture(autouse=True)
def _tmpdir_env(tmp_path, monkeypatch):
    """mrjob runs leave temp dirs in the system temp folder: keep them in the test's own."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
