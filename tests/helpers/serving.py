"""A real `archive-profiler serve` for the routing service's tests: started in a process group of
its own on a port it picks, asked with http.client, stopped with SIGTERM; and small sorted maps
to serve."""

import http.client
import os
import re
import signal
import subprocess
import sys
import time

import orjson

from helpers.paths import ROOT

CLI = [sys.executable, "-m", "profiler.cli"]
HEADER = '!fields {"keys":["surt"],"values":["frequency"]}\n'


def env():
    return dict(os.environ, PYTHONPATH=ROOT)


def write_map(path, hosts, name=None, seed=0):
    """A sorted surt map of hosts h00000..: 'com,hNNNNN)/* U/R' with counts from seed."""
    lines = [HEADER] + (['!id {"uri":"%s"}\n' % name] if name else [])
    lines += ["com,h%05d)/* %d/1\n" % (i, (i + seed) % 7 + 1) for i in range(hosts)]
    with open(path, "w") as f:
        f.write("".join(lines))
    return str(path)


class Server:
    """`archive-profiler serve` in a process group of its own, on a port it picked."""

    def __init__(self, specs, workers=2, args=(), environ=None, preexec_fn=None):
        """environ: the server's whole environment (default: this one with the project on PYTHONPATH);
        preexec_fn: run in the server's process before it starts (resource limits)."""
        self.proc = subprocess.Popen(CLI + ["serve"] + list(specs) + ["--port", "0", "--workers", str(workers)]
                                     + list(args), stderr=subprocess.PIPE, env=environ or env(), cwd=ROOT,
                                     start_new_session=True, preexec_fn=preexec_fn)
        line = self.proc.stderr.readline().decode()
        while line.startswith("archive-profiler: open files limited to"):     # a warning before it
            line = self.proc.stderr.readline().decode()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, line + self.proc.stderr.read().decode() if self.proc.poll() is not None else line
        self.port = int(m.group(1))
        self._wait_ready()

    def _wait_ready(self):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if self.get("/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("the server did not answer /health")

    def get(self, target, conn=None, method="GET", source=None):
        own = conn is None
        conn = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=10,
                                                  source_address=(source, 0) if source else None)
        try:
            conn.request(method, target)
            r = conn.getresponse()
            body = r.read()
            return r.status, (orjson.loads(body) if body else None)
        finally:
            if own:
                conn.close()

    def wait_for(self, predicate, target="/health", seconds=20):
        """The body of target once predicate(body) holds (AssertionError after seconds)."""
        deadline = time.monotonic() + seconds
        while True:
            status, body = self.get(target)
            if status == 200 and predicate(body):
                return body
            if time.monotonic() > deadline:
                raise AssertionError("%s never became what was waited for: %r" % (target, body))
            time.sleep(0.1)

    def workers(self):
        """The pids of the worker processes (in the server's process group, started by spawn)."""
        out = subprocess.run(["pgrep", "-g", str(self.proc.pid), "-f", "spawn_main"], capture_output=True,
                             text=True).stdout
        return [int(p) for p in out.split() if int(p) != self.proc.pid]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        else:
            self.proc.wait()
        self.proc.stderr.close()


def received(sock):
    """Everything a server sends on sock until it closes the connection (each wait bounded by the
    socket's timeout)."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
