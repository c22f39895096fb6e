"""What the client and the job's tasks agree on: the job's own options and the environment.

The client writes these options on the job's command line (profiler.run.profile), mrjob's job
class declares them (profiler/runtime/profile_job.py) and a task's command line is parsed by them
(profiler.runtime.task); every variable the client or a runner sets for the tasks is named here.
"""

from dataclasses import dataclass

#: the compiled kernels are not used (profiler.accel.fast): the tests compare both paths, and a
#: run whose sums pass 63 bits goes again with it set (profiler.job.bigsums)
PURE_ENV = "ARCHIVE_PROFILER_PURE_PYTHON"
#: the folder map tasks report their progress into (profiler.job.progress)
PROGRESS_ENV = "ARCHIVE_PROFILER_PROGRESS"
#: the folder tasks leave marks in for the client (profiler.job.bigsums)
SIGNALS_ENV = "ARCHIVE_PROFILER_SIGNALS"
#: the local runner's digest filters: the file a map task writes its filter to, and the merged
#: filter step 1 reads (profiler.runtime.digestfilter)
FILTER_ENV = "ARCHIVE_PROFILER_DIGEST_FILTER"
SHARED_ENV = "ARCHIVE_PROFILER_SHARED_DIGESTS"
#: the local runner's presorted reduce input: the key range a reduce task takes, and the sorted
#: runs it merges (profiler.runtime.presorted, profiler.runtime.task)
RANGE_ENV = "ARCHIVE_PROFILER_REDUCE_RANGE"
MERGE_ENV = "ARCHIVE_PROFILER_REDUCE_MERGE"
#: what only a run sets for its tasks: a value in the client's own environment is never passed on
#: nor read by a task run in the client (the inline runner). PROGRESS_ENV is passed on: the tasks
#: only write their reports into the folder it names (tests watch them there)
TASK_ENV = (SIGNALS_ENV, FILTER_ENV, SHARED_ENV, RANGE_ENV, MERGE_ENV)
#: modules that add criteria or formats, loaded by every process of a run (profiler.plugins):
#: comma-separated names
PLUGINS_ENV = "ARCHIVE_PROFILER_PLUGINS"
#: a reduce task's number among its step's, as Hadoop (and mrjob's inline and local runners) set
#: it from the jobconf (Hadoop 2 and later, Hadoop 1): salts of hot digests (profiler.job.hotdigests)
TASK_PARTITION_ENVS = ("mapreduce_task_partition", "mapred_task_partition")
#: a file every process of a local run appends its CPU by stage to (profiler.runtime.cpulog: what
#: scripts/bench --breakdown reads); unset, nothing is measured
CPU_LOG_ENV = "ARCHIVE_PROFILER_CPU_LOG"

#: entries per reducer table before it is flushed or spilled (any value gives the same profile)
TABLE_LIMIT = 200000
#: estimated records of a payload digest past which the Spark runner spreads them over every
#: partition of step 2, at least (profiler.runtime.sparksteps; any value gives the same profile)
HOT_DIGEST_RECORDS = 20000
#: records of one digest a step-1 reduce task writes before it salts the rest, with --hot-digests
#: local (profiler.job.hotdigests; any value gives the same profile)
TASK_HOT_DIGEST_RECORDS = 256
#: how hot digests are chosen: none, or by each step-1 reduce task (the streaming runners';
#: Spark's driver chooses them for the whole job whatever this says)
HOT_DIGESTS = ("none", "local")


@dataclass(frozen=True)
class Option:
    """One option of the job's command line."""
    flag: str
    dest: str
    default: object
    help: str
    type: type = str
    negates: bool = False       # a flag without a value that sets dest to False
    choices: tuple = ()         # the values it takes, when not any of its type

    def argparse(self):
        """(args, kwargs) of argparse's add_argument (mrjob's add_passthru_arg)."""
        if self.negates:
            return (self.flag,), dict(dest=self.dest, action="store_false", default=True, help=self.help)
        kwargs = dict(choices=self.choices) if self.choices else {}
        return (self.flag,), dict(dest=self.dest, type=self.type, default=self.default, help=self.help, **kwargs)

    def value(self, text):
        """The option's value of text; ValueError when it is not one."""
        value = self.type(text)
        if self.choices and value not in self.choices:
            raise ValueError("%s takes one of %s, not %r" % (self.flag, ", ".join(self.choices), text))
        return value


OPTIONS = (
    Option("--policy-json", "policy_json", "{}", "the policy, as profiler.model.policy.Policy.to_dict()"),
    Option("--no-resolve-revisits", "resolve_revisits", True, "keep revisits as mime warc/revisit", negates=True),
    Option("--table-limit", "table_limit", TABLE_LIMIT, "entries per reducer table before it is flushed or "
           "spilled (memory bound of steps 1 and 2; any value gives the same profile)", type=int),
    Option("--hot-digest-records", "hot_digest_records", 0, "records of a digest that make it hot, its records "
           "spread over step 2's tasks: on Spark estimated over the input (0: from the input's size), with "
           "--hot-digests local written by one step-1 reduce task (0: %d); any value gives the same profile"
           % TASK_HOT_DIGEST_RECORDS, type=int),
    Option("--hot-digests", "hot_digests", "none", "local: each step-1 reduce task spreads the later records "
           "of the digests it writes often over step 2's tasks (what the client asks of hadoop, emr and "
           "dataproc); none: it does not (Spark chooses hot digests for the whole job); any value gives the "
           "same profile", choices=HOT_DIGESTS),
)
_BY_FLAG = {o.flag: o for o in OPTIONS}


def option_args(**values):
    """The command-line arguments of these option values (by dest); defaults are left out."""
    args = []
    for o in OPTIONS:
        if o.dest not in values or values[o.dest] == o.default:
            continue
        args += [o.flag] if o.negates else [o.flag, str(values[o.dest])]
    return args


def parse_options(argv):
    """{dest: value} of every option, and the arguments that are not the job's options (in their
    order). ValueError on an option without its value or with a value of the wrong type."""
    values = {o.dest: o.default for o in OPTIONS}
    rest = []
    args = iter(argv)
    for arg in args:
        name, eq, value = arg.partition("=")
        option = _BY_FLAG.get(name)
        if option is None:
            rest.append(arg)
        elif option.negates:
            if eq:
                raise ValueError("%s takes no value" % name)
            values[option.dest] = False
        else:
            if not eq:
                value = next(args, None)
                if value is None:
                    raise ValueError("%s needs a value" % name)
            values[option.dest] = option.value(value)
    return values, rest
