"""How a local Spark master's driver JVM starts: its class archive and its command line.

A ``local[N]`` run is one JVM, the driver and its executor, started by spark-submit. Two things
make its start cheaper, both kept in the user's cache folder, one per Java binary and Spark
installation (``SparkInstall.key``):

- **the class archive** (``ClassArchive``): the classes the driver loaded in an earlier run,
  mapped from a file (dynamic class data sharing, Java 13+);
- **the driver's command** (``DriverCommand``): spark-submit is a shell script that runs
  Spark's launcher (``org.apache.spark.launcher.Main``, a JVM of its own) to print the driver's
  java command, then runs that. The launcher's answer for this Java and Spark is asked for once,
  with a marker where the driver's Java options go, and the driver started from it afterwards;
  only when nothing the launcher reads could make it answer otherwise (a configuration folder
  with files, classpath or memory settings, a Spark built from source).
"""

import hashlib
import json
import logging
import os
import re
import shlex
import shutil
import subprocess

log = logging.getLogger(__name__)

#: "0" turns the class archive of a local master's driver off
CDS_ENV = "ARCHIVE_PROFILER_SPARK_CDS"
#: "0" makes a local master's driver start through spark-submit's launcher
DIRECT_ENV = "ARCHIVE_PROFILER_SPARK_DIRECT"
#: the class the launcher's command runs
SUBMIT_CLASS = "org.apache.spark.deploy.SparkSubmit"
#: a Java option the launcher's command is asked for with: where the driver's own go
MARKER = "-Darchive.profiler.driver.options=1"
#: what the launcher reads besides spark-submit's arguments (org.apache.spark.launcher and
#: bin/load-spark-env.sh); the command is cached under their values
LAUNCHER_ENV = ("JAVA_HOME", "SPARK_HOME", "SPARK_CONF_DIR", "SPARK_DIST_CLASSPATH", "SPARK_PREPEND_CLASSES",
                "SPARK_TESTING", "SPARK_SQL_TESTING", "SPARK_SCALA_VERSION", "SPARK_SUBMIT_OPTS", "SPARK_JAVA_OPTS",
                "SPARK_DRIVER_MEMORY", "SPARK_MEM", "SPARK_LAUNCHER_OPTS", "SPARK_CLASSPATH", "HADOOP_CONF_DIR",
                "YARN_CONF_DIR")
#: bytes of a cached command at most (it is a few KB)
MAX_CACHED = 1 << 20
#: spark-submit options that change the driver's java command: with any, the launcher runs
DRIVER_OPTIONS = ("--driver-memory", "--driver-class-path", "--driver-library-path", "--properties-file",
                  "--deploy-mode", "--proxy-user", "--kill", "--status", "--version")
DRIVER_CONFS = ("spark.driver.memory", "spark.driver.extraClassPath", "spark.driver.extraLibraryPath",
                "spark.driver.defaultJavaOptions", "spark.submit.deployMode")


class SparkInstall:
    """A Spark installation as spark-submit's path finds it: its home (with ``jars/``), the java
    binary it runs, and a key of both (changes when either does)."""

    def __init__(self, home, java):
        self.home, self.java = home, java

    @classmethod
    def of(cls, spark_submit, environ=os.environ):
        """The installation of spark_submit (a path, or a command on $PATH), or None when its jars
        or a java binary are not found."""
        found = shutil.which(spark_submit) or spark_submit
        homes = [environ.get("SPARK_HOME"), os.path.dirname(os.path.dirname(os.path.realpath(found))),
                 _pyspark_home(found)]
        home = next((h for h in homes if h and os.path.isdir(os.path.join(h, "jars"))), None)
        java = (os.path.join(environ["JAVA_HOME"], "bin", "java") if environ.get("JAVA_HOME")
                else shutil.which("java", path=environ.get("PATH")))
        if not home or not java or not os.path.isfile(java):
            return None
        return cls(os.path.realpath(home), os.path.realpath(java))

    def key(self, *more):
        jars = os.path.join(self.home, "jars")
        st = os.stat(self.java)
        listing = sorted((n, os.path.getsize(os.path.join(jars, n))) for n in os.listdir(jars))
        return hashlib.sha1(repr((self.java, st.st_mtime_ns, st.st_size, self.home, listing) + more)
                            .encode()).hexdigest()[:16]


