"""mrjob's Spark runner (alias 'spark') for any master, running the job's own Spark program.

What it changes in mrjob 0.7.4's SparkMRJobRunner:

- **the program**: spark-submit runs profiler.runtime.spark (the job's steps over partitions of
  raw lines, the compiled kernels on the executors) instead of mrjob's harness, with the
  harness's command line;
- **file:// paths**: mrjob hands every URI, file:/// ones too, to its Hadoop filesystem, which
  needs a ``hadoop`` binary; here local paths and file:/// URIs go to the local filesystem, so a
  cluster without HDFS keeps the job's temp folder and output on a shared filesystem
  (``--spark-tmp-dir file:///shared/tmp``);
- **the default temp folder** of a standalone (``spark://``) or Kubernetes master when there is
  no ``hadoop`` to reach HDFS: a local folder, as for ``local[N]`` (it must be one every node
  sees: the same machine, or a shared mount);
- **files for local masters**: ``--files`` (the built extension) reach a ``local[N]`` master's
  Python workers too (mrjob passes none there);
- **start-up**: on a ``local[N]`` master the driver's JVM, which is also the executor, compiles
  with C1 only, collects with the serial collector and maps the classes it loaded last time
  from an archive, and starts without spark-submit's launcher JVM (profiler.runtime.sparklaunch),
  the shuffle is not compressed (it stays on this machine), and the Python daemon imports the
  installed pyspark (not the zip it would compile at every start) and leaves Spark's jar off its
  path, unless the configuration says otherwise; the driver program imports the installed
  pyspark too, and no numpy;
- **cleanup**: the job's folder under ``--spark-tmp-dir`` (named by the job key) is removed
  with the local temp folder; mrjob leaves it. A run interrupted while spark-submit runs ends it
  and its driver program first (``stop_submitted``): mrjob leaves them to the hangup of their
  terminal, after which the driver wrote the job's counter folder again once the run had removed
  its temp folders, and a cluster's application went on meanwhile.
"""

import logging
import os
import posixpath
import shutil
import signal
import time
from tempfile import gettempdir

from profiler import contract
from profiler.errors import RunError
from profiler.runtime import shipping, sparkwatch
from profiler.runtime.sparklaunch import ClassArchive, DriverCommand
from profiler.runtime.sparksteps import is_local_master
from profiler.runtime.startup import import_mrjob_bin

import_mrjob_bin()      # without pyspark, which it imports only to find spark-submit

from mrjob.parse import is_uri  # noqa: E402
from mrjob.spark.runner import SparkMRJobRunner  # noqa: E402

log = logging.getLogger(__name__)

#: what the driver program and a local master's Python daemon run first: spark-submit puts
#: pyspark.zip and py4j's zip first on their path, and Python compiles every module it imports from
#: a zip, at every start; with pyspark installed (pip), that copy and its bytecode are found
#: first (and the archives it did not come from are then taken off the path:
#: profiler.runtime.spark.forget_archives). pyspark imports numpy when it can, which the job
#: never uses.
PRELUDE = """import sys
_late = [p for p in sys.path if p.endswith(("pyspark.zip", "-src.zip", ".jar"))]
sys.path[:] = [p for p in sys.path if p not in _late] + _late
sys.modules.setdefault("numpy", None)
"""
#: the program spark-submit runs (written into the run's local temp folder)
PROGRAM = PRELUDE + "from profiler.runtime import spark\nspark.forget_archives()\nsys.exit(spark.main())\n"
PROGRAM_NAME = "archive_profiler_spark.py"
#: a local master's Python daemon (spark.python.daemon.module; its folder on the workers' PYTHONPATH):
#: it imports the shipped package (the py-files, on this machine) and what the tasks read first,
#: so that the workers it forks start with them
DAEMON = PRELUDE + """sys.path[:0] = %(py_files)r
try:
    from profiler.runtime import spark
    spark.preload(%(policy_json)r)
except Exception:       # the workers import what they need themselves
    pass
from pyspark import daemon
daemon.manager()
"""
DAEMON_MODULE = "archive_profiler_spark_daemon"
#: JVM options of a local master's driver (also its executor), and settings of one short
#: application on one machine (its shuffle and broadcasts neither compressed nor checksummed, no
#: cleaner of unused shuffles, no metrics sources), each unless the configuration sets it
LOCAL_DRIVER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
LOCAL_JOBCONF = {"spark.shuffle.compress": "false", "spark.shuffle.spill.compress": "false",
                 "spark.shuffle.checksum.enabled": "false", "spark.broadcast.compress": "false",
                 "spark.cleaner.referenceTracking": "false", "spark.metrics.staticSources.enabled": "false"}
