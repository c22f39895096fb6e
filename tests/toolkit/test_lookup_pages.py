"""lookup on split pages: given any page (its links are followed) or the pages' folder, every
answer equals the answer of the unsplit file, whatever the page size; links that leave the
folder are refused."""

import os
import random
import shutil
import subprocess
import sys

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.testing import synthetic
from profiler.errors import UserError
from profiler.toolkit.lookup import Lookup
from profiler.run.profile import run_profile
from profiler.toolkit.split import split
from profiler.files.ukvs import profile_to_map

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pages")
    cdx = folder / "a.cdx"
    cdx.write_text(synthetic.LEGEND + "\n" + "".join(synthetic.cdx_lines(3000, seed=4)))
    profile = folder / "a.cdxj"
    run_profile([str(cdx)], str(profile))
    out = {"cdxj": str(profile)}
    for keys, name in ((("surt",), "ukvs"), (("surt", "datetime"), "dated")):
        path = folder / ("a-%s.ukvs" % name)
        profile_to_map(str(profile), str(path), keys)
        out[name] = str(path)
    urls = sorted({line.split(" ")[2] for line in synthetic.cdx_lines(3000, seed=4)})
    rng = random.Random(1)
    out["urls"] = rng.sample(urls, 150) + ["http://nowhere%d.example/" % i for i in range(20)] + \
        ["http://www.%s/other" % u.split("/")[2].lstrip("w.") for u in rng.sample(urls, 30)]
    return out


def answers(path, urls, dt=None):
    with Lookup(path) as lk:
        single = [tuple(lk.lookup(u, dt)) for u in urls]
        batch = [tuple(a) for _, a in lk.batch(urls, dt)]
    return single, batch


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(["cdxj", "ukvs", "dated"]), size=st.integers(1, 400),
       dt=st.sampled_from([None, "2005", "2013", "201407"]), which=st.floats(0, 0.999))
def test_pages_answer_as_the_whole_file(files, tmp_path_factory, kind, size, dt, which):
    folder = tmp_path_factory.mktemp("split")
    split(files[kind], size, str(folder / "p"))
    names = sorted(n for n in os.listdir(folder) if n.startswith("p-"))
    assert names
    one_page = str(folder / names[int(which * len(names))])
    whole = answers(files[kind], files["urls"], dt)
    assert answers(one_page, files["urls"], dt) == whole
    assert answers(str(folder), files["urls"], dt) == whole


def _pages(files, tmp_path, size=20):
    split(files["ukvs"], size, str(tmp_path / "p"))
    return sorted(n for n in os.listdir(tmp_path) if n.startswith("p-"))


def _relink(path, **changes):
    lines = open(path, "rb").read().splitlines(True)
    for i, line in enumerate(lines):
        if line.startswith(b"!meta") and b'"page"' in line:
            meta = orjson.loads(line[6:])
            meta["page"].update(changes)
            lines[i] = b"!meta " + orjson.dumps(meta) + b"\n"
    open(path, "wb").write(b"".join(lines))


@pytest.mark.parametrize("link", ["../secret.ukvs", "/etc/passwd", "http://example.org/p-00002.ukvs",
                                  "sub/p-00002.ukvs"])
def test_links_outside_the_folder_are_refused(files, tmp_path, link):
    tmp_path = tmp_path / "pages"
    tmp_path.mkdir()
    names = _pages(files, tmp_path)
    _relink(tmp_path / names[0], next=link)
    with pytest.raises(UserError, match="local"):
        Lookup(str(tmp_path / names[1]))
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "lookup", str(tmp_path / names[1]), "http://a.com/"],
                       capture_output=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and r.stderr.count(b"\n") == 1


def test_a_missing_page_is_named(files, tmp_path):
    tmp_path = tmp_path / "pages"
    tmp_path.mkdir()
    names = _pages(files, tmp_path)
    assert len(names) > 3
    os.remove(tmp_path / names[2])
    with pytest.raises(UserError, match="page 3 of %d is missing" % len(names)):
        Lookup(str(tmp_path / names[0]))
    with pytest.raises(UserError, match=r"page\(s\) \[3\]"):
        Lookup(str(tmp_path))


def test_circular_links_end(files, tmp_path):
    tmp_path = tmp_path / "pages"
    tmp_path.mkdir()
    names = _pages(files, tmp_path)
    _relink(tmp_path / names[1], next=names[0])
    with pytest.raises(UserError):
        Lookup(str(tmp_path / names[0]))


def test_pages_of_two_versions_mixed_are_refused(files, tmp_path):
    """A page of another version of the file (a copy made while split rewrote the pages, a
    split stopped while it renamed them), with the same number of pages and keys in order, was
    searched with the others: answers from two versions, exit 0. Every page carries the
    original's header lines: pages whose header lines differ are refused in one line."""
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    text = open(files["ukvs"], "rb").read()
    assert b'"created":"' in text
    (old / "a.ukvs").write_bytes(text)
    (new / "a.ukvs").write_bytes(text.replace(b'"created":"', b'"created":"1', 1))
    split(str(old / "a.ukvs"), 20, str(old / "p"))
    split(str(new / "a.ukvs"), 20, str(new / "p"))
    os.remove(old / "a.ukvs")
    names = sorted(n for n in os.listdir(old) if n.startswith("p-"))
    assert len(names) > 3
    shutil.copy(new / names[2], old / names[2])
    for given in (old / names[0], old):
        with pytest.raises(UserError, match="header lines differ"):
            Lookup(str(given))
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "lookup", str(old / names[0]), "http://a.com/"],
                       capture_output=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and r.stderr.count(b"\n") == 1 and b"Traceback" not in r.stderr, r.stderr


def test_an_unsplit_file_is_read_as_before(files):
    with Lookup(files["ukvs"]) as lk:
        assert lk.lookup("*").status == "held"


def test_folder_with_two_files_pages_is_refused(files, tmp_path):
    tmp_path = tmp_path / "pages"
    tmp_path.mkdir()
    _pages(files, tmp_path)
    shutil.copy(files["cdxj"], tmp_path / "x.cdxj")
    split(str(tmp_path / "x.cdxj"), 100, str(tmp_path / "q"))
    os.remove(tmp_path / "x.cdxj")
    with pytest.raises(UserError, match="more than one file"):
        Lookup(str(tmp_path))
