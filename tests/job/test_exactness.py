"""End to end: every line of the profile equals a brute-force oracle over the same captures."""

import os
import random
import subprocess

import pytest

from profiler.run.profile import run_profile
from profiler.model.policy import load as load_policy

from helpers.exactness import generate_lines, write_files, check_against_oracle, without_created
from helpers.oracle import profile as oracle_profile, read_captures, read_profile, resolve_revisits


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    lines = generate_lines(seed=7)
    return folder, lines, write_files(str(folder), lines)


@pytest.mark.parametrize("policy_name", ["full", "default"])
def test_every_line_matches_oracle(corpus, tmp_path, policy_name):
    folder, lines, paths = corpus
    out = str(tmp_path / "p.cdxj")
    summary = run_profile(paths, out, policy=policy_name, runner="inline", split_size=3000)
    assert summary["splits"] > len(paths)          # files were cut into several splits
    n = check_against_oracle(paths, out, policy_name)
    assert n > (2000 if policy_name == "full" else 100)


def test_shuffled_input_gives_the_same_profile(corpus, tmp_path):
    folder, lines, paths = corpus
    shuffled = write_files(str(tmp_path), lines, n_files=2, seed=3, shuffle=True)
    a, b = str(tmp_path / "a.cdxj"), str(tmp_path / "b.cdxj")
    run_profile(paths, a, policy="full", created="X")
    run_profile(shuffled, b, policy="full", created="X")
    assert _data_lines(a) == _data_lines(b)


def _data_lines(path):
    with open(path, "rb") as f:
        return [l for l in f if not l.startswith(b"!")]


def test_inline_and_local_runners_write_identical_bytes(corpus, tmp_path):
    folder, lines, paths = corpus
    a, b = str(tmp_path / "inline.cdxj"), str(tmp_path / "local.cdxj")
    run_profile(paths, a, policy="full", runner="inline", split_size=3000)
    summary = run_profile(paths, b, policy="full", runner="local", split_size=3000, cores=3)
    assert summary["splits"] >= 2
    assert summary["parts"] >= 3, summary["parts"]
    assert without_created(a) == without_created(b)


def test_legend_order_and_compression_do_not_change_the_profile(corpus, tmp_path):
    """A legend in another field order, gzip, bz2 and CDXJ copies of the same captures."""
    import bz2
    import gzip
    import json
    folder, lines, paths = corpus
    order = "g V S M r k s m a b N".split()
    standard = "N b a m s k r M S V g".split()
    permuted = [" CDX " + " ".join(order)]
    cdxj = []
    for line in lines:
        f = dict(zip(standard, line.split()))
        permuted.append(" ".join(f[c] for c in order))
        cdxj.append("%s %s %s" % (f["N"], f["b"], json.dumps(
            {"url": f["a"], "mime": f["m"], "status": f["s"], "digest": "sha1:" + f["k"].lower(),
             "length": f["S"]})))
    text = "\n".join(permuted) + "\n"
    (tmp_path / "permuted.cdx").write_text(text)
    with gzip.open(tmp_path / "permuted.cdx.gz", "wt") as f:
        f.write(text)
    with bz2.open(tmp_path / "permuted.cdx.bz2", "wt") as f:
        f.write(text)
    (tmp_path / "copy.cdxj").write_text("\n".join(cdxj) + "\n")
    reference = str(tmp_path / "ref.cdxj")
    run_profile(paths, reference, policy="default")
    expected = _data_lines(reference)
    for name in ("permuted.cdx", "permuted.cdx.gz", "permuted.cdx.bz2", "copy.cdxj"):
        out = str(tmp_path / (name + ".profile"))
        run_profile([str(tmp_path / name)], out, policy="default", split_size=5000)
        assert _data_lines(out) == expected, name


def test_any_table_limit_writes_the_same_bytes(corpus, tmp_path):
    """--table-limit (steps 1 and 2 flush and spill more often) changes memory, not the profile."""
    folder, lines, paths = corpus
    a, b = str(tmp_path / "default.cdxj"), str(tmp_path / "small.cdxj")
    run_profile(paths, a, policy="full", runner="inline", split_size=3000)
    run_profile(paths, b, policy="full", runner="inline", split_size=3000, extra_args=["--table-limit", "3"])
    assert without_created(a) == without_created(b)
