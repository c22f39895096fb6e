"""Every private name of mrjob that profiler/runtime/ uses or overrides, and its signature there.

The local runner, the Spark runner and the job script (profiler/runtime/localrunner.py,
sparkrunner.py, profile_job.py) override mrjob's private methods and call others; another
mrjob than the one pinned (setup.cfg) fails here, in one named test, rather than in a run. A name
added to those modules is added to these tables (test_the_tables_name_every_private_name_used
finds it)."""

import ast
import inspect
import os

import pytest
from mrjob.job import MRJob
from mrjob.local import LocalMRJobRunner
from mrjob.spark.runner import SparkMRJobRunner

from helpers.paths import ROOT

RUNTIME = os.path.join(ROOT, "profiler", "runtime")

#: (mrjob class, method): its parameters (after self) as mrjob has them; O marks an override
LOCAL = {
    "_run_multiple": ("funcs, num_processes=None", "O"),
    "_invoke_task_func": ("task_type, step_num, task_num", "O"),
    "_sort_reducer_input": ("step_num, num_map_tasks", "O"),
    "_run_reducers": ("step_num, num_reducer_tasks", "O"),
    "_bootstrap_mrjob": ("", "O"),
    "_setup_cmd_content": ("setup", "O"),
    "_split_mapper_input": ("input_paths, step_num", "O"),
    "_split_reducer_input": ("step_num", "O"),
    "_env_for_task": ("task_type, step_num, task_num, map_split=None", "O"),
    "_get_local_tmp_dir": ("", ""),
    "_get_step": ("step_num", ""),
    "_input_paths_for_step": ("step_num", ""),
    "_num_reducers": ("step_num", ""),
    "_num_steps": ("", ""),
    "_py_files_setup": ("", ""),
    "_sort_bin": ("", ""),
    "_sorted_reducer_input_path": ("step_num", ""),
    "_substep_args": ("step_num, mrc", ""),
    "_task_input_path": ("task_type, step_num, task_num", ""),
    "_task_output_path": ("task_type, step_num, task_num", ""),
    "_task_python_bin": ("", ""),
}
SPARK = {
    "_check_spark_tmp_dir_opt": ("", "O"),
    "_pick_spark_tmp_dir": ("", "O"),
    "_spark_harness_path": ("", "O"),
    "_spark_upload_args": ("", "O"),
    "_spark_submit_args": ("step_num", "O"),
    "_run_spark_submit": ("spark_submit_args, env, record_callback", "O"),
    "_spark_cmdenv": ("step_num", "O"),
    "_get_local_tmp_dir": ("", ""),
    "_cleanup_mode": ("mode=None", ""),
    "_mr_job_extra_args": ("local=False", ""),
    "_py_files": ("", ""),
    "_spark_executors_have_own_wd": ("", ""),
    "_spark_master": ("", ""),
}
JOB = {"_runner_class": ("", "O"), "_read_input": ("", "")}
#: instance attributes mrjob's runners set, which the subclasses read
ATTRIBUTES = {"local": ("_opts", "_script_path", "_setup", "_fs", "_job_key"),
              "spark": ("_opts", "_fs", "_job_key", "_spark_tmp_dir")}
#: private names imported from mrjob modules, and what they are
IMPORTED = {("mrjob.local", "_TaskFailedException"): "class", ("mrjob.sim", "_symlink_or_copy"): "path, dest"}
#: private attributes of mrjob's filesystem objects
FILESYSTEM = ("_fs_names",)
#: the methods the subclasses define that mrjob has not: their own
OWN = {"_kill_tasks", "_forkable_task_argv", "_fork_server", "_digest_filter_path", "_digest_filter_bytes",
       "_merge_digest_filters", "_merge_plan", "_delete_soon", "_hadoop_available", "_daemon_folder",
       "_remove_spark_tmp_dir"}


def parameters(function):
    return ", ".join(str(p) for p in list(inspect.signature(function).parameters.values())[1:])


@pytest.mark.parametrize("cls, table", [(LocalMRJobRunner, LOCAL), (SparkMRJobRunner, SPARK), (MRJob, JOB)])
def test_each_method_exists_with_its_signature(cls, table):
    for name, (expected, _) in table.items():
        assert callable(getattr(cls, name, None)), "%s.%s is gone" % (cls.__name__, name)
        assert parameters(getattr(cls, name)) == expected, "%s.%s%s" % (cls.__name__, name, inspect.signature(
            getattr(cls, name)))


def test_the_overrides_take_what_mrjob_s_methods_take():
    from profiler.runtime.localrunner import LocalRunner
    from profiler.runtime.profile_job import ProfileJob
    from profiler.runtime.sparkrunner import SparkRunner
    for ours, table in ((LocalRunner, LOCAL), (SparkRunner, SPARK), (ProfileJob, JOB)):
        for name, (expected, kind) in table.items():
            if kind == "O":
                assert name in vars(ours), "%s no longer overrides %s" % (ours.__name__, name)
                assert parameters(vars(ours)[name]) == expected, (ours.__name__, name)


def test_the_attributes_and_imported_names(tmp_path):
    import importlib
    from profiler.runtime.profile_job import ProfileJob
    for alias, names in ATTRIBUTES.items():
        job = ProfileJob(["-r", alias, "--no-conf", "--local-tmp-dir", str(tmp_path)])
        with job.make_runner() as runner:
            for name in names:
                assert hasattr(runner, name), "the %s runner has no %s" % (alias, name)
            if alias == "spark":
                for name in FILESYSTEM:
                    assert isinstance(getattr(SparkMRJobRunner.fs.fget(runner), name), list)
    for (module, name), what in IMPORTED.items():
        found = getattr(importlib.import_module(module), name)
        assert isinstance(found, type) if what == "class" else \
            ", ".join(inspect.signature(found).parameters) == what, (module, name)


def test_the_tables_name_every_private_name_used():
    """Every _name the runtime's modules define in a class, read as an attribute or import from
    mrjob is in a table, or one of their own."""
    known = set(LOCAL) | set(SPARK) | set(JOB) | OWN | set(FILESYSTEM) | {n for _, n in IMPORTED} \
        | {n for names in ATTRIBUTES.values() for n in names}
    found = set()
    for name in ("localrunner.py", "sparkrunner.py", "profile_job.py"):
        tree = ast.parse(open(os.path.join(RUNTIME, name), encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                found.update(n.name for n in node.body if isinstance(n, ast.FunctionDef)
                             and n.name.startswith("_") and not n.name.startswith("__"))
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in (
                    "self", "fs", "runner") and node.attr.startswith("_") and not node.attr.startswith("__"):
                found.add(node.attr)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mrjob"):
                found.update(a.name for a in node.names if a.name.startswith("_"))
    unknown = sorted((found - known) & mrjob_private_names())
    assert not unknown, "private mrjob names used but not in this test's tables: %s" % unknown
    assert LOCAL.keys() | SPARK.keys() | JOB.keys() <= found | OWN


def mrjob_private_names():
    """The private names mrjob's job and runner classes have: their methods and class
    attributes, and the attributes their code sets on self."""
    import re
    out = set()
    for cls in set(LocalMRJobRunner.__mro__ + SparkMRJobRunner.__mro__ + MRJob.__mro__) - {object}:
        out.update(n for n in vars(cls) if n.startswith("_") and not n.startswith("__"))
        try:
            out.update(re.findall(r"self\.(_[a-z][a-z0-9_]*)\s*=", inspect.getsource(cls)))
        except (OSError, TypeError):
            pass
    return out
