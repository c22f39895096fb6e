"""The nightly run's configuration: a YAML file (conf/nightly.yaml), checked into one object.

Relative paths in the file are taken from the file's folder, so a config and the archive it
describes can move together. Every mistake is a one-line UserError naming the key, whatever the
file holds: bytes that are not UTF-8, YAML of any shape, values of any type, NUL bytes in paths.
"""

import os
import re

import yaml

from profiler.errors import UserError
from profiler.io import datafiles

ON_OVERLAP = ("rebuild", "approximate")
DETECT = ("mtime", "checksum")
RUNNERS = ("inline", "local", "spark", "hadoop", "emr", "dataproc")
DEFAULTS = {
    "name": "archive",
    "state_dir": None,
    "policy": "default",
    "runner": "local",
    "delta_runner": None,
    "cores": None,
    "mrjob_conf": [],
    "mrjob_args": [],
    "archive_uri": None,
    "resolve_revisits": True,
    "detect_language": False,
    "split_size": 64 << 20,
    "keep": 7,
    "on_overlap": "rebuild",
    "max_approximate_nights": 6,
    "detect_changes": "mtime",
    "settle_seconds": 0,
    "report": True,
    "mementomap": None,
    "file_mode": 0o644,
    "trust_folders": False,
    "collection_pattern": None,
    "collection": None,
}
#: bytes of a config file read (a config is a few kilobytes)
MAX_CONFIG_BYTES = 1 << 20
#: the longest an input may be left to settle (a year of 366 days): more is no wait but a mistake
MAX_SETTLE_SECONDS = 366 * 24 * 3600
_OCTAL_MODE = re.compile(r"\A0?[oO]?([0-7]{3,4})\Z")


class ConfigError(UserError):
    """A nightly config that cannot be used (one line, naming the file and key)."""


