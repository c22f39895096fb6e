"""A test plugin whose criterion is computed from a field every capture has: ``tldclass``, the
class of the top-level domain of the capture's SURT (``cc`` two letters, ``g`` a longer name or
IDN, ``ip`` digits, ``unk`` otherwise), read from ``urlkey`` with ``derive``. It adds no capture
field and no format, so every input format gives it, and the compiled map side, which does not
find it, leaves its values to the Python map side (profiler.plugins:
ARCHIVE_PROFILER_PLUGINS=helpers.tldclass).
"""

from profiler.model import criteria

CLASSES = ("cc", "g", "ip", "unk")


def tld_class(urlkey):
    """'uk,co,bbc)/' -> 'cc'; 'com,cnn)/' -> 'g'; '192,0,2,1)/' -> 'ip'."""
    tld = urlkey.split(")", 1)[0].split(",", 1)[0]
    if tld.isdigit():
        return "ip"
    if len(tld) == 2 and tld.isalpha() and tld.isascii():
        return "cc"
    if (tld.isalpha() and tld.isascii()) or tld.startswith("xn--"):
        return "g"
    return "unk"


TLDCLASS = criteria.Criterion(
    "tldclass", "urlkey", (criteria.Level("name", criteria.IDENTITY),), ("name",),
    lambda field: ("name",), ("cc",), r"-|" + "|".join(CLASSES), "'-', " + ", ".join(CLASSES),
    optional=True, example="a TLD class: " + ", ".join(CLASSES), derive=tld_class)


def register():
    """Add the criterion (profiler.plugins calls it)."""
    criteria.register(TLDCLASS)


#: a policy of the criterion: year x mime x status class x class at '*', year x class per TLD,
#: class per host
POLICY = {
    "name": "tldclass",
    "host_depth": 3,
    "registered_domains": True,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "tldclass": ["name"]},
    "emit": {
        "root": {"datetime": ["any", "year"], "mime": ["any", "type"], "status": ["any", "class"],
                 "tldclass": ["any", "name"]},
        "tld": {"datetime": ["any", "year"], "tldclass": ["any", "name"]},
        "suffix": {"datetime": ["any", "year"]},
        "domain": {"datetime": ["any", "year"]},
        "subdomain": "none",
        "host": {"datetime": ["any"], "tldclass": ["any", "name"]},
        "path": "none",
    },
}
