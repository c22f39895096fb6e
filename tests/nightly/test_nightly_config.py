import os

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.nightly.config import ConfigError, load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_example_config_loads_with_its_documented_values():
    c = load(os.path.join(ROOT, "conf", "nightly.yaml"))
    assert c.inputs == ["/data/archive/cdx/"]
    assert c.state_dir == "/data/archive/profiles/.nightly" and c.on_overlap == "rebuild"
    assert (c.keep, c.settle_seconds, c.runner, c.report) == (7, 0, "local", True)
    assert (c.file_mode, c.trust_folders) == (0o644, False)


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
    ("inputs: [a]\noutput_dir: out\nsettle_seconds: %s\n" % ("9" * 300), "settle_seconds must be at most 31622400"),
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


@pytest.mark.parametrize("data, message", [
    (b"inputs: [a]\noutput_dir: out\nname: caf\xe9\n", "not UTF-8"),
    (b"\xff\xfe\x00i\x00n", "not UTF-8"),
    (b"inputs: [a]\noutput_dir: out\npolicy: {a: 1}\n", "policy must be"),
    (b"inputs: [a]\noutput_dir: out\npolicy: 7\n", "policy must be"),
    (b'inputs: ["a\\0b"]\noutput_dir: out\n', "NUL"),
    (b'inputs: [a]\noutput_dir: "out\\0"\n', "NUL"),
    (b'inputs: [a]\noutput_dir: out\nstate_dir: "s\\0"\n', "NUL"),
    (b'inputs: [a]\noutput_dir: out\nname: "a\\0"\n', "name must be"),
    (b'inputs: [a]\noutput_dir: out\nname: "a\\nb"\n', "name must be"),
    (b'inputs: [a]\noutput_dir: out\nmrjob_conf: ["m\\0"]\n', "NUL"),
    (b'inputs: [a]\noutput_dir: out\npolicy: "p\\0.yaml"\n', "NUL"),
    (b"inputs: [a]\noutput_dir: out\ncores: 1000000000\n", "cores must be a whole number from 1 to 1024"),
    (b"inputs: [a]\noutput_dir: out\n1: 2\nzz: 3\n", "unknown key"),
    (b"inputs: [a]\noutput_dir: out\nwhen: 2001-19-45\n", "not YAML"),
    (b"inputs: [a]\noutput_dir: out\nfile_mode: 0999\n", "file_mode must be"),
    (b"inputs: [a]\noutput_dir: out\nfile_mode: 644\n", "file_mode must be"),
    (b"inputs: [a]\noutput_dir: out\nfile_mode: 4095\n", "file_mode must be"),
    (b"inputs: [a]\noutput_dir: out\ntrust_folders: yes please\n", "trust_folders must be true or false"),
    (b"[" * 5000, "not YAML"),
])
def test_hostile_configs_are_one_line_config_errors(tmp_path, data, message):
    (tmp_path / "n.yaml").write_bytes(data)
    with pytest.raises(ConfigError, match=message) as info:
        load(str(tmp_path / "n.yaml"))
    assert "\n" not in str(info.value)


def test_a_config_that_is_not_a_regular_file_or_too_large_is_refused(tmp_path):
    os.mkfifo(tmp_path / "fifo.yaml")                   # would block a plain open() forever
    with pytest.raises(ConfigError, match="not a regular file"):
        load(str(tmp_path / "fifo.yaml"))
    (tmp_path / "big.yaml").write_bytes(b"# " + b"x" * (2 << 20) + b"\n")
    with pytest.raises(ConfigError, match="larger than"):
        load(str(tmp_path / "big.yaml"))


def test_file_mode_and_trust_folders_parse(tmp_path):
    (tmp_path / "n.yaml").write_text("inputs: a\noutput_dir: out\nfile_mode: 0640\ntrust_folders: true\n")
    c = load(str(tmp_path / "n.yaml"))
    assert c.file_mode == 0o640 and c.trust_folders is True
    for text in ("'0600'", "'600'", "0o600", "0600"):
        (tmp_path / "n.yaml").write_text("inputs: a\noutput_dir: out\nfile_mode: %s\n" % text)
        assert load(str(tmp_path / "n.yaml")).file_mode == 0o600
    (tmp_path / "n.yaml").write_text("inputs: a\noutput_dir: out\n")
    c = load(str(tmp_path / "n.yaml"))
    assert c.file_mode == 0o644 and c.trust_folders is False


def test_absurd_cores_in_a_nightly_run_is_refused_at_once(tmp_path, capsys):
    """cores: 10**9 made the legend scan cut a file into 10**9 ranges (100 % CPU until killed)."""
    from profiler.cli import main as cli
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.cdx").write_text(" CDX N b a m s k r M S V g\n")
    (tmp_path / "n.yaml").write_text("inputs: in\noutput_dir: out\nrunner: local\ncores: 1000000000\n")
    assert cli.main(["nightly", "--config", str(tmp_path / "n.yaml"), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert "cores must be a whole number from 1 to 1024" in err and "\n" not in err


# ---------------------------------------------------------------- random shapes (hypothesis)


KEYS = ["inputs", "output_dir", "name", "state_dir", "policy", "runner", "delta_runner", "cores",
        "mrjob_conf", "mrjob_args", "archive_uri", "resolve_revisits", "detect_language", "split_size", "keep",
        "on_overlap", "max_approximate_nights", "detect_changes", "settle_seconds", "report", "mementomap",
        "file_mode", "trust_folders"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2 ** 70, max_value=2 ** 70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                    st.sampled_from(["local", "inline", "rebuild", "approximate", "checksum", "surt", "default",
                                     "a\0b", "../x", ".x", "-", "", "0644", "0o644", "/", "~", "*", "in/**/*.cdx"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                      max_leaves=8)
CONFIGS = st.one_of(VALUES, st.dictionaries(st.sampled_from(KEYS + ["x", "1"]), VALUES, max_size=8),
                    st.fixed_dictionaries({"inputs": VALUES, "output_dir": VALUES},
                                          optional={k: VALUES for k in KEYS[2:]}))


def _load_only_config_errors(path):
    try:
        c = load(path)
    except ConfigError as e:
        assert str(e) and "\n" not in str(e), str(e)
        return None
    return c


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=CONFIGS)
def test_random_config_shapes_load_or_are_one_line_errors(tmp_path, data):
    path = str(tmp_path / "n.yaml")
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(data, f, allow_unicode=True)
    c = _load_only_config_errors(path)
    if c is not None:          # what loads is usable as the night uses it
        assert isinstance(c.inputs, list) and all(isinstance(i, str) and "\0" not in i for i in c.inputs)
        assert isinstance(c.output_dir, str) and "\0" not in c.output_dir and "\0" not in c.state_dir
        assert isinstance(c.policy, str) and "\0" not in c.policy
        assert c.cores is None or 1 <= c.cores <= 1024
        assert isinstance(c.name, str) and c.name.isprintable()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=200) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_random_config_bytes_load_or_are_one_line_errors(tmp_path, data):
    path = str(tmp_path / "n.yaml")
    with open(path, "wb") as f:
        f.write(data)
    _load_only_config_errors(path)
