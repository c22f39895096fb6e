"""The client, the mrjob job and the task entry point share one definition of the job's options."""

import pytest

from profiler.runtime.profile_job import ProfileJob
from profiler.runtime import task as tasks
from profiler.run.profile import job_args
from profiler.model.policy import load as load_policy
from profiler import contract


@pytest.mark.parametrize("values", [{}, {"resolve_revisits": False}, {"table_limit": 17},
                                    {"policy_json": '{"name":"x"}', "resolve_revisits": False, "table_limit": 3},
                                    {"hot_digests": "local", "hot_digest_records": 3}])
def test_option_args_parse_back(values):
    args = contract.option_args(**values)
    parsed, rest = contract.parse_options(args + ["--mapper"])
    assert rest == ["--mapper"]
    for option in contract.OPTIONS:
        assert parsed[option.dest] == values.get(option.dest, option.default)


def test_the_job_and_the_task_read_what_the_client_writes():
    policy = load_policy("default")
    args = job_args(["m.json"], policy, "local", resolve_revisits=False)
    job = ProfileJob(args)
    task = tasks.parse(contract.option_args(policy_json=job.options.policy_json, resolve_revisits=False)
                       + ["--step-num=0", "--mapper"])
    assert job.options.resolve_revisits is False and task["resolve_revisits"] is False
    assert job.options.policy_json == task["policy_json"]
    assert job.options.table_limit == task["table_limit"] == contract.TABLE_LIMIT


def test_every_option_is_declared_on_the_job():
    job = ProfileJob(["m.json"])
    for option in contract.OPTIONS:
        assert getattr(job.options, option.dest) == option.default


@pytest.mark.parametrize("runner", ["inline", "local", "spark", "hadoop", "emr", "dataproc"])
def test_the_streaming_runners_tasks_choose_hot_digests_themselves(runner):
    job = ProfileJob(job_args(["m.json"], load_policy("default"), runner))
    assert job.options.hot_digests == ("local" if runner in ("hadoop", "emr", "dataproc") else "none")


@pytest.mark.parametrize("argv", [["--table-limit"], ["--table-limit", "x"], ["--no-resolve-revisits=1"],
                                  ["--hot-digests", "all"]])
def test_malformed_options_are_refused(argv):
    with pytest.raises(ValueError):
        contract.parse_options(argv)
    assert tasks.parse(argv + ["--step-num=0", "--mapper"]) is None
