"""Policies for tests: by the length of period they cut timestamps to, and one with languages."""

from profiler.model.policy import Policy, load

#: a policy with the language criterion (until conf/policies has one)
LANG = {
    "name": "lang",
    "host_depth": 3,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"], "lang": ["code"]},
    "emit": {
        "root": {"datetime": ["any", "year"], "lang": ["any", "code"]},
        "tld": {"datetime": ["any", "year"], "lang": ["any", "code"]},
        "domain": {"datetime": ["any"], "lang": ["any", "code"]},
        "host": {"datetime": ["any"]},
    },
}


def lang_policy():
    return Policy(LANG, "lang.yaml")


def write_policy(path, policy):
    """A policy (a dict) as a policy file at path (for the command line): its path as a str."""
    import yaml
    with open(path, "w") as f:
        yaml.safe_dump(policy, f)
    return str(path)


def write_lang_policy(path):
    """LANG as a policy file at path (for the command line)."""
    return write_policy(path, LANG)

#: a bundled policy whose cells hold years (4) or months (6)
_BY_PERIOD = {4: "hosts", 6: "default"}


def by_period(period_len):
    """A policy whose datetime values are period_len characters of the timestamp."""
    policy = load(_BY_PERIOD[period_len])
    assert policy.period_len == period_len
    return policy