class NightlyConfig:
    """Validated settings; attributes are the keys of DEFAULTS plus inputs, output_dir, source."""

    def __init__(self, data, source="<config>"):
        self.source = source
        base = os.path.dirname(os.path.abspath(source)) if source != "<config>" else os.getcwd()
        if not isinstance(data, dict):
            raise ConfigError("%s: not a mapping of settings" % source)
        unknown = [k for k in data if k not in DEFAULTS and k not in ("inputs", "output_dir")]
        if unknown:
            raise ConfigError("%s: unknown key %s (known: %s)" % (
                source, _shown(sorted(unknown, key=repr)[0]), ", ".join(["inputs", "output_dir"] + sorted(DEFAULTS))))
        for key, value in DEFAULTS.items():
            setattr(self, key, data.get(key, value))
        inputs = data.get("inputs")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not inputs or not isinstance(inputs, list) or not all(isinstance(i, str) and i for i in inputs):
            raise ConfigError("%s: inputs must list files, folders, globs or manifests" % source)
        _no_nul(source, "inputs", inputs)
        self.inputs = [i if "://" in i else os.path.join(base, os.path.expanduser(i)) for i in inputs]
        if not isinstance(data.get("output_dir"), str) or not data["output_dir"]:
            raise ConfigError("%s: output_dir (where profiles are published) is required" % source)
        _no_nul(source, "output_dir", [data["output_dir"]])
        self.output_dir = os.path.join(base, os.path.expanduser(data["output_dir"]))
        if self.state_dir is not None and not isinstance(self.state_dir, str):
            raise ConfigError("%s: state_dir must be a folder name, or null (OUTPUT_DIR/.nightly)" % source)
        _no_nul(source, "state_dir", [self.state_dir or ""])
        self.state_dir = os.path.join(base, os.path.expanduser(self.state_dir)) if self.state_dir \
            else os.path.join(self.output_dir, ".nightly")
        self.mrjob_conf = [os.path.join(base, p) for p in _strings(self.mrjob_conf, "mrjob_conf", source)]
        self.mrjob_args = _strings(self.mrjob_args, "mrjob_args", source)
        if not isinstance(self.policy, str) or not self.policy:
            raise ConfigError("%s: policy must be a bundled policy name (e.g. default) or a policy YAML file"
                              % source)
        _no_nul(source, "policy", [self.policy])
        if os.sep in self.policy or self.policy.endswith((".yaml", ".yml")):
            self.policy = os.path.join(base, self.policy)
        self.file_mode = _mode(self.file_mode, source)
        self._check(source)

    def _check(self, source):
        def bad(key, why):
            raise ConfigError("%s: %s %s" % (source, key, why))
        if not isinstance(self.name, str) or not self.name or "/" in self.name or self.name.startswith(".") \
                or not self.name.isprintable() or len(self.name) > 200:
            bad("name", "must be a plain file name stem of printable characters (e.g. archive)")
        if self.runner not in RUNNERS:
            bad("runner", "must be one of %s" % ", ".join(RUNNERS))
        if self.delta_runner not in RUNNERS + (None,):
            bad("delta_runner", "must be one of %s, or null (the runner)" % ", ".join(RUNNERS))
        if self.on_overlap not in ON_OVERLAP:
            bad("on_overlap", "must be one of %s" % ", ".join(ON_OVERLAP))
        if self.detect_changes not in DETECT:
            bad("detect_changes", "must be one of %s" % ", ".join(DETECT))
        for key in ("keep", "max_approximate_nights", "settle_seconds", "split_size"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                bad(key, "must be a whole number >= 0")
        if self.keep < 1:
            bad("keep", "must be at least 1 (the published profile)")
        if self.settle_seconds > MAX_SETTLE_SECONDS:
            bad("settle_seconds", "must be at most %d (a year)" % MAX_SETTLE_SECONDS)
        from profiler.formats.inputs import MIN_SPLIT_SIZE
        if self.split_size < MIN_SPLIT_SIZE:
            bad("split_size", "must be at least %d (1M)" % MIN_SPLIT_SIZE)
        from profiler.runtime.preflight import MAX_CORES
        if self.cores is not None and (isinstance(self.cores, bool) or not isinstance(self.cores, int)
                                       or not 1 <= self.cores <= MAX_CORES):
            bad("cores", "must be a whole number from 1 to %d (processes of the local runner), or null "
                         "(all cores)" % MAX_CORES)
        for key in ("resolve_revisits", "report", "detect_language", "trust_folders"):
            if not isinstance(getattr(self, key), bool):
                bad(key, "must be true or false")
        if self.mementomap not in (None, "surt", "surt,datetime"):
            bad("mementomap", "must be surt, surt,datetime or null (no map)")
        if self.archive_uri is not None and (not isinstance(self.archive_uri, str) or "\0" in self.archive_uri):
            bad("archive_uri", "must be a URI")
        from profiler.model import collection
        for key in ("collection_pattern", "collection"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, str) or not value):
                bad(key, "must be a non-empty string, or null")
        checks = (("collection_pattern", collection.check_pattern), ("collection", collection.label_field))
        for key, check in checks:
            try:
                if getattr(self, key) is not None:
                    check(getattr(self, key))
            except collection.CollectionError as e:
                bad(key, str(e).split(": ", 1)[-1])

    def identity(self, policy_dict):
        """What a profile's numbers depend on besides its inputs: a change forces a rebuild
        (detect_language only when set, so that states written before it was an option stay)."""
        identity = {"policy": policy_dict, "resolve_revisits": self.resolve_revisits,
                    "archive_uri": self.archive_uri}
        if self.detect_language:
            identity["detect_language"] = True
        for key in ("collection_pattern", "collection"):
            if getattr(self, key) is not None:
                identity[key] = getattr(self, key)
        return identity

    def collections(self):
        """run_profile's collections: the pattern and the label for every input."""
        return {"pattern": self.collection_pattern, "label": self.collection}


def _strings(value, key, source):
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError("%s: %s must be a list of strings" % (source, key))
    _no_nul(source, key, value)
    return list(value)


def _no_nul(source, key, values):
    if any("\0" in v for v in values):
        raise ConfigError("%s: %s holds a NUL byte (\\0), which no path or argument may hold" % (source, key))


def _mode(value, source):
    """A file mode from 0644 (YAML reads it as octal), '0644', '644' or '0o644'; at most 0777."""
    if isinstance(value, str) and _OCTAL_MODE.match(value):
        value = int(_OCTAL_MODE.match(value).group(1), 8)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0o777:
        raise ConfigError("%s: file_mode must be a file mode from 0000 to 0777, e.g. 0644 or '0640'" % source)
    return value


def _shown(value):
    """A value from the file, short and on one line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def load(path):
    """Read and check a nightly config file (a regular file of UTF-8 YAML, at most 1 MiB)."""
    if not os.path.lexists(path):
        raise ConfigError("config not found: %s" % path)
    try:
        with datafiles.open_data(path, "config", ConfigError) as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise ConfigError("cannot read config %s: %s" % (path, e.strerror or e))
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError("config %s is larger than %d bytes: not a nightly config" % (path, MAX_CONFIG_BYTES))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError("%s: not UTF-8 text (byte %d)" % (path, e.start))
    try:
        data = yaml.safe_load(text)
    except Exception as e:              # whatever the YAML library makes of the text: one line
        raise ConfigError("%s: not YAML (%s)" % (path, (str(e).splitlines() or [type(e).__name__])[0]))
    return NightlyConfig(data, path)
