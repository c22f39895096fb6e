"""The nightly run's configuration: a YAML file (conf/nightly.yaml), checked into one object.

Relative paths in the file are taken from the file's folder, so a config and the archive it
describes can move together. Every mistake is a one-line UserError naming the key.
"""

import os

import yaml

from profiler.errors import UserError

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
}


class ConfigError(UserError):
    """A nightly config that cannot be used (one line, naming the file and key)."""


class NightlyConfig:
    """Validated settings; attributes are the keys of DEFAULTS plus inputs, output_dir, source."""

    def __init__(self, data, source="<config>"):
        self.source = source
        base = os.path.dirname(os.path.abspath(source)) if source != "<config>" else os.getcwd()
        if not isinstance(data, dict):
            raise ConfigError("%s: not a mapping of settings" % source)
        unknown = set(data) - set(DEFAULTS) - {"inputs", "output_dir"}
        if unknown:
            raise ConfigError("%s: unknown key %r (known: %s)" % (
                source, sorted(unknown)[0], ", ".join(["inputs", "output_dir"] + sorted(DEFAULTS))))
        for key, value in DEFAULTS.items():
            setattr(self, key, data.get(key, value))
        inputs = data.get("inputs")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not inputs or not all(isinstance(i, str) for i in inputs):
            raise ConfigError("%s: inputs must list files, folders, globs or manifests" % source)
        self.inputs = [i if "://" in i else os.path.join(base, os.path.expanduser(i)) for i in inputs]
        if not isinstance(data.get("output_dir"), str):
            raise ConfigError("%s: output_dir (where profiles are published) is required" % source)
        self.output_dir = os.path.join(base, os.path.expanduser(data["output_dir"]))
        self.state_dir = os.path.join(base, os.path.expanduser(self.state_dir)) if self.state_dir \
            else os.path.join(self.output_dir, ".nightly")
        self.mrjob_conf = [os.path.join(base, p) for p in _strings(self.mrjob_conf, "mrjob_conf", source)]
        self.mrjob_args = _strings(self.mrjob_args, "mrjob_args", source)
        if isinstance(self.policy, str) and (os.sep in self.policy or self.policy.endswith((".yaml", ".yml"))):
            self.policy = os.path.join(base, self.policy)
        self._check(source)

    def _check(self, source):
        def bad(key, why):
            raise ConfigError("%s: %s %s" % (source, key, why))
        if not isinstance(self.name, str) or not self.name or "/" in self.name or self.name.startswith("."):
            bad("name", "must be a plain file name stem (e.g. archive)")
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
        from profiler.formats.inputs import MIN_SPLIT_SIZE
        if self.split_size < MIN_SPLIT_SIZE:
            bad("split_size", "must be at least %d (1M)" % MIN_SPLIT_SIZE)
        from profiler.runtime.preflight import MAX_CORES
        if self.cores is not None and (isinstance(self.cores, bool) or not isinstance(self.cores, int)
                                       or not 1 <= self.cores <= MAX_CORES):
            bad("cores", "must be a whole number from 1 to %d" % MAX_CORES)
        for key in ("resolve_revisits", "report", "detect_language"):
            if not isinstance(getattr(self, key), bool):
                bad(key, "must be true or false")
        if self.mementomap not in (None, "surt", "surt,datetime"):
            bad("mementomap", "must be surt, surt,datetime or null (no map)")
        if self.archive_uri is not None and not isinstance(self.archive_uri, str):
            bad("archive_uri", "must be a URI")

    def identity(self, policy_dict):
        """What a profile's numbers depend on besides its inputs: a change forces a rebuild
        (detect_language only when set, so that states written before it was an option stay)."""
        identity = {"policy": policy_dict, "resolve_revisits": self.resolve_revisits,
                    "archive_uri": self.archive_uri}
        if self.detect_language:
            identity["detect_language"] = True
        return identity


def _strings(value, key, source):
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError("%s: %s must be a list of strings" % (source, key))
    return list(value)


def load(path):
    """Read and check a nightly config file."""
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except FileNotFoundError:
        raise ConfigError("config not found: %s" % path)
    except OSError as e:
        raise ConfigError("cannot read config %s: %s" % (path, e.strerror or e))
    except yaml.YAMLError as e:
        raise ConfigError("%s: not YAML (%s)" % (path, str(e).splitlines()[0]))
    return NightlyConfig(data, path)
