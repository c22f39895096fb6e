"""profiler.model.versions: a package's version read from the metadata beside it is the one
importlib.metadata gives, and anything less than one clear metadata folder falls back to it."""

import importlib
import types
from importlib.metadata import version

import pytest

from profiler.model import versions


@pytest.mark.parametrize("name,module", [("publicsuffixlist", "publicsuffixlist"), ("langcodes", "langcodes"),
                                         ("PyYAML", "yaml"), ("orjson", "orjson"), ("warcio", "warcio")])
def test_the_version_beside_the_package_is_importlib_metadatas(name, module):
    imported = importlib.import_module(module)
    assert versions._beside(name, imported) == version(name)
    assert versions.installed_version(name, imported) == version(name)


def fake_site(tmp_path, dist_infos):
    """A folder with a package 'pkg' and the dist-info folders given ({folder name: METADATA})."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    for folder, metadata in dist_infos.items():
        (tmp_path / folder).mkdir()
        if metadata is not None:
            (tmp_path / folder / "METADATA").write_bytes(metadata)
    return types.SimpleNamespace(__file__=str(tmp_path / "pkg" / "__init__.py"))


def test_a_clear_metadata_folder_is_read(tmp_path):
    module = fake_site(tmp_path, {"my_pkg-1.2.3.dist-info": b"Metadata-Version: 2.1\nName: My-Pkg\n"
                                                             b"Version: 1.2.3\n\nVersion: 9\n"})
    assert versions._beside("my.pkg", module) == "1.2.3"


@pytest.mark.parametrize("dist_infos", [
    {},
    {"my_pkg-1.0.dist-info": None},                                                   # no METADATA
    {"my_pkg-1.0.dist-info": b"Name: my-pkg\n", "my_pkg-2.0.dist-info": b"Name: my-pkg\nVersion: 2.0\n"},
    {"my_pkg-1.0.dist-info": b"Name: other\nVersion: 1.0\n"},                         # another's
    {"my_pkg-1.0.dist-info": b"Name: my-pkg\n\nVersion: 1.0\n"},                      # not a header
])
def test_anything_less_is_left_to_importlib_metadata(tmp_path, dist_infos):
    module = fake_site(tmp_path, dist_infos)
    assert versions._beside("my-pkg", module) is None
    assert versions.installed_version("no-such-distribution-here", module) is None
