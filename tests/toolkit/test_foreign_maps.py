"""Maps other tools write: ``mementomap generate`` writes its lines unsorted (it cuts trailing
slashes and queries off its keys after sorting). merge sorts such a file on the way in
(profiler.files.insort: an external sort, temporary files removed after), with a note and a
count in the merged !meta; lookup and serve refuse it in one line with that hint; an unsorted
file this tool wrote stays refused (tests/toolkit/test_merge.py). The fixture is real output
of ``mementomap generate`` (tests/data/README.md)."""

import os
import shutil
import subprocess
import sys

import pytest

from profiler.errors import UserError
from profiler.files import insort
from profiler.files.sortedfile import UnsortedFile
from profiler.files.ukvs import profile_to_map, read_map
from profiler.files.validate import validate
from profiler.run.profile import run_profile
from profiler.serve.archives import Archive
from profiler.testing import synthetic
from profiler.toolkit.lookup import Lookup
from profiler.toolkit.merge import merge

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENERATED = os.path.join(ROOT, "tests", "data", "maps", "mementomap-generate-unsorted.ukvs")


def data_lines(path):
    with open(path, "rb") as f:
        return [line for line in f if line[:1] not in (b"!", b"@")]


def frequencies(path):
    return {line.rsplit(b" ", 1)[0]: int(line.rsplit(b" ", 1)[1]) for line in data_lines(path)}


def leftovers(folder):
    return [n for n in os.listdir(folder) if n.startswith(insort.PREFIX)]


@pytest.fixture
def generated(tmp_path):
    path = tmp_path / "generated.ukvs"
    shutil.copy(GENERATED, path)
    return str(path)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))


def test_the_fixture_is_unsorted():
    lines = data_lines(GENERATED)
    assert lines != sorted(lines)


@pytest.mark.parametrize("run_bytes", [insort.RUN_BYTES, 300])
def test_merge_sorts_it_on_the_way_in(generated, tmp_path, monkeypatch, run_bytes):
    monkeypatch.setattr(insort, "RUN_BYTES", run_bytes)        # 300: many runs, merged
    out = str(tmp_path / "sorted.ukvs")
    summary = merge([generated], out)
    assert validate(out).ok
    assert summary["sorted"] == [(generated, len(data_lines(GENERATED)))]
    keys = [line.split(b" ")[0] for line in data_lines(out)]
    assert keys == sorted(keys)
    assert {k: f.urim for k, f in read_map(out)[1]} == frequencies(GENERATED)
    meta = [v for n, v in read_map(out)[0] if n == "!meta"][0]
    assert meta["merge"]["sorted_inputs"] == {generated: len(keys)}
    assert leftovers(str(tmp_path)) == []


def test_merged_with_ours(generated, tmp_path):
    """Our map of the same captures (the fixture's input: 500 synthetic captures, seed 1) and
    the generated one merge: every key of each, counts added on the keys both have."""
    cdx = tmp_path / "a.cdx"
    cdx.write_text(synthetic.LEGEND + "\n" + "".join(sorted(synthetic.cdx_lines(500, seed=1))))
    profile = str(tmp_path / "a.cdxj")
    run_profile([str(cdx)], profile)
    ours = str(tmp_path / "ours.ukvs")
    profile_to_map(profile, ours)
    out = str(tmp_path / "m.ukvs")
    r = cli("merge", ours, generated, "-o", out)
    assert r.returncode == 0, r.stderr
    assert "generated.ukvs was not sorted (another tool's file): its 188 lines sorted on the way in" in r.stderr
    assert validate(out).ok
    merged = {k: f.urim for k, f in read_map(out)[1]}
    theirs = frequencies(generated)
    mine = {k: f.urim for k, f in read_map(ours)[1]}
    assert set(merged) == set(theirs) | set(mine)
    assert all(merged[k] == theirs.get(k, 0) + mine.get(k, 0) for k in merged)
    assert leftovers(str(tmp_path)) == []


def test_a_damaged_one_is_refused_and_leaves_no_temporary_file(generated, tmp_path):
    with open(generated, "ab") as f:
        f.write(b"com,cnn)/cut 1")                 # its last line cut
    r = cli("merge", generated, "-o", str(tmp_path / "x.ukvs"))
    assert r.returncode == 2 and "cut short" in r.stderr and "Traceback" not in r.stderr
    assert not os.path.exists(tmp_path / "x.ukvs") and leftovers(str(tmp_path)) == []
    twice = tmp_path / "twice.ukvs"
    twice.write_bytes(b"com,b)/ 1\ncom,a)/ 2\ncom,b)/ 3\n")
    with pytest.raises(UnsortedFile, match=r"twice.ukvs \(sorted\) is not sorted: .* holds the key"):
        merge([str(twice)], str(tmp_path / "y.ukvs"))
    assert leftovers(str(tmp_path)) == []


