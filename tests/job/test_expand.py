"""Tests for profiler.job.expand: one URI-R's captures -> key records and (URI-R, digest) records."""

import pytest

from profiler.model import stats
from profiler.job import expand
from profiler.job.expand import Expander
from profiler.model.criteria import CORE
from profiler.model.policy import Policy


def cell(ts, mime, status, digest, length, revisit=False, period_len=6):
    """One capture as the map side's cell (revisits with resolution on: mime and status '')."""
    if revisit:
        mime = status = ""
    return [ts[:period_len], mime, status, digest, int(revisit), 1, length, length, ts, ts]


# merge_cells


def merge_cells(values):
    return expand.merge_cells(values, 3)


def resolve(cells):
    return expand.resolve(cells, CORE)


def test_merge_cells_from_several_records():
    rec1 = [["2010", "text/html", "200", "D1", 0, 2, 300, 200, "20100301000000", "20100601000000"]]
    rec2 = [["2010", "text/html", "200", "D1", 0, 1, 500, 500, "20100101000000", "20100201000000"],
            ["2011", "text/html", "200", "D1", 0, 1, 7, 7, "20110101000000", "20110101000000"]]
    rec3 = [["2010", "text/html", "200", "D1", 0, 3, 30, 10, "20100401000000", "20101231000000"]]
    assert merge_cells([rec1, rec2, rec3]) == {
        ("2010", "text/html", "200", "D1", 0): [6, 830, 500, "20100101000000", "20101231000000"],
        ("2011", "text/html", "200", "D1", 0): [1, 7, 7, "20110101000000", "20110101000000"],
    }


def test_merge_cells_keeps_revisit_flag_apart():
    got = merge_cells([[cell("20100101000000", "text/html", "200", "D1", 5)],
                       [cell("20100101000000", "", "", "D1", 5, revisit=True)]])
    assert len(got) == 2


def test_merge_cells_does_not_mutate_input():
    rec1 = [["2010", "m", "200", "D1", 0, 1, 10, 10, "20100101000000", "20100101000000"]]
    rec2 = [["2010", "m", "200", "D1", 0, 1, 20, 20, "20100201000000", "20100201000000"]]
    merge_cells([rec1, rec2])
    assert rec1 == [["2010", "m", "200", "D1", 0, 1, 10, 10, "20100101000000", "20100101000000"]]


# resolve

def test_resolve_revisit_takes_original_mime_status():
    tuples = resolve(merge_cells([[cell("20100101000000", "text/html", "200", "D1", 100),
                                   cell("20100102000000", "", "", "D1", 10, revisit=True)]]))
    assert tuples == {("201001", "text/html", "200"): [2, 110, "20100101000000", "20100102000000", 0,
                                                       {"D1": 100}]}


def test_resolve_earliest_original_wins_over_mime_order():
    tuples = resolve(merge_cells([[cell("20100301000000", "text/html", "200", "D1", 1),
                                   cell("20100101000000", "text/plain", "404", "D1", 1),
                                   cell("20100501000000", "", "", "D1", 1, revisit=True)]],
                                 ))
    assert tuples[("201005", "text/plain", "404")][0] == 1


def test_resolve_earliest_within_a_merged_cell():
    """The cell's first timestamp counts, not its last."""
    tuples = resolve(merge_cells([
        [["2010", "b/late", "200", "D1", 0, 2, 2, 1, "20100101000000", "20101201000000"],
         ["2010", "a/mid", "200", "D1", 0, 1, 1, 1, "20100601000000", "20100601000000"],
         ["2011", "", "", "D1", 1, 1, 1, 1, "20110101000000", "20110101000000"]]]))
    assert ("2011", "b/late", "200") in tuples


def test_resolve_ties_broken_by_mime_then_status():
    ts = "20100101000000"
    tuples = resolve(merge_cells([[cell(ts, "text/html", "200", "D1", 1, period_len=4),
                                   cell(ts, "application/pdf", "404", "D1", 1, period_len=4),
                                   cell(ts, "application/pdf", "301", "D1", 1, period_len=4),
                                   cell("20110101000000", "", "", "D1", 1, revisit=True, period_len=4)]]))
    assert ("2011", "application/pdf", "301") in tuples
    assert len(tuples) == 4


def test_resolve_same_digest_only():
    tuples = resolve(merge_cells([[cell("20100101000000", "text/html", "200", "D1", 100),
                                   cell("20100102000000", "", "", "D2", 10, revisit=True)]]))
    assert ("201001", "warc/revisit", "unk") in tuples


def test_resolve_orphan_revisit():
    tuples = resolve(merge_cells([[cell("20100102000000", "", "", "D2", 10, revisit=True)]]))
    assert tuples == {("201001", "warc/revisit", "unk"): [1, 10, "20100102000000", "20100102000000", 0,
                                                          {"D2": 10}]}


