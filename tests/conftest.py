import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


@pytest.fixture(autouse=True)
def _tmpdir_env(tmp_path, monkeypatch):
    """mrjob runs leave temp dirs in the system temp folder: keep them in the test's own."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))


def shared_data(*parts):
    """Path in ../shared/data; in CI (CI=true) a missing corpus fails, elsewhere it skips."""
    path = os.path.join(SHARED_DATA, *parts)
    if not os.path.exists(path):
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("shared corpus missing in CI: %s" % path)
        pytest.skip("shared corpus not found at %s" % path)
    return path
