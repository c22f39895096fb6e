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


def _line_fields(paths):
    """The fields (split at white space) of each line of the files, in order."""
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                yield line.split()


def read_captures(paths):
    caps = []
    for f_ in _line_fields(paths):
        if not f_ or f_[0] == "CDX" or len(f_) != 11:
            continue
        urlkey, ts, _, mime, status, digest, _, _, length, _, _ = f_
        ts = pad_timestamp(ts)
        mime = mime.split(";")[0].strip().lower()
        mime = "unk" if mime in ("", "-", "unk", "unknown", "no-type", "none", "html", "image", "media",
                                 "document", "code", "other") else mime
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


def exact_url_key(urlkey):
    """The exact URL's key: a trailing '*' as '%2A'; a urlkey ending in '%' + '25' * n + '2A' gets
    n + 1 of them (no two urlkeys share a key)."""
    if urlkey.endswith("*"):
        return urlkey[:-1] + "%2A"
    head, sep, tail = urlkey.rpartition("%")
    if sep and tail.endswith("2A") and tail[:-2] == "25" * (len(tail[:-2]) // 2):
        return head + "%25" + tail
    return urlkey


def url_keys(urlkey, policy):
    """The exact URL's line, when the policy has them."""
    if policy.exact_urls:
        return [("url", exact_url_key(urlkey))]
    return []


def field_values(cap, combo, names=("datetime", "mime", "status", "lang")):
    """The key fields after the SURT of a capture at a combination of levels, one per criterion
    of names (the policy's)."""
    out = []
    for name, level in zip(names, combo):
        if level == "any":
            out.append("-")
        elif name == "datetime":
            out.append({"year": cap[1][:4], "month": cap[1][:6], "day": cap[1][:8], "hour": cap[1][:10]}[level])
        elif name == "mime":
            mime = cap[2]
            out.append(mime if level == "type" else content_class(mime) if level == "class" else
                       mime.split("/")[0] + "/*" if "/" in mime else mime)
        elif name == "status":
            status = cap[3]
            out.append(status if level == "code" else
                       status[0] + "xx" if status != "unk" and status[0] in "12345" else "unk")
        elif name == "lang":
            out.append(cap[7] if len(cap) > 7 else "unk")
        elif name == "size":
            out.append(size_class(cap[5]))
        elif name in ("collection", "depth"):
            out.append(cap[8].get(name, "unk") if len(cap) > 8 else "unk")
        else:                               # a criterion a plugin adds: its registry entry projects it
            from profiler.model import criteria
            value = cap[8].get(name, "unk") if len(cap) > 8 else "unk"
            out.append(criteria.BY_NAME[name].field(value, level))
    return " ".join(out)


#: the content classes of spec section 2, as the spec lists them (exact types, then prefixes)
CLASS_TYPES = {
    "text/html": "html", "application/xhtml+xml": "html",
    "application/x-shockwave-flash": "media", "application/vnd.apple.mpegurl": "media",
    "application/dash+xml": "media",
    "application/pdf": "document", "application/msword": "document", "application/rtf": "document",
    "application/epub+zip": "document", "text/plain": "document", "text/csv": "document",
    "text/css": "code", "text/javascript": "code", "application/javascript": "code",
    "application/x-javascript": "code", "application/json": "code", "application/ld+json": "code",
    "text/xml": "code", "application/xml": "code", "application/rss+xml": "code",
    "application/atom+xml": "code", "application/wasm": "code", "application/font-woff": "code",
}
CLASS_PREFIXES = [("image/", "image"), ("audio/", "media"), ("video/", "media"),
                  ("application/vnd.ms-", "document"), ("application/vnd.openxmlformats-officedocument.", "document"),
                  ("application/vnd.oasis.opendocument.", "document"), ("font/", "code")]


def content_class(mime):
    """The mime class level (spec section 2): 'unk' stays 'unk', unlisted types are 'other'."""
    if mime == "unk":
        return "unk"
    if mime in CLASS_TYPES:
        return CLASS_TYPES[mime]
    return next((name for prefix, name in CLASS_PREFIXES if mime.startswith(prefix)), "other")


def size_class(length):
    """The size field (spec section 2): decimal bounds, lower bound inclusive."""
    names = ["0-1k", "1k-10k", "10k-100k", "100k-1m", "1m-10m", "10m-100m", "100m-1g"]
    for power, name in enumerate(names, start=3):
        if length < 10 ** power:
            return name
    return "1g+"


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


def read_crawl_logs(paths):
    """The captures of Heritrix crawl.log files (spec section 1), with their depth (spec section 2)."""
    import surt
    caps = []
    for f_ in _line_fields(paths):
        if len(f_) < 11 or not f_[1].lstrip("-").isdigit() or not 100 <= int(f_[1]) <= 599:
            continue
        fetch = f_[8]
        ts = fetch[:14] if fetch[:14].isdigit() and len(fetch) >= 14 else \
            "".join(ch for ch in f_[0] if ch.isdigit())[:14]
        annotations = f_[11].split(",") if len(f_) > 11 else []
        revisit = any(a.startswith(("duplicate:", "warcRevisit:")) for a in annotations)
        mime = "warc/revisit" if revisit else f_[6].split(";")[0].strip().lower()
        mime = "unk" if mime in ("", "-", "unk", "unknown", "no-type", "none") else mime
        digest = f_[9].split(":")[-1].upper() if f_[9] != "-" else "-"
        length = int(f_[2]) if f_[2].isdigit() else 0
        hops = f_[4]
        if hops == "-":
            depth = 0
        elif "+" in hops:
            depth = int(hops.split("+")[0]) + len(hops.split("+")[1])
        else:
            depth = len(hops)
        caps.append([surt.surt(f_[3]), ts, mime, f_[1], digest, length, revisit, "unk",
                     {"depth": str(depth) if depth < 10 else "10+"}])
    return caps


#: the bytes of a WARC file name a collection pattern reads (spec section 2, the profiler's bound)
NAME_BYTES = 1000


def collection_of(name, pattern, label="unk"):
    """The collection field of a capture archived in the WARC file name (str; None or '' or '-'
    when the capture names none), by Python's re: the first group of pattern searched in the
    name's first NAME_BYTES bytes, percent-encoded as a key field; else label."""
    import re
    if not pattern or not name or name == "-":
        return label
    text = name.encode("utf-8", "surrogateescape")[:NAME_BYTES].decode("utf-8", "surrogateescape")
    found = re.search(pattern, text)
    group = found.group(1) if found else None
    return collection_field(group) if group else label


def collection_field(text):
    """A collection's name as a key field: '%', white space, control characters and bytes that are
    not UTF-8 percent-encoded, a leading '{' as %7B, '-' alone as %2D, 'unk' alone (a capture of no
    collection) as %75nk."""
    out = []
    for ch in text:
        code = ord(ch)
        if code <= 0x20 or code == 0x7F or ch == "%":
            out.append("%%%02X" % code)
        elif 0xDC80 <= code <= 0xDCFF:          # a byte surrogateescape kept
            out.append("%%%02X" % (code - 0xDC00))
        else:
            out.append(ch)
    field = "".join(out)
    if field.startswith("{"):
        field = "%7B" + field[1:]
    return {"-": "%2D", "unk": "%75nk"}.get(field, field)


def hop_depth(hops):
    """The depth field of a Heritrix hop path: '-' a seed (0), else its letters, N+LETTERS N more;
    '0' .. '9', '10+'; 'unk' for anything else (no hop path)."""
    import re
    if hops == "-":
        return "0"
    m = re.fullmatch(r"(?:([0-9]+)\+)?([A-Za-z]*)", hops)
    if m is None or hops == "":
        return "unk"
    depth = int(m.group(1) or 0) + len(m.group(2))
    return str(depth) if depth < 10 else "10+"
