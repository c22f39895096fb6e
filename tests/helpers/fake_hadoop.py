"""A fake `hadoop` executable for tests: records its argv, keeps "HDFS" in a local folder and
runs Hadoop Streaming steps with real processes.

Install with ``write_fake_hadoop(folder)``; it reads two environment variables:
FAKE_HADOOP_ROOT (the folder that holds hdfs://, s3:// and gs:// paths: ROOT/hdfs/...,
ROOT/s3/bucket/..., ROOT/gs/bucket/...) and FAKE_HADOOP_LOG (JSON lines, one argv per call).

``hadoop jar STREAMING.jar ...`` is emulated the way Hadoop Streaming runs a step: ``-files``
are copied into a task working folder under their ``#names``, every input file (``.gz``
decompressed, as TextInputFormat does) is one map task, map output lines are split at the
first tab, hash-partitioned into ``mapreduce.job.reduces`` partitions, sorted by key bytes
within each, and each partition is piped through the reducer into ``part-NNNNN`` (gzipped
as ``part-NNNNN.gz`` when ``mapreduce.output.fileoutputformat.compress`` is true). A task
finds its number in ``mapreduce_task_partition``, as Hadoop exports it. Task
counters (``reporter:counter:`` lines) are printed the way ``hadoop jar`` logs them.
"""

import glob
import gzip
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zlib

VERSION = "3.3.6"
SCHEMES = ("hdfs", "s3", "s3a", "gs")


def write_fake_hadoop(folder):
    """Write folder/hadoop (executable) running this module with the current Python."""
    path = os.path.join(folder, "hadoop")
    with open(path, "w") as f:
        f.write("#!%s\nimport sys\nsys.path.insert(0, %r)\nimport fake_hadoop\nsys.exit(fake_hadoop.main(sys.argv[1:]))\n"
                % (sys.executable, os.path.dirname(os.path.abspath(__file__))))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def read_log(path):
    """The recorded argv lists, in call order."""
    with open(path) as f:
        return [json.loads(line) for line in f]


# -- paths ------------------------------------------------------------------------------------

def _root():
    return os.environ["FAKE_HADOOP_ROOT"]


def local(uri):
    """The local path of a URI (or of a bare HDFS path)."""
    if uri.startswith("file://"):
        return uri[7:]
    scheme, sep, rest = uri.partition("://")
    if not sep:
        rest = uri if uri.startswith("/") else "/user/%s/%s" % (os.environ.get("USER", "root"), uri)
        scheme = "hdfs"
    if scheme == "hdfs":
        rest = "/" + rest.split("/", 1)[1] if not rest.startswith("/") else rest   # drop namenode
        return os.path.join(_root(), "hdfs", rest.lstrip("/"))
    return os.path.join(_root(), scheme, rest)


def uri_of(path):
    """The URI of a local path under the root."""
    rel = os.path.relpath(path, _root()).split(os.sep)
    if rel[0] == "hdfs":
        return "hdfs:///" + "/".join(rel[1:])
    return "%s://%s" % (rel[0], "/".join(rel[1:]))


def _matches(uri):
    return sorted(glob.glob(local(uri)))


def _walk(path):
    if os.path.isfile(path):
        return [path]
    found = []
    for d, dirs, names in os.walk(path):
        dirs.sort()
        found.extend(os.path.join(d, n) for n in sorted(names))
    return found


# -- hadoop fs ----------------------------------------------------------------------------------

def _ls_line(path):
    kind = "d" if os.path.isdir(path) else "-"
    size = 0 if os.path.isdir(path) else os.path.getsize(path)
    return "%srw-r--r--   1 user group %10d 2026-11-22 03:00 %s" % (kind, size, uri_of(path))


def _missing(verb, path):
    """hadoop fs's error for a path that matches nothing: written to stderr, its exit status."""
    sys.stderr.write("%s: `%s': No such file or directory\n" % (verb, path))
    return 1


def fs(args):
    cmd, args = args[0], args[1:]
    flags = [a for a in args if a.startswith("-")]
    paths = [a for a in args if not a.startswith("-")]
    if cmd in ("-ls", "-lsr"):
        for p in paths:
            found = _matches(p)
            if not found:
                return _missing("ls", p)
            for path in found:
                if os.path.isdir(path):
                    for d, dirs, names in os.walk(path):
                        dirs.sort()
                        for n in sorted(dirs) + sorted(names):
                            print(_ls_line(os.path.join(d, n)))
                        if "-R" not in flags and cmd != "-lsr":
                            break
                else:
                    print(_ls_line(path))
    elif cmd == "-cat":
        out = sys.stdout.buffer
        for p in paths:
            found = _matches(p)
            if not found:
                return _missing("cat", p)
            for path in found:
                with open(path, "rb") as f:
                    shutil.copyfileobj(f, out)
    elif cmd == "-du":
        for p in paths:
            for path in _matches(p):
                size = sum(os.path.getsize(f) for f in _walk(path))
                print("%d  %d  %s" % (size, size, uri_of(path)))
    elif cmd == "-mkdir":
        for p in paths:
            os.makedirs(local(p), exist_ok=True)
    elif cmd in ("-put", "-copyFromLocal"):
        src, dst = paths[:-1], local(paths[-1])
        if os.path.exists(dst) and not os.path.isdir(dst):
            sys.stderr.write("put: `%s': File exists\n" % paths[-1])
            return 1
        for s in src:
            target = os.path.join(dst, os.path.basename(s)) if os.path.isdir(dst) else dst
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(s, target)
    elif cmd in ("-rm", "-rmr"):
        for p in paths:
            found = _matches(p)
            if not found and "-f" not in flags:
                return _missing("rm", p)
            for path in found:
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    elif cmd == "-touchz":
        for p in paths:
            os.makedirs(os.path.dirname(local(p)), exist_ok=True)
            open(local(p), "ab").close()
    else:
        sys.stderr.write("fake hadoop: unsupported fs command %s\n" % cmd)
        return 255
    return 0


