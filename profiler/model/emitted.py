"""Which keys a policy writes: a key a profile has no line for is zero only when its policy
would have written it (query, merge and the header-policy check ask this)."""

import itertools

from profiler.model import criteria
from profiler.model.keys import has_host_line, key_level, registered_labels


def not_emitted(policy, fields, layout=criteria.CORE_LAYOUT):
    """Why the policy never writes this key (a str), or None when it would (so a missing line is zero)."""
    surt = fields[0]
    level = key_level(surt, bool(policy.registered_domains))
    host = surt.split(")")[0] if ")" in surt else None
    if level in ("tld", "domain") and not policy.registered_domains:
        if surt.count(",") > policy.host_depth:
            return "host_depth %d stops at %d labels" % (policy.host_depth, policy.host_depth)
    elif level in ("host", "path") and host is not None:
        if not has_host_line(host, policy, registered_labels(host, policy)):
            return "hosts of more than %d labels get no host or path keys (host_depth)" % policy.host_depth
        if level == "path" and surt.split(")", 1)[1].count("/") - 1 > policy.path_depth:
            return "path_depth is %d" % policy.path_depth
    combos = policy.emit.get(level, ())
    # each field's levels by its criterion's name: the file's key fields may come in another order
    # than the policy's (spec section 2: found by name)
    by_name = {c.name: c.field_levels(value) for c, value in zip(layout.criteria, fields[1:])}
    if any(name not in policy.names and criteria.ANY not in levels for name, levels in by_name.items()):
        return "it writes no %s field" % ", ".join(n for n in by_name if n not in policy.names)
    for combo in itertools.product(*(by_name.get(c.name, (criteria.ANY,)) for c in policy.criteria)):
        if combo in combos:
            return None
    emitted = [" x ".join("%s %s" % (c.name, lv) for c, lv in zip(policy.criteria, combo) if lv != "any") or "any"
               for combo in combos]
    return "%s keys come as: %s" % (level, ", ".join(emitted)) if emitted else "it writes no %s keys" % level
