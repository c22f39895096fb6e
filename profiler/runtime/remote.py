"""Inputs and outputs on cluster filesystems (hdfs://, s3://, gs://, ...).

The client lists, sizes and sniffs remote inputs through the mrjob runner's filesystem
(``runner.fs``: HDFS through the ``hadoop`` binary, S3 through boto3, GCS through the
Google libraries). Map tasks read them with ``hadoop fs -cat``: every Hadoop, EMR and
Dataproc node has that binary, with the S3 (EMRFS, s3a) and GCS connectors. Remote files
are read whole (one split per file), compressed or not; like mrjob, the client tells
compressed remote files by their extension (.gz, .bz2).
"""

import contextlib
import os
import posixpath
import shutil
import subprocess

from profiler.errors import UserError
from profiler.formats.inputs import SNIFF_LINES, is_remote
from profiler.formats.registry import format_of

_EXTENSIONS = {".gz": "gzip", ".bz2": "bz2"}


def hadoop_bin():
    """The hadoop command of a task: $HADOOP_BIN, $HADOOP_PREFIX/$HADOOP_HOME's bin, or `hadoop`."""
    if os.environ.get("HADOOP_BIN"):
        return os.environ["HADOOP_BIN"]
    for var in ("HADOOP_PREFIX", "HADOOP_HOME"):
        path = os.path.join(os.environ.get(var, ""), "bin", "hadoop")
        if os.environ.get(var) and os.access(path, os.X_OK):
            return path
    return shutil.which("hadoop") or "hadoop"


class _HadoopCat:
    """A read-only binary stream of ``hadoop fs -cat URI`` (no seeking)."""

    def __init__(self, uri):
        self.uri = uri
        self.proc = subprocess.Popen([hadoop_bin(), "fs", "-cat", uri], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.read = self.proc.stdout.read
        self.readline = self.proc.stdout.readline

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.stdout.close()
        err = self.proc.stderr.read()
        status = self.proc.wait()
        if status and exc[0] is None:
            raise OSError("hadoop fs -cat %s failed (exit %d): %s"
                          % (self.uri, status, err.decode("utf-8", "replace").strip()[:200]))
        return False


def open_input(path, mode="rb"):
    """Opener for map tasks: local paths with open(), URIs through ``hadoop fs -cat``."""
    if is_remote(path):
        return _HadoopCat(path)
    return open(path, mode)


def resolve(fs, uri):
    """The files under a URI (a file, a folder or a glob), sorted; hidden and _ files skipped."""
    try:
        found = sorted(p for p in fs.ls(uri) if not posixpath.basename(p).startswith((".", "_")))
    except IOError as e:
        raise UserError("cannot list %s: %s" % (uri, e))
    if not found:
        raise UserError("input not found: %s" % uri)
    return found


def sniff(fs, uri):
    """Like profiler.formats.inputs.sniff for a remote file: {'path', 'size', 'compression', 'format', ...}."""
    compression = _EXTENSIONS.get(posixpath.splitext(uri)[1])
    info = {"path": uri, "size": fs.du(uri), "compression": compression}
    sample, rest = [], b""
    try:
        with _reader_processes_ended():
            for chunk in fs.cat(uri):  # mrjob decompresses .gz/.bz2 by extension
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                sample.extend(l.rstrip(b"\r") for l in lines if l.strip())
                if len(sample) >= SNIFF_LINES:
                    break
    except (IOError, OSError, EOFError) as e:
        if not sample:
            info.update(format=None, reason="unreadable: %s" % e)
            return info
    if rest.strip() and len(sample) < SNIFF_LINES:
        sample.append(rest)
    info.update(format_of(sample[:SNIFF_LINES]))
    return info


@contextlib.contextmanager
def _reader_processes_ended():
    """The processes a filesystem starts in the block to read a file (``hadoop fs -cat``) ended
    when the block ends: a reader that stops at the head of a file leaves its process blocked on
    a full pipe, which mrjob's generator neither reads nor ends."""
    started = []
    popen_init = subprocess.Popen.__init__

    def recording(self, *args, **kwargs):
        popen_init(self, *args, **kwargs)
        started.append(self)
    subprocess.Popen.__init__ = recording
    try:
        yield
    finally:
        subprocess.Popen.__init__ = popen_init
        for proc in started:
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
            if proc.poll() is None:
                proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def plan_splits(infos):
    """One whole-file split per usable remote file (no byte ranges through ``hadoop fs -cat``)."""
    splits = []
    for info in infos:
        if info["format"]:
            split = {k: info[k] for k in ("path", "compression", "format", "fields") if info.get(k) is not None}
            splits.append(dict(split, start=0, end=None))
    return splits


def publish(fs, local_path, uri):
    """Copy the finished local profile to uri, replacing it.

    An S3/GCS upload replaces the object at once. ``hadoop fs -put`` refuses to overwrite, so
    an existing HDFS file is removed first: a reader may briefly find no file, never half of
    one (HDFS writes ``NAME._COPYING_`` and renames it). Object stores are not rm'd: their
    rm treats the path as a prefix.
    """
    if not uri.startswith(("s3://", "s3a://", "s3n://", "gs://")) and fs.exists(uri):
        fs.rm(uri)
    fs.put(local_path, uri)
