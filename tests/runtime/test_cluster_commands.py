"""Cluster runners: the command lines, jobconf and cluster definitions mrjob 0.7.4 generates.

Hadoop runs end to end through a fake `hadoop` executable (tests/helpers/fake_hadoop.py) that records
every call, keeps hdfs://, s3:// and gs:// in a local folder and runs each streaming step
with real task processes. EMR and Dataproc cannot run here: their step and cluster
definitions are built offline with the runners' own methods and pinned.
"""

import bz2
import gzip
import os
import types

import pytest
from mrjob.conf import load_opts_from_mrjob_conf

import profiler
from profiler.accel import fast
from profiler.run.profile import job_args, run_profile, write_manifest
from profiler.model.policy import load as load_policy
from profiler.runtime.shipping import package_zip
from profiler.testing import synthetic

from helpers import fake_hadoop
from helpers.pythons import python_without_profiler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONF = os.path.join(ROOT, "conf")
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")

#: the settings every cluster conf must give the streaming steps
SHARED_JOBCONF = {
    "mapreduce.map.output.compress": "true",
    "mapreduce.map.output.compress.codec": "org.apache.hadoop.io.compress.DefaultCodec",
    "mapreduce.output.fileoutputformat.compress": "true",
    "mapreduce.output.fileoutputformat.compress.codec": "org.apache.hadoop.io.compress.GzipCodec",
}
SORT_OVERRIDES = ("comparator", "stream.num.map.output.key.fields", "keypartitioner", "totalorder")


def conf_opts(runner, name):
    [(path, opts)] = load_opts_from_mrjob_conf(runner, os.path.join(CONF, name))
    return opts


def streaming_opts(argv):
    """Parsed `hadoop jar` / EMR / Dataproc streaming arguments."""
    return fake_hadoop.parse_streaming_args(argv)


def assert_sort_safe(opts):
    """No partitioner, input format or key comparator that would change Text byte order."""
    assert "partitioner" not in opts          # Hadoop's HashPartitioner: any key in one part only
    assert "inputformat" not in opts          # TextInputFormat: one manifest line per file
    assert not [k for k in opts["D"] if any(s in k.lower() for s in SORT_OVERRIDES)]


@pytest.mark.parametrize("runner,name", [("hadoop", "mrjob-hadoop.conf"), ("emr", "mrjob-emr.conf"),
                                         ("dataproc", "mrjob-dataproc.conf")])
def test_cluster_confs_share_the_streaming_settings(runner, name):
    jobconf = conf_opts(runner, name)["jobconf"]
    assert {k: jobconf[k] for k in SHARED_JOBCONF} == SHARED_JOBCONF
    assert int(jobconf["mapreduce.job.reduces"]) >= 16
    assert not [k for k in jobconf if any(s in k.lower() for s in SORT_OVERRIDES)]


def test_spark_and_local_confs_load():
    spark = conf_opts("spark", "mrjob-spark.conf")
    assert spark["spark_master"] == "local[2]" and spark["jobconf"]["spark.ui.enabled"] == "false"
    assert conf_opts("local", "mrjob-local.conf")["cleanup"] == "ALL"


# -- Hadoop, run through the fake hadoop ---------------------------------------------------------

@pytest.fixture
def fake_cluster(tmp_path, monkeypatch):
    bin_dir, root = tmp_path / "bin", tmp_path / "cluster"
    bin_dir.mkdir()
    root.mkdir()
    hadoop = fake_hadoop.write_fake_hadoop(str(bin_dir))
    monkeypatch.setenv("FAKE_HADOOP_ROOT", str(root))
    monkeypatch.setenv("FAKE_HADOOP_LOG", str(tmp_path / "hadoop-calls.jsonl"))
    for var in ("LOGNAME", "USER", "LNAME", "USERNAME"):     # getpass.getuser(): mrjob's /user/<name>
        monkeypatch.setenv(var, "tester")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return types.SimpleNamespace(hadoop=hadoop, root=str(root), log=str(tmp_path / "hadoop-calls.jsonl"))


