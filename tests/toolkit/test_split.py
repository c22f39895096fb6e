"""split: sorted, self-describing, linked pages whose data lines concatenate to the original's."""

import os
import shutil
import subprocess
import sys

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.files.sortedfile import UnsortedFile
from profiler.toolkit.merge import MergeError, merge
from profiler.run.profile import run_profile
from profiler.toolkit.split import split
from profiler.files.ukvs import profile_to_map
from profiler.files.validate import validate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    d = tmp_path_factory.mktemp("split")
    path = str(d / "sample.cdxj")
    run_profile([SAMPLE], path, "default", archive_uri="https://archive.example.org/")
    profile_to_map(path, str(d / "sample.ukvs"))
    return d


def parts(path):
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")[:-1]
    heads = [l for l in lines if l[:1] in (b"!", b"@")]
    return heads, lines[len(heads):]


def page_meta(heads):
    return [orjson.loads(h[6:])["page"] for h in heads if h.startswith(b'!meta {"page"')][0]


def line_key(line):
    return line.split(b" {")[0] if b" {" in line else line.rsplit(b" ", 1)[0]


def check_pages(original, pages, max_lines):
    heads, data = parts(original)
    joined = []
    names = [os.path.basename(p) for p in pages]
    for i, page in enumerate(pages):
        report = validate(page)
        assert report.ok, (page, report.problems[:3])
        h, d = parts(page)
        assert len(d) <= max_lines and (d or len(data) == 0)
        assert [x for x in h if not x.startswith(b'!meta {"page"')] == heads
        meta = page_meta(h)
        assert (meta["number"], meta["of"], meta["lines"]) == (i + 1, len(pages), len(d))
        assert meta["self"] == names[i] and meta["first"] == names[0] and meta["last"] == names[-1]
        assert meta["prev"] == (names[i - 1] if i else None)
        assert meta["next"] == (names[i + 1] if i + 1 < len(pages) else None)
        if d:
            assert [k.encode() for k in meta["keys"]] == [line_key(d[0]), line_key(d[-1])]
        joined += d
    assert joined == data


def test_profile_pages(sample, tmp_path):
    original = str(sample / "sample.cdxj")
    out = tmp_path / "out"
    out.mkdir()
    pages = split(original, 1000, str(out / "p"))
    assert len(pages) == 10 and os.path.basename(pages[0]) == "p-00001.cdxj"
    check_pages(original, pages, 1000)
    # the pages hold disjoint keys: merging them gives the original's lines back
    merge(pages, str(out / "back.cdxj"))
    heads, data = parts(str(out / "back.cdxj"))
    assert data == parts(original)[1]
    run_meta = [orjson.loads(h[6:]) for h in heads if h.startswith(b'!meta {"inputs"')][0]
    assert run_meta["captures"] == 5000
    # nothing left behind but the pages
    assert sorted(os.listdir(out)) == sorted([os.path.basename(p) for p in pages] + ["back.cdxj"])


def test_map_pages_and_base_uri(sample, tmp_path):
    original = str(sample / "sample.ukvs")
    pages = split(original, 40, str(tmp_path / "m"), base_uri="https://example.org/maps/")
    links = page_meta(parts(pages[1])[0])
    assert links["prev"] == "https://example.org/maps/m-00001.ukvs"
    heads, data = parts(original)
    assert sum(len(parts(p)[1]) for p in pages) == len(data)
    assert all(validate(p).ok for p in pages)


def test_unsorted_input_writes_nothing(sample, tmp_path):
    heads, data = parts(str(sample / "sample.cdxj"))
    data[5], data[6] = data[6], data[5]
    (tmp_path / "out").mkdir()
    bad = tmp_path / "out" / "bad.cdxj"
    bad.write_bytes(b"\n".join(heads + data) + b"\n")
    with pytest.raises(UnsortedFile, match="not sorted"):
        split(str(bad), 3)
    assert os.listdir(tmp_path / "out") == ["bad.cdxj"]


def test_cli(sample, tmp_path):
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "split", str(sample / "sample.cdxj"),
                        "--max-lines", "5000", "-o", str(tmp_path / "x")], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0 and "2 page(s)" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "split", str(sample / "sample.cdxj"),
                        "--max-lines", "0"], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "positive" in r.stderr


