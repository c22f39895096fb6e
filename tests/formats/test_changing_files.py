"""An index file that shrinks while a run reads it (a copy still being written over, a log
rotated): the splits planned over its old size find fewer bytes. Every whole line still there
counts, once, and the splits that find the file ending before their planned end say so
(`shrunk_file`), with the compiled and the Python kernels alike: never a smaller profile that
looks whole."""

import io

import orjson
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.formats import inputs
from profiler.job import mapside
from profiler.job.kernels import Kernels
from profiler.model.policy import load as load_policy

LEGEND = b" CDX N b a m s k r M S V g\n"


def cdx_line(i):
    return b"com,example)/p%05d 20130101000000 http://example.com/p%d text/html 200 D%d - - %d 0 a.warc.gz\n" % (
        i, i, i, i)


def mapped(splits, data, pure):
    """Captures and skip reasons of the splits (planned over another size) read from data."""
    policy = load_policy("default")
    kernels = Kernels(policy, pure=pure)
    captures, skipped = 0, {}
    for split in splits:
        for key, value in mapside.map_split(orjson.dumps(split), policy, kernels,
                                            opener=lambda path, mode="rb": io.BytesIO(data)):
            if key == b"!meta":
                captures += value["captures"]
                for reason, n in value["skipped"].items():
                    skipped[reason] = skipped.get(reason, 0) + n
    return captures, skipped


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0.0, 0.999))
def test_a_file_that_shrinks_under_the_run_says_so(tmp_path, cut):
    data = LEGEND + b"".join(cdx_line(i) for i in range(12000))
    path = tmp_path / "in.cdx"
    path.write_bytes(data)
    info = inputs.sniff(str(path))
    splits = inputs.plan_splits([info], split_size=1 << 20)
    assert len(splits) > 1 and splits[-1]["end"] == len(data)
    shrunk = data[:int(len(data) * cut)]
    whole = max(0, shrunk.count(b"\n") - 1)              # its whole lines, the legend left out
    partial = 1 if not shrunk.endswith(b"\n") and len(shrunk.split(b"\n")[-1].split()) == 11 else 0
    for pure in (False, True):
        captures, skipped = mapped(splits, shrunk, pure)
        assert captures == whole + partial
        assert skipped.pop("shrunk_file", 0) >= 1
        assert set(skipped) <= {"bad_field_count"}


def test_a_file_read_to_its_planned_end_notes_nothing(tmp_path):
    data = LEGEND + b"".join(cdx_line(i) for i in range(12000))
    path = tmp_path / "in.cdx"
    path.write_bytes(data[:-1])                           # no newline at its end
    splits = inputs.plan_splits([inputs.sniff(str(path))], split_size=1 << 20)
    for pure in (False, True):
        assert mapped(splits, data[:-1], pure) == (12000, {})
        assert mapped(splits, data + data, pure) == (12000, {})          # grown: read as planned


def test_a_file_replaced_by_a_rename_while_the_run_reads_it_is_refused(tmp_path, monkeypatch):
    """An index replaced by a rename after the run planned its splits (a nightly copy of the
    CDX moved into place): each task opened the path and read the other file from the old
    plan's byte ranges, and the lines past the old size were lost, exit 0, nothing said (or,
    the rename falling between two tasks, the profile mixed both files). A task that finds
    another file under the path refuses it: the run fails in one line, nothing written."""
    import pytest
    from profiler.run import profile as run_mod
    from profiler.run.profile import run_profile
    old, new = tmp_path / "in.cdx", tmp_path / "new.cdx"
    old.write_bytes(LEGEND + b"".join(cdx_line(i) for i in range(6000)))
    new.write_bytes(LEGEND + b"".join(cdx_line(i) for i in range(6000, 18000)))
    plan = inputs.plan_splits

    def planned_then_replaced(*args, **kwargs):
        splits = plan(*args, **kwargs)
        new.replace(old)                        # after the plan, before any task opens it
        return splits
    monkeypatch.setattr(run_mod.inputs_mod, "plan_splits", planned_then_replaced)
    out = tmp_path / "p.cdxj"
    with pytest.raises(Exception, match=r"in.cdx was replaced while the run read it \(another file has its name "
                                        r"now\): run again"):
        run_profile([str(old)], str(out), runner="inline", split_size=1 << 20)
    assert not out.exists()
