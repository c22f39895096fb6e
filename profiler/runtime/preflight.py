"""Checks of a run's runner setup before any work starts, so that a user's mistake in the
mrjob configs, the arguments after '--' or the runner's libraries and binaries is one line
(exit status 2) rather than a traceback or a failed job."""

import importlib.util
import os
import re
import shutil
import tempfile

from profiler.errors import UserError
from profiler.io import datafiles
from profiler.io.names import display_name

#: the client libraries each cloud runner imports (mrjob.emr, mrjob.dataproc), with their pip names
RUNNER_LIBRARIES = {
    "emr": [("boto3", "boto3"), ("botocore", "botocore")],
    "dataproc": [("google.auth", "google-auth"),
                 ("google.cloud.dataproc_v1beta2", "google-cloud-dataproc"),
                 ("google.cloud.logging", "google-cloud-logging"),
                 ("google.cloud.storage", "google-cloud-storage"),
                 ("google.api_core", "google-api-core")],
}

#: the most processes a local run may be asked for (--cores, --num-cores): more only adds tasks
#: that wait, and a number far past it kept a local run busy planning them
MAX_CORES = 1024

#: the command each cluster runner starts, and the option that names another one
RUNNER_BINARIES = {"hadoop": ("hadoop", "--hadoop-bin"), "spark": ("spark-submit", "--spark-submit-bin")}


def check_libraries(runner):
    """UserError naming the pip packages a cloud runner lacks."""
    missing = [pip for module, pip in RUNNER_LIBRARIES.get(runner, ()) if not _importable(module)]
    if missing:
        raise UserError("the %s runner needs %s: pip install %s"
                        % (runner, ", ".join(missing), " ".join(missing)))


def _importable(module):
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_conf_paths(runner, conf_paths):
    """UserError for an mrjob config that is missing, unreadable, not YAML/JSON or not shaped
    like one (mrjob reads it only when the runner starts). Without conf_paths, the config mrjob
    finds by itself ($MRJOB_CONF, ~/.mrjob.conf, /etc/mrjob.conf) is checked."""
    import logging
    from mrjob.conf import find_mrjob_conf, load_opts_from_mrjob_confs
    conf_log = logging.getLogger("mrjob.conf")
    level, conf_log.level = conf_log.level, logging.ERROR     # its "No configs specified" notes
    try:
        found = not conf_paths
        if found:
            conf_paths = [p for p in [find_mrjob_conf()] if p]
        for path in conf_paths:
            try:
                datafiles.open_data(path, "mrjob config").close()     # a FIFO, /proc/kmsg: never waited on
            except UserError as e:
                raise UserError("%s%s" % (e, FOUND if found else ""))
        try:
            load_opts_from_mrjob_confs(runner, list(conf_paths))
        except Exception as e:
            raise UserError("bad mrjob config %s%s: %s" % (", ".join(conf_paths), FOUND if found else "",
                                                          _one_line(e)))
    finally:
        conf_log.level = level


#: how a config mrjob found by itself is named
FOUND = " (found by mrjob: $MRJOB_CONF, ~/.mrjob.conf or /etc/mrjob.conf)"


def make_runner(job):
    """job.make_runner(), with the runner's refusal of its options (from the mrjob configs or
    the arguments after '--') as a UserError."""
    try:
        return job.make_runner()
    except ImportError as e:
        raise UserError("the runner cannot start: %s" % _one_line(e))
    except (TypeError, ValueError, AttributeError) as e:
        raise UserError("bad runner options (mrjob config or arguments after '--'): %s" % _one_line(e))


def check_job_args(make_job, args):
    """The job built from its command line; UserError for arguments after '--' that mrjob's
    parser refuses or whose values cannot work."""
    try:
        job = make_job(args)
    except SystemExit:
        raise UserError("bad arguments after '--': %s" % " ".join(args))
    except Exception as e:
        raise UserError("bad arguments after '--': %s" % _one_line(e))
    cores = getattr(job.options, "num_cores", None)
    if cores is not None:
        check_cores(cores, "--num-cores")
    return job


def check_cores(cores, option="--cores"):
    """UserError for a number of processes below 1 or above MAX_CORES."""
    if cores < 1:
        raise UserError("%s must be at least 1, not %d" % (option, cores))
    if cores > MAX_CORES:
        raise UserError("%s must be at most %d, not %d" % (option, MAX_CORES, cores))


#: the masters Spark takes (SparkSubmit and SparkContext): local ones, a standalone cluster's
#: spark://HOST:PORT (several for a standby master), YARN, Kubernetes, Mesos
SPARK_MASTER = re.compile(
    r"\A(?:local|local\[(?:[1-9][0-9]*|\*)(?:\s*,\s*[0-9]+)?\]"
    r"|local-cluster\[\s*[1-9][0-9]*\s*,\s*[1-9][0-9]*\s*,\s*[1-9][0-9]*\s*\]"
    r"|spark://[^\s,/]+:[0-9]+(?:,[^\s,/]+:[0-9]+)*/?|yarn|(?:k8s|mesos)://\S+)\Z")