def test_merging_pages_of_two_splits_of_one_profile_is_refused(sample, tmp_path):
    """The README's split then merge, after an earlier split into more pages left a page behind:
    merge refuses the stale page (its captures are on the new pages too), and one page given
    twice; one split's pages give back the profile."""
    from profiler.cli import main as cli
    profile = str(sample / "sample.cdxj")
    prefix = str(tmp_path / "sample")
    assert cli.main(["split", profile, "--max-lines", "2000", "-o", prefix, "-q"]) == 0
    assert cli.main(["split", profile, "--max-lines", "3000", "-o", prefix, "-q"]) == 0
    pages = sorted(str(p) for p in tmp_path.glob("sample-0000?.cdxj"))
    assert len(pages) == 5                      # page 5 of 5 left from the first split
    out = str(tmp_path / "merged.cdxj")
    with pytest.raises(MergeError, match=r"page 1 of 4 and page 5 of 5 of sample.cdxj.*left over"):
        merge(pages, out)
    with pytest.raises(MergeError, match="same file"):
        merge([pages[0], pages[0]], out)
    copy = str(tmp_path / "copy-of-page-1.cdxj")
    shutil.copyfile(pages[0], copy)
    with pytest.raises(MergeError, match="one page given twice"):
        merge([pages[0], copy] + pages[1:4], out)
    assert not os.path.exists(out)
    merge(pages[:4], out)
    assert parts(out)[1] == parts(profile)[1]


def test_one_page_is_never_read_as_the_whole_file(sample, tmp_path):
    """A command that reads a profile or map whole, given one page of several, refuses in one
    line naming the file the page is of (it answered from the page as if it were all: query said
    "none are held" of a key on another page, ukvs wrote a map of the page's keys, diff listed
    the other pages' keys as vanished); merge refuses some pages of a split without the others.
    lookup reads a page with its others, and a page of one is the whole file."""
    from profiler.cli import main as cli
    for name, lines in (("sample.cdxj", "2000"), ("sample.ukvs", "30")):
        assert cli.main(["split", str(sample / name), "--max-lines", lines, "-o", str(tmp_path / "p"), "-q"]) == 0
    page, map_page = str(tmp_path / "p-00002.cdxj"), str(tmp_path / "p-00002.ukvs")
    out = str(tmp_path / "out")
    refused = {
        "query": ["query", page, "--surt", "*"],
        "ukvs": ["ukvs", page, "-o", out],
        "compact": ["compact", page, "--max-lines", "100", "-o", out],
        "compact a map": ["compact", map_page, "--max-lines", "100", "-o", out],
        "split": ["split", page, "--max-lines", "100", "-o", out],
        "export": ["export", page, "--format", "jsonld", "-o", out],
        "diff": ["diff", str(sample / "sample.cdxj"), page],
        "overlap": ["overlap", page, str(sample / "sample.cdxj")],
        "report": ["report", page, "-o", out + ".html"],
        "merge": ["merge", page, str(tmp_path / "p-00001.cdxj"), "-o", out],
        "merge maps": ["merge", map_page, str(tmp_path / "p-00001.ukvs"), "-o", out],
    }
    for what, argv in refused.items():
        r = subprocess.run([sys.executable, "-m", "profiler.cli"] + argv, capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=ROOT))
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "of sample." in r.stderr, (what, r.stderr)
        assert "page 2 of" in r.stderr or "page(s) 3" in r.stderr, (what, r.stderr)
        assert not os.path.exists(out), what
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "lookup", page, "http://example.com/"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode in (0, 1) and "page" not in r.stderr, r.stderr
    assert cli.main(["split", str(sample / "sample.cdxj"), "--max-lines", "100000", "-o", str(tmp_path / "one"),
                     "-q"]) == 0
    assert cli.main(["query", str(tmp_path / "one-00001.cdxj"), "--surt", "*", "-q"]) == 0


KEYS = st.lists(st.text("abc,)/*-", min_size=1, max_size=6), unique=True, max_size=30)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=KEYS, max_lines=st.integers(1, 12), ukvs=st.booleans())
def test_property_split_round_trip(tmp_path, keys, max_lines, ukvs):
    keys = sorted(k.replace("!", "a") for k in keys)
    if ukvs:
        heads = [b'!context ["http://oduwsdl.github.io/contexts/ukvs"]',
                 b'!fields {"keys":["surt"],"values":["frequency"]}']
        data = [k.encode() + b" %d/1" % (i + 1) for i, k in enumerate(keys)]
    else:
        heads = [b'!context ["http://oduwsdl.github.io/contexts/archiveprofiles"]',
                 b'!keys ["surt","datetime","mime","status"]']
        value = b'{"urim":{"total":1,"min":1,"max":1},"urir":1,"bytes":5,"digests":1,"dedup_bytes":5,' \
                b'"first":"20010101000000","last":"20010101000000"}'
        data = [k.encode() + b" - - - " + value for k in keys]
    original = tmp_path / ("in.ukvs" if ukvs else "in.cdxj")
    original.write_bytes(b"\n".join(heads + data) + b"\n")
    folder = tmp_path / ("out%d" % len(os.listdir(tmp_path)))
    folder.mkdir()
    pages = split(str(original), max_lines, str(folder / "page"))
    assert len(pages) == max(1, -(-len(data) // max_lines))
    check_pages(str(original), pages, max_lines)
