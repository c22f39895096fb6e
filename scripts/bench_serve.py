"""The routing service under load: ten 1M-line maps, startup time and memory, and lookups per
second with latency percentiles from a keep-alive load generator (loopback, fixed seconds), for
uvicorn (ASGI, httptools, uvloop) and gunicorn's threaded workers (WSGI); with --idle N, the same
load while N idle connections are held open by another client (one loopback address, or
--idle-addresses K of them; each connection reopened as soon as the server closes it, as a flood
would), and the service's peak RSS (all its processes, sampled). The load average before and
after is printed: figures taken on a loaded machine say so.

    python scripts/bench_serve.py [--maps 10] [--lines 1000000] [--seconds 10] [--workdir DIR]
                                  [--idle 2000 [--idle-addresses 1]] [--checkout DIR]

The maps are generated once into --workdir (sorted by construction) and reused. --checkout runs
another checkout's server (the same load against the code before a change).
"""

import argparse
import asyncio
import os
import random
import re
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TLDS = ["com", "de", "net", "org", "uk"]


def host_name(i):
    return "h%07d" % i


def write_map(path, index, lines, hosts, seed):
    """A UKVS map of about `lines` lines over a random share of `hosts` hosts, sorted as written."""
    rng = random.Random(seed)
    per_host = max(1, lines // (hosts // 2))
    held = sorted(h for h in range(hosts) if rng.random() < 0.5)
    by_tld = {}
    for h in held:
        by_tld.setdefault(TLDS[h % len(TLDS)], []).append(h)
    with open(path, "w") as f:
        f.write('!context ["http://oduwsdl.github.io/contexts/ukvs"]\n')
        f.write('!fields {"keys":["surt"],"values":["frequency"]}\n')
        f.write('!id {"uri":"https://archive%02d.example.org/"}\n' % index)
        f.write("* %d/%d\n" % (len(held) * per_host * 3, len(held) * per_host))
        for tld in sorted(by_tld):
            f.write("%s,* %d/%d\n" % (tld, len(by_tld[tld]) * per_host * 3, len(by_tld[tld]) * per_host))
            for h in by_tld[tld]:
                host = "%s,%s)" % (tld, host_name(h))
                n = rng.randint(0, 2 * per_host - 2)
                f.write("%s/* %d/%d\n" % (host, 3 * (n + 1), n + 1))
                for p in sorted("p%d" % k for k in range(n)):
                    f.write("%s/%s %d/1\n" % (host, p, rng.randint(1, 5)))


def make_maps(workdir, maps, lines):
    os.makedirs(workdir, exist_ok=True)
    hosts = max(10, lines // 5)
    paths = []
    for i in range(maps):
        path = os.path.join(workdir, "map%02d-%d.ukvs" % (i, lines))
        if not os.path.exists(path):
            t = time.monotonic()
            write_map(path + ".tmp", i, lines, hosts, seed=i)
            os.replace(path + ".tmp", path)
            print("  wrote %s (%.0f s)" % (path, time.monotonic() - t), file=sys.stderr)
        paths.append(path)
    return paths, hosts


def sample_urls(n, hosts, seed=1):
    """Half under hosts some archive holds (exact paths and host pages), half nowhere."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        h = rng.randrange(hosts)
        tld = TLDS[h % len(TLDS)]
        name = ".".join(reversed([tld, host_name(h)]))
        if rng.random() < 0.5:
            out.append("http://%s/p%d" % (name, rng.randrange(20)))
        else:
            out.append("http://nowhere%d.example/x/%d" % (rng.randrange(10 ** 6), rng.randrange(100)))
    return out


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(stack, paths, workers, env, root=ROOT):
    port = free_port()
    if stack == "uvicorn":
        args = [sys.executable, "-m", "profiler.cli", "serve"] + paths + ["--port", str(port),
                                                                         "--workers", str(workers)]
    else:
        import orjson
        env = dict(env, ARCHIVE_PROFILER_SERVE=orjson.dumps({"files": paths}).decode())
        args = [sys.executable, "-m", "gunicorn", "-w", str(workers), "-k", "gthread", "--threads", "8",
                "-b", "127.0.0.1:%d" % port, "--log-level", "warning", "profiler.serve.server:wsgi_from_env()"]
    t = time.monotonic()
    proc = subprocess.Popen(args, env=dict(env, PYTHONPATH=root), cwd=root, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                if b" 200 " in s.recv(1000):
                    break
        except OSError:
            time.sleep(0.01)
        if time.monotonic() - t > 60:
            raise SystemExit("%s did not start" % stack)
    return proc, port, time.monotonic() - t


def memory(proc):
    """MB of the server and its workers: (RSS, of it anonymous memory, of it file pages, PSS).
    The file pages are mapped files: the libraries (and, for a server that maps its maps, their
    pages read: the page cache, shared by the workers; PSS
    counts each shared page once across them)."""
    pids = [proc.pid] + [int(p) for p in subprocess.run(["pgrep", "-g", str(os.getpgid(proc.pid))],
                                                         capture_output=True, text=True).stdout.split()
                         if int(p) != proc.pid]
    total = {"VmRSS:": 0, "RssAnon:": 0, "RssFile:": 0, "Pss:": 0}
    for pid in pids:
        for name in ("status", "smaps_rollup"):
            try:
                with open("/proc/%d/%s" % (pid, name)) as f:
                    for line in f:
                        field = line.split()
                        if field and field[0] in total:
                            total[field[0]] += int(field[1])
            except OSError:
                pass
    return tuple(total[k] / 1024 for k in ("VmRSS:", "RssAnon:", "RssFile:", "Pss:"))


async def _client(port, urls, deadline, latencies, errors):
    """Requests one after another on a keep-alive connection (a new one when the server closes
    it: an error, counted)."""
    writer = None
    i = random.randrange(len(urls))
    while time.monotonic() < deadline:
        target = "/route?url=" + urllib.parse.quote(urls[i % len(urls)], safe="")
        i += 1
        t = time.perf_counter()
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % target.encode())
            head = await reader.readuntil(b"\r\n\r\n")
            m = re.search(rb"(?i)content-length: *(\d+)", head)
            await reader.readexactly(int(m.group(1)))
        except (OSError, asyncio.IncompleteReadError) as e:
            errors.append(repr(e))
            if writer is not None:
                writer.close()
            writer = None
            await asyncio.sleep(0.01)
            continue
        latencies.append(time.perf_counter() - t)
        if not head.startswith(b"HTTP/1.1 200"):
            errors.append(head.split(b"\r\n")[0])
            if b"connection: close" in head.lower():
                writer.close()
                writer = None
    if writer is not None:
        writer.close()


class Flood:
    """Idle connections from other loopback addresses than the load's (127.0.1.x, spread over
    `addresses` of them), each opened again as soon as the server closes it (or answers it 503):
    another client, in a process of its own (its event loop is not the load's)."""

    def __init__(self, port, connections, addresses=1):
        import multiprocessing
        self.port, self.connections = port, connections
        self.per_address = max(1, -(-connections // max(1, addresses)))
        self._counts = multiprocessing.get_context("fork").Array("q", 3)     # open, opened, failed
        self._proc = None

    open = property(lambda self: self._counts[0])
    opened = property(lambda self: self._counts[1])
    failed = property(lambda self: self._counts[2])

    async def _one(self, source):
        counts = self._counts
        while True:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port, local_addr=(source, 0))
            except OSError:
                counts[2] += 1
                await asyncio.sleep(0.5)
                continue
            counts[0] += 1
            counts[1] += 1
            try:
                await reader.read()
            except OSError:
                pass
            finally:
                counts[0] -= 1
                writer.close()
            await asyncio.sleep(0.05)

    def _run(self):
        async def flood():
            await asyncio.gather(*[self._one("127.0.1.%d" % (1 + n // self.per_address))
                                   for n in range(self.connections)])
        asyncio.run(flood())

    def start(self):
        import multiprocessing
        if self.connections:
            self._proc = multiprocessing.get_context("fork").Process(target=self._run, daemon=True)
            self._proc.start()

    def stop(self):
        if self._proc is not None:
            self._proc.kill()
            self._proc.join()


def load(port, urls, seconds, connections, idle=0, sample=None, addresses=1):
    flood = Flood(port, idle, addresses)
    flood.start()
    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass
    latencies, errors = [], []
    held = []

    async def main():
        if idle:
            while flood.opened < idle and flood.failed < idle:
                await asyncio.sleep(0.1)
        deadline = time.monotonic() + seconds

        async def watch():
            while time.monotonic() < deadline:
                held.append(flood.open)
                if sample:
                    sample()
                await asyncio.sleep(0.25)
        await asyncio.gather(watch(), *[_client(port, urls, deadline, latencies, errors)
                                        for _ in range(connections)])
    t, cpu = time.monotonic(), time.process_time()
    try:
        asyncio.run(main())
    finally:
        flood.stop()
    elapsed = time.monotonic() - t
    load.client_cpu = (time.process_time() - cpu) / elapsed
    load.held = (min(held), max(held)) if held else (0, 0)
    load.flood = flood
    latencies.sort()
    pct = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
    return len(latencies) / elapsed, pct(0.5), pct(0.99), len(errors)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--maps", type=int, default=10)
    ap.add_argument("--lines", type=int, default=1000000)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--idle", type=int, default=0, help="idle connections held during the load")
    ap.add_argument("--idle-addresses", type=int, default=1, help="loopback addresses the idle connections "
                                                                  "come from (default 1: one client)")
    ap.add_argument("--workdir", default=os.path.join(ROOT, ".bench-serve"))
    ap.add_argument("--stacks", default="uvicorn,gunicorn")
    ap.add_argument("--checkout", default=ROOT, help="the checkout whose server runs (default: this one)")
    opts = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))
    paths, hosts = make_maps(opts.workdir, opts.maps, opts.lines)
    urls = sample_urls(20000, hosts)
    env = dict(os.environ)
    print("%d maps of %d lines (%.0f MB in all); %d connections%s, %.0f s, /route, %d workers, %s"
          % (opts.maps, opts.lines, sum(os.path.getsize(p) for p in paths) / 1e6, opts.connections,
             " and %d idle ones" % opts.idle if opts.idle else "", opts.seconds, opts.workers, opts.checkout))
    for stack in opts.stacks.split(","):
        if stack == "gunicorn":
            try:
                import gunicorn  # noqa: F401
            except ImportError:
                print("  gunicorn: not installed, skipped")
                continue
        proc, port, started = start(stack, paths, opts.workers, env, opts.checkout)
        peak = [0.0, 0.0]

        def sample():
            rss, anonymous, _, _ = memory(proc)
            peak[:] = max(peak[0], rss), max(peak[1], anonymous)
        try:
            before = memory(proc)
            loadavg = os.getloadavg()
            rate, p50, p99, errors = load(port, urls, opts.seconds, opts.connections, opts.idle, sample,
                                          opts.idle_addresses)
            after = memory(proc)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
        print("  %-8s start %.2f s | %6.0f lookups/s (x%d archives) | p50 %.1f ms p99 %.1f ms | errors %d | "
              "the load generator took %.2f of the %d cores" % (stack, started, rate, opts.maps, p50, p99, errors,
                                                                load.client_cpu, os.cpu_count()))
        if opts.idle:
            print("    idle connections held %d to %d of %d from %d address(es) (opened %d times, %d refused)"
                  % (load.held + (opts.idle, -(-opts.idle // load.flood.per_address), load.flood.opened,
                                  load.flood.failed)))
        print("    load average %.2f before, %.2f after (1 min)" % (loadavg[0], os.getloadavg()[0]))
        for when, m in (("started", before), ("after load", after)):
            print("    %-10s RSS %4.0f MB = anonymous %4.0f + file pages %4.0f; PSS %4.0f MB"
                  % ((when,) + m))
        print("    peak       RSS %4.0f MB, anonymous %4.0f MB (sampled every 0.25 s)" % tuple(peak))


if __name__ == "__main__":
    main()
