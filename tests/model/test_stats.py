"""Tests for profiler.model.stats: feature records and how partial records combine (spec section 3)."""

import itertools

import orjson
import pytest

from profiler.model import stats
from profiler.model.stats import NO_FIRST, NO_LAST, NO_MIN

T1, T2, T3 = "20100101000000", "20110615120000", "20121231235959"


def rec(total, mn, mx, urir, nbytes, digests, dedup, first, last):
    return [total, mn, mx, urir, nbytes, digests, dedup, first, last]


# of_uri_r

def test_of_uri_r_one_uri_r_min_equals_max_equals_count():
    assert stats.of_uri_r(5, 1000, 3, 700, T1, T2) == [5, 5, 5, 1, 1000, 3, 700, T1, T2]


# merge_into

def test_merge_into_sums_min_max():
    a = stats.of_uri_r(5, 1000, 3, 700, T2, T2)
    stats.merge_into(a, stats.of_uri_r(2, 10, 1, 10, T1, T3))
    assert a == [7, 2, 5, 2, 1010, 4, 710, T1, T3]


def test_merge_into_keeps_a_when_b_is_inside():
    a = rec(10, 1, 9, 3, 100, 2, 50, T1, T3)
    stats.merge_into(a, rec(3, 3, 3, 1, 5, 1, 5, T2, T2))
    assert a == [13, 1, 9, 4, 105, 3, 55, T1, T3]


def test_merge_into_leaves_b_alone():
    b = stats.of_uri_r(2, 10, 1, 10, T1, T3)
    stats.merge_into(stats.of_uri_r(5, 1000, 3, 700, T2, T2), b)
    assert b == [2, 2, 2, 1, 10, 1, 10, T1, T3]


def test_merge_order_does_not_matter():
    parts = [stats.of_uri_r(5, 1000, 3, 700, T2, T2),
             stats.of_uri_r(2, 10, 1, 10, T1, T1),
             stats.of_uri_r(9, 1, 0, 1, T3, T3),
             stats.correction(1, 10)]
    results = set()
    for order in itertools.permutations(parts):
        total = list(order[0])
        for r in order[1:]:
            stats.merge_into(total, r)
        results.add(tuple(total))
    assert results == {(16, 2, 9, 3, 1011, 3, 701, T1, T3)}


# add

def test_add_first_time_copies_record():
    table = {}
    source = stats.of_uri_r(1, 10, 1, 10, T1, T1)
    stats.add(table, "k", source)
    source[0] = 99
    source[4] = 99
    assert table["k"] == [1, 1, 1, 1, 10, 1, 10, T1, T1]
    assert table["k"] is not source


def test_add_merges_later_records_without_touching_them():
    table = {}
    first, second = stats.of_uri_r(1, 10, 1, 10, T1, T1), stats.of_uri_r(3, 30, 1, 30, T2, T3)
    stats.add(table, "k", first)
    stats.add(table, "k", second)
    assert table["k"] == [4, 1, 3, 2, 40, 2, 40, T1, T3]
    assert first == [1, 1, 1, 1, 10, 1, 10, T1, T1]
    assert second == [3, 3, 3, 1, 30, 1, 30, T2, T3]


def test_add_keeps_keys_apart():
    table = {}
    stats.add(table, "a", stats.of_uri_r(1, 10, 1, 10, T1, T1))
    stats.add(table, "b", stats.of_uri_r(2, 20, 1, 20, T2, T2))
    assert table == {"a": [1, 1, 1, 1, 10, 1, 10, T1, T1], "b": [2, 2, 2, 1, 20, 1, 20, T2, T2]}


# correction records

def test_correction_record():
    assert stats.correction(2, 150) == [0, NO_MIN, 0, 0, 0, -2, -150, NO_FIRST, NO_LAST]


def test_correction_subtracts_digests_and_dedup_only():
    a = rec(10, 2, 5, 3, 1000, 4, 800, T1, T3)
    stats.merge_into(a, stats.correction(2, 150))
    assert a == [10, 2, 5, 3, 1000, 2, 650, T1, T3]