#: seconds to wait for a standalone master to take a connection
SPARK_CONNECT_TIMEOUT = 10


def check_spark(job):
    """UserError, before any work, when the Spark runner cannot start: without pyspark (and
    without a Spark installation in SPARK_HOME or --spark-submit-bin), with files to ship from a
    path Spark's file lists cannot hold, with a master Spark refuses, or with a standalone master
    (spark://) that nothing listens at."""
    runner = make_runner(job)
    if not _importable("pyspark") and not runner._opts.get("spark_submit_bin") and not os.environ.get("SPARK_HOME"):
        from profiler import extras
        raise extras.missing("the spark runner", "spark", "pyspark")
    _check_shipped_paths()
    from profiler.runtime import sparkwatch
    try:
        sparkwatch.timeout_of(runner._opts.get("jobconf") or {})
    except ValueError as e:
        raise UserError(str(e))
    master = runner._spark_master()
    if not SPARK_MASTER.match(master):
        raise UserError("Spark refuses master %r: give local[N], spark://HOST:PORT, yarn, k8s://URL or mesos://URL "
                        "(-- --spark-master, or spark_master in the mrjob config)" % master)
    if master.startswith("spark://"):
        _reach_standalone_master(master)


#: what Spark's --files and --py-files lists cannot hold in a path: ',' separates their paths, and
#: what follows '#' is the name a file gets in the task's folder
SPARK_LIST_MARKS = {",": "separates its paths", "#": "starts the name a file is given"}


def _check_shipped_paths():
    """UserError when a path the run gives Spark's file lists (the package zip, made in the temp
    folder, and the built extension) has a ',' or a '#': mrjob refused '#' as a bad runner option,
    and with ',' the driver failed with Java's stack traces."""
    from profiler.accel import fast
    paths = [("the temp folder (TMPDIR)", tempfile.gettempdir())]
    paths += [("the built extension", path) for path in fast.shipped_files()]
    for what, path in paths:
        for mark, meaning in SPARK_LIST_MARKS.items():
            if mark in path:
                raise UserError("the spark runner cannot ship files from %s %s: its path has %r, which in Spark's "
                                "--files and --py-files %s (set TMPDIR, or install the package, where no path has "
                                "',' or '#')" % (what, display_name(path), mark, meaning))


def check_hadoop(job):
    """UserError, before any work, when the Hadoop runner cannot find its hadoop command (the
    one mrjob would run: hadoop_bin, else the first found in $HADOOP_PREFIX/bin ... or PATH); the
    same one line as when it fails to start it (missing_binary), without a run's first lines."""
    runner = make_runner(job)
    command = runner.get_hadoop_bin()[0]
    if shutil.which(command) is None:
        raise missing_binary("hadoop", FileNotFoundError(2, "No such file or directory", command))


def _reach_standalone_master(master):
    """UserError unless one of a spark:// master's HOST:PORTs takes a TCP connection."""
    import socket
    problems = []
    for address in master[len("spark://"):].rstrip("/").split(","):
        host, _, port = address.rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=SPARK_CONNECT_TIMEOUT).close()
            return
        except (OSError, ValueError) as e:
            problems.append("%s: %s" % (address, getattr(e, "strerror", None) or e))
    raise UserError("cannot reach the Spark master %s (%s): check that the master runs, and its host and port "
                    "(its web UI shows its spark:// URL)" % (master, "; ".join(problems)))


def missing_binary(runner, error):
    """A UserError when error says the runner's command (hadoop, spark-submit) was not found, or
    that the Spark runner's temp folder is on HDFS (master yarn, or hadoop_bin set) without it."""
    name = RUNNER_BINARIES.get(runner, (None, None))[0]
    if name is None or not isinstance(error, FileNotFoundError):
        return None
    missing = str(getattr(error, "filename", "") or "")
    if runner == "spark" and missing.rsplit("/", 1)[-1] == "hadoop":
        return UserError("the spark runner keeps its temp folder on HDFS and cannot find %s: install Hadoop's "
                         "command, or pass -- --spark-tmp-dir file:///FOLDER (a folder every Spark node shares)"
                         % missing)
    if missing.rsplit("/", 1)[-1] != name and name not in str(error):
        return None
    option = RUNNER_BINARIES[runner][1]
    where = shutil.which(name)
    return UserError("the %s runner cannot find %s%s: install it, put it on PATH or pass -- %s PATH"
                     % (runner, missing or name, "" if where is None else " (found %s)" % where, option))


def _one_line(error):
    text = str(error).strip()
    return " ".join(text.split()) if text else type(error).__name__
