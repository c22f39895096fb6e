"""A brute-force oracle of the profile spec, written independently of profiler's job code.

It reads a clean 11-field CDX (SURT urlkeys), resolves revisits per spec section 1 and
computes every key of every capture (spec section 2) and its features (section 3) with
plain sets. Only the policy's emit lists come from profiler.model.policy, and, for an optional
criterion besides lang (one a plugin adds), its projections and revisit rule from the registry.

A capture is [urlkey, timestamp, mime, status, digest, length, revisit, lang], and after those
a dict of the values of other optional criteria by name (a criterion it lacks: 'unk').
"""

from collections import defaultdict


def pad_timestamp(ts):
    """The earliest valid 14-digit datetime a shorter timestamp stands for (spec section 1)."""
    padded = ts + "0" * (14 - len(ts))
    if len(ts) < 6 and padded[4:6] == "00":
        padded = padded[:4] + "01" + padded[6:]
    if len(ts) < 8 and padded[6:8] == "00":
        padded = padded[:6] + "01" + padded[8:]
    return padded


def read_captures(paths):
    caps = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                f_ = line.split()
                if not f_ or f_[0] == "CDX" or len(f_) != 11:
                    continue
                urlkey, ts, _, mime, status, digest, _, _, length, _, _ = f_
                ts = pad_timestamp(ts)
                mime = mime.split(";")[0].strip().lower()
                mime = "unk" if mime in ("", "-", "unk", "unknown") else mime
                status = status if len(status) == 3 and status.isdigit() else "unk"
                digest = digest.split(":")[-1].upper() if digest not in ("", "-") else "-"
                length = int(length) if length.isdigit() else 0
                caps.append([urlkey, ts, mime, status, digest, length, mime == "warc/revisit", "unk"])
    return caps


def resolve_revisits(caps):
    """Revisits take mime, status and language of the earliest original (spec sections 1, 2), and
    the values of other optional criteria that a revisit takes from its original."""
    from profiler.model import criteria
    for c in caps:
        if len(c) < 8:
            c.append("unk")
        if len(c) < 9:
            c.append({})
    taken = [x for x in criteria.CRITERIA if x.optional and x.name != "lang" and x.resolved]
    for c in caps:
        if c[6]:
            originals = sorted((o[1], o[2], o[3], o[7], [o[8].get(x.name, "unk") for x in taken]) for o in caps
                               if o[0] == c[0] and not o[6] and o[4] == c[4] and c[4] != "-")
            c[2], c[3], c[7], values = originals[0][1:] if originals else \
                ("warc/revisit", "unk", "unk", [x.revisit for x in taken])
            c[8] = dict(c[8], **{x.name: v for x, v in zip(taken, values)})
    return caps


def surt_keys(urlkey, policy):
    """(level type, key) pairs, straight from the spec's list."""
    out = [("root", "*")]
    if ")" not in urlkey:
        if policy.exact_urls:
            out.append(("url", urlkey))
        return out
    host, path = urlkey.split(")", 1)
    labels = host.split(",")
    if getattr(policy, "registered_domains", False):
        return out + registered_keys(urlkey, host, path, labels, policy)
    for k in range(1, min(len(labels) - 1, policy.host_depth) + 1):
        out.append(("tld" if k == 1 else "domain", ",".join(labels[:k]) + ",*"))
    if len(labels) <= policy.host_depth:
        out += host_and_path_keys(host, path, policy)
    return out + url_keys(urlkey, policy)


def host_and_path_keys(host, path, policy):
    """The host line and its path-directory lines."""
    out = [("host", host + ")/*")]
    dirs = path.split("?")[0].split("#")[0].split("/")[1:-1]
    for depth in range(1, min(policy.path_depth, len(dirs)) + 1):
        out.append(("path", host + ")/" + "/".join(dirs[:depth]) + "/*"))
    return out


def url_keys(urlkey, policy):
    """The exact URL's line, when the policy has them."""
    if policy.exact_urls:
        return [("url", urlkey[:-1] + "%2A" if urlkey.endswith("*") else urlkey)]
    return []


