"""A user's mistake in the runner setup is one line on stderr and exit status 2, never a
traceback or a failed job: mrjob configs, arguments after '--', runner libraries and binaries,
--cores, --manifest alone."""

import os
import subprocess
import sys

import pytest

from profiler.runtime import preflight

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")
HADOOP_VARS = ("HADOOP_PREFIX", "HADOOP_HOME", "HADOOP_INSTALL", "HADOOP_MAPRED_HOME", "HADOOP_BIN")


def profile(tmp_path, *args, env=None):
    out = tmp_path / "out.cdxj"
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", SAMPLE, "-o", str(out)] + list(args),
                       capture_output=True, text=True, cwd=str(tmp_path),
                       env=env or dict(os.environ, PYTHONPATH=ROOT))
    return r, out


def assert_one_line_error(r, *words):
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    errors = [line for line in r.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, r.stderr
    for word in words:
        assert word in errors[0], r.stderr


@pytest.mark.parametrize("text, words", [
    ("runners: [oops\n", ["bad mrjob config", "broken.conf"]),            # not YAML
    ("- 1\n- 2\n", ["bad mrjob config"]),                                  # not a mapping
    ("runners:\n  inline: 5\n", ["must be a dict"]),                       # wrong shape inside
])
def test_broken_mrjob_conf(tmp_path, text, words):
    (tmp_path / "broken.conf").write_text(text)
    r, out = profile(tmp_path, "-c", "broken.conf")
    assert_one_line_error(r, *words)
    assert not out.exists()


def test_missing_mrjob_conf(tmp_path):
    r, out = profile(tmp_path, "-c", "nosuch.conf")
    assert_one_line_error(r, "cannot read mrjob config nosuch.conf")


def test_an_mrjob_conf_that_would_be_waited_on(tmp_path):
    """A FIFO or the kernel's /proc/kmsg as -c: one line (mrjob's reader waited for ever)."""
    os.mkfifo(str(tmp_path / "fifo.conf"))
    r, out = profile(tmp_path, "-c", "fifo.conf")
    assert_one_line_error(r, "mrjob config fifo.conf is not a regular file")
    for path in ("/proc/kmsg", "/proc/self/status"):
        if os.access(path, os.R_OK):
            r, out = profile(tmp_path, "-c", path)
            assert_one_line_error(r, "mrjob config %s is on the kernel's proc filesystem" % path)
    assert not out.exists()


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("where", ["MRJOB_CONF", "HOME"])
@pytest.mark.parametrize("kind, words", [
    ("yaml", ["bad mrjob config", "found by mrjob"]),
    ("folder", ["mrjob config", "is not a regular file", "found by mrjob"]),
])
def test_a_broken_mrjob_conf_mrjob_finds_by_itself(tmp_path, runner, where, kind, words):
    """The config mrjob finds without -c ($MRJOB_CONF, ~/.mrjob.conf) broken: a traceback from
    the YAML parser, or "Is a directory" with exit 1."""
    conf = tmp_path / "home" / ".mrjob.conf"
    conf.parent.mkdir()
    if kind == "yaml":
        conf.write_text("runners: [oops\n")
    else:
        conf.mkdir()
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("MRJOB_CONF", None)
    env.update({"MRJOB_CONF": str(conf)} if where == "MRJOB_CONF" else {"HOME": str(conf.parent)})
    r, out = profile(tmp_path, "-r", runner, env=env)
    assert_one_line_error(r, *words)
    assert not out.exists()


@pytest.mark.parametrize("extra, words", [
    (["--bogus"], ["unrecognized arguments: --bogus"]),
    (["--num-cores", "x"], ["invalid int value"]),
    (["--num-cores", "-2"], ["--num-cores must be at least 1"]),
])
def test_bad_arguments_after_dashes(tmp_path, extra, words):
    r, out = profile(tmp_path, "-r", "local", "--", *extra)
    assert_one_line_error(r, *words)
    assert not out.exists()


@pytest.mark.parametrize("value", ["-3", "0", "two"])
def test_cores_is_a_usage_error(tmp_path, value):
    r, _ = profile(tmp_path, "-r", "local", "--cores", value)
    assert r.returncode == 2 and "--cores" in r.stderr and "Traceback" not in r.stderr


def test_manifest_alone_is_enough(tmp_path):
    manifest = tmp_path / "inputs.txt"
    manifest.write_text(SAMPLE + "\n")
    out = tmp_path / "m.cdxj"
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", "--manifest", str(manifest),
                        "-o", str(out)], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes().count(b"\n") > 100
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", "-o", str(out)],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert_one_line_error(r, "--manifest")


@pytest.mark.parametrize("runner, package", [("emr", "boto3"), ("dataproc", "google-cloud-storage")])
def test_cloud_runner_without_its_library(tmp_path, monkeypatch, capsys, runner, package):
    """Whether or not the library is installed here, its absence is one line naming it."""
    from profiler.cli import main as cli
    monkeypatch.setattr(preflight, "_importable", lambda module: False)
    code = cli.main(["profile", SAMPLE, "-o", str(tmp_path / "o.cdxj"), "-r", runner])
    err = capsys.readouterr().err
    assert code == 2 and "needs" in err and package in err and "Traceback" not in err


def test_cloud_runner_here(tmp_path):
    """The real command, with this machine's libraries: a one-line error when they are missing."""
    if preflight._importable("boto3"):
        pytest.skip("boto3 is installed here")
    r, _ = profile(tmp_path, "-r", "emr")
    assert_one_line_error(r, "boto3")


def test_missing_hadoop_binary(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in HADOOP_VARS}
    env.update(PYTHONPATH=ROOT, PATH=os.path.dirname(sys.executable) + ":/usr/bin:/bin")
    r, out = profile(tmp_path, "-r", "hadoop", env=env)
    assert_one_line_error(r, "cannot find hadoop", "--hadoop-bin")
    assert not out.exists()


