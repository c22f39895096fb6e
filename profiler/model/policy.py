"""Profiling policies: which SURT levels and which combinations of the criteria's levels to emit.

A policy is a YAML file (see conf/policies/). Levels of a criterion are 'any' (the '-' key
value) plus those the policy enables (profiler.model.criteria):

- datetime: year, month, day
- mime: type (the normalised media type), category (its top-level type, 'text/*')
- status: class ('2xx'), code ('200')

An optional criterion is a key field only when the policy's ``levels`` names it.
``emit`` says, per SURT level (root '*', tld 'com,*', domain 'com,cnn,*', host
'com,cnn)/*', path 'com,cnn)/world/*', url; with ``registered_domains`` also suffix
'uk,co,*' and subdomain 'uk,co,bbc,news,*', profiler.model.keys), which combinations of
those levels are written: 'all' (the cross product), 'none', a mapping of lists (their cross
product) or a list of such mappings (their union).
"""

import itertools
import os
import stat
import sys

from profiler.errors import UserError
from profiler.model import criteria

LEVEL_TYPES = ("root", "tld", "suffix", "domain", "subdomain", "host", "path", "url")
#: the SURT levels only a policy with registered_domains has
REGISTERED_ONLY = ("suffix", "subdomain")
_TOP_KEYS = {"name", "description", "host_depth", "path_depth", "exact_urls", "registered_domains", "levels", "emit"}
POLICY_DIRS = (
    os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "conf", "policies"),
    os.path.join(sys.prefix, "share", "archive-profiler", "policies"),
)


def __getattr__(name):
    """CRITERIA (the criteria's names), CHOICES ({criterion: its levels but any}) and
    DEFAULT_LEVELS ({criterion: the levels a policy that names none enables}), of the criteria
    registered now (profiler.model.criteria)."""
    if name == "CRITERIA":
        return criteria.NAMES
    if name == "CHOICES":
        return {c.name: c.level_names for c in criteria.CRITERIA}
    if name == "DEFAULT_LEVELS":
        return {c.name: c.default_levels for c in criteria.CRITERIA}
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


class PolicyError(UserError):
    """An invalid policy file (one-line message)."""


