"""The local runner's tasks forked from one process that has imported them already.

Starting a new Python for each task of a local run, which then imports profiler.runtime.task, costs
more than a small task's work. A fork server starts once per run, imports the
task code, and forks a child per task: the child takes the task's stdin, stdout and stderr (passed
as file descriptors over a Unix socket), its working directory and environment (through a pipe,
of any size), runs the same ``profiler.runtime.task.main`` the job script runs for that command line,
and writes its exit code to a pipe of the runner's. Its process name (/proc/PID/comm) says which
task it is.

The server imports from the client's import path (``python -I``: not from the working
directory), so the tasks run the very modules the client has. Used by profiler.runtime.localrunner only
for the job's own task command lines, on this very Python,
where the setup only puts the shipped package on PYTHONPATH (this Python has that package);
anything else runs as mrjob runs it.
"""

import functools
import os
import socket
import subprocess
import sys
import threading

import orjson

#: file descriptors of a request: the task's stdin, stdout, stderr, the pipe for its exit code
#: and the pipe its request (argv, working directory, environment: of any size) comes through
FDS = 5


@functools.cache
def available():
    """True where tasks can be forked (POSIX: fork, Unix sockets of packets that pass file
    descriptors; macOS has no such sockets)."""
    if not (hasattr(os, "fork") and hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX")):
        return False
    try:
        for s in socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET):
            s.close()
    except (OSError, AttributeError):
        return False
    return True


class ForkServer:
    """A server process forking tasks; ``run`` runs one and returns its exit code."""

    def __init__(self, python=sys.executable, preloads=()):
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._lock = threading.Lock()
        # the client's import path, not the working directory's (-I): the server and its tasks
        # import the very modules the client has, whatever folder named profiler is where it runs
        code = "import sys; sys.path[:] = %r; from profiler.runtime.forkserver import serve; serve(%d, %r)" % (
            [p for p in sys.path if p] + [_package_parent()], theirs.fileno(), tuple(preloads))
        self._proc = subprocess.Popen([python, "-I", "-c", code], pass_fds=[theirs.fileno()],
                                      stdin=subprocess.DEVNULL)
        theirs.close()

    def run(self, argv, cwd, env, stdin, stdout, stderr, name="task"):
        """Run task.main(argv) in a forked child with these file objects as its stdin, stdout
        and stderr; its exit code (-1 when it died without one, or the server is gone)."""
        request = orjson.dumps({"argv": list(argv), "cwd": cwd, "env": dict(env), "name": name})
        r, w = os.pipe()
        req_r, req_w = os.pipe()
        status = b""
        try:
            with self._lock:
                socket.send_fds(self._sock, [b"task"], [stdin.fileno(), stdout.fileno(), stderr.fileno(), w, req_r])
            for fd in (w, req_r):
                os.close(fd)
            w = req_r = None
            with open(req_w, "wb") as f:            # the child reads it (a pipe: no size limit)
                req_w = None
                f.write(request)
            while True:
                data = os.read(r, 64)
                if not data:
                    break
                status += data
        except OSError:
            return -1
        finally:
            for fd in (r, w, req_r, req_w):
                if fd is not None:
                    os.close(fd)
        return int(status) if status.strip().lstrip(b"-").isdigit() else -1

    def kill(self):
        """End the server and, with it, the tasks it forked (they die with their parent)."""
        try:
            self._sock.close()
        finally:
            self._proc.kill()
            self._proc.wait()

    def close(self):
        """End the server (tasks running go on); waits for it."""
        try:
            self._sock.close()
        finally:
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


_prestarted = []
_prestart_lock = threading.Lock()


def prestart(preloads=()):
    """Start a server now (its Python and imports run while the caller goes on), for the local
    runner of this process to take (take_prestarted); close_prestarted() ends one left over.
    preloads: 'module:function' calls the server makes first, for all its tasks."""
    with _prestart_lock:
        if available() and not _prestarted:
            _prestarted.append(ForkServer(preloads=preloads))


