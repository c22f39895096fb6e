"""A Spark standalone cluster on this machine, for tests and benchmarks.

A master and workers started from pyspark's own ``bin/spark-class`` on 127.0.0.1, on free ports,
each worker with its own work folder, each daemon in a process group of its own. ``stop()``
ends every process they started (executors and their Python workers too), also after a failed
start; ``with StandaloneCluster(folder) as cluster:`` stops it however the block ends.
"""

import os
import signal
import socket
import subprocess
import time

#: JVM options of the daemons: they do little, so compile little
DAEMON_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


class ClusterError(RuntimeError):
    """The cluster did not start (the message holds the end of the daemon's log)."""


def spark_class():
    """pyspark's bin/spark-class."""
    import importlib.util
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        raise ClusterError("pyspark is not installed")
    return os.path.join(os.path.dirname(spec.origin), "bin", "spark-class")


def free_port(host="127.0.0.1"):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _stats():
    """{pid: (parent pid, start time, state)} of every process (from /proc)."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                out[int(entry)] = (int(fields[1]), int(fields[19]), fields[0])
            except (OSError, IndexError, ValueError):
                continue
    return out


def descendants(pids, stats=None):
    """{pid: start time} of pids and every process under them (a pid with its start time names
    one process: pids are reused)."""
    stats = _stats() if stats is None else stats
    found = {pid for pid in pids if pid in stats}
    grew = True
    while grew:
        grew = False
        for pid, (ppid, _, _) in stats.items():
            if ppid in found and pid not in found:
                found.add(pid)
                grew = True
    return {pid: stats[pid][1] for pid in found}


def children(pids):
    """pids and every process under them."""
    return set(descendants(pids))


def _alive(pid, start, stats):
    found = stats.get(pid)
    return found is not None and found[1] == start and found[2] != "Z"


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


class StandaloneCluster:
    """A master and ``workers`` workers of ``cores`` cores and ``memory`` each, in folder."""

    def __init__(self, folder, workers=2, cores=1, memory="1g", host="127.0.0.1", timeout=120, env=None):
        self.folder = str(folder)
        self.workers, self.cores, self.memory, self.host, self.timeout = workers, cores, memory, host, timeout
        self.env = dict(os.environ if env is None else env, SPARK_LOCAL_IP=host,
                        SPARK_DAEMON_JAVA_OPTS=DAEMON_JAVA_OPTIONS, SPARK_DAEMON_MEMORY="256m")
        self.env.pop("SPARK_HOME", None)            # pyspark's own scripts find theirs
        self.procs = {}                             # name -> Popen
        self.url = None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _daemon(self, name, args):
        os.makedirs(self.folder, exist_ok=True)
        log = open(os.path.join(self.folder, name + ".log"), "wb")
        try:
            self.procs[name] = subprocess.Popen([spark_class()] + args, env=self.env, stdout=log,
                                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                start_new_session=True)
        finally:
            log.close()

    def log(self, name):
        try:
            with open(os.path.join(self.folder, name + ".log"), "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def _wait_for(self, name, text, deadline):
        while time.monotonic() < deadline:
            if text in self.log(name):
                return
            if self.procs[name].poll() is not None:
                break
            time.sleep(0.2)
        raise ClusterError("%s did not start: ...%s" % (name, self.log(name)[-2000:]))

    def start(self):
        deadline = time.monotonic() + self.timeout
        port = free_port(self.host)
        self._daemon("master", ["org.apache.spark.deploy.master.Master", "--host", self.host, "--port", str(port),
                                "--webui-port", str(free_port(self.host))])
        self._wait_for("master", "I have been elected leader", deadline)
        self.url = "spark://%s:%d" % (self.host, port)
        for i in range(self.workers):
            work = os.path.join(self.folder, "worker-%d" % i)
            os.makedirs(work, exist_ok=True)
            self._daemon("worker-%d" % i, [
                "org.apache.spark.deploy.worker.Worker", self.url, "--host", self.host,
                "--port", str(free_port(self.host)), "--webui-port", str(free_port(self.host)),
                "--cores", str(self.cores), "--memory", self.memory, "--work-dir", work])
        for i in range(self.workers):
            self._wait_for("worker-%d" % i, "Successfully registered with master", deadline)
        return self

    def executors(self, worker):
        """pids of the executor JVMs worker (its index) runs now."""
        proc = self.procs.get("worker-%d" % worker)
        if proc is None:
            return []
        return sorted(pid for pid in children([proc.pid]) - {proc.pid}
                      if "CoarseGrainedExecutorBackend" in cmdline(pid))

    def python_workers(self, executor):
        """pids of the Python processes under an executor JVM (pyspark's daemon and its workers)."""
        return sorted(pid for pid in children([executor]) - {executor} if "pyspark" in cmdline(pid))

    def stop(self, grace=10):
        """End every process the cluster started: TERM to each daemon's process group, then KILL to
        what is left of them and of their descendants (pyspark's daemon makes a group of its own).
        The daemons are reaped last, so that their process group ids are not reused meanwhile."""
        procs = list(self.procs.values())
        leaders = {p.pid for p in procs}
        seen = descendants(leaders)
        for pid in leaders:
            try:
                os.killpg(pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            stats = _stats()
            seen.update(descendants(leaders, stats))
            if not any(_alive(pid, start, stats) for pid, start in seen.items()):
                break
            time.sleep(0.1)
        for pid in leaders:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        stats = _stats()
        for pid, start in seen.items():
            if pid not in leaders and _alive(pid, start, stats):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
        self.procs = {}