#: the environment of the driver and the executors' Python: numpy (imported by pyspark, unused
#: here) starts no thread pools; each unless set
THREADS_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: seconds an interrupted run waits for spark-submit and its driver program to end (then kills them)
SUBMIT_STOP_SECONDS = 30


def child_processes():
    """The pids of this process's children (from /proc; empty where there is none to read)."""
    found = set()
    try:
        threads = os.listdir("/proc/self/task")
    except OSError:
        return found
    for thread in threads:
        try:
            with open("/proc/self/task/%s/children" % thread) as f:
                found.update(int(pid) for pid in f.read().split())
        except (OSError, ValueError):
            continue
    return found


def stop_submitted(pids, timeout=SUBMIT_STOP_SECONDS):
    """End each of pids that leads a process group of its own (spark-submit, which mrjob starts
    on a terminal of its own, and its driver program) and wait until its group is empty: SIGTERM
    (the JVM stops its SparkContext, so a cluster releases the application), SIGKILL after
    timeout seconds."""
    groups = []
    for pid in pids:
        try:
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGTERM)
                groups.append(pid)
        except OSError:
            continue
    deadline = time.monotonic() + timeout
    for pid in groups:
        while True:
            try:
                os.waitpid(pid, os.WNOHANG)         # our child: reaped, or its group never empties
            except ChildProcessError:
                pass
            try:
                os.killpg(pid, 0 if time.monotonic() < deadline else signal.SIGKILL)
            except OSError:
                break
            time.sleep(0.05)


