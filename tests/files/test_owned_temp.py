"""A signal right after a work file or folder is made (before the caller has recorded it) leaves
nothing behind: owned_temp records it with SIGINT, SIGTERM and SIGHUP held, and the caller's
cleanup removes what it recorded. The signal once came between the two: a file no one removed
until the same command ran there again."""

import os
import signal

import pytest

from profiler.files import insort, outfiles


def _signal_after(monkeypatch, name, folder, prefix):
    """os.NAME that sends this process SIGINT once it has made an entry of prefix in folder."""
    real = getattr(os, name)

    def made_then_signalled(path, *args, **kw):
        result = real(path, *args, **kw)
        if os.path.dirname(str(path)) == str(folder) and os.path.basename(str(path)).startswith(prefix):
            os.kill(os.getpid(), signal.SIGINT)
        return result
    monkeypatch.setattr(os, name, made_then_signalled)


def test_a_signal_as_a_sort_s_temp_file_is_made_leaves_none(tmp_path, monkeypatch):
    source = tmp_path / "in.ukvs"
    source.write_bytes(b"!meta {}\n" + b"".join(b"k%05d 1\n" % (9999 - i) for i in range(2000)))
    _signal_after(monkeypatch, "open", tmp_path, insort.PREFIX)
    with pytest.raises(KeyboardInterrupt):
        with insort.SortedCopy(str(source), str(tmp_path)):
            pass
    monkeypatch.undo()
    assert [n for n in os.listdir(tmp_path) if n.startswith(insort.PREFIX)] == []


def test_a_signal_as_a_run_s_work_folder_is_made_leaves_none(tmp_path, monkeypatch):
    from profiler.run.profile import run_profile
    cdx = tmp_path / "in.cdx"
    cdx.write_text(" CDX N b a m s k r M S V g\ncom,example)/ 20200101000000 http://example.com/ text/html 200 "
                   "AAAA - - 10 0 w.warc.gz\n")
    work = tmp_path / "workroot"
    work.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(work))
    _signal_after(monkeypatch, "mkdir", work, "archive-profiler-")
    with pytest.raises(KeyboardInterrupt):
        run_profile([str(cdx)], str(tmp_path / "out.cdxj"), runner="inline")
    monkeypatch.undo()
    assert os.listdir(work) == [] and not os.path.exists(tmp_path / "out.cdxj")


def test_a_signal_as_split_s_work_folder_is_made_leaves_none(tmp_path, monkeypatch):
    from profiler.toolkit import split
    source = tmp_path / "in.ukvs"
    source.write_bytes(b"!meta {}\n" + b"".join(b"k%05d 1\n" % i for i in range(20)))
    _signal_after(monkeypatch, "mkdir", tmp_path, split.WORK_PREFIX)
    with pytest.raises(KeyboardInterrupt):
        split.split(str(source), 5, str(tmp_path / "page"))
    monkeypatch.undo()
    assert [n for n in os.listdir(tmp_path) if n.startswith((split.WORK_PREFIX, "page"))] == []
