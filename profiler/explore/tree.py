"""The SURT keys of a profile as a tree: which wildcard keys hold a key, and a key's parent.

A wildcard key ``P*`` stands for every SURT starting with ``P``: the root ``*`` (P empty),
host-label wildcards (``com,*``, ``com,cnn,*``: P ends with ',' before any ')'), a host
(``com,cnn)/*``) and path directories (``com,cnn)/world/*``: P ends with '/' after the ')').
An exact key (a URL, never ending in '*': the profile writes a trailing '*' as %2A) stands for
itself. A key's parent is the nearest wildcard holding it that the profile has: where a policy
leaves a level out (no domain lines, say), the hosts come under the level above.
"""


def prefix(key):
    """The SURT text a key stands for: 'com,cnn,*' -> 'com,cnn,'; an exact key itself."""
    return key[:-1] if key.endswith("*") else key


def holders(key):
    """The wildcard keys that hold a key (not the key itself), nearest first, '*' last."""
    if key == "*":
        return []
    text = prefix(key)
    if not key.endswith("*") and ")" not in text:
        return ["*"]                        # a URI without a host (dns:, urn:): only the root
    close = text.find(")")
    out = []
    top = len(text) if not key.endswith("*") else len(text) - 1
    for i in range(top, 0, -1):
        c = text[i - 1]
        if (c == "," and (close < 0 or i <= close)) or (c == "/" and 0 <= close < i - 1):
            out.append(text[:i] + "*")
    return out + ["*"]


def parent(key, present):
    """The nearest wildcard holding key for which ``present(wildcard)`` is true, or None."""
    for holder in holders(key):
        if present(holder):
            return holder
    return None


def children(node, keys):
    """The keys among ``keys`` (SURT keys under node's prefix, node excluded or not) whose
    parent, among those keys and node, is node; in the order given."""
    seen = set(keys)
    seen.add(node)
    return [k for k in keys if k != node and parent(k, seen.__contains__) == node]


def under(node, key):
    """Whether the wildcard node holds key."""
    return node == "*" or (key != node and key.startswith(prefix(node)))


def label(key):
    """A SURT key as a person reads it: 'com,*' -> '*.com', 'com,cnn,*' -> '*.cnn.com',
    'com,cnn)/*' -> 'cnn.com', 'com,cnn)/world/*' -> 'cnn.com/world/*',
    'com,cnn)/a.html' -> 'cnn.com/a.html'; the root is 'the whole archive'."""
    if key == "*":
        return "the whole archive"
    text = prefix(key)
    if ")" not in text:
        if key.endswith(",*"):
            return "*." + ".".join(reversed(text.rstrip(",").split(",")))
        return key
    host, _, path = text.partition(")")
    name, colon, port = host.partition(":")
    shown = ".".join(reversed(name.split(","))) + colon + port
    if path in ("/", "") and key.endswith("*"):
        return shown
    return shown + path + ("*" if key.endswith("*") else "")