def test_missing_hadoop_binary_is_found_before_the_run(tmp_path):
    """Without hadoop the run began ("profiling 1 file(s) ... with the hadoop runner") and then
    failed: the error is the only line, as for the other runners."""
    env = {k: v for k, v in os.environ.items() if k not in HADOOP_VARS}
    env.update(PYTHONPATH=ROOT, PATH=os.path.dirname(sys.executable) + ":/usr/bin:/bin")
    for extra in ([], ["--", "--hadoop-bin", str(tmp_path / "nosuch" / "hadoop")]):
        r, out = profile(tmp_path, "-r", "hadoop", *extra, env=env)
        assert_one_line_error(r, "the hadoop runner cannot find %s" % (extra[-1] if extra else "hadoop"))
        assert r.stderr.count("\n") == 1 and not out.exists(), r.stderr


def test_missing_binary_recognised_only_for_the_runners_command():
    assert preflight.missing_binary("hadoop", FileNotFoundError(2, "No such file", "hadoop"))
    assert preflight.missing_binary("spark", FileNotFoundError(2, "No such file", "/opt/x/spark-submit"))
    assert preflight.missing_binary("hadoop", FileNotFoundError(2, "No such file", "input.cdx")) is None
    assert preflight.missing_binary("inline", FileNotFoundError(2, "No such file", "hadoop")) is None
    assert preflight.missing_binary("hadoop", RuntimeError("hadoop")) is None
    # the Spark runner's temp folder on HDFS (master yarn) without a hadoop command
    assert "--spark-tmp-dir file:///" in str(preflight.missing_binary("spark", FileNotFoundError(2, "x", "hadoop")))


def _closed_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("master, words", [
    ("nonsense://x", ["Spark refuses master 'nonsense://x'", "spark://HOST:PORT"]),
    ("local[0]", ["Spark refuses master 'local[0]'"]),
    ("spark://127.0.0.1:%d", ["cannot reach the Spark master spark://127.0.0.1:", "check that the master runs"]),
])
def test_a_spark_master_spark_refuses(tmp_path, master, words):
    """No JVM starts: one line naming the master and what to check, exit status 2."""
    if "%d" in master:
        master %= _closed_port()
    r, out = profile(tmp_path, "-r", "spark", "--", "--spark-master", master)
    assert_one_line_error(r, *words)
    assert "Exception in thread" not in r.stderr and len(r.stderr) < 1000 and not out.exists()


@pytest.mark.parametrize("name, mark", [("t#mp", "'#'"), ("t,mp", "','")])
def test_a_temp_folder_spark_cannot_ship_from(tmp_path, name, mark):
    """Spark's --files and --py-files lists split at ',' and rename at '#': one line naming TMPDIR
    before any JVM starts (mrjob's 'py_files cannot contain' as a bad runner option after '--';
    Java's stack traces)."""
    pytest.importorskip("pyspark")
    tmp = tmp_path / name
    tmp.mkdir()
    r, out = profile(tmp_path, "-r", "spark", env=dict(os.environ, PYTHONPATH=ROOT, TMPDIR=str(tmp)))
    assert_one_line_error(r, "the spark runner cannot ship files from the temp folder (TMPDIR)", name, mark)
    assert not out.exists() and os.listdir(tmp) == []


NO_PYSPARK = """import importlib.machinery
import sys


class _NoPyspark(importlib.machinery.PathFinder):
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] == "pyspark":
            return None
        return importlib.machinery.PathFinder.find_spec(name, path, target)


sys.meta_path[:] = [_NoPyspark if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
"""


def test_the_spark_runner_without_pyspark(tmp_path):
    """pyspark hidden from this Python (a sitecustomize that does not find it), spark-submit
    found beside it or not: one line with the install hint, exit status 2."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(NO_PYSPARK)
    env = {k: v for k, v in os.environ.items() if k != "SPARK_HOME"}
    for path in (os.environ["PATH"], os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]):
        env.update(PYTHONPATH=os.pathsep.join([str(hide), ROOT]), PATH=path)
        r, out = profile(tmp_path, "-r", "spark", env=env)
        assert_one_line_error(r, "needs the spark extra (pyspark)", "pip install")
        assert len(r.stderr) < 1000 and not out.exists()


def test_a_failed_command_is_named_not_dumped():
    import subprocess as sp
    from profiler.run.profile import failure_line
    error = RuntimeError("Steps 1-3 of 3 failed: " + str(sp.CalledProcessError(
        256, ["/opt/spark/bin/spark-submit"] + ["--conf", "x=%s" % ("y" * 100)] * 40)))
    line = failure_line(error)
    assert line == "Steps 1-3 of 3 failed: spark-submit exited with status 256 (its log is above)"
    assert len(failure_line(RuntimeError("x" * 5000))) <= 300


def test_a_language_policy_over_cdx_indexes_alone_warns_that_they_give_none(tmp_path):
    """Every capture of a CDX index is 'unk' under the lang policy: said at the start, so that
    `query --lang ara` answering "none are held" is not read as the archive holding no Arabic."""
    r, out = profile(tmp_path, "--policy", "lang")
    assert r.returncode == 0 and out.exists()
    warned = [line for line in r.stderr.splitlines() if "CDX indexes give no language" in line]
    assert len(warned) == 1 and "docs/language.md" in warned[0]
    cc = os.path.join(ROOT, "samples", "cc-sample-5k.cdxj.gz")
    for args in (["--policy", "default"], ["--policy", "lang", cc]):
        r, _ = profile(tmp_path, *args)
        assert r.returncode == 0 and "give no language" not in r.stderr, args