class Policy:
    """A validated policy; ``combo_sets[set_of[level_type]]`` lists that level's combinations."""

    def __init__(self, config, source="<policy>"):
        self.source = source
        unknown = set(config) - _TOP_KEYS
        if unknown:
            raise PolicyError("%s: unknown key %r" % (source, sorted(unknown)[0]))
        self.name = str(config.get("name", os.path.splitext(os.path.basename(source))[0]))
        self.host_depth = _int(config, "host_depth", 3, source)
        self.path_depth = _int(config, "path_depth", 0, source)
        self.exact_urls = bool(config.get("exact_urls", False))
        #: host-label wildcards by the Public Suffix List (profiler.model.domains) instead of by count
        self.registered_domains = bool(config.get("registered_domains", False))
        levels = config.get("levels") or {}
        if not isinstance(levels, dict) or set(levels) - set(criteria.NAMES):
            raise PolicyError("%s: levels must map %s to lists%s" % (
                source, "/".join(criteria.NAMES), criteria.not_registered(levels if isinstance(levels, dict) else ())))
        #: the criteria of this policy's keys, in key order (!keys)
        self.criteria = criteria.of_levels(levels)
        self.names = tuple(c.name for c in self.criteria)
        self.levels = {}
        for criterion in self.names:
            crit = criteria.BY_NAME[criterion]
            chosen = levels.get(criterion, list(crit.default_levels))
            chosen = [chosen] if isinstance(chosen, str) else list(chosen or [])
            for c in chosen:
                if c not in crit.level_names:
                    raise PolicyError("%s: levels.%s: unknown level %r (choose from %s)"
                                      % (source, criterion, c, ", ".join(crit.level_names)))
            self.levels[criterion] = ["any"] + [c for c in crit.level_names if c in chosen]
        emit = config.get("emit") or {}
        if not isinstance(emit, dict) or set(emit) - set(LEVEL_TYPES):
            raise PolicyError("%s: emit must map level names (%s) to combinations"
                              % (source, ", ".join(LEVEL_TYPES)))
        wanted = sorted(lt for lt in REGISTERED_ONLY if emit.get(lt, "none") not in ("none", None, []))
        if not self.registered_domains and wanted:
            raise PolicyError("%s: emit.%s needs registered_domains: true" % (source, wanted[0]))
        self.emit = {lt: self._combos(emit.get(lt, "all"), "emit." + lt) for lt in LEVEL_TYPES}
        if not self.exact_urls:
            self.emit["url"] = ()
        if not self.registered_domains:
            for lt in REGISTERED_ONLY:
                self.emit[lt] = ()
        self.combo_sets = []
        self.set_of = {}
        for lt in LEVEL_TYPES:
            if self.emit[lt] not in self.combo_sets:
                self.combo_sets.append(self.emit[lt])
            self.set_of[lt] = self.combo_sets.index(self.emit[lt])
        emitted = list(itertools.chain(*self.emit.values()))
        #: per criterion, the levels some emitted combination uses
        self.used_levels = {name: tuple(lv for lv in self.levels[name] if any(c[i] == lv for c in emitted))
                            for i, name in enumerate(self.names)}
        #: the characters of a timestamp the finest emitted datetime level reads (at least a year)
        self.period_len = max([4] + [criteria.DATETIME.level(lv).n for lv in self.used_levels["datetime"]
                                     if lv != criteria.ANY])

    def _combos(self, spec, where):
        if spec == "all":
            return tuple(itertools.product(*(self.levels[c] for c in self.names)))
        if spec in ("none", None, []):
            return ()
        specs = spec if isinstance(spec, list) else [spec]
        found = set()
        for item in specs:
            if not isinstance(item, dict) or set(item) - set(self.names):
                raise PolicyError("%s: %s: expected 'all', 'none' or mappings of %s"
                                  % (self.source, where, "/".join(self.names)))
            lists = []
            for criterion in self.names:
                chosen = item.get(criterion, ["any"])
                chosen = [chosen] if isinstance(chosen, str) else list(chosen)
                for c in chosen:
                    if c not in self.levels[criterion]:
                        raise PolicyError("%s: %s.%s: level %r is not enabled in levels.%s"
                                          % (self.source, where, criterion, c, criterion))
                lists.append(chosen)
            found.update(itertools.product(*lists))
        order = {c: i for i, c in enumerate(itertools.product(*(self.levels[c] for c in self.names)))}
        return tuple(sorted(found, key=order.__getitem__))

    def to_dict(self):
        """Canonical form, written to the profile's !meta line and passed to tasks."""
        out = {
            "name": self.name,
            "host_depth": self.host_depth,
            "path_depth": self.path_depth,
            "exact_urls": self.exact_urls,
        }
        if self.registered_domains:
            out["registered_domains"] = True
        out["levels"] = {c: self.levels[c][1:] for c in self.names}
        out["emit"] = {lt: [dict(zip(self.names, combo)) for combo in self.emit[lt]] for lt in LEVEL_TYPES
                       if (lt != "url" or self.exact_urls)
                       and (lt not in REGISTERED_ONLY or self.registered_domains)}
        return out

    @classmethod
    def from_dict(cls, data, source="<policy>"):
        return cls(data, source)

    def writes_plain_lines(self, datetime_levels=(criteria.ANY,)):
        """Whether some SURT level gets lines of one of datetime_levels with every other
        criterion any: the lines a lookup (of all time, or of a date those levels hold) and a map
        read. A policy by month alone writes none for all time."""
        at = self.names.index(criteria.DATETIME.name)
        return any(combo[at] in datetime_levels and all(lv == criteria.ANY for i, lv in enumerate(combo) if i != at)
                   for combos in self.emit.values() for combo in combos)

    def datetime_levels(self):
        """The datetime levels of this policy's lines, coarsest first (any left out)."""
        return tuple(lv for lv in self.used_levels[criteria.DATETIME.name] if lv != criteria.ANY)