def test_correction_first_then_real_record():
    """A correction can reach a table before the key's own records: its sentinels must lose."""
    table = {}
    stats.add(table, "k", stats.correction(1, 40))
    stats.add(table, "k", stats.of_uri_r(3, 100, 2, 90, T2, T2))
    stats.add(table, "k", stats.of_uri_r(7, 100, 1, 100, T1, T1))
    assert table["k"] == [10, 3, 7, 2, 200, 2, 150, T1, T2]


@pytest.mark.parametrize("ts", ["00000000000000", "99991231235959"])
def test_sentinels_never_win_first_last(ts):
    a = stats.sum_all([stats.correction(1, 1), stats.of_uri_r(1, 1, 1, 1, ts, ts)])
    assert (a[7], a[8]) == (ts, ts)


def test_sentinel_min_larger_than_any_count():
    assert NO_MIN > 10 ** 15
    assert stats.sum_all([stats.of_uri_r(10 ** 15, 0, 0, 0, T1, T1), stats.correction(0, 0)])[1] == 10 ** 15


# sum_all

def test_sum_all():
    records = [stats.of_uri_r(1, 10, 1, 10, T2, T2), stats.of_uri_r(4, 40, 2, 30, T1, T3),
               stats.correction(1, 10)]
    assert stats.sum_all(records) == [5, 1, 4, 2, 50, 2, 30, T1, T3]


def test_sum_all_accepts_generator_and_does_not_mutate_first():
    first = stats.of_uri_r(1, 10, 1, 10, T1, T1)
    total = stats.sum_all(r for r in [first, stats.of_uri_r(1, 10, 1, 10, T2, T2)])
    assert total == [2, 1, 1, 2, 20, 2, 20, T1, T2]
    assert first == [1, 1, 1, 1, 10, 1, 10, T1, T1]


def test_sum_all_single():
    assert stats.sum_all([stats.of_uri_r(1, 10, 1, 10, T1, T1)]) == [1, 1, 1, 1, 10, 1, 10, T1, T1]


# JSON

def test_to_json_exact_bytes():
    assert stats.to_json([98, 2, 9, 46, 123456, 40, 100000, T1, T3]) == (
        b'{"urim":{"total":98,"min":2,"max":9},"urir":46,"bytes":123456,"digests":40,'
        b'"dedup_bytes":100000,"first":"20100101000000","last":"20121231235959"}')


def test_to_json_key_order_and_no_white_space():
    data = stats.to_json(stats.of_uri_r(1, 2, 3, 4, T1, T2))
    assert list(orjson.loads(data)) == ["urim", "urir", "bytes", "digests", "dedup_bytes", "first", "last"]
    assert list(orjson.loads(data)["urim"]) == ["total", "min", "max"]
    assert b" " not in data and b"\n" not in data


def test_from_json_round_trip():
    record = [98, 2, 9, 46, 123456, 40, 100000, T1, T3]
    assert stats.from_json(stats.to_json(record)) == record


def test_from_json_accepts_str():
    assert stats.from_json(stats.to_json([1, 1, 1, 1, 0, 0, 0, T1, T1]).decode())[0] == 1


# merge_counts

def test_merge_counts_nested():
    total = {}
    stats.merge_counts(total, {"captures": 3, "skipped": {"bad_line": 1}})
    stats.merge_counts(total, {"captures": 4, "skipped": {"bad_line": 2, "bad_url": 5}})
    stats.merge_counts(total, {"skipped": {}})
    assert total == {"captures": 7, "skipped": {"bad_line": 3, "bad_url": 5}}


def test_merge_counts_returns_a_and_keeps_b():
    b = {"skipped": {"x": 1}}
    a = {}
    assert stats.merge_counts(a, b) is a
    a["skipped"]["x"] += 10
    assert b == {"skipped": {"x": 1}}