def field_values(cap, combo, names=("datetime", "mime", "status", "lang")):
    """The key fields after the SURT of a capture at a combination of levels, one per criterion
    of names (the policy's)."""
    out = []
    for name, level in zip(names, combo):
        if level == "any":
            out.append("-")
        elif name == "datetime":
            out.append({"year": cap[1][:4], "month": cap[1][:6], "day": cap[1][:8]}[level])
        elif name == "mime":
            mime = cap[2]
            out.append(mime if level == "type" else mime.split("/")[0] + "/*" if "/" in mime else mime)
        elif name == "status":
            status = cap[3]
            out.append(status if level == "code" else
                       status[0] + "xx" if status != "unk" and status[0] in "12345" else "unk")
        elif name == "lang":
            out.append(cap[7] if len(cap) > 7 else "unk")
        else:                               # a criterion a plugin adds: its registry entry projects it
            from profiler.model import criteria
            value = cap[8].get(name, "unk") if len(cap) > 8 else "unk"
            out.append(criteria.BY_NAME[name].field(value, level))
    return " ".join(out)


def profile(caps, policy):
    """{key: (total, min, max, urir, bytes, digests, dedup_bytes, first, last)}."""
    members = defaultdict(list)
    for c in caps:
        keys = set()
        for level_type, surt in surt_keys(c[0], policy):
            for combo in policy.emit[level_type]:
                keys.add(surt + " " + field_values(c, combo, policy.names))
        for k in keys:
            members[k].append(c)
    out = {}
    for k, cs in members.items():
        per_urir = defaultdict(int)
        for c in cs:
            per_urir[c[0]] += 1
        largest = {}
        for c in cs:
            if c[4] != "-":
                largest[c[4]] = max(largest.get(c[4], 0), c[5])
        dedup = sum(largest.values()) + sum(c[5] for c in cs if c[4] == "-")
        out[k] = (len(cs), min(per_urir.values()), max(per_urir.values()), len(per_urir),
                  sum(c[5] for c in cs), len(largest), dedup,
                  min(c[1] for c in cs), max(c[1] for c in cs))
    return out


def read_profile(path):
    """{key: same tuple} from a CDXJ profile file (its key fields as its !keys line says)."""
    import json
    out = {}
    n = 4
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("!keys "):
                n = len(json.loads(line[6:]))
            if line.startswith(("!", "@")):
                continue
            parts = line.rstrip("\n").split(" ", n)
            key, v = " ".join(parts[:n]), json.loads(parts[n])
            out[key] = stats_tuple(v)
    return out


def stats_tuple(v):
    """The oracle's tuple of a profile line's JSON block (a dict)."""
    return (v["urim"]["total"], v["urim"]["min"], v["urim"]["max"], v["urir"], v["bytes"], v["digests"],
            v["dedup_bytes"], v["first"], v["last"])


_PSL = []


def registered_domain_size(host):
    """Labels of a SURT host's registered domain by the Public Suffix List's ICANN section (read
    here with publicsuffixlist itself), or None (an IP address, an unknown TLD, a suffix)."""
    if not _PSL:
        from publicsuffixlist import PublicSuffixList
        _PSL.append(PublicSuffixList(only_icann=True, accept_unknown=False))
    labels = host.split(",")
    if len(labels) < 2 or all(label.isdigit() for label in labels):
        return None
    labels[-1] = labels[-1].split(":")[0]
    found = _PSL[0].privatesuffix(".".join(reversed(labels)))
    return found.count(".") + 1 if found else None


def registered_keys(urlkey, host, path, labels, policy):
    """The spec's SURT levels under a policy that counts by registered domains: the TLD, the
    wildcards inside the public suffix, the registered domain, those below it, and the host
    (with its paths) whatever its label count; a host without a registered domain: its TLD, and
    its host line by host_depth."""
    out = []
    size = registered_domain_size(host)
    n = len(labels)
    for k in range(1, (n if size else min(n, 2))):
        kind = "tld" if k == 1 else "suffix" if k < size else "domain" if k == size else "subdomain"
        out.append((kind, ",".join(labels[:k]) + ",*"))
    if size or n <= policy.host_depth:
        out += host_and_path_keys(host, path, policy)
    return out + url_keys(urlkey, policy)
