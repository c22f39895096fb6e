"""Inputs as a hostile or careless user gives them: one physical file named many ways is counted
once (and the duplicates are named in !meta), FIFOs and devices are listed as unusable without
being opened (no hang), file names that are not UTF-8 simply work, --split-size has a floor."""

import os
import subprocess
import sys

import pytest

from profiler.nightly import fold as nightly_fold
from profiler.run.profile import run_profile
from profiler.files.profilefile import iter_data

from helpers.damage import one_line_error

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def root_captures(path):
    return dict(iter_data(str(path)))[b"* - - -"]["urim"]["total"]


def run_meta(path):
    return nightly_fold.run_meta(str(path))[0]


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    data = open(SAMPLE, "rb").read()
    (d / "index-2024.cdx.gz").write_bytes(data)
    os.symlink("index-2024.cdx.gz", str(d / "latest.cdx.gz"))
    os.link(str(d / "index-2024.cdx.gz"), str(d / "hard.cdx.gz"))
    (d / "sub").mkdir()
    os.symlink("..", str(d / "sub" / "loop"))
    return d


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_one_file_named_many_ways_counts_once(tmp_path, folder, runner):
    manifest = tmp_path / "m.txt"
    manifest.write_text("in/index-2024.cdx.gz\nin/hard.cdx.gz\nin/index-2024.cdx.gz\n")
    out = tmp_path / "out.cdxj"
    run_profile([str(folder), str(folder / "**")], str(out), runner=runner, manifests=[str(manifest)])
    assert root_captures(out) == 5000
    meta = run_meta(out)
    assert len(meta["inputs"]) == 1
    dropped = {os.path.basename(d["path"]) for d in meta["duplicate_inputs"]}
    kept = os.path.basename(meta["inputs"][0])
    assert {"index-2024.cdx.gz", "latest.cdx.gz", "hard.cdx.gz"} - {kept} <= dropped
    assert not meta.get("skipped_files")        # the ** glob follows the link back to in/ once, not to ELOOP


def test_fifo_and_devices_are_listed_not_opened(tmp_path, folder):
    os.mkfifo(str(folder / "pipe.cdx"))
    manifest = tmp_path / "m.txt"
    manifest.write_text("/dev/zero\nin/index-2024.cdx.gz\n")
    out = tmp_path / "out.cdxj"
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", str(folder), "--manifest", str(manifest),
                        "-o", str(out)], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    assert root_captures(out) == 5000
    reasons = {os.path.basename(i["path"]): i["reason"] for i in run_meta(out)["skipped_files"]}
    assert reasons["pipe.cdx"] == "not a regular file (a FIFO)"
    assert reasons["zero"] == "not a regular file (a character device)"


KERNELS = [p for p in ("/proc/kmsg", "/proc/self/pagemap") if os.access(p, os.R_OK)]


def test_the_kernel_s_files_are_listed_not_read(tmp_path, folder):
    """/proc/kmsg (a read waits for the kernel's next message), /proc/self/pagemap (reads that
    never end) and a /sys folder beside a good input: listed as unusable without a read (the
    run waited for ever, looking for a manifest's first line)."""
    manifest = tmp_path / "m.txt"
    manifest.write_text("".join(p + "\n" for p in KERNELS) + "in/index-2024.cdx.gz\n")
    out = tmp_path / "out.cdxj"
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", str(folder), "/sys/kernel", *KERNELS,
                        "--manifest", str(manifest), "-o", str(out)], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    assert root_captures(out) == 5000
    reasons = {i["path"]: i["reason"] for i in run_meta(out)["skipped_files"]}
    assert reasons["/sys/kernel"] == "on the kernel's sysfs filesystem, not a file of data"
    for path in KERNELS:
        assert reasons[path] == "on the kernel's proc filesystem, not a file of data"


@pytest.mark.parametrize("option", ["--manifest", "--policy", "config"])
def test_a_kernel_s_file_as_a_manifest_policy_or_config_is_one_line(tmp_path, option):
    for path in KERNELS + ["/proc/self/status"]:
        if option == "config":
            args = ["nightly", "--config", path]
        else:
            args = ["profile", SAMPLE, option, path, "-o", str(tmp_path / "out.cdxj")]
        if option == "--manifest":
            args.remove(SAMPLE)
        r = subprocess.run([sys.executable, "-m", "profiler.cli", *args], capture_output=True, text=True,
                           timeout=60, env=dict(os.environ, PYTHONPATH=ROOT))
        words = ["the kernel's proc filesystem"] if option != "--policy" else []   # a policy: not YAML
        assert one_line_error(r.returncode, r.stderr, path, *words), r.stderr
        assert not (tmp_path / "out.cdxj").exists()


@pytest.mark.parametrize("pure", ["", "1"])
@pytest.mark.parametrize("runner", ["inline", "local"])
def test_file_names_that_are_not_utf8(tmp_path, runner, pure, monkeypatch):
    monkeypatch.setenv("ARCHIVE_PROFILER_PURE_PYTHON", pure)
    d = tmp_path / "in"
    d.mkdir()
    name = os.path.join(os.fsencode(str(d)), b"caf\xe9 \xff.cdx.gz")
    with open(name, "wb") as f:
        f.write(open(SAMPLE, "rb").read())
    out = tmp_path / "out.cdxj"
    run_profile([str(d)], str(out), runner=runner)
    assert root_captures(out) == 5000
    assert run_meta(out)["inputs"][0].endswith("caf\\xe9 \\xff.cdx.gz")
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "validate", str(out)], capture_output=True,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stdout


@pytest.mark.parametrize("value, code", [("1", 2), ("512k", 2), ("1M", 0)])
def test_split_size_floor(tmp_path, value, code):
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "profile", SAMPLE, "-o", str(tmp_path / "o.cdxj"),
                        "--split-size", value, "-q"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == code, r.stderr
    if code:
        assert "--split-size" in r.stderr and "at least 1M" in r.stderr


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_an_input_cut_short_while_it_is_profiled_writes_no_profile(tmp_path, runner, monkeypatch):
    """An index truncated in place after the run planned its splits (a copy started over it, a
    rewrite): the job fails in one line naming it, no profile written (the profile of what was
    read, of no version of the file, was written with exit 0). An index grown meanwhile (a crawl
    still writing it) is profiled: its last split reads to its end."""
    import gzip
    from profiler.formats import inputs as inputs_mod
    from profiler.run.profile import JobFailed
    with gzip.open(SAMPLE, "rb") as f:
        data = f.read()
    index = tmp_path / "i.cdx"
    index.write_bytes(data)
    plan = inputs_mod.plan_splits

    def planned_then(change):
        def planning(*args, **kwargs):
            splits = plan(*args, **kwargs)
            change()
            return splits
        return planning

    def cut():
        with open(index, "r+b") as f:
            f.truncate(len(data) // 2)
    out = tmp_path / "p.cdxj"
    monkeypatch.setattr(inputs_mod, "plan_splits", planned_then(cut))
    with pytest.raises(JobFailed, match=r"i.cdx was cut short while the run read it \([0-9,]+ bytes, %s when" %
                       "{:,}".format(len(data))):
        run_profile([str(index)], str(out), runner=runner)
    assert not out.exists()
    index.write_bytes(data)

    def grow():
        with open(index, "ab") as f:
            f.write(data.split(b"\n", 1)[1])
    monkeypatch.setattr(inputs_mod, "plan_splits", planned_then(grow))
    run_profile([str(index)], str(out), runner=runner)
    assert root_captures(out) == 10000
