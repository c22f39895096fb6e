"""Tests for profiler.job.digests: corrections for payload digests shared by several URI-Rs."""

from profiler.model import stats
from profiler.job.digests import corrections
from profiler.job.expand import Expander
from profiler.model.keys import SuffixTable
from profiler.model.policy import Policy

POLICY = Policy({
    "host_depth": 3, "path_depth": 0, "exact_urls": True,
    "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"]},
    "emit": {
        "root": {"datetime": ["any", "year"]},
        "tld": {"datetime": ["any"]},
        "domain": "none",
        "host": {"datetime": ["any"]},
        "url": {"datetime": ["any"]},
    },
})

X, Y, Z = "com,a)/x", "com,b)/y", "org,c)/z"
HTML = ("text/html", "200")


def run(records, policy=POLICY):
    out = list(corrections(records, policy, SuffixTable(policy)))
    got = dict(out)
    assert len(got) == len(out), "a key was corrected twice"
    return got


def test_one_uri_r_no_correction():
    assert run([[X, [["2010", *HTML, 100]]]]) == {}


def test_one_uri_r_in_two_tuples_no_correction():
    assert run([[X, [["2010", *HTML, 100], ["2011", *HTML, 300]]]]) == {}


def test_three_uri_rs_share_a_digest():
    got = run([[X, [["2010", *HTML, 100]]],
               [Y, [["2010", *HTML, 300]]],
               [Z, [["2010", *HTML, 50]]]])
    assert got == {
        "* - - -": stats.correction(2, 150),        # 3 URI-Rs: -(3-1) digests, -(450 - 300) bytes
        "* 2010 - -": stats.correction(2, 150),
        "com,* - - -": stats.correction(1, 100),    # X and Y only: -(400 - 300)
    }


def test_own_host_and_url_keys_get_nothing():
    got = run([[X, [["2010", *HTML, 100]]], [Y, [["2010", *HTML, 300]]], [Z, [["2010", *HTML, 50]]]])
    for key in ("com,a)/* - - -", "com,b)/* - - -", "org,c)/* - - -", "org,* - - -", X + " - - -"):
        assert key not in got


def test_correction_values():
    (key, record), = [kv for kv in corrections([[X, [["2010", *HTML, 100]]], [Z, [["2011", *HTML, 70]]]],
                                               POLICY, SuffixTable(POLICY)) if kv[0] == "* - - -"]
    assert record == [0, stats.NO_MIN, 0, 0, 0, -1, -70, stats.NO_FIRST, stats.NO_LAST]


def test_uri_r_in_two_years_counts_once_with_largest_length():
    got = run([[X, [["2010", *HTML, 100], ["2011", *HTML, 300]]],
               [Y, [["2010", *HTML, 200]]]])
    assert got == {
        "* - - -": stats.correction(1, 200),        # X counts 300 (not 400): 500 - 300
        "com,* - - -": stats.correction(1, 200),
        "* 2010 - -": stats.correction(1, 100),     # X 100, Y 200
    }                                               # '* 2011 - -': X alone


def test_keys_split_by_mime():
    policy = Policy({"host_depth": 0, "levels": {"mime": ["type"]},
                     "emit": {"root": {"mime": ["any", "type"]}}})
    got = run([[X, [["2010", "text/html", "200", 10]]], [Y, [["2010", "image/png", "200", 10]]],
               [Z, [["2010", "image/png", "404", 30]]]], policy)
    assert got == {"* - - -": stats.correction(2, 20), "* - image/png -": stats.correction(1, 10)}


def test_records_may_be_a_generator():
    records = iter([[X, [["2010", *HTML, 100]]], [Y, [["2010", *HTML, 300]]]])
    assert run(records)["* - - -"] == stats.correction(1, 100)


def test_step_one_plus_corrections_is_exact():
    """Expander's uncorrected values plus the corrections give the spec's values."""
    def cell(ts, digest, length):
        return [ts[:4], "text/html", "200", digest, 0, 1, length, length, ts, ts]

    uri_rs = {X: [[cell("20100101000000", "D1", 100), cell("20110101000000", "D1", 300)]],
              Y: [[cell("20100601000000", "D1", 200), cell("20100701000000", "D2", 7)]]}
    ex = Expander(POLICY)
    records = [r for u in (X, Y) for r in ex.add(u, uri_rs[u])] + list(ex.close())
    table, by_digest = {}, {}
    for key, value in records:
        if key.startswith(b"K "):
            stats.add(table, key[2:].decode(), value)
        else:
            by_digest.setdefault(key, []).append(value)
    assert sorted(by_digest) == [b"D D1", b"D D2"]
    for values in by_digest.values():
        for key, record in corrections(values, POLICY, SuffixTable(POLICY)):
            stats.add(table, key, record)
    assert table["* - - -"] == [4, 2, 2, 2, 607, 2, 307, "20100101000000", "20110101000000"]
    assert table["* 2010 - -"] == [3, 1, 2, 2, 307, 2, 207, "20100101000000", "20100701000000"]
    assert table["* 2011 - -"] == [1, 1, 1, 1, 300, 1, 300, "20110101000000", "20110101000000"]
    assert table["com,* - - -"] == table["* - - -"]
    assert table["com,a)/* - - -"] == [2, 2, 2, 1, 400, 1, 300, "20100101000000", "20110101000000"]


def test_a_limit_spills_and_merges_to_the_same_corrections():
    """With a key limit the corrections spill sorted runs and merge them: same keys, same values."""
    import random
    rng = random.Random(7)
    policy = Policy({"host_depth": 3, "path_depth": 1, "exact_urls": True,
                     "levels": {"datetime": ["year"], "mime": ["type"], "status": ["class"]},
                     "emit": {lt: "all" for lt in ("root", "tld", "domain", "host", "path", "url")}})
    hosts = ["com,a)", "com,a,b)", "com,c)", "org,x)", "uk,co,y)", "uk,co,y,www)"]
    for _ in range(40):
        records = [[rng.choice(hosts) + "/p%d/q" % rng.randint(0, 3),
                    [[str(rng.randint(2010, 2012)), rng.choice(["text/html", "image/png"]),
                      rng.choice(["200", "404"]), rng.randint(0, 999)] for _ in range(rng.randint(1, 3))]]
                   for _ in range(rng.randint(2, 12))]
        expected = run(records, policy)
        for limit in (1, 2, 7, 50):
            out = list(corrections(records, policy, SuffixTable(policy), limit))
            assert len(dict(out)) == len(out), "a key was corrected twice"
            assert dict(out) == expected
