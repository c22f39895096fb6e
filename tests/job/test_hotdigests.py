"""profiler.job.hotdigests: step-1 reduce tasks salt the digests they write often; step 2 writes
the shares of salted groups and of groups with a marker; step 3 adds them up. Every line of the
profile equals the brute-force oracle's, whichever digests each task salted."""

import os
import random
import tempfile

import orjson
import pytest
from hypothesis import given, settings, strategies as st

from profiler import jsonnum
from profiler.job import hotdigests
from profiler.run.profile import run_profile
from profiler.model import stats
from profiler.model.policy import load as load_policy
from profiler import contract
from profiler.runtime import task

from helpers.exactness import SHARED, assert_same_profile, generate_lines, pure_python, without_created, write_files
from helpers.oracle import profile as oracle_profile, read_captures, resolve_revisits, stats_tuple
from helpers.random_archives import random_policy
from helpers.streaming import manifest_lines, run_streaming

EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "40"))
HOT = SHARED[0]


def _record(digest, urlkey="com,a)/", length=5):
    return b"D %s\t%s\n" % (digest, orjson.dumps([urlkey, [["2010", "text/html", "200", length]]]))


def _salter(threshold, **kwargs):
    out = []
    return hotdigests.TaskSalter(out.append, 7, threshold, **kwargs), out


def test_a_task_salts_the_records_of_a_digest_after_the_threshold_and_marks_its_group():
    salter, out = _salter(3)
    other = b"K * - - -\t[1,1,1,1,5,1,5,\"2010\",\"2010\"]\n"
    for i in range(5):          # digest records inside buffers and at their start
        salter.write(other + _record(b"HOT", length=i) + _record(b"COLD%d" % i) if i % 2 else
                     _record(b"HOT", length=i) + other + _record(b"COLD%d" % i))
    lines = b"".join(out).splitlines()
    assert lines.count(b'D HOT\t"S"') == 1                     # one marker, whatever comes after
    assert [line[:8] for line in lines if b"HOT" in line and b'"S"' not in line] == \
        [b"D HOT\t[\"", b"D HOT\t[\"", b"S 7 HOT\t", b"S 7 HOT\t", b"S 7 HOT\t"]
    assert len([line for line in lines if line.startswith(b"D COLD")]) == 5 and lines.count(other.rstrip()) == 5
    counts = {}
    salter.count(lambda group, counter, n: counts.setdefault(group, {}).__setitem__(counter, n))
    assert counts == {"hot digests": {"digests salted in a task": 1, "records salted": 3}}


def test_buffers_without_digest_records_pass_as_they_are():
    salter, out = _salter(1)
    data = b"K D x\t[1]\n!meta\t{}\nKD y\t[2]\n"
    salter.write(data)
    salter.write(b"")
    assert out == [data, b""] and salter.counts == {} and not salter.hot


def test_the_count_table_stays_bounded_and_keeps_the_frequent_digests():
    salter, out = _salter(40, counted=100, salted_most=2)
    rng = random.Random(1)
    for i in range(20000):
        digest = rng.choice([b"HOT", b"WARM", b"TEPID"]) if i % 3 == 0 else b"D%d" % i
        salter.write(_record(digest))
        assert len(salter.counts) < 100
    assert len(salter.hot) == 2 and salter.hot < {b"HOT", b"WARM", b"TEPID"}     # salted_most, frequent ones
    assert b"".join(out).count(b'\t"S"\n') == 2


def test_a_large_threshold_counts_one_record_in_sixteen_and_keeps_about_that_many():
    salter, out = _salter(256)
    rng = random.Random(3)
    for i in range(100):                         # buffers of 50 records of HOT among 50 others
        records = [_record(b"HOT", length=j) for j in range(50)] + [_record(b"C%d-%d" % (i, j)) for j in range(50)]
        rng.shuffle(records)
        salter.write(b"".join(records))
    assert salter.every == 16
    lines = b"".join(out).splitlines()
    kept = sum(1 for line in lines if line.startswith(b"D HOT\t["))
    assert 100 <= kept <= 500                    # about the threshold stay in the digest's group
    assert salter.records_salted == 5000 - kept and lines.count(b'D HOT\t"S"') == 1
    assert not any(line.startswith(b"S ") and b" C" in line for line in lines)   # the others are not salted


def test_step3_adds_the_shares_of_a_digest_and_corrects_once():
    record = [3, 1, 2, 3, 30, 3, 30, "2010", "2011"]
    shares = [["X", 1, 10, 10], ["X", 2, 12, 7], ["Y", 1, 4, 4], ["X", 0, 0, 0]]
    got = hotdigests.with_corrections([shares[0], record, *shares[1:]])
    assert stats.sum_all(got) == stats.sum_all([record, stats.correction(2, 12)])     # X: 3 URI-Rs, 22 - 10
    assert hotdigests.with_corrections([record]) == [record]


