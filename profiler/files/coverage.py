"""Coverage: what the absence of a line in a map or profile says.

A map made from a profile (or the profile itself) lists every URI-R it holds at the deepest
level its policy emits: the exact URL (``exact_urls``), else the host (hosts of at most
``host_depth`` labels), else the host-label wildcard of ``host_depth`` labels. In such a
*complete* file a URI whose most specific match is a wildcard above that level is not held
there, though the spec's lookup answers "held" from the wildcard's positive count (the line
counts other URIs). Compaction keeps a map complete by marking the lines it rolled children
into (``{"rollup":true}``): those stand for URIs no longer listed. A router asks an archive only
for URIs its file lists (or a rolled-up line may hold).
"""

from profiler import jsonnum
from profiler.model.keys import host_part

#: the JSON attribute of a line that stands for URIs rolled up into it (profiler.toolkit.compact)
ROLLUP = "rollup"


def from_policy(policy):
    """The coverage of files made with a policy (its dict, as in a profile's !meta), or None
    when the policy does not list every held host (or URL) by its all-time line."""
    if not isinstance(policy, dict) or not isinstance(policy.get("host_depth"), int):
        return None
    emit = policy.get("emit") or {}
    exact = bool(policy.get("exact_urls"))
    registered = bool(policy.get("registered_domains"))
    if not exact and policy["host_depth"] < 1:
        return None                     # no host lists its captures below the root line
    # a host past host_depth labels is listed by its TLD line when host_depth is 1, and by
    # registered domains, when it has none (an IP address)
    tld = ("tld",) if registered or policy["host_depth"] == 1 else ()
    for level in ("url",) if exact else ("host", "domain") + tld:
        # the all-time line: every criterion of the policy (lang too, when it has it) at any
        if not any(isinstance(combo, dict) and combo and all(v == "any" for v in combo.values())
                   for combo in emit.get(level) or []):
            return None
    out = {"host_depth": policy["host_depth"], "exact_urls": exact}
    if registered and not exact:
        out["registered_domains"] = True
    return out


def compacted(headers):
    """Whether a file's headers say compaction rolled lines up into coarser ones (its !meta
    "compacted"): a key without a line may then hold captures a coarser line counts."""
    return any(n[1:] == "meta" and isinstance(v, dict) and "compacted" in v for n, v in headers)


def map_source(headers):
    """(the policy a map's !meta says its profile was made with: a name or dict, its coverage),
    each None when it does not say; a merged map's, its parts' when they give one (its
    ``merge.part_meta``)."""
    metas = [v for n, v in headers if n[1:] == "meta" and isinstance(v, dict)]
    for value in metas:
        if isinstance(value.get("source"), dict):
            policy = value["source"].get("policy")
            return (policy if isinstance(policy, (str, dict)) else None,
                    value.get("coverage") if isinstance(value.get("coverage"), dict) else None)
    for value in metas:
        parts = value.get("merge", {}).get("part_meta") if isinstance(value.get("merge"), dict) else None
        if isinstance(parts, list):
            found = [map_source([("!meta", m) for m in part]) if isinstance(part, list) else (None, None)
                     for part in parts]
            policies = [p for p, _ in found if p is not None]
            covers = [c for _, c in found if c is not None]
            return (policies[0] if len({jsonnum.dumps(p) for p in policies}) == 1 else None,
                    covers[0] if len({jsonnum.dumps(c) for c in covers}) == 1 else None)
    return None, None


def same_map_policy(headers_a, headers_b):
    """(whether two maps may be of one policy, the policy names their !meta give): False when
    their !meta name different policies or give different coverages; maps that say nothing of
    their policy (another tool's) may be of one."""
    (policy_a, cover_a), (policy_b, cover_b) = map_source(headers_a), map_source(headers_b)
    names = [p.get("name") if isinstance(p, dict) else p for p in (policy_a, policy_b)]
    unlike = (cover_a is not None and cover_b is not None and cover_a != cover_b) or \
        (None not in names and names[0] != names[1])
    return not unlike, names


def of_headers(headers, kind):
    """The coverage a file's headers declare (maps: a !meta "coverage"; profiles: their policy,
    unless compacted), or None."""
    metas = [v for n, v in headers if n[1:] == "meta" and isinstance(v, dict)]
    if kind == "ukvs":
        found = [m["coverage"] for m in metas if isinstance(m.get("coverage"), dict)]
        return found[0] if found and isinstance(found[0].get("host_depth"), int) else None
    if compacted(headers):
        return None
    policies = [m["policy"] for m in metas if isinstance(m.get("policy"), dict)]
    return from_policy(policies[0]) if policies else None


def listed(coverage, urlkey, key, rolled_up=False):
    """False when a complete file (coverage) answers urlkey from a wildcard key above the level
    it lists held URIs at, on a line not rolled up: the URI is then not held there."""
    if coverage is None or key is None or rolled_up:
        return True
    surt = key.split(b" ", 1)[0].decode("utf-8", "surrogateescape")
    if not surt.endswith("*"):
        return True                                     # the URL itself
    if coverage.get("exact_urls"):
        return False
    host = host_part(urlkey)
    if host is None:
        return True
    labels = host.split(",")
    if ")" in surt:                                     # host or path line of this host
        return True
    if surt == "*":
        return False
    depth = len(surt.split(",")) - 1                    # labels before the trailing '*'
    if len(labels) > coverage["host_depth"] and coverage.get("registered_domains"):
        from profiler.model.domains import registered_domain_labels
        if registered_domain_labels(host) is None:      # listed by its TLD line alone (profiler.model.keys)
            return True
    return len(labels) > coverage["host_depth"] and depth >= coverage["host_depth"]
