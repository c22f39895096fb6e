"""nightly's collection_pattern and collection: the night's profile and its scans name collections
as `profile --collection-pattern/--collection` does, a change of either rebuilds, a hostile pattern
is a one-line config error."""

import os

import pytest
import yaml

from profiler.nightly.config import ConfigError, NightlyConfig
from profiler.run.profile import run_profile

from helpers.nightly_archive import ARCHIVE_URI, Archive, assert_same_profile

POLICY = {"name": "coll", "host_depth": 2,
          "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "collection": ["id"]},
          "emit": {"root": {"collection": ["any", "id"]}, "tld": {"collection": ["id"]}, "domain": "none",
                   "host": "none"}}


def scratch(a, collections):
    out = os.path.join(a.root, "scratch.cdxj")
    run_profile([a.inputs], out, policy=a.settings["policy"], archive_uri=ARCHIVE_URI, collections=collections)
    return out


def test_the_night_names_collections_as_profile_does(tmp_path, capsys):
    policy = tmp_path / "coll.yaml"
    policy.write_text(yaml.safe_dump(POLICY))
    a = Archive(tmp_path, policy=str(policy), collection_pattern=r"^([a-z]+)\.", collection="nightly-run")
    a.add_warc("crawla.warc.gz", 20, seed=1)
    a.add_warc("2013.warc.gz", 10, seed=2)
    assert a.night(capsys)[0] == 0
    assert_same_profile(a.latest, scratch(a, {"pattern": r"^([a-z]+)\.", "label": "nightly-run"}))
    with open(a.latest) as f:
        fields = {line.split()[4] for line in f if not line.startswith("!")}
    assert fields == {"-", "crawla", "nightly-run"}
    a.configure(collection="other")
    status, line = a.night(capsys)
    assert status == 0 and "rebuild" in line
    assert_same_profile(a.latest, scratch(a, {"pattern": r"^([a-z]+)\.", "label": "other"}))


@pytest.mark.parametrize("settings, message", [
    ({"collection_pattern": r"(a)\1"}, "collection_pattern back-references"),
    ({"collection_pattern": "abc"}, "collection_pattern the pattern needs a group"),
    ({"collection": ""}, "collection must be a non-empty string"),
    ({"collection": ["a"]}, "collection must be a non-empty string"),
])
def test_a_bad_setting_is_a_one_line_error(settings, message):
    with pytest.raises(ConfigError) as e:
        NightlyConfig(dict(settings, inputs=["in"], output_dir="out"))
    assert message in str(e.value) and "\n" not in str(e.value)