def test_share_lines_key_each_share_as_its_profile_key():
    found = [("* - - -", 2, 30, 20), ("com,* - - -", 1, 2 ** 70, 2 ** 70)]
    lines = b"".join(hotdigests.share_lines(b'A"\xff', found, batch=1)).splitlines()
    assert lines[0] == b'K * - - -\t["A\\"\xc3\xbf",2,30,20]'
    assert jsonnum.loads(lines[1].partition(b"\t")[2]) == ['A"\xff', 1, 2 ** 70, 2 ** 70]


def test_the_task_option_and_its_environment():
    assert task.salt_after(contract.parse_options([])[0]) == 0
    assert task.salt_after(contract.parse_options(["--hot-digests", "local"])[0]) == contract.TASK_HOT_DIGEST_RECORDS
    assert task.salt_after(contract.parse_options(["--hot-digests=local", "--hot-digest-records", "2"])[0]) == 2
    with pytest.raises(ValueError):
        contract.parse_options(["--hot-digests", "global"])
    assert task.task_number({}) == 0 and task.task_number({"mapred_task_partition": "12"}) == 12
    assert task.task_number({"mapreduce_task_partition": "3", "mapred_task_partition": "12"}) == 3


def _profile_of(lines):
    """{key: oracle tuple} of profile lines."""
    out = {}
    for line in lines:
        key, _, value = line.partition(b"\t")
        if key != b"!meta":
            out[key.decode()] = stats_tuple(jsonnum.loads(value))
    return out


def check_streaming(seed):
    """A random archive (in some, one digest most URI-Rs hold), cut into random splits and files,
    through the steps with tiny thresholds and several reduce tasks: the oracle's profile."""
    rng = random.Random(seed)
    lines = generate_lines(seed, n_urirs=rng.randint(3, 150), hot=rng.choice([0.0, 0.0, 0.5, 0.9]))
    policy = random_policy(rng) if rng.random() < 0.6 else load_policy("default")
    with tempfile.TemporaryDirectory() as folder:
        paths = write_files(folder, lines, n_files=rng.randint(1, 3), seed=seed, shuffle=rng.random() < 0.3)
        manifest = manifest_lines(paths, rng.choice([300, 2000, 1 << 20]))
        got, counters = run_streaming(manifest, policy, rng, reducers=rng.randint(1, 5),
                                      salt_after=rng.choice([1, 2, 3]), table_limit=rng.choice([1, 2, 7, 200000]))
        expected = oracle_profile(resolve_revisits(read_captures(paths)), policy)
    assert_same_profile(_profile_of(got), expected)
    return counters


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(0, 2 ** 32))
def test_salted_in_some_tasks_equals_oracle(seed):
    check_streaming(seed)


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(st.integers(0, 2 ** 32))
def test_salted_in_some_tasks_equals_oracle_pure_python(seed):
    with pure_python():
        check_streaming(seed)


def test_a_digest_most_uri_rs_hold_is_salted_and_shared():
    counters = check_streaming(12)
    assert counters[0]["hot digests"]["records salted"] > 0
    assert counters[1]["hot digests"]["share records written"] > 0


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_the_option_writes_the_same_bytes(tmp_path, runner):
    """--hot-digests local (every digest written twice by a task salted) changes where records
    go, not the profile."""
    paths = write_files(str(tmp_path), generate_lines(5, n_urirs=300, hot=0.7), n_files=2, seed=5)
    a, b = str(tmp_path / "plain.cdxj"), str(tmp_path / "salted.cdxj")
    reducers = ["--jobconf", "mapreduce.job.reduces=3"]
    run_profile(paths, a, policy="full", runner=runner, split_size=3000, cores=2, extra_args=reducers)
    summary = run_profile(paths, b, policy="full", runner=runner, split_size=3000, cores=2,
                          extra_args=reducers + ["--hot-digests", "local", "--hot-digest-records", "2"])
    assert without_created(a) == without_created(b)
    assert summary["counters"][0]["hot digests"]["records salted"] > 0
    assert summary["counters"][1]["hot digests"]["share records written"] > 0


def test_digests_of_any_length_keep_the_table_small():
    salter, out = _salter(2, counted=100)
    huge = [b"%d" % i + b"X" * 100000 for i in range(300)]
    for digest in huge + huge:
        salter.write(_record(digest))
    assert not salter.counts and not salter.hot                 # never counted, never salted
    assert b"".join(out).count(b"\nD ") == 599 and salter.records_salted == 0
    salter.write(_record(b"A" * hotdigests.LONGEST_DIGEST) * 2)  # a digest of the longest kind is
    assert salter.hot == {b"A" * hotdigests.LONGEST_DIGEST}      # counted and salted
