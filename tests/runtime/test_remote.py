"""profiler.runtime.remote and the URI paths of profiler.formats.inputs, against the fake `hadoop` (tests/helpers/fake_hadoop.py)."""

import bz2
import gzip
import os

import pytest
from mrjob.fs.hadoop import HadoopFilesystem

from profiler.formats import inputs
from profiler.runtime import remote
from profiler.errors import UserError
from profiler.io.readers import iter_lines

from helpers import fake_hadoop

CDX = b" CDX N b a m s k r M S V g\ncom,example)/ 20130101000000 http://example.com/ text/html 200 AAA - - 10 0 a.warc.gz\n"


@pytest.fixture
def hdfs(tmp_path, monkeypatch):
    (tmp_path / "bin").mkdir()
    hadoop = fake_hadoop.write_fake_hadoop(str(tmp_path / "bin"))
    monkeypatch.setenv("FAKE_HADOOP_ROOT", str(tmp_path / "root"))
    monkeypatch.setenv("HADOOP_BIN", hadoop)          # what map tasks use
    return HadoopFilesystem([hadoop])


def put(uri, data):
    path = fake_hadoop.local(uri)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def test_resolve_lists_folders_and_globs_without_hidden_files(hdfs):
    for name in ("a.cdx", "b.cdx.gz", "_SUCCESS", ".hidden"):
        put("hdfs:///cdx/" + name, CDX)
    put("s3://bucket/x/c.cdx", CDX)
    assert remote.resolve(hdfs, "hdfs:///cdx/") == ["hdfs:///cdx/a.cdx", "hdfs:///cdx/b.cdx.gz"]
    assert remote.resolve(hdfs, "hdfs:///cdx/*.gz") == ["hdfs:///cdx/b.cdx.gz"]
    assert remote.resolve(hdfs, "s3://bucket/x/c.cdx") == ["s3://bucket/x/c.cdx"]
    with pytest.raises(UserError, match="input not found: hdfs:///nothing"):
        remote.resolve(hdfs, "hdfs:///nothing/*.cdx")


@pytest.mark.parametrize("name,pack,compression", [("a.cdx", bytes, None), ("a.cdx.gz", gzip.compress, "gzip"),
                                                   ("a.cdx.bz2", bz2.compress, "bz2")])
def test_sniff_and_task_read(hdfs, tmp_path, name, pack, compression):
    uri = "gs://bucket/cdx/" + name
    put(uri, pack(CDX))
    info = remote.sniff(hdfs, uri)
    local = inputs.sniff(fake_hadoop.local(uri))            # the same file, sniffed locally
    assert (info["format"], info["fields"]) == (local["format"], local["fields"]) == ("cdx", local["fields"])
    assert info["compression"] == compression and info["size"] == len(pack(CDX))
    [split] = remote.plan_splits([info])
    assert (split["start"], split["end"]) == (0, None)
    lines = list(iter_lines(uri, 0, None, compression, remote.open_input))
    assert lines == CDX.splitlines()


def test_sniff_reports_a_file_that_is_no_index(hdfs):
    put("hdfs:///x/notes.txt", b"just some\nwords here\n")
    info = remote.sniff(hdfs, "hdfs:///x/notes.txt")
    assert info["format"] is None and "a CDX index" in info["reason"]
    assert remote.plan_splits([info]) == []


def test_task_read_of_a_missing_file_fails(hdfs):
    with pytest.raises(OSError, match="hadoop fs -cat hdfs:///missing.cdx failed"):
        list(iter_lines("hdfs:///missing.cdx", 0, None, None, remote.open_input))


def test_publish_replaces_an_hdfs_file(hdfs, tmp_path):
    put("hdfs:///profiles/p.cdxj", b"old\n")
    new = tmp_path / "new.cdxj"
    new.write_bytes(b"new\n")
    remote.publish(hdfs, str(new), "hdfs:///profiles/p.cdxj")
    with open(fake_hadoop.local("hdfs:///profiles/p.cdxj"), "rb") as f:
        assert f.read() == b"new\n"


def test_inputs_keep_uris_and_read_them_from_manifests(tmp_path):
    manifest = tmp_path / "m.txt"
    manifest.write_text("# cluster inputs\ns3://bucket/a.cdx.gz\nhdfs:///b/\n")
    assert inputs.is_manifest(str(manifest))
    assert inputs.resolve([str(manifest), "gs://bucket/c.cdx"]) == [
        "s3://bucket/a.cdx.gz", "hdfs:///b/", "gs://bucket/c.cdx"]
    # a NetarchiveSuite CDX starts with a URL: it is an index, not a manifest of URIs
    nas = tmp_path / "nas.cdx"
    nas.write_text("http://example.com/ 1.2.3.4 20130101000000 text/html 10 a.arc 0 abc\n")
    assert not inputs.is_manifest(str(nas))