def recorded(headers, source="<profile>"):
    """The policy a profile's !meta records, or None (another producer's profile, a merge of
    several policies, or a record that no longer loads)."""
    for name, value in headers:
        if name == "!meta" and isinstance(value, dict) and isinstance(value.get("policy"), dict):
            try:
                return Policy.from_dict(value["policy"], source)
            except PolicyError:
                return None
    return None


def _int(config, key, default, source):
    value = config.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise PolicyError("%s: %s must be a whole number >= 0, not %r" % (source, key, value))
    return value


#: a policy file's largest size (a policy is a few kilobytes)
MAX_POLICY_BYTES = 1 << 22


def find(name_or_path):
    """A policy file path from a path or a bundled policy name ('default', 'full', ...)."""
    if os.path.isfile(name_or_path):
        return name_or_path
    for folder in POLICY_DIRS:
        candidate = os.path.join(folder, name_or_path + ".yaml")
        if os.path.isfile(candidate):
            return candidate
    raise PolicyError("policy not found: %s (give a YAML file or one of: %s)"
                      % (name_or_path, ", ".join(available()) or "none installed"))


def available():
    names = set()
    for folder in POLICY_DIRS:
        if os.path.isdir(folder):
            names.update(n[:-5] for n in os.listdir(folder) if n.endswith(".yaml"))
    return sorted(names)


def with_field(field):
    """How to get profiles whose keys have an optional field ('lang'): '--policy NAME' of the
    bundled policies whose levels name it, or a policy of one's own."""
    names = []
    for name in available():
        try:
            if field in load(name).levels:
                names.append(name)
        except PolicyError:
            continue
    found = " or ".join("--policy %s" % n for n in names)
    return "profile with %s" % (found + " (or a policy whose levels name %s)" % field if found
                                else "a policy whose levels name %s" % field)


def load(name_or_path="default", parse=None):
    """Load and validate a policy file. parse(data, path): the value of the file's bytes
    (parse_yaml, the default, or one that remembers the values of files read before:
    profiler.runtime.policycache.parse)."""
    path = find(name_or_path)
    data = _read_policy(path)
    config = (parse or parse_yaml)(data, path)
    if not isinstance(config, dict):
        raise PolicyError("%s: a policy is a YAML mapping" % path)
    return Policy(config, path)


def _read_policy(path):
    """The bytes of a policy file, read without ever waiting (a FIFO, /proc/kmsg: a PolicyError)
    and at most MAX_POLICY_BYTES of them."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise PolicyError("cannot read policy %s: %s" % (path, e.strerror or e))
    chunks, size = [], 0
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PolicyError("policy %s is not a regular file" % path)
        while size <= MAX_POLICY_BYTES:
            chunk = os.read(fd, MAX_POLICY_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except BlockingIOError:
        raise PolicyError("policy %s cannot be read without waiting: not a file of data" % path)
    except OSError as e:
        raise PolicyError("cannot read policy %s: %s" % (path, e.strerror or e))
    finally:
        os.close(fd)
    if size > MAX_POLICY_BYTES:
        raise PolicyError("policy %s is larger than %d bytes: not a policy" % (path, MAX_POLICY_BYTES))
    return b"".join(chunks)


def parse_yaml(data, path):
    """The value of a policy file's bytes read from path, as its text (UTF-8, universal newlines)
    reads; an empty file's is {}. A PolicyError when they are not valid YAML."""
    import io
    import yaml         # not at import: tasks get the policy as JSON
    raw = io.BytesIO(data)
    raw.name = path     # where YAML's messages say the error is
    try:
        return yaml.safe_load(io.TextIOWrapper(raw, encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise PolicyError("%s: not valid YAML: %s" % (path, str(e).splitlines()[0]))