# -- hadoop jar (streaming) -------------------------------------------------------------------

def parse_streaming_args(args):
    """{'D': {k: v}, 'files': [...], 'input': [...], 'output', 'mapper', 'reducer', ...}."""
    opts = {"D": {}, "files": [], "archives": [], "input": [], "cmdenv": {}}
    i = 0
    while i < len(args):
        name, value = args[i], args[i + 1] if i + 1 < len(args) else None
        if name == "-D":
            k, _, v = value.partition("=")
            opts["D"][k] = v
        elif name in ("-files", "-archives"):
            opts[name[1:]].extend(value.split(","))
        elif name == "-input":
            opts["input"].append(value)
        elif name == "-cmdenv":
            k, _, v = value.partition("=")
            opts["cmdenv"][k] = v
        elif name.startswith("-"):
            opts[name[1:]] = value
        else:
            raise SystemExit("fake hadoop: unexpected argument %r" % name)
        i += 2
    return opts


def _run_task(cmd, data, workdir, env, counters):
    proc = subprocess.run(["/bin/sh", "-c", cmd], input=data, cwd=workdir, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for line in proc.stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("reporter:counter:"):
            group, name, amount = line[len("reporter:counter:"):].rsplit(",", 2)
            counters.setdefault(group, {})
            counters[group][name] = counters[group].get(name, 0) + int(amount)
        elif not line.startswith(("reporter:status:", "+ ")):
            sys.stderr.write("task stderr: %s\n" % line)
    if proc.returncode:
        sys.stderr.write(proc.stderr.decode("utf-8", "replace")[-2000:])
        raise SystemExit(proc.returncode)
    return proc.stdout


def _task_env(env, partition):
    """A task's environment: Hadoop Streaming exports the jobconf, with its task's number."""
    return dict(env, mapreduce_task_partition=str(partition))


def _read_input(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


def streaming(args):
    opts = parse_streaming_args(args)
    workdir = tempfile.mkdtemp(prefix="fake-task-")
    try:
        for entry in opts["files"] + opts["archives"]:
            uri, _, name = entry.partition("#")
            target = os.path.join(workdir, name or os.path.basename(uri))
            if entry in opts["archives"]:
                shutil.unpack_archive(local(uri), target)
            else:
                shutil.copyfile(local(uri), target)
                os.chmod(target, 0o755)
        env = dict(os.environ, **opts["cmdenv"])
        env["PATH"] = os.path.dirname(os.path.abspath(sys.argv[0])) + os.pathsep + env.get("PATH", "")
        counters = {}
        inputs = [f for p in opts["input"] for m in _matches(p) for f in _walk(m)
                  if not os.path.basename(f).startswith(("_", "."))]
        mapped = [_run_task(opts["mapper"], _read_input(f), workdir, _task_env(env, i), counters)
                  for i, f in enumerate(inputs)]
        out = local(opts["output"])
        if os.path.exists(out):
            sys.stderr.write("Output directory %s already exists\n" % opts["output"])
            return 1
        os.makedirs(out)
        n = int(opts["D"].get("mapreduce.job.reduces", "1"))
        compress = opts["D"].get("mapreduce.output.fileoutputformat.compress") == "true"
        if "reducer" not in opts or n == 0:
            parts = mapped
        else:
            partitions = [[] for _ in range(n)]
            for data in mapped:
                for line in data.splitlines():
                    key = line.split(b"\t", 1)[0]
                    partitions[zlib.crc32(key) % n].append(line)
            parts = []
            for i, lines in enumerate(partitions):
                lines.sort(key=lambda l: l.split(b"\t", 1)[0])       # by key bytes, stable
                data = b"".join(l + b"\n" for l in lines)
                parts.append(_run_task(opts["reducer"], data, workdir, _task_env(env, i), counters))
        for i, data in enumerate(parts):
            name = os.path.join(out, "part-%05d" % i)
            if compress:
                with gzip.open(name + ".gz", "wb") as f:
                    f.write(data)
            else:
                with open(name, "wb") as f:
                    f.write(data)
        open(os.path.join(out, "_SUCCESS"), "wb").close()
        if counters:
            lines = ["26/11/22 03:00:00 INFO mapreduce.Job: Counters: %d" % sum(map(len, counters.values()))]
            for group in sorted(counters):
                lines.append("\t" + group)
                lines.extend("\t\t%s=%d" % (k, v) for k, v in sorted(counters[group].items()))
            sys.stderr.write("\n".join(lines) + "\n")
        return 0
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv):
    log = os.environ.get("FAKE_HADOOP_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(argv) + "\n")
    if not argv:
        return 1
    if argv[0] == "version":
        print("Hadoop %s\nSource code repository https://example.invalid -r 0\nCompiled by fake" % VERSION)
        return 0
    if argv[0] in ("fs", "dfs"):
        return fs(argv[1:])
    if argv[0] == "jar":
        return streaming(argv[2:])
    sys.stderr.write("fake hadoop: unsupported command %s\n" % argv[0])
    return 255
