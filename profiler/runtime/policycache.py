"""The values of the policy files a run read, kept for the runs after it, so that a run's client
need not import the YAML parser and parse the same file again.

``parse`` (profiler.model.policy.load's parse) keeps each file's value in the user's cache folder
(profiler.runtime.usercache) as ``policies.json``, one line each: the SHA-256 of the file's bytes
and the YAML parser's version, then the value as JSON (at most MAX_ENTRY bytes), at most
ENTRIES of them (the newest kept); a run parses only the line of its file. Only a value that JSON
holds exactly is kept (mappings with text keys, lists, text, whole numbers, finite numbers,
true, false, null: not the dates, sets or binary YAML may also give). A value kept of other
bytes, or a file usercache does not trust, is not used: the file is parsed. The policy is the
same either way (tests/runtime/test_policycache.py).
"""

import hashlib
import json
import math
import re

from profiler.model import policy as policy_mod
from profiler.runtime import usercache

NAME = "policies.json"
ENTRIES = 32
#: the longest value kept (a policy's is a few KB)
MAX_ENTRY = 1 << 16
MAX_BYTES = ENTRIES * (MAX_ENTRY + 80)
_ENTRY = re.compile(rb"[0-9a-f]{64} ")


def parse(data, path):
    """The value of a policy file's bytes (profiler.model.policy.parse_yaml's), kept or parsed."""
    key = _key(data).encode("ascii")
    kept = _read()
    for line in kept:
        if line.startswith(key + b" "):
            try:
                return json.loads(line[len(key) + 1:])
            except (ValueError, RecursionError):
                break
    value = policy_mod.parse_yaml(data, path)
    if _exact(value):
        try:
            entry = key + b" " + json.dumps(value, allow_nan=False, separators=(",", ":")).encode("ascii")
        except (ValueError, RecursionError):
            return value
        if len(entry) <= len(key) + 1 + MAX_ENTRY:
            others = [line for line in kept if _ENTRY.match(line) and not line.startswith(key + b" ")]
            usercache.write(NAME, b"\n".join(others[-(ENTRIES - 1):] + [entry]))
    return value


def _key(data):
    h = hashlib.sha256(b"policy value 1\n")
    h.update((_yaml_version() or "?").encode("utf-8") + b"\n")
    h.update(data)
    return h.hexdigest()


def _yaml_version():
    """PyYAML's version, found without importing it."""
    import importlib.util
    import types
    from profiler.model.versions import installed_version
    spec = importlib.util.find_spec("yaml")
    if spec is None or not spec.origin:
        return None
    return installed_version("PyYAML", types.SimpleNamespace(__file__=spec.origin))


def _read():
    """The kept lines (oldest first; [] when none is usable)."""
    body = usercache.read(NAME, MAX_BYTES)
    return body.split(b"\n") if body else []


def _exact(value, depth=0):
    """Whether JSON holds value as it is (what json.loads of json.dumps of it gives is equal and of
    the same types)."""
    if depth > 64:
        return False
    kind = type(value)
    if value is None or kind in (str, int, bool):
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_exact(v, depth + 1) for v in value)
    if kind is dict:
        return all(type(k) is str and _exact(v, depth + 1) for k, v in value.items())
    return False