def test_resolve_never_with_dash_digest():
    tuples = resolve(merge_cells([[cell("20100101000000", "text/html", "200", "-", 100),
                                   cell("20100102000000", "", "", "-", 10, revisit=True)]]))
    assert tuples == {
        ("201001", "text/html", "200"): [1, 100, "20100101000000", "20100101000000", 100, {}],
        ("201001", "warc/revisit", "unk"): [1, 10, "20100102000000", "20100102000000", 10, {}],
    }


def test_resolve_revisit_keeps_its_own_period():
    tuples = resolve(merge_cells([[cell("20100101000000", "text/html", "200", "D1", 100),
                                   cell("20120102000000", "", "", "D1", 10, revisit=True)]]))
    assert set(tuples) == {("201001", "text/html", "200"), ("201201", "text/html", "200")}


def test_resolve_unresolved_mode_cells_are_plain_captures():
    """With --no-resolve-revisits the map side sends revisits as flag 0, mime warc/revisit."""
    tuples = resolve(merge_cells([[cell("20100101000000", "text/html", "200", "D1", 100),
                                   cell("20100102000000", "warc/revisit", "unk", "D1", 10)]]))
    assert set(tuples) == {("201001", "text/html", "200"), ("201001", "warc/revisit", "unk")}


def test_resolve_tuple_digest_max_length_and_dash_bytes():
    tuples = resolve(merge_cells([[cell("20100101000000", "t/x", "200", "D1", 100),
                                   cell("20100102000000", "t/x", "200", "D1", 300),
                                   cell("20100103000000", "t/x", "200", "D2", 5),
                                   cell("20100104000000", "t/x", "200", "-", 40),
                                   cell("20100105000000", "t/x", "200", "-", 2)]]))
    assert tuples == {("201001", "t/x", "200"): [5, 447, "20100101000000", "20100105000000", 42,
                                                 {"D1": 300, "D2": 5}]}


# Expander

POLICY = Policy({
    "host_depth": 3, "path_depth": 1, "exact_urls": True,
    "levels": {"datetime": ["year", "month"], "mime": ["type"], "status": ["class"]},
    "emit": {
        "root": {"datetime": ["any", "month"]},
        "tld": "none",
        "domain": "none",
        "host": {"mime": ["any", "type"]},
        "path": {"datetime": ["any"]},
        "url": {"status": ["any", "class"]},
    },
})

A, B, C = "com,example)/a/x.html", "com,example)/a/y.html", "org,test)/"
A1, A2, A3 = "20100101000000", "20100201000000", "20100215000000"
B1, B2 = "20100105000000", "20100106000000"
C1, C2 = "20100301000000", "20100302000000"

# A's cells come from two map records (a split boundary cut A apart).
URI_RS = {
    A: [[cell(A1, "text/html", "200", "D1", 100)],
        [cell(A2, "text/html", "200", "D1", 120), cell(A3, "warc/revisit", "unk", "D1", 10, revisit=True)]],
    B: [[cell(B1, "text/html", "200", "D1", 100), cell(B2, "image/png", "404", "D2", 50)]],
    C: [[cell(C1, "text/html", "200", "-", 30), cell(C2, "text/html", "200", "D3", 40)]],
}

# Worked by hand from spec section 3 (digests not yet corrected for D1 shared by A and B).
EXPECTED = {
    "* - - -":                       [7, 2, 3, 3, 450, 4, 340, A1, C2],
    "* 201001 - -":                  [3, 1, 2, 2, 250, 3, 250, A1, B2],
    "* 201002 - -":                  [2, 2, 2, 1, 130, 1, 120, A2, A3],
    "* 201003 - -":                  [2, 2, 2, 1, 70, 1, 70, C1, C2],
    "com,example)/* - - -":          [5, 2, 3, 2, 380, 3, 270, A1, A3],
    "com,example)/* - text/html -":  [4, 1, 3, 2, 330, 2, 220, A1, A3],
    "com,example)/* - image/png -":  [1, 1, 1, 1, 50, 1, 50, B2, B2],
    "org,test)/* - - -":             [2, 2, 2, 1, 70, 1, 70, C1, C2],
    "org,test)/* - text/html -":     [2, 2, 2, 1, 70, 1, 70, C1, C2],
    "com,example)/a/* - - -":        [5, 2, 3, 2, 380, 3, 270, A1, A3],
    A + " - - -":                    [3, 3, 3, 1, 230, 1, 120, A1, A3],
    A + " - - 2xx":                  [3, 3, 3, 1, 230, 1, 120, A1, A3],
    B + " - - -":                    [2, 2, 2, 1, 150, 2, 150, B1, B2],
    B + " - - 2xx":                  [1, 1, 1, 1, 100, 1, 100, B1, B1],
    B + " - - 4xx":                  [1, 1, 1, 1, 50, 1, 50, B2, B2],
    C + " - - -":                    [2, 2, 2, 1, 70, 1, 70, C1, C2],
    C + " - - 2xx":                  [2, 2, 2, 1, 70, 1, 70, C1, C2],
}


