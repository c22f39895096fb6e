"""Input folders and glob patterns of any shape: 1,200 levels deep, past the longest path the
system opens, with links that loop, or with 100,000 entries. They are walked without recursion:
every file is found once, what cannot be read is refused with its reason, never a traceback."""

import os
import subprocess
import sys
import tracemalloc

import pytest

from profiler.formats import inputs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CDX = (b"com,example)/ 20140103030321 http://example.com/ text/html 200 "
       b"B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 1043 333 example.warc.gz\n")


@pytest.fixture
def made():
    """Folder trees a test makes, removed when it ends without recursion: pytest's own removal
    of old temp folders (shutil.rmtree) recurses, and would fail on them in a later session."""
    trees = []
    yield trees
    for top in trees:
        remove_tree(top)


def remove_tree(top):
    """Remove a folder tree of any depth, bottom-up through folder descriptors."""
    if not os.path.isdir(top):
        return
    stack = [[os.open(top, os.O_RDONLY | os.O_DIRECTORY), None]]
    while stack:
        fd = stack[-1][0]
        below = None
        with os.scandir(fd) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    below = entry.name
                    break
                os.unlink(entry.name, dir_fd=fd)
        if below is None:
            os.close(fd)
            stack.pop()
            if stack:
                os.rmdir(stack[-1][1], dir_fd=stack[-1][0])
        else:
            stack[-1][1] = below
            stack.append([os.open(below, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), None])
    os.rmdir(top)


def deep_folder(made, top, levels, name="d"):
    """top/d/d/.../d (levels of them) with a.cdx at the top and at the bottom; made through
    folder descriptors, so that the bottom may lie past the longest path open() takes."""
    top.mkdir()
    made.append(str(top))
    (top / "a.cdx").write_bytes(CDX)
    fd = os.open(str(top), os.O_RDONLY)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=fd)
            below = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = below
        out = os.open("a.cdx", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, CDX)
        os.close(out)
    finally:
        os.close(fd)
    return str(top) + (os.sep + name) * levels


def run(*args):
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", *args], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert "Traceback" not in r.stderr and "RecursionError" not in r.stderr, r.stderr[-2000:]
    return r


def test_a_folder_1200_levels_deep(tmp_path, made):
    bottom = deep_folder(made, tmp_path / "deep", 1200)
    found = inputs.resolve([str(tmp_path / "deep")])
    assert found == [str(tmp_path / "deep" / "a.cdx"), os.path.join(bottom, "a.cdx")]
    assert sorted(inputs.resolve([str(tmp_path / "deep" / "**" / "*.cdx")])) == sorted(found)
    assert sorted(inputs.resolve([str(tmp_path / "deep" / "**")])) == sorted(found)
    out = tmp_path / "p.cdxj"
    for pattern in (str(tmp_path / "deep"), str(tmp_path / "deep" / "**" / "*.cdx")):
        r = run(pattern, "-o", str(out))
        assert r.returncode == 0 and "2 captures" in r.stderr
        r = run(pattern, "--dry-run")
        assert r.returncode == 0 and "inputs: 2 file(s)" in r.stdout


def test_a_folder_past_the_longest_path_is_refused_with_its_reason(tmp_path, made):
    deep_folder(made, tmp_path / "deep", 30, name="x" * 200)         # 6,000 bytes of path
    found = inputs.resolve([str(tmp_path / "deep")])
    assert found[0] == str(tmp_path / "deep" / "a.cdx") and len(found) == 2
    info = inputs.sniff(found[1])
    assert info["format"] is None and "File name too long" in info["reason"]
    r = run(str(tmp_path / "deep"), "-o", str(tmp_path / "p.cdxj"))
    assert r.returncode == 0 and "1 captures" in r.stderr
    assert "refused" in r.stderr and "File name too long" in r.stderr


def test_links_that_loop(tmp_path):
    top = tmp_path / "top"
    (top / "a" / "b").mkdir(parents=True)
    (top / "a" / "b" / "x.cdx").write_bytes(CDX)
    os.symlink(str(top), str(top / "a" / "b" / "up"))              # back to the top
    os.symlink(str(top / "a"), str(top / "a" / "again"))
    assert inputs.resolve([str(top)]) == [str(top / "a" / "b" / "x.cdx")]
    assert inputs.resolve([str(top / "**" / "*.cdx")]) == [str(top / "a" / "b" / "x.cdx")]


def test_glob_stars_match_as_glob_does(tmp_path):
    import glob
    for name in ("a/x.cdx", "a/b/y.cdx", "a/b/c/z.cdxj", "a/.hidden/w.cdx", "a/b/.v.cdx", "q.cdx", "a/b/c/d/e/f.cdx"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(CDX)
    for pattern in ("**/*.cdx", "a/**/*.cdx", "a/**", "**/b/*", "a/**/c/**", "**", "a/*/y.cdx", "*/**/z.*"):
        full = str(tmp_path / pattern)
        mine, theirs = ({p.rstrip(os.sep) for p in found} for found in
                        (inputs.glob_paths(full), glob.glob(full, recursive=True)))      # 'a/' or 'a'
        assert mine == theirs, pattern


def test_a_folder_of_100000_entries(tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(100000):
        (folder / ("f%06d.cdx" % i)).write_bytes(b"")
    tracemalloc.start()
    try:
        found = inputs.resolve([str(folder)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(found) == 100000 and found == sorted(found)
    assert peak < 100 * 1000 * 1000            # the list of paths and one folder's entries, not more


@pytest.mark.parametrize("args, words", [
    (["--cores", "1000000000"], ["--cores", "at most 1024"]),
    (["--cores", "1025", "--dry-run"], ["--cores", "at most 1024"]),
    (["--", "--num-cores", "1000000000"], ["--num-cores must be at most 1024"]),
])
def test_absurd_cores_are_a_usage_error(tmp_path, args, words):
    (tmp_path / "a.cdx").write_bytes(CDX)
    out = tmp_path / "p.cdxj"
    r = run(str(tmp_path / "a.cdx"), "-r", "local", *(["-o", str(out)] if "--dry-run" not in args else []), *args)
    assert r.returncode == 2
    errors = [line for line in r.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and all(w in errors[0] for w in words), r.stderr
    assert not out.exists()