class SparkRunner(SparkMRJobRunner):
    """The Spark runner; everything not listed in the module's description is mrjob's."""

    alias = "spark"

    @property
    def fs(self):
        if not self._fs:
            fs = super().fs
            # file:/// URIs and paths to the local filesystem: mrjob's Hadoop one takes every URI
            fs._fs_names.remove("local")
            fs._fs_names.insert(0, "local")
        return self._fs

    def _check_spark_tmp_dir_opt(self):
        tmp = self._opts["spark_tmp_dir"]
        if tmp.startswith("file://") and not is_local_master(self._spark_master()):
            log.info("the job's temp folder %s must be on a filesystem every Spark node shares", tmp)
        else:
            super()._check_spark_tmp_dir_opt()

    def _pick_spark_tmp_dir(self):
        master = self._spark_master()
        if (not self._opts["spark_tmp_dir"] and not is_local_master(master) and master != "yarn"
                and not self._hadoop_available()):
            # no HDFS to reach: a local folder, as for local masters (leftovers removes it)
            return os.path.join(gettempdir(), self._job_key + "-spark")
        return super()._pick_spark_tmp_dir()

    def _hadoop_available(self):
        if self._opts.get("hadoop_bin"):
            return True
        for var in ("HADOOP_PREFIX", "HADOOP_HOME", "HADOOP_INSTALL"):
            if os.environ.get(var) and os.access(os.path.join(os.environ[var], "bin", "hadoop"), os.X_OK):
                return True
        return shutil.which("hadoop") is not None

    def _spark_harness_path(self):
        path = os.path.join(self._get_local_tmp_dir(), PROGRAM_NAME)
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(PROGRAM)
        return path

    def _spark_upload_args(self):
        if self._spark_executors_have_own_wd():
            return super()._spark_upload_args()
        files = [path.split("#", 1)[0] for path in self._opts["upload_files"]]
        return ["--files", ",".join(files)] if files else []

    def _spark_submit_args(self, step_num):
        args = super()._spark_submit_args(step_num)
        if not is_local_master(self._spark_master()):
            return args
        extra = []
        confs = {a.split("=", 1)[0] for a in args if "=" in a}
        if "spark.driver.extraJavaOptions" not in confs and "--driver-java-options" not in args:
            options = LOCAL_DRIVER_JAVA_OPTIONS
            if self._class_archive is None:
                self._class_archive = ClassArchive.for_spark(self.get_spark_submit_bin()[0])
            if self._class_archive:
                options += " " + self._class_archive.option()
            extra += ["--driver-java-options", options]
        for key, value in sorted(LOCAL_JOBCONF.items()):
            if key not in confs:
                extra += ["--conf", "%s=%s" % (key, value)]
        if not {"spark.python.daemon.module", "spark.executorEnv.PYTHONPATH"} & confs:
            extra += ["--conf", "spark.python.daemon.module=" + DAEMON_MODULE,
                      "--conf", "spark.executorEnv.PYTHONPATH=" + self._daemon_folder()]
        return extra + args

    def _daemon_folder(self):
        folder = os.path.join(self._get_local_tmp_dir(), "daemon")
        os.makedirs(folder, exist_ok=True)
        py_files = [p for p in self._py_files() if os.path.basename(p) == shipping.ZIP_NAME and os.path.isfile(p)]
        policy_json = contract.parse_options(self._mr_job_extra_args(local=True))[0]["policy_json"]
        with open(os.path.join(folder, DAEMON_MODULE + ".py"), "w") as f:
            f.write(DAEMON % dict(py_files=py_files, policy_json=policy_json))
        return folder

    _class_archive = None

    def _run_spark_submit(self, spark_submit_args, env, record_callback):
        if is_local_master(self._spark_master()):
            launch = DriverCommand.for_spark(spark_submit_args[0])
            words = launch.command(spark_submit_args[1:]) if launch else None
            if words:
                log.debug("the driver without spark-submit's launcher: %s", words[0])
                spark_submit_args, env = words, dict(env, **launch.env)
        before = child_processes()
        gave_up = []

        def watched(record):
            gave_up.extend(line[len(sparkwatch.GAVE_UP):] for line in record.get("message", "").splitlines()
                           if line.startswith(sparkwatch.GAVE_UP))
            record_callback(record)
        try:
            found = super()._run_spark_submit(spark_submit_args, env, watched)
        except BaseException:
            stop_submitted(child_processes() - before)
            raise
        if found[0] != 0 and gave_up:
            raise RunError("the job gave up: " + gave_up[-1])
        if self._class_archive:
            self._class_archive.finish(found[0] == 0)
        return found

    def _spark_cmdenv(self, step_num):
        env = super()._spark_cmdenv(step_num)
        for name, value in THREADS_ENV.items():
            if name not in env and name not in os.environ:
                env[name] = value
        return env

    def cleanup(self, mode=None):
        """mrjob's cleanup, and the job's folder under --spark-tmp-dir when the local temp folder
        goes (mrjob keeps it)."""
        chosen = self._cleanup_mode(mode)
        if any(c in chosen for c in ("ALL", "TMP", "LOCAL_TMP", "HADOOP_TMP")):
            self._remove_spark_tmp_dir()
        super().cleanup(mode)

    def _remove_spark_tmp_dir(self):
        """Remove <spark_tmp_dir>/<job key> (file:/// or a local path; others are HDFS's, left to
        mrjob); only a folder named by this run's job key."""
        path = self._spark_tmp_dir
        if not path or not self._job_key or posixpath.basename(path.rstrip("/")) != self._job_key:
            return
        if is_uri(path):
            if not path.startswith("file:///"):
                return
            path = path[len("file://"):]
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