def run(order, limit=200000, policy=POLICY, uri_rs=URI_RS):
    """(records yielded by add(), records yielded by close())."""
    ex = Expander(policy, limit)
    added = []
    for urlkey in order:
        added.extend(ex.add(urlkey, uri_rs[urlkey]))
    return added, list(ex.close())


def key_totals(records):
    table = {}
    for key, value in records:
        if key.startswith(b"K "):
            k = key[2:].decode("utf-8")
            if k in table:
                stats.merge_into(table[k], value)
            else:
                table[k] = list(value)
    return table


def digest_records(records):
    return sorted((key, value[0], sorted(value[1])) for key, value in records if key.startswith(b"D "))


def test_policy_is_what_the_example_assumes():
    assert POLICY.period_len == 6


def test_key_records_match_hand_computed():
    added, closed = run([A, B, C])
    assert key_totals(added + closed) == EXPECTED


def test_only_key_and_digest_records():
    added, closed = run([A, B, C])
    assert {key[:2] for key, _ in added + closed} == {b"K ", b"D "}
    assert all(key.startswith(b"K ") for key, _ in closed)


def test_one_digest_record_per_uri_r_and_digest():
    added, closed = run([A, B, C])
    assert digest_records(added + closed) == [
        (b"D D1", A, [["201001", "text/html", "200", 100], ["201002", "text/html", "200", 120]]),
        (b"D D1", B, [["201001", "text/html", "200", 100]]),
        (b"D D2", B, [["201001", "image/png", "404", 50]]),
        (b"D D3", C, [["201003", "text/html", "200", 40]]),
    ]


def test_interleaved_hosts_give_same_totals():
    added, closed = run([A, C, B])
    records = added + closed
    assert key_totals(records) == EXPECTED
    assert digest_records(records) == digest_records(sum(run([A, B, C]), []))


def test_interleaved_hosts_with_flushes_give_same_totals():
    added, closed = run([A, C, B], limit=1)
    records = added + closed
    # the host group is closed twice, so its key comes in several partial records
    assert sum(1 for key, _ in records if key == b"K com,example)/* - - -") >= 2
    assert key_totals(records) == EXPECTED


@pytest.mark.parametrize("order", [[C, A, B], [B, A, C], [B, C, A]])
def test_any_order_same_totals(order):
    assert key_totals(sum(run(order), [])) == EXPECTED


def test_tiny_limit_flushes_and_keeps_totals():
    added, closed = run([A, B, C], limit=1)
    flushed = [key for key, _ in added if key.startswith(b"K ")]
    assert flushed.count(b"K com,example)/a/* - - -") == 2      # once after A, once after B
    assert key_totals(added + closed) == EXPECTED


def test_dedup_once_per_uri_r_with_largest_length():
    uri_rs = {A: [[cell("20100101000000", "text/html", "200", "D1", 100)],
                  [cell("20100201000000", "text/html", "200", "D1", 300)]]}
    totals = key_totals(sum(run([A], uri_rs=uri_rs), []))
    assert totals["* - - -"][4:7] == [400, 1, 300]
    assert totals[A + " - - -"][4:7] == [400, 1, 300]
    assert totals["com,example)/* - - -"][4:7] == [400, 1, 300]
    assert totals["* 201002 - -"][4:7] == [300, 1, 300]


def test_dash_digests_count_full_length():
    uri_rs = {A: [[cell("20100101000000", "text/html", "200", "-", 100),
                   cell("20100201000000", "text/html", "200", "-", 300)]]}
    totals = key_totals(sum(run([A], uri_rs=uri_rs), []))
    assert totals["* - - -"][4:7] == [400, 0, 400]


def test_uri_r_count_min_max_over_tuples():
    """One URI-R over several tuples is one URI-R: min = max = its capture count."""
    added, closed = run([B])
    totals = key_totals(added + closed)
    assert totals["* - - -"][:4] == [2, 2, 2, 1]
    assert totals["com,example)/* - - -"][:4] == [2, 2, 2, 1]


def test_non_hierarchical_urlkey_root_and_exact_only():
    uri_rs = {"urn:x": [[cell("20100101000000", "text/plain", "200", "D1", 5)]]}
    totals = key_totals(sum(run(["urn:x"], uri_rs=uri_rs), []))
    assert sorted(totals) == ["* - - -", "* 201001 - -", "urn:x - - -", "urn:x - - 2xx"]


def test_orphan_revisit_keys():
    uri_rs = {A: [[cell(A1, "", "", "D7", 10, revisit=True)]]}
    totals = key_totals(sum(run([A], uri_rs=uri_rs), []))
    assert "com,example)/* - warc/revisit -" in totals
    assert A + " - - unk" in totals
