"""The optional fastwarc reader (profiler.formats.warc_fast) gives exactly what the warcio reader gives."""

import glob
import gzip
import os

import pytest

from profiler.formats import registry, warc, warc_fast
from profiler.testing import synthetic_warc
from profiler.errors import UserError
from profiler.run.profile import run_profile

from helpers.paths import SHARED_DATA, shared_data

fastwarc = pytest.importorskip("fastwarc.warc")

ARCHIVES = sorted(
    os.path.relpath(p, SHARED_DATA) for p in glob.glob(os.path.join(SHARED_DATA, "**", "*"), recursive=True)
    if os.path.isfile(p) and (".warc" in os.path.basename(p) or ".arc" in os.path.basename(p))
    and not p.endswith((".cdx", ".cdxj")))


def test_every_corpus_archive_reads_the_same():
    shared_data()
    differ = [n for n in ARCHIVES if list(warc.iter_captures(os.path.join(SHARED_DATA, n)))
              != list(warc_fast.iter_captures(os.path.join(SHARED_DATA, n)))]
    assert differ == []


@pytest.mark.parametrize("gz", [True, False])
def test_both_readers_make_captures_by_one_definition(tmp_path, gz, monkeypatch):
    """Every record either reader gives out went through warc.capture_of (which record is a
    capture, and its fields), over warcio's record or fastwarc's."""
    path = str(tmp_path / ("g.warc.gz" if gz else "g.warc"))
    synthetic_warc.write_warc(path, 60, seed=3, gzip=gz)
    expected = list(warc.iter_captures(path))
    seen = []
    one_definition = warc.capture_of

    def recorded(view, *args, **kwargs):
        result = one_definition(view, *args, **kwargs)
        seen.append((type(view).__name__, result))
        return result
    monkeypatch.setattr(warc, "capture_of", recorded)
    for reader in (warc.iter_captures, warc_fast.iter_captures):
        seen.clear()
        got = list(reader(path))
        assert got == expected and len(got) > 60
        # in order; a record fastwarc reads last is read again by warcio (its member's length and
        # what follows it), and fastwarc's gzip lengths are set after capture_of
        made = iter([r if isinstance(r, str) else r._replace(length=None) for _, r in seen])
        assert all(any(m == want for m in made)
                   for want in (r if isinstance(r, str) else r._replace(length=None) for r in got))
        kinds = {kind for kind, _ in seen}
        if reader is warc.iter_captures:
            assert kinds == {"WarcioRecord"}
        else:                                     # a gzip file's last record: warcio's
            assert kinds == ({"_FastRecord", "WarcioRecord"} if gz else {"_FastRecord"})


@pytest.mark.parametrize("gz", [True, False])
def test_generated_warc_reads_the_same(tmp_path, gz):
    path = str(tmp_path / ("g.warc.gz" if gz else "g.warc"))
    synthetic_warc.write_warc(path, 800, seed=7, gzip=gz)
    got = list(warc_fast.iter_captures(path))
    assert got == list(warc.iter_captures(path)) and len(got) > 800


def test_broken_tails_are_handed_to_warcio(tmp_path):
    path = tmp_path / "b.warc.gz"
    synthetic_warc.write_warc(str(path), 50, seed=8)
    data = path.read_bytes()
    for cut in (len(data) - 100, len(data) // 2):
        path.write_bytes(data[:cut])
        assert list(warc_fast.iter_captures(str(path))) == list(warc.iter_captures(str(path)))
    whole = tmp_path / "whole.warc.gz"
    whole.write_bytes(gzip.compress(gzip.decompress(data)))
    got = list(warc_fast.iter_captures(str(whole)))
    assert got == list(warc.iter_captures(str(whole)))          # read as it inflates
    plain = tmp_path / "plain.warc"
    plain.write_bytes(gzip.decompress(data))
    assert got[0] == "not_chunked" and got[1:] == list(warc.iter_captures(str(plain)))


def test_same_profile_bytes(tmp_path):
    paths = [str(tmp_path / "a.warc.gz"), str(tmp_path / "b.warc")]
    synthetic_warc.write_warc(paths[0], 500, seed=9)
    synthetic_warc.write_warc(paths[1], 300, seed=10, gzip=False)
    outs = []
    for reader in ("warcio", "fastwarc"):
        out = tmp_path / (reader + ".cdxj")
        run_profile(paths, str(out), policy="full", warc_reader=reader, created="2026-01-01T00:00:00Z")
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0].count(b"\n") > 100


def test_unknown_reader_is_a_user_error():
    with pytest.raises(UserError, match="unknown WARC reader"):
        registry.choose_warc_reader([], "fast")
    splits = registry.choose_warc_reader([{"format": "warc"}, {"format": "cdx"}], "fastwarc")
    assert splits == [{"format": "warc", "reader": "fastwarc"}, {"format": "cdx"}]


def test_cli_warc_reader_option(tmp_path):
    from profiler.cli.main import main
    path = str(tmp_path / "c.warc.gz")
    synthetic_warc.write_warc(path, 200, seed=11)
    outs = []
    for reader in ("warcio", "fastwarc"):
        out = str(tmp_path / (reader + ".cdxj"))
        assert main(["profile", path, "-o", out, "--warc-reader", reader, "-q"]) == 0
        outs.append([l for l in open(out, "rb").read().splitlines() if not l.startswith(b'!meta {"type"')])
    assert outs[0] == outs[1] and len(outs[0]) > 20
