"""profiler.runtime.policycache: a policy file's value kept in the user's cache folder is the
value parsed from it, a changed file is parsed again, and what JSON does not hold exactly, or a
file that is not valid YAML, is never kept."""

import pytest
import yaml

from profiler.model import policy
from profiler.model.policy import PolicyError
from profiler.runtime import policycache, usercache


@pytest.fixture
def kept(tmp_path, monkeypatch):
    """The kept file of an empty cache folder of this user's; parse_yaml's calls counted."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    calls = []
    real = policy.parse_yaml
    monkeypatch.setattr(policy, "parse_yaml", lambda data, path: calls.append(path) or real(data, path))
    return tmp_path / "cache" / "archive-profiler" / policycache.NAME, calls


def test_a_bundled_policy_is_parsed_once(kept):
    path, calls = kept
    for name in policy.available():
        plain = policy.load(name)
        first = policy.load(name, policycache.parse)
        again = policy.load(name, policycache.parse)
        assert plain.to_dict() == first.to_dict() == again.to_dict(), name
        assert first.source == again.source == plain.source
    assert len(calls) == 2 * len(policy.available())        # plain, then the first kept: not again
    assert path.is_file() and oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_changed_file_is_parsed_again(kept, tmp_path):
    path, calls = kept
    mine = tmp_path / "mine.yaml"
    mine.write_text("name: mine\nhost_depth: 2\n")
    assert policy.load(str(mine), policycache.parse).host_depth == 2
    mine.write_text("name: mine\nhost_depth: 4\n")
    assert policy.load(str(mine), policycache.parse).host_depth == 4
    assert policy.load(str(mine), policycache.parse).host_depth == 4
    assert len(calls) == 2


@pytest.mark.parametrize("text", ["name: d\ndescription: 2024-01-02\n",      # a date
                                  "name: d\ndescription: {1: x}\n",          # a key that is no text
                                  "name: d\ndescription: .inf\n",
                                  "name: d\ndescription: !!binary aGk=\n"])
def test_what_json_does_not_hold_exactly_is_not_kept(kept, tmp_path, text):
    path, calls = kept
    mine = tmp_path / "mine.yaml"
    mine.write_text(text)
    values = [policycache.parse(mine.read_bytes(), str(mine)) for _ in range(2)]
    assert values[0] == values[1] == yaml.safe_load(text)
    assert len(calls) == 2 and not path.exists()


@pytest.mark.parametrize("text", ["name: [d\n", "a: b: c\n", "- 1\n- 2\n"])
def test_a_file_that_is_no_policy_is_refused_as_before(kept, tmp_path, text):
    path, calls = kept
    mine = tmp_path / "mine.yaml"
    mine.write_text(text)
    for _ in range(2):
        with pytest.raises(PolicyError) as caught:
            policy.load(str(mine), policycache.parse)
        assert str(mine) in str(caught.value)
    if "- 1" not in text:
        assert "not valid YAML" in str(caught.value)
        assert not path.exists()


def test_a_kept_value_is_used_only_when_its_file_is_trusted(kept, tmp_path):
    path, calls = kept
    mine = tmp_path / "mine.yaml"
    mine.write_text("name: mine\nhost_depth: 2\n")
    policy.load(str(mine), policycache.parse)
    body = usercache.read(policycache.NAME, policycache.MAX_BYTES)
    assert b'"host_depth":2' in body
    head = path.read_bytes().split(b"\n", 1)[0]
    path.write_bytes(head + b"\n" + body.replace(b'"host_depth":2', b'"host_depth":9'))   # planted, its digest not
    assert policy.load(str(mine), policycache.parse).host_depth == 2
    path.write_bytes(b"\xff" * 10)
    assert policy.load(str(mine), policycache.parse).host_depth == 2


@pytest.mark.parametrize("data", [b"name: a\r\nhost_depth: 1\r\n", b"\xef\xbb\xbfname: a\n",
                                  b"name: \"a\r\n  b\"\n", b"name: a\n\x00", b"name: \xff\n"])
def test_parse_yaml_reads_the_bytes_as_the_file_was_read(tmp_path, data):
    """As yaml.safe_load over the file opened as UTF-8 text (universal newlines), its messages
    naming the file."""
    mine = tmp_path / "mine.yaml"
    mine.write_bytes(data)

    def outcome(read):
        try:
            return read()
        except yaml.YAMLError as e:
            return "YAMLError", str(e).splitlines()[0], str(e)
        except PolicyError as e:
            return "YAMLError", str(e).split(": not valid YAML: ", 1)[1], None
        except UnicodeDecodeError as e:
            return "UnicodeDecodeError", str(e)

    def before():
        with open(str(mine), encoding="utf-8") as f:
            return yaml.safe_load(f) or {}
    was, now = outcome(before), outcome(lambda: policy.parse_yaml(data, str(mine)))
    if isinstance(was, tuple) and was[0] == "YAMLError":
        assert now[:2] == was[:2] and str(mine) in was[2]
    else:
        assert now == was


def test_the_kept_file_stays_small(kept, tmp_path, monkeypatch):
    """At most ENTRIES values, none longer than MAX_ENTRY, the newest kept; lines that are no
    entry (another format's) dropped; a run reads only its own entry's value."""
    path, calls = kept
    monkeypatch.setattr(policycache, "ENTRIES", 3)
    usercache.write(policycache.NAME, b'[["old format", {"a": 1}]]')
    mine = tmp_path / "mine.yaml"
    for depth in range(5):
        mine.write_text("name: mine\nhost_depth: %d\n" % depth)
        assert policy.load(str(mine), policycache.parse).host_depth == depth
    lines = usercache.read(policycache.NAME, policycache.MAX_BYTES).split(b"\n")
    assert len(lines) == 3 and all(b'"host_depth":%d' % d in line for d, line in zip((2, 3, 4), lines))
    big = tmp_path / "big.yaml"
    big.write_text("name: big\ndescription: %s\n" % ("x" * (policycache.MAX_ENTRY + 1)))
    assert policycache.parse(big.read_bytes(), str(big))["name"] == "big"
    assert usercache.read(policycache.NAME, policycache.MAX_BYTES).split(b"\n") == lines
    mine.write_text("name: mine\nhost_depth: 3\n")
    before = len(calls)
    assert policy.load(str(mine), policycache.parse).host_depth == 3
    assert len(calls) == before                             # kept