def _pyspark_home(spark_submit):
    """pip's pyspark package (its jars/ inside) when spark_submit is the copy pip installed beside
    the Python that runs this (a virtualenv's bin/), as pyspark's find_spark_home.py finds it."""
    import importlib.util
    if os.path.isfile(os.path.join(os.path.dirname(spark_submit), "find_spark_home.py")):
        spec = importlib.util.find_spec("pyspark")
        if spec is not None and spec.origin:
            return os.path.dirname(spec.origin)
    return None


def cache_path(name, environ=os.environ):
    """The user's cache folder for name (XDG_CACHE_HOME, else ~/.cache)."""
    return os.path.join(environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                        "archive-profiler", name)


def cache_folder(name, environ=os.environ):
    """cache_path(name), made when missing; None when it cannot be written."""
    folder = cache_path(name, environ)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


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
        install = SparkInstall.of(spark_submit, environ)
        if install is None:
            return False
        path = os.path.join(cache_path("spark-classes", environ), install.key() + ".jsa")
        if os.path.lexists(path) and not os.path.isfile(path):
            return False                # something else holds its name: never replaced
        found = cls(path)
        if found.writing:
            if java_major(install.java) < 13 or cache_folder("spark-classes", environ) is None:
                return False
            log.info("writing the Spark driver's class archive %s (this run is slower; later ones start sooner)",
                     found.path)
        return found

    def option(self):
        if self.writing:
            return _quoted("-XX:ArchiveClassesAtExit=" + self.writing)
        return _quoted("-XX:SharedArchiveFile=" + self.path)

    def finish(self, ok):
        """The archive written by a run that ended well takes its place, unless something that is
        not a regular file holds it (a folder, a link: left as it is); else it is removed."""
        if not self.writing or not os.path.exists(self.writing):
            return
        if ok and os.path.getsize(self.writing) > 0 and not os.path.lexists(self.path):
            try:
                os.replace(self.writing, self.path)
            except OSError as e:
                log.info("the Spark driver's class archive is not kept (%s)", e)
        if os.path.exists(self.writing):
            os.unlink(self.writing)
        self.writing = None