def take_prestarted():
    """The server prestart() started, now the caller's to close; or None."""
    with _prestart_lock:
        return _prestarted.pop() if _prestarted else None


def close_prestarted():
    """End a prestarted server that no runner took."""
    server = take_prestarted()
    if server is not None:
        server.close()


def _package_parent():
    import profiler
    return os.path.dirname(os.path.dirname(os.path.abspath(profiler.__file__)))


def serve(fd, preloads=()):
    """The server: import the task code, then fork a child per request until the socket closes
    (^C, which reaches the whole process group, ends it quietly: the client reports it). It
    ends without tearing its interpreter down (it writes nothing, and the client waits for it)."""
    try:
        _serve(fd, preloads)
    except KeyboardInterrupt:
        pass
    from profiler.runtime import cpulog
    cpulog.write_process("server")
    os._exit(0)


def _serve(fd, preloads=()):
    import gc
    import importlib
    from profiler.accel import fast  # noqa: F401 (imported for the children)
    from profiler.runtime import task  # noqa: F401 (imported for the children)
    fast.load()
    for name in preloads:                       # optional: a task that finds nothing loaded loads it
        module, _, function = name.partition(":")
        try:
            getattr(importlib.import_module(module), function)()
        except Exception:
            pass
    _load_prctl()
    gc.freeze()                                 # children touch fewer pages for the collector
    sock = socket.socket(fileno=fd)
    try:
        while True:
            try:
                message, fds, _, _ = socket.recv_fds(sock, 64, FDS)
            except OSError:
                return
            _reap(os.WNOHANG)
            if not message:
                return
            if len(fds) != FDS:
                for f in fds:
                    os.close(f)
                continue
            if os.fork() == 0:
                sock.close()
                _child(fds)
            for f in fds:
                os.close(f)
    finally:
        _reap(0)


def _reap(options):
    """Wait for ended children (all of them, with options 0): waited for, their CPU time counts
    in this process's children's time, and so in the client's (what the benchmarks read)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, options)
        except ChildProcessError:
            return
        if pid == 0:
            return


_prctl = []


def _load_prctl():
    """prctl(2), loaded once in the server for its children (None where there is none)."""
    try:
        import ctypes
        _prctl.append(ctypes.CDLL(None, use_errno=True).prctl)
    except (OSError, AttributeError):
        pass


def _die_with_parent():
    """Ask Linux to kill this task when the server that forked it dies (ForkServer.kill)."""
    import signal
    for prctl in _prctl:
        prctl(1, signal.SIGKILL)                # PR_SET_PDEATHSIG


def _child(fds):
    """A forked task: never returns."""
    import traceback
    status = fds[3]
    code = 1
    _die_with_parent()
    try:
        with open(fds[4], "rb") as f:
            request = orjson.loads(f.read())
        for i in range(3):
            os.dup2(fds[i], i)
            os.close(fds[i])
        try:
            with open("/proc/self/comm", "w") as f:
                f.write(request["name"][:15])
        except OSError:
            pass
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["profile_job.py"] + request["argv"]
        stdin, stdout, stderr = (open(i, mode, closefd=False) for i, mode in ((0, "rb"), (1, "wb"), (2, "wb")))
        sys.stdout = sys.__stdout__ = open(1, "w", closefd=False)
        sys.stderr = sys.__stderr__ = open(2, "w", closefd=False)
        from profiler.runtime import task
        try:
            code = 0 if task.main(request["argv"], stdin, stdout, stderr) else 2
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
        for f in (stdout, stderr, sys.stdout, sys.stderr):
            try:
                f.flush()
            except (OSError, ValueError):
                code = code or 1
        from profiler.runtime import cpulog
        cpulog.write_process("task:" + request["name"].rsplit("-", 1)[0])
    finally:
        try:
            os.write(status, b"%d" % code)
        finally:
            os._exit(code)


