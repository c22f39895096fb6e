"""Profile keys (spec section 2): SURT levels and the criteria's key suffixes."""

import re

from profiler.model import criteria

ROOT = "*"


def host_part(urlkey):
    """'com,cnn)/world' -> 'com,cnn'; None for a urlkey without ')' (dns:, urn:, ...)."""
    i = urlkey.find(")")
    return urlkey[:i] if i >= 0 else None


def registered_labels(host, policy):
    """The SURT labels of a host's registered domain when the policy counts by the Public Suffix
    List (profiler.model.domains), else None."""
    if not policy.registered_domains:
        return None
    from profiler.model.domains import registered_domain_labels
    return registered_domain_labels(host)


def label_level(k, n, registered):
    """The level type of a host's first k labels as a wildcard ('uk,co,*' for k=2), n its labels,
    registered its registered domain's labels (None: levels by count, or no registered domain)."""
    if k == 1:
        return "tld"
    if registered is None:
        return "domain"
    return "suffix" if k < registered else "domain" if k == registered else "subdomain"


def wildcard_level(prefix, registered_domains):
    """The level type of a host-label wildcard ('uk,co,bbc' of 'uk,co,bbc,*'): by the Public
    Suffix List when the profile's policy counts registered domains, else by its label count."""
    k = prefix.count(",") + 1
    if k == 1:
        return "tld"
    if not registered_domains:
        return "domain"
    from profiler.model.domains import registered_domain_labels
    size = registered_domain_labels(prefix)
    if size is None:                        # a public suffix, or no registered domain at all
        return "suffix" if registered_domain_labels(prefix + ",x") == k + 1 else "domain"
    return "domain" if k == size else "subdomain"


def key_level(surt, registered_domains=False):
    """The SURT level type of a key's surt field: root, tld, suffix, domain, subdomain, host,
    path or url (profiler.model.policy.LEVEL_TYPES)."""
    if surt == ROOT:
        return "root"
    if ")" not in surt:
        if surt.endswith(",*"):
            return wildcard_level(surt[:-2], registered_domains)
        return "url"
    rest = surt.split(")", 1)[1]
    if rest == "/*":
        return "host"
    return "path" if rest.endswith("/*") else "url"


def has_host_line(host, policy, registered=None):
    """Whether a host gets its full-host key (and path keys below it): every host under a
    registered domain when the policy counts by the Public Suffix List, else hosts of at most
    host_depth labels."""
    return registered is not None or len(host.split(",")) <= policy.host_depth


def group_levels(host, policy):
    """(level_type, key) of the levels a host shares with all its URI-Rs: root, the host-label
    wildcards (tld, domain; with registered domains also suffix and subdomain), host.

    By count, wildcards of 1 .. min(n-1, host_depth) labels: 'com,*' the TLD, then domains.
    By the Public Suffix List, of 1 .. n-1 labels: 'uk,*' the TLD, 'uk,co,*' inside the public
    suffix, 'uk,co,bbc,*' the registered domain, 'uk,co,bbc,news,*' below it; a host with no
    registered domain (an IP address, an unknown TLD) gets its TLD only."""
    out = [("root", ROOT)]
    if host is None:
        return out
    labels = host.split(",")
    n = len(labels)
    registered = registered_labels(host, policy)
    if registered is not None:
        upto = n - 1
    elif policy.registered_domains:
        upto = min(n - 1, 1)
    else:
        upto = min(n - 1, policy.host_depth)
    for k in range(1, upto + 1):
        out.append((label_level(k, n, registered), ",".join(labels[:k]) + ",*"))
    if has_host_line(host, policy, registered):
        out.append(("host", host + ")/*"))
    return out


def directories(urlkey, host):
    """The directory segments of a urlkey's path: 'com,cnn)/a/b/c.html?x' -> ['a', 'b']."""
    path = urlkey[len(host) + 1:]
    for stop in "?#":
        i = path.find(stop)
        if i >= 0:
            path = path[:i]
    return path.split("/")[1:-1] if path.startswith("/") else []


def own_levels(urlkey, host, policy):
    """(level_type, key) of the levels specific to one URI-R: path directories and the exact URL."""
    out = []
    if host is not None and policy.path_depth and has_host_line(host, policy, registered_labels(host, policy)):
        prefix = host + ")/"
        for segment in directories(urlkey, host)[:policy.path_depth]:
            prefix += segment + "/"
            out.append(("path", prefix + "*"))
    if policy.exact_urls:
        out.append(("url", exact_key(urlkey)))
    return out


def surt_levels(urlkey, policy):
    """Every (level_type, key) a urlkey contributes to, from '*' down to the exact URL."""
    host = host_part(urlkey)
    return group_levels(host, policy) + own_levels(urlkey, host, policy)


def exact_key(urlkey):
    """An exact urlkey never ends in '*' (that would read as a wildcard): a trailing '*' is written
    '%2A'; so that no two urlkeys share a key, one that itself ends in '%2A' (or '%252A', ...)
    gets one more '25' after that '%'."""
    if urlkey.endswith("*"):
        return urlkey[:-1] + "%2A"
    if urlkey.endswith("2A"):
        escaped = _ESCAPED_STAR.search(urlkey)
        if escaped:
            return urlkey[:escaped.start() + 1] + "25" + urlkey[escaped.start() + 1:]
    return urlkey


_ESCAPED_STAR = re.compile(r"%(?:25)*2A\Z")


class SuffixTable:
    """Cached, de-duplicated key suffixes of a tuple of criterion values, per combination set.

    Called with a tuple of values (one per criterion of the policy), or a virtual tuple: the
    values then one bit mask per criterion of the levels whose combinations it stands for (see
    profiler.job.expand.blocks). Returns, indexed like policy.combo_sets, the tuple of distinct
    suffixes ('datetime mime status ...') of each set's combinations that the masks allow.
    """

    def __init__(self, policy, limit=200000):
        self.criteria = policy.criteria
        self.k = len(self.criteria)
        self.combo_sets = tuple(tuple(combos) for combos in policy.combo_sets)
        self.bits = tuple(c.bits for c in self.criteria)
        self.limit = limit
        self.cache = {}
        self.by_mask = {}
        self.fields = [{} for _ in self.criteria]

    def _combos(self, masks):
        """The combinations of each set that a virtual tuple's level masks allow."""
        found = self.by_mask.get(masks)
        if found is None:
            if not masks:
                found = self.combo_sets
            else:
                bits = self.bits
                found = tuple(tuple(combo for combo in combos
                                    if all(b[level] & m for b, level, m in zip(bits, combo, masks)))
                              for combos in self.combo_sets)
            self.by_mask[masks] = found
        return found

    def _fields(self, i, value):
        """{level: key field} of one criterion's value."""
        cache = self.fields[i]
        found = cache.get(value)
        if found is None:
            c = self.criteria[i]
            found = {level: c.field(value, level) for level in (criteria.ANY,) + c.level_names}
            if len(cache) >= self.limit:
                cache.clear()
            cache[value] = found
        return found

    def __call__(self, t):
        found = self.cache.get(t)
        if found is None:
            k = self.k
            fields = [self._fields(i, t[i]) for i in range(k)]
            found = tuple(tuple(dict.fromkeys(" ".join([f[level] for f, level in zip(fields, combo)])
                                              for combo in combos))
                          for combos in self._combos(t[k:]))
            if len(self.cache) >= self.limit:
                self.cache.clear()
            self.cache[t] = found
        return found
