"""The client, the mrjob job and the task entry point share one definition of the job's options."""

import pytest

from jobs.profile_job import ProfileJob
from profiler.runtime import task as tasks
from profiler.job.pipeline import job_args
from profiler.model.policy import load as load_policy
from profiler.runtime import contract


@pytest.mark.parametrize("values", [{}, {"resolve_revisits": False}, {"table_limit": 17},
                                    {"policy_json": '{"name":"x"}', "resolve_revisits": False, "table_limit": 3}])
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


@pytest.mark.parametrize("argv", [["--table-limit"], ["--table-limit", "x"], ["--no-resolve-revisits=1"]])
def test_malformed_options_are_refused(argv):
    with pytest.raises(ValueError):
        contract.parse_options(argv)
    assert tasks.parse(argv + ["--step-num=0", "--mapper"]) is None