def test_a_line_too_long_is_never_held_by_the_sort(generated, tmp_path):
    """A line past datalines.MAX_LINE in another tool's unsorted map: the sort never holds it
    (a 300 MB line took 945 MB RSS and 23 s, every line read whole); refused in one line naming
    its line in the file, or with --skip-bad-lines left out and counted (too_long), the others
    merged as from the file without it."""
    import tracemalloc
    from profiler.files.datalines import MAX_LINE
    lines = open(generated, "rb").read().split(b"\n")
    n = len(lines) // 2
    long = lines[n].split(b" ")[0] + b"x" * (16 * MAX_LINE) + b" 1"
    path = tmp_path / "long.ukvs"
    path.write_bytes(b"\n".join(lines[:n] + [long] + lines[n:]))
    without = tmp_path / "without.ukvs"
    without.write_bytes(b"\n".join(lines))
    with pytest.raises(UserError, match=r"long.ukvs line %d: a line of %d bytes, longer than" % (n + 1, len(long))):
        merge([str(path)], str(tmp_path / "x.ukvs"))
    assert not os.path.exists(tmp_path / "x.ukvs") and leftovers(str(tmp_path)) == []
    tracemalloc.start()
    try:
        with insort.SortedCopy(str(path), str(tmp_path), skip_long=True) as copy:
            assert copy.skipped_long[0][0] == n + 1 and copy.skipped_long[0][1].reason == "too_long"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_LINE, peak                      # the line is 16 MAX_LINE
    out, reference = str(tmp_path / "m.ukvs"), str(tmp_path / "ref.ukvs")
    r = cli("merge", str(path), "-o", out, "--skip-bad-lines")
    assert r.returncode == 0, r.stderr
    assert "long.ukvs: 1 damaged line(s) skipped (1 longer than 4 MiB); the first: line %d" % (n + 1) in r.stderr
    meta = [v for name, v in read_map(out)[0] if name == "!meta"][0]
    assert meta["merge"]["skipped_lines"] == {str(path): {"lines": 1, "reasons": {"too_long": 1},
                                                          "first_line": n + 1}}
    merge([str(without)], reference)
    assert data_lines(out) == data_lines(reference)
    assert leftovers(str(tmp_path)) == []


def test_lookup_and_serve_refuse_it_with_the_hint(generated):
    hint = "'archive-profiler merge %s -o SORTED' sorts it" % generated
    r = cli("lookup", generated, "http://en.wikipedia.org/tag")
    assert r.returncode == 2 and hint in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    with pytest.raises(UnsortedFile, match="SORTED"):
        with Lookup(generated, verify=True):
            pass
    with pytest.raises(UserError, match="cannot serve .*SORTED"):
        Archive(generated)


def test_a_killed_merge_s_sorted_copies_are_removed_by_the_next_one(generated, tmp_path):
    """The sorted copies a merge killed with SIGKILL left beside its output (as big as the input)
    stayed for ever; the next merge that sorts there removes them when provably ours (this host,
    a process gone, our file of one name), and nothing else."""
    from profiler.files import outfiles
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / ("%s%d-%s.0123abcd.tmp" % (insort.PREFIX, dead.pid, outfiles._HOST))
    live = tmp_path / ("%s%d-%s.0123abcd.tmp" % (insort.PREFIX, os.getpid(), outfiles._HOST))
    elsewhere = tmp_path / ("%s%d-otherhost.0123abcd.tmp" % (insort.PREFIX, dead.pid))
    for p in (stale, live, elsewhere):
        p.write_bytes(b"com,a)/ 1\n")
    r = cli("merge", generated, "-o", str(tmp_path / "m.ukvs"))
    assert r.returncode == 0, r.stderr
    assert sorted(leftovers(str(tmp_path))) == sorted([live.name, elsewhere.name])


def test_the_sort_s_temp_files_are_beside_an_output_given_as_link_dotdot(generated, tmp_path, monkeypatch):
    """'LINK/../NAME' is NAME in the folder above the one LINK points to: the sort's temp files
    went to the folder holding LINK (abspath took '..' lexically), maybe another disk."""
    (tmp_path / "real" / "inner").mkdir(parents=True)
    (tmp_path / "links").mkdir()
    os.symlink(str(tmp_path / "real" / "inner"), str(tmp_path / "links" / "link"))
    folders = []
    made = insort.SortedCopy.__init__

    def recording(self, source, folder=None, *args, **kw):
        folders.append(folder)
        made(self, source, folder, *args, **kw)
    monkeypatch.setattr(insort.SortedCopy, "__init__", recording)
    merge([generated], str(tmp_path / "links" / "link" / ".." / "m.ukvs"))
    assert folders == [str(tmp_path / "real")]
    assert validate(str(tmp_path / "real" / "m.ukvs")).ok and not os.path.exists(tmp_path / "links" / "m.ukvs")


def test_dev_stdin_is_named_by_the_file_it_is_in_the_merged_meta(generated, tmp_path):
    out = str(tmp_path / "m.ukvs")
    with open(generated, "rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "profiler.cli", "merge", "/dev/stdin", "-o", out], stdin=stdin,
                              capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr
    meta = [v for n, v in read_map(out)[0] if n == "!meta"][0]
    assert meta["merge"]["parts"] == [generated] and list(meta["merge"]["sorted_inputs"]) == [generated]
