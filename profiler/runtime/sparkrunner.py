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
  from an archive (class data sharing, Java 13+: the first run writes it into the user's cache
  folder, ``ARCHIVE_PROFILER_SPARK_CDS=0`` turns it off), the shuffle is not compressed (it
  stays on this machine), and the Python daemon imports the installed pyspark (not the zip it
  would compile at every start), unless the configuration says otherwise; the driver program
  imports the installed pyspark too, and no numpy;
- **cleanup**: the job's folder under ``--spark-tmp-dir`` (named by the job key) is removed
  with the local temp folder; mrjob leaves it.
"""

import hashlib
import logging
import os
import posixpath
import re
import shutil
import subprocess
from tempfile import gettempdir

from profiler.runtime.startup import import_mrjob_bin

import_mrjob_bin()      # without pyspark, which it imports only to find spark-submit

from mrjob.parse import is_uri  # noqa: E402
from mrjob.spark.runner import SparkMRJobRunner  # noqa: E402

log = logging.getLogger(__name__)

#: what the driver program and a local master's Python daemon run first: spark-submit puts
#: pyspark.zip and py4j's zip first on their path, and Python compiles every module it imports from
#: a zip, at every start; with pyspark installed (pip), that copy and its bytecode are found
#: first. Spark also puts its spark-core jar on the path (a zip of thousands of classes), which
#: every task's importlib.invalidate_caches() would read again (profiler.runtime.spark.forget_jars).
#: pyspark imports numpy when it can, which the job never uses.
PRELUDE = """import sys
_late = [p for p in sys.path if p.endswith(("pyspark.zip", "-src.zip", ".jar"))]
sys.path[:] = [p for p in sys.path if p not in _late] + _late
sys.modules.setdefault("numpy", None)
import pyspark
_jars = tuple(p for p in _late if p.endswith(".jar") and not pyspark.__file__.startswith(p))
sys.path[:] = [p for p in sys.path if p not in _jars]
for _key in [k for k in sys.path_importer_cache if _jars and k.startswith(_jars)]:
    del sys.path_importer_cache[_key]
"""
#: the program spark-submit runs (written into the run's local temp folder)
PROGRAM = PRELUDE + "from profiler.runtime import spark\nsys.exit(spark.main())\n"
PROGRAM_NAME = "archive_profiler_spark.py"
#: a local master's Python daemon (spark.python.daemon.module; its folder on the workers' PYTHONPATH)
DAEMON = PRELUDE + "from pyspark import daemon\ndaemon.manager()\n"
DAEMON_MODULE = "archive_profiler_spark_daemon"
#: JVM options of a local master's driver (also its executor) and settings of its shuffle, each
#: unless the configuration sets it
LOCAL_DRIVER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
LOCAL_JOBCONF = {"spark.shuffle.compress": "false", "spark.shuffle.spill.compress": "false"}
#: the environment of the driver and the executors' Python: numpy (imported by pyspark, unused
#: here) starts no thread pools; each unless set
THREADS_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: "0" turns the class archive of a local master's driver off
CDS_ENV = "ARCHIVE_PROFILER_SPARK_CDS"


def is_local_master(master):
    return (master or "local").split("[")[0] == "local"


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
        with open(os.path.join(folder, DAEMON_MODULE + ".py"), "w") as f:
            f.write(DAEMON)
        return folder

    _class_archive = None

    def _run_spark_submit(self, spark_submit_args, env, record_callback):
        found = super()._run_spark_submit(spark_submit_args, env, record_callback)
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


class ClassArchive:
    """The driver JVM's class archive (dynamic class data sharing, Java 13+) in the user's cache
    folder, one per Java binary and Spark jars: ``option()`` maps it when it is there, else
    writes it when the JVM exits, under a name of this process, renamed by ``finish()``."""

    def __init__(self, path):
        self.path = path
        self.writing = None if os.path.isfile(path) else "%s.%d.tmp" % (path, os.getpid())

    @classmethod
    def for_spark(cls, spark_submit, environ=os.environ):
        """The archive for this spark-submit's JVM, or False (turned off, no Java 13+, no jars)."""
        if environ.get(CDS_ENV, "1") == "0":
            return False
        java = os.path.join(environ["JAVA_HOME"], "bin", "java") if environ.get("JAVA_HOME") else shutil.which("java")
        jars = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(spark_submit))), "jars")
        if not java or not os.path.isfile(java) or not os.path.isdir(jars):
            return False
        java = os.path.realpath(java)
        key = hashlib.sha1(repr((java, os.stat(java).st_mtime_ns, os.stat(java).st_size,
                                 sorted((n, os.path.getsize(os.path.join(jars, n))) for n in os.listdir(jars))))
                           .encode()).hexdigest()[:16]
        cache = os.path.join(environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                             "archive-profiler", "spark-classes")
        found = cls(os.path.join(cache, key + ".jsa"))
        if found.writing:
            if java_major(java) < 13:
                return False
            try:
                os.makedirs(cache, exist_ok=True)
            except OSError:
                return False
            if not os.access(cache, os.W_OK):
                return False
            log.info("writing the Spark driver's class archive %s (this run is slower; later ones start sooner)",
                     found.path)
        return found

    def option(self):
        if self.writing:
            return _quoted("-XX:ArchiveClassesAtExit=" + self.writing)
        return _quoted("-XX:SharedArchiveFile=" + self.path)

    def finish(self, ok):
        """The archive written by a run that ended well takes its place; a partial one is removed."""
        if not self.writing or not os.path.exists(self.writing):
            return
        if ok and os.path.getsize(self.writing) > 0:
            os.replace(self.writing, self.path)
        else:
            os.unlink(self.writing)
        self.writing = None


def java_major(java):
    """The major version of a java binary (0 when it cannot tell)."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.SubprocessError):
        return 0
    found = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not found:
        return 0
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def _quoted(option):
    return '"%s"' % option if " " in option else option
