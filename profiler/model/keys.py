"""Profile keys (spec section 2): SURT levels and the criteria's key suffixes."""

from profiler.model import criteria
from profiler.model.normalise import mime_category, status_class

ROOT = "*"

#: bits of each criterion's options, coarse to fine (virtual tuples carry masks of them)
DT_BIT, MIME_BIT, STATUS_BIT = (dict(c.bits) for c in criteria.CRITERIA)


def host_part(urlkey):
    """'com,cnn)/world' -> 'com,cnn'; None for a urlkey without ')' (dns:, urn:, ...)."""
    i = urlkey.find(")")
    return urlkey[:i] if i >= 0 else None


def group_levels(host, policy):
    """(level_type, key) of the levels a host shares with all its URI-Rs: root, tld, domain, host."""
    out = [("root", ROOT)]
    if host is None:
        return out
    labels = host.split(",")
    n = len(labels)
    for k in range(1, min(n - 1, policy.host_depth) + 1):
        out.append(("tld" if k == 1 else "domain", ",".join(labels[:k]) + ",*"))
    if n <= policy.host_depth:
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
    if host is not None and policy.path_depth and len(host.split(",")) <= policy.host_depth:
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
    """An exact urlkey never ends in '*' (that would read as a wildcard): '*' -> '%2A'."""
    return urlkey[:-1] + "%2A" if urlkey.endswith("*") else urlkey


def suffix_parts(period, mime, status, combo):
    """The 'datetime mime status' key suffix of one combination of levels."""
    return criteria.suffix((period, mime, status), combo)


class SuffixTable:
    """Cached, de-duplicated suffixes of a (period, mime, status) tuple for each combination set."""

    def __init__(self, policy, limit=200000):
        self.policy = policy
        self.limit = limit
        self.cache = {}
        self.by_mask = {}
        self.tails = {}

    def _tails(self, mime, status, masks):
        """Per set: [(datetime option, ' mime status'), ...] and whether two may coincide."""
        key = (mime, status, masks)
        found = self.tails.get(key)
        if found is None:
            mi = {"any": "-", "type": mime, "category": mime_category(mime)}
            st = {"any": "-", "code": status, "class": status_class(status) if status else status}
            found = []
            for combos in self._combos(masks):
                tails = [(c0, " %s %s" % (mi[c1], st[c2])) for c0, c1, c2 in combos]
                found.append((tails, len(set(tails)) < len(tails)))
            if len(self.tails) >= self.limit:
                self.tails.clear()
            self.tails[key] = found
        return found

    def _combos(self, masks):
        """The combinations of each set that a virtual tuple's option masks allow."""
        found = self.by_mask.get(masks)
        if found is None:
            if not masks:
                found = tuple(tuple(combos) for combos in self.policy.combo_sets)
            else:
                dm, mm, sm = masks
                found = tuple(tuple(c for c in combos if DT_BIT[c[0]] & dm and MIME_BIT[c[1]] & mm
                                    and STATUS_BIT[c[2]] & sm)
                              for combos in self.policy.combo_sets)
            self.by_mask[masks] = found
        return found

    def __call__(self, t):
        """Tuple of suffix tuples, indexed like policy.combo_sets.

        t is (period, mime, status), or a virtual tuple (period, mime, status, datetime
        options, mime options, status options) with bit masks of the options whose
        combinations it stands for (see profiler.job.expand.blocks).
        """
        found = self.cache.get(t)
        if found is None:
            p = t[0]
            dt = {"any": "-", "year": p[:4], "month": p[:6]}
            found = tuple(tuple(dict.fromkeys([dt[o] + rest for o, rest in tails])) if dedupe
                          else tuple([dt[o] + rest for o, rest in tails])
                          for tails, dedupe in self._tails(t[1], t[2], t[3:]))
            if len(self.cache) >= self.limit:
                self.cache.clear()
            self.cache[t] = found
        return found
