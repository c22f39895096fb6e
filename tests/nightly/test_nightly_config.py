import os

import pytest

from profiler.nightly.config import ConfigError, load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_example_config_loads_with_its_documented_values():
    c = load(os.path.join(ROOT, "conf", "nightly.yaml"))
    assert c.inputs == ["/data/archive/cdx/", "/data/archive/warcs/**/*.warc.gz"]
    assert c.state_dir == "/data/archive/profiles/.nightly" and c.on_overlap == "rebuild"
    assert (c.keep, c.settle_seconds, c.runner, c.report) == (7, 600, "local", True)


def test_relative_paths_are_taken_from_the_config_folder(tmp_path):
    (tmp_path / "n.yaml").write_text("inputs: cdx\noutput_dir: out\nstate_dir: st\nmrjob_conf: [m.conf]\n"
                                     "policy: my.yaml\n")
    c = load(str(tmp_path / "n.yaml"))
    assert c.inputs == [str(tmp_path / "cdx")] and c.output_dir == str(tmp_path / "out")
    assert c.state_dir == str(tmp_path / "st") and c.mrjob_conf == [str(tmp_path / "m.conf")]
    assert c.policy == str(tmp_path / "my.yaml")


@pytest.mark.parametrize("text, message", [
    ("- a\n", "not a mapping"),
    ("output_dir: out\n", "inputs must list"),
    ("inputs: [a]\noutput_dir: out\nrunner: yarn\n", "runner must be one of"),
    ("inputs: [a]\noutput_dir: out\nkeep: -1\n", "keep must be a whole number"),
    ("inputs: [a]\noutput_dir: out\nreport: maybe\n", "report must be true or false"),
    ("inputs: [a]\noutput_dir: out\nname: ../x\n", "name must be a plain file name"),
    ("inputs: [a]\noutput_dir: out\ndetect_changes: guess\n", "detect_changes must be one of mtime, checksum"),
    ("inputs: [a]\noutput_dir: out\ndetect_language: yes please\n", "detect_language must be true or false"),
])
def test_mistakes_name_the_key(tmp_path, text, message):
    (tmp_path / "n.yaml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        load(str(tmp_path / "n.yaml"))
    with pytest.raises(ConfigError, match="config not found"):
        load(str(tmp_path / "missing.yaml"))


def test_language_detection_is_part_of_the_identity_only_when_set(tmp_path):
    """A state written before detect_language existed keeps its identity (no rebuild)."""
    (tmp_path / "n.yaml").write_text("inputs: cdx\noutput_dir: out\n")
    plain = load(str(tmp_path / "n.yaml"))
    assert plain.detect_language is False and "detect_language" not in plain.identity({})
    (tmp_path / "n.yaml").write_text("inputs: cdx\noutput_dir: out\ndetect_language: true\n")
    assert load(str(tmp_path / "n.yaml")).identity({})["detect_language"] is True