class DriverCommand:
    """The driver JVM's java command as Spark's launcher gives it for this installation: the
    words before ``SUBMIT_CLASS``, with ``MARKER`` where the driver's Java options go, and the
    environment spark-submit's scripts add."""

    def __init__(self, words, env):
        self.words, self.env = words, env

    @classmethod
    def for_spark(cls, spark_submit, environ=os.environ):
        """The command for this spark-submit, from the cache or asked of the launcher once; None
        when it cannot be used here (turned off, a configuration folder with files, a Spark
        without jars/, a launcher that fails or answers without the marker)."""
        if environ.get(DIRECT_ENV, "1") == "0":
            return None
        install = SparkInstall.of(spark_submit, environ)
        if install is None:
            return None
        conf = environ.get("SPARK_CONF_DIR") or os.path.join(install.home, "conf")
        if os.path.isdir(conf) and os.listdir(conf):
            return None
        folder = cache_folder("spark-launch", environ)
        key = install.key(tuple(environ.get(name) for name in LAUNCHER_ENV))
        path = os.path.join(folder, key + ".json") if folder else None
        found = cls.read(path) if path else None
        if found is None:
            found = ask_launcher(install, environ)
            if found is not None and path:
                found.write(path)
        return found

    @classmethod
    def read(cls, path):
        """The command cached in path, or None when there is none there that can be used (not a
        regular file, too large, not JSON, not words with one marker before the class)."""
        try:
            if not os.path.isfile(path) or os.path.getsize(path) > MAX_CACHED:
                return None
            with open(path, encoding="utf-8") as f:
                found = json.load(f)
            words, env = found["words"], found["env"]
        except (OSError, ValueError, TypeError, KeyError, RecursionError):    # nesting past the parser's
            return None
        if (not isinstance(words, list) or not all(isinstance(w, str) for w in words) or words.count(MARKER) != 1
                or not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                        for k, v in env.items())):
            return None
        return cls(words, env)

    def write(self, path):
        """Cache the command in path, atomically; a path it cannot be written to is left as it is."""
        tmp = "%s.%d.tmp" % (path, os.getpid())
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"words": self.words, "env": self.env}, f)
            if os.path.lexists(path) and not os.path.isfile(path):
                raise OSError("not a regular file: %s" % path)
            os.replace(tmp, path)
        except OSError as e:
            log.info("the Spark driver's command is not cached (%s)", e)
            if os.path.lexists(tmp):
                os.unlink(tmp)

    def command(self, submit_args):
        """The java command of spark-submit's arguments submit_args (after the binary), or None
        when they change what the launcher would answer. The driver's Java options come from
        ``--driver-java-options`` or ``spark.driver.extraJavaOptions``, as the launcher reads them."""
        options, args = None, list(submit_args)
        for i, arg in enumerate(args):
            value = args[i + 1] if i + 1 < len(args) else ""
            if arg in DRIVER_OPTIONS and (arg, value) != ("--deploy-mode", "client"):
                return None
            if arg == "--conf" and value.split("=", 1)[0] in DRIVER_CONFS and value != "spark.submit.deployMode=client":
                return None
            given = (value if arg == "--driver-java-options" else value.split("=", 1)[1]
                     if arg == "--conf" and value.startswith("spark.driver.extraJavaOptions=") else None)
            if given is not None:
                if options is not None:
                    return None
                options = given
        try:
            java_options = shlex.split(options or "")
        except ValueError:
            return None
        at = self.words.index(MARKER)
        return self.words[:at] + java_options + self.words[at + 1:] + [SUBMIT_CLASS] + args


def ask_launcher(install, environ=os.environ):
    """The DriverCommand Spark's launcher prints for a local master, or None: run as spark-class
    runs it (bin/load-spark-env.sh's settings, the launcher's classpath)."""
    env = dict(environ, SPARK_HOME=install.home)
    env.setdefault("SPARK_SCALA_VERSION", "2.13" if os.path.isdir(
        os.path.join(install.home, "assembly", "target", "scala-2.13")) else "2.12")
    env.setdefault("SPARK_CONF_DIR", os.path.join(install.home, "conf"))
    command = [install.java, "-Xmx128m", "-cp", os.path.join(install.home, "jars", "*"),
               "org.apache.spark.launcher.Main", SUBMIT_CLASS, "--master", "local[1]",
               "--driver-java-options", MARKER, "program.py"]
    try:
        done = subprocess.run(command, env=env, capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    # spark-class's reading of it: lines, up to one that is a NUL alone, then NUL-ended words
    _, start, rest = done.stdout.partition(b"\0\n")
    words = (rest if start else done.stdout).split(b"\0")
    if done.returncode or words[-1] != b"":
        return None
    words = [w.decode("utf-8", "surrogateescape") for w in words[:-1]]
    if SUBMIT_CLASS not in words or words.count(MARKER) != 1 or words.index(MARKER) > words.index(SUBMIT_CLASS):
        return None
    added = {name: env[name] for name in ("SPARK_HOME", "SPARK_SCALA_VERSION", "SPARK_CONF_DIR")}
    added.update(SPARK_ENV_LOADED="1", PYTHONHASHSEED="0")      # load-spark-env.sh's, spark-submit's
    return DriverCommand(words[:words.index(SUBMIT_CLASS)], added)


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