def _put(cluster, uri, data):
    path = fake_hadoop.local(uri)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def test_hadoop_streaming_steps_and_remote_inputs(fake_cluster, tmp_path):
    """Inputs on hdfs://, s3:// and gs:// (gzip, plain, bz2) through a manifest, output on HDFS:
    the profile equals the local runner's, and the recorded commands carry the conf's settings."""
    with gzip.open(SAMPLE, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    legend, body = lines[0], lines[1:]
    thirds = [body[i::3] for i in range(3)]           # every file holds parts of many URI-Rs
    local_files = []
    for i, (uri, pack) in enumerate([("hdfs:///data/cdx/a.cdx.gz", gzip.compress),
                                     ("s3://archive-bucket/cdx/b.cdx", bytes),
                                     ("gs://archive-bucket/cdx/c.cdx.bz2", bz2.compress)]):
        data = legend + b"".join(thirds[i])
        _put(fake_cluster, uri, pack(data))
        local_files.append(tmp_path / ("local-%d.cdx" % i))
        local_files[-1].write_bytes(data)
    manifest = tmp_path / "inputs.txt"
    manifest.write_text("# remote inputs\nhdfs:///data/cdx/a.cdx.gz\ns3://archive-bucket/cdx/b.cdx\n"
                        "gs://archive-bucket/cdx/*.bz2\n")

    out = "hdfs:///profiles/sample.cdxj"
    summary = run_profile([str(manifest)], out, runner="hadoop", conf_paths=[os.path.join(CONF, "mrjob-hadoop.conf")],
                          created="2026-01-01T00:00:00Z",
                          extra_args=["--hadoop-bin", fake_cluster.hadoop, "--hadoop-streaming-jar", "/opt/streaming.jar",
                                      "--python-bin", python_without_profiler(tmp_path),
                                      "--jobconf", "mapreduce.job.reduces=3"])
    local_out = tmp_path / "local.cdxj"
    run_profile([str(p) for p in local_files], str(local_out), runner="inline", created="2026-01-01T00:00:00Z")

    with open(fake_hadoop.local(out), "rb") as f:
        remote_lines = f.read().splitlines()
    expected = local_out.read_bytes().splitlines()
    data = [l for l in remote_lines if not l.startswith(b"!")]
    assert data == [l for l in expected if not l.startswith(b"!")] and len(data) > 9000
    meta = [l for l in remote_lines if l.startswith(b'!meta {"inputs"')][0]
    assert b'"captures":5000' in meta and b"gs://archive-bucket/cdx/c.cdx.bz2" in meta
    assert summary["parts"] == 3 and summary["splits"] == 3
    if fast.load() is not None:     # the shipped extension ran in the streaming tasks (profiler only from the zip)
        assert summary["counters"][0]["tasks"] == {"step-1 reducers (compiled)": 3}

    calls = fake_hadoop.read_log(fake_cluster.log)
    jars = [c for c in calls if c[0] == "jar"]
    assert len(jars) == 3 and all(c[1] == "/opt/streaming.jar" for c in jars)
    conf = conf_opts("hadoop", "mrjob-hadoop.conf")["jobconf"]
    for step, call in enumerate(jars):
        opts = streaming_opts(call[2:])
        expected_d = dict(conf, **{"mapreduce.job.reduces": "3"})    # --jobconf overrides the conf
        assert opts["D"] == expected_d
        assert_sort_safe(opts)
        shipped = sorted(f.rpartition("#")[2] for f in opts["files"])
        # and the compiled hot path when it is built (profiler.accel.fast; tasks fall back to Python without it)
        compiled = [os.path.basename(f) for f in fast.shipped_files()]
        assert shipped == sorted(compiled + ["mrjob.zip", "profile_job.py", "profiler.zip", "setup-wrapper.sh"])
        assert all(f.startswith("hdfs:///user/tester/tmp/archive-profiler/") for f in opts["files"])
        assert ("--step-num=%d --reducer" % step) in opts["reducer"]
        if step == 0:
            assert len(opts["input"]) == 3 and all(i.endswith(".json") for i in opts["input"])
            assert "--mapper" in opts["mapper"]
        else:
            assert opts["mapper"] == "cat" and opts["input"] == [jars[step - 1][jars[step - 1].index("-output") + 1]]
    # tasks read the remote inputs themselves; the client merged the gzipped parts of step 3
    cats = [c[2] for c in calls if c[:2] == ["fs", "-cat"]]
    assert cats.count("hdfs:///data/cdx/a.cdx.gz") >= 2 and cats.count("gs://archive-bucket/cdx/c.cdx.bz2") >= 2
    assert len([c for c in cats if c.endswith(".gz") and "/output/part-" in c]) == 3
    assert [c for c in calls if c[:2] == ["fs", "-put"]][-1][-1] == out       # the profile, uploaded last
    assert os.listdir(fake_hadoop.local("hdfs:///user/tester/tmp/archive-profiler")) == []   # cleaned up


def test_hadoop_spreads_a_hot_digest_over_step_2(fake_cluster, tmp_path):
    """A digest thousands of URI-Rs hold (the empty payload's): each step-1 reduce task salts its
    records of it past the threshold, step 2 writes their shares, and the profile's data lines
    are the inline runner's."""
    hot = ["com,hot%04d)/ 2020%02d%02d120000 http://hot%04d.com/ text/html 200 %s - - 300 %d hot.warc.gz\n"
           % (i, 1 + i % 12, 1 + i % 28, i, synthetic.EMPTY_DIGEST, i) for i in range(3000)]
    local_file = tmp_path / "hot.cdx"
    synthetic.write_lines(str(local_file), sorted(list(synthetic.cdx_lines(5000, seed=2)) + hot),
                          synthetic.LEGEND + "\n")
    _put(fake_cluster, "hdfs:///data/hot.cdx", local_file.read_bytes())
    out = "hdfs:///profiles/hot.cdxj"
    summary = run_profile(["hdfs:///data/hot.cdx"], out, runner="hadoop",
                          conf_paths=[os.path.join(CONF, "mrjob-hadoop.conf")],
                          extra_args=["--hadoop-bin", fake_cluster.hadoop, "--hadoop-streaming-jar", "/opt/streaming.jar",
                                      "--python-bin", python_without_profiler(tmp_path),
                                      "--jobconf", "mapreduce.job.reduces=3"])
    local_out = tmp_path / "inline.cdxj"
    run_profile([str(local_file)], str(local_out), runner="inline")
    with open(fake_hadoop.local(out), "rb") as f:
        remote_lines = f.read().splitlines()
    expected = local_out.read_bytes().splitlines()
    assert [l for l in remote_lines if not l.startswith(b"!")] == [l for l in expected if not l.startswith(b"!")]
    step1, step2 = summary["counters"][0]["hot digests"], summary["counters"][1]["hot digests"]
    assert step1["digests salted in a task"] == 3 and step1["records salted"] > 2000   # one digest, each task
    assert step2["share records written"] > 0
    jars = [c for c in fake_hadoop.read_log(fake_cluster.log) if c[0] == "jar"]
    assert all("--hot-digests local" in streaming_opts(c[2:])["reducer"] for c in jars)


@pytest.mark.parametrize("out", ["hdfs:///profiles/iana.cdxj", "s3://archive-bucket/profiles/iana.cdxj",
                                 "gs://archive-bucket/profiles/iana.cdxj"])
def test_the_summary_of_a_profile_written_to_a_cluster_filesystem(fake_cluster, tmp_path, capsys, out):
    """The command's end summary comes from what was written, not from the output path, which
    is no local file here: exit 0, and the figures are those of the uploaded profile."""
    from profiler.cli.main import main as cli_main
    index = tmp_path / "small.cdx"
    synthetic.write_lines(str(index), sorted(synthetic.cdx_lines(300, seed=5)), synthetic.LEGEND + "\n")
    code = cli_main(["profile", str(index), "-o", out, "-r", "hadoop", "-c", os.path.join(CONF, "mrjob-hadoop.conf"),
                     "--", "--hadoop-bin", fake_cluster.hadoop, "--hadoop-streaming-jar", "/opt/streaming.jar",
                     "--python-bin", python_without_profiler(tmp_path), "--jobconf", "mapreduce.job.reduces=2"])
    err = capsys.readouterr().err
    assert code == 0, err
    with open(fake_hadoop.local(out), "rb") as f:
        written = f.read()
    assert "%s: %s lines, %.1f MB" % (out, format(written.count(b"\n"), ","), len(written) / 1e6) in err
    assert " captures, " in err and "No such file" not in err and "unchanged" not in err


def test_missing_remote_input_is_a_user_error(fake_cluster):
    from profiler.errors import UserError
    with pytest.raises(UserError, match="input not found: hdfs:///nowhere"):
        run_profile(["hdfs:///nowhere/x.cdx"], "/tmp/never.cdxj", runner="hadoop",
                    extra_args=["--hadoop-bin", fake_cluster.hadoop])


# -- EMR and Dataproc, built offline ---------------------------------------------------------------

def _runner(tmp_path, runner, conf, scheme, monkeypatch, archive=True):
    """The runner of conf, in tmp_path, where dist/ holds this version's source archive (if archive)."""
    from profiler.runtime.profile_job import ProfileJob
    monkeypatch.chdir(tmp_path)
    if archive:
        os.makedirs("dist", exist_ok=True)
        with open("dist/archive_profiler-%s.tar.gz" % profiler.__version__, "wb"):
            pass
    split = {"path": scheme + "://archive-bucket/cdx/a.cdx.gz", "compression": "gzip", "format": "cdx",
             "fields": "NbamskrMSVg", "start": 0, "end": None}
    manifests = write_manifest([split, split], str(tmp_path / "manifest"))
    args = job_args(manifests, load_policy("default"), runner, [os.path.join(CONF, conf)],
                    py_files=[package_zip(str(tmp_path))])
    r = ProfileJob(args).make_runner()
    r._create_setup_wrapper_scripts()
    r._add_bootstrap_files_for_upload()
    r._add_job_files_for_upload()
    r._add_input_files_for_upload()
    return r


def _assert_steps(step_args, bucket_prefix, conf):
    for step, args in enumerate(step_args):
        opts = streaming_opts(args)
        assert opts["D"] == conf["jobconf"]
        assert_sort_safe(opts)
        shipped = {f.rpartition("#")[2]: f for f in opts["files"]}
        assert sorted(shipped) == ["mrjob.zip", "profile_job.py", "profiler.zip", "setup-wrapper.sh"]
        assert all(f.startswith(bucket_prefix) for f in shipped.values())
        assert "%s profile_job.py --step-num=%d --reducer" % (conf["python_bin"], step) in opts["reducer"]
        assert "--hot-digests local" in opts["reducer"]      # the tasks choose hot digests themselves
        if step == 0:
            assert len(opts["input"]) == 2 and all(i.startswith(bucket_prefix) for i in opts["input"])
        if step == 2:
            assert opts["output"].startswith(bucket_prefix) and opts["output"].endswith("/output/")


def test_emr_steps_and_cluster(tmp_path, monkeypatch):
    conf = conf_opts("emr", "mrjob-emr.conf")
    r = _runner(tmp_path, "emr", "mrjob-emr.conf", "s3", monkeypatch)
    cluster = r._cluster_kwargs()
    # steps need the cluster's image version, which mrjob asks EMR for: answer offline
    r._cluster_id = "j-OFFLINE"
    r._cluster_to_cache["j-OFFLINE"] = {"image_version": "7.2.0", "app_versions": {"hadoop": "3.3.6"},
                                        "collection_type": "INSTANCE_GROUP"}
    steps = [r._build_step(i) for i in range(3)]
    assert [s["HadoopJarStep"]["Jar"] for s in steps] == ["command-runner.jar"] * 3
    assert all(s["HadoopJarStep"]["Args"][0] == "hadoop-streaming" for s in steps)
    _assert_steps([s["HadoopJarStep"]["Args"][1:] for s in steps], "s3://my-bucket/tmp/", conf)

    assert cluster["ReleaseLabel"] == "emr-7.2.0"
    groups = {g["InstanceRole"]: (g["InstanceType"], g["InstanceCount"]) for g in cluster["Instances"]["InstanceGroups"]}
    assert groups == {"MASTER": ("m6g.xlarge", 1), "CORE": ("m6g.2xlarge", 4)}
    assert (cluster["JobFlowRole"], cluster["ServiceRole"]) == ("EMR_EC2_DefaultRole", "EMR_DefaultRole")
    [action] = cluster["BootstrapActions"]
    assert action["ScriptBootstrapAction"]["Path"].startswith("s3://my-bucket/tmp/")
    with open(r._master_bootstrap_script_path) as f:
        script = f.read()
    assert "aws s3 cp s3://my-bucket/tmp/" in script
    # the package built on the node, for its architecture (Graviton: arm64), with the compiled kernels
    assert "sudo dnf install -y python3.11 python3.11-pip python3.11-devel gcc" in script
    assert "sudo python3.11 -m pip install $__mrjob_PWD/archive_profiler-%s.tar.gz" % profiler.__version__ in script


def test_dataproc_jobs_and_cluster(tmp_path, monkeypatch):
    import mrjob.dataproc
    # mrjob only asks the Google libraries for credentials and the project here
    monkeypatch.setattr(mrjob.dataproc, "google", types.SimpleNamespace(
        auth=types.SimpleNamespace(default=lambda scopes: (None, "offline-project"))))
    conf = conf_opts("dataproc", "mrjob-dataproc.conf")
    r = _runner(tmp_path, "dataproc", "mrjob-dataproc.conf", "gs", monkeypatch)
    for path in r._py_files():
        r._upload_mgr.add(path)
    cluster = r._cluster_create_kwargs()
    r._image_version, r._hadoop_version = "2.2", "3.3.6"
    jobs = [r._streaming_step_job_kwarg(i)["hadoop_job"] for i in range(3)]
    assert {j["main_jar_file_uri"] for j in jobs} == {"file:///usr/lib/hadoop-mapreduce/hadoop-streaming.jar"}
    _assert_steps([j["args"] for j in jobs], "gs://my-bucket/tmp/", conf)

    config = cluster["config"]
    assert cluster["project_id"] == "my-project" and config["software_config"]["image_version"] == "2.2-debian12"
    assert config["master_config"]["machine_type_uri"].endswith("/n2-standard-4")
    assert config["worker_config"]["machine_type_uri"].endswith("/n2-standard-8")
    assert config["worker_config"]["num_instances"] == 4
    [action] = config["initialization_actions"]
    assert action["executable_file"].startswith("gs://my-bucket/tmp/")
    with open(r._master_bootstrap_script_path) as f:
        script = f.read()
    assert "apt-get" not in script
    assert ("sudo /opt/conda/default/bin/python -m pip install $__mrjob_PWD/archive_profiler-%s.tar.gz"
            % profiler.__version__) in script


def _dataproc_offline(monkeypatch):
    import mrjob.dataproc
    monkeypatch.setattr(mrjob.dataproc, "google", types.SimpleNamespace(
        auth=types.SimpleNamespace(default=lambda scopes: (None, "offline-project"))))


@pytest.mark.parametrize("runner,name,scheme", [("emr", "mrjob-emr.conf", "s3"),
                                                ("dataproc", "mrjob-dataproc.conf", "gs")])
def test_the_bootstrap_installs_the_source_archive_of_this_version(tmp_path, monkeypatch, runner, name, scheme):
    """The confs name the source archive by the package's version: after a version bump the
    bootstrap uploads the new archive, and without it the run stops in one line before any
    cluster starts (the confs named 0.1.0 whatever the version)."""
    from profiler.errors import UserError
    _dataproc_offline(monkeypatch)
    monkeypatch.setattr(profiler, "__version__", "9.8.7")
    r = _runner(tmp_path, runner, name, scheme, monkeypatch)
    uploaded = [os.path.basename(p) for p in r._upload_mgr.path_to_uri()]
    assert "archive_profiler-9.8.7.tar.gz" in uploaded
    assert not [p for p in uploaded if "0.1.0" in p]
    os.unlink("dist/archive_profiler-9.8.7.tar.gz")
    with pytest.raises(UserError, match=r"installs dist/archive_profiler-9\.8\.7\.tar\.gz, which is not there: "
                                        r"make it with python setup\.py -q sdist"):
        _runner(tmp_path, runner, name, scheme, monkeypatch, archive=False)


def test_a_bootstrap_archive_of_another_version_is_refused(tmp_path, monkeypatch):
    """A conf copied before a version bump, naming the old archive: one line, not the old package
    installed on every node."""
    from profiler.errors import UserError
    from profiler.runtime import cloudrunners
    (tmp_path / "archive_profiler-0.0.9.tar.gz").write_bytes(b"")
    old = "sudo python3.11 -m pip install %s/archive_profiler-0.0.9.tar.gz#" % tmp_path
    with pytest.raises(UserError, match="of version 0.0.9, and this is version 9.8.7"):
        cloudrunners.bootstrap_commands([old], "9.8.7")
    assert cloudrunners.bootstrap_commands(["pip install x-{version}.tar.gz"], "9.8.7") == ["pip install x-9.8.7.tar.gz"]
    assert cloudrunners.bootstrap_commands(["pip install s3://b/archive_profiler-9.8.7.tar.gz#"], "9.8.7")


def test_local_runner_sort_has_a_bounded_buffer():
    """GNU sort's default buffer grows with the input; the local runner's is capped (-S)."""
    from mrjob.job import MRJob  # noqa: F401  (mrjob parses the option below)
    from profiler.runtime.profile_job import ProfileJob
    args = job_args(["m.json"], load_policy("default"), "local")
    job = ProfileJob(args)
    with job.make_runner() as runner:
        sort_bin = runner._sort_bin()
    assert sort_bin == ["sort", "-S", "256M"]        # whole lines (tests/runtime/test_localrunner.py)
    # a user's own --sort-bin comes later on the command line and wins
    job = ProfileJob(job_args(["m.json"], load_policy("default"), "local", extra=["--sort-bin", "sort"]))
    with job.make_runner() as runner:
        assert runner._sort_bin() == ["sort"]
