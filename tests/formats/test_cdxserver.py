"""A CDX server's JSON answers saved to a file (profiler.formats.cdxserver): JSON lines of
entries by name (pywb, Common Crawl's index server) and the Wayback CDX API's JSON array, whose
first row names the fields. Both give the profile of the same entries as a CDXJ or CDX index,
whatever the splits and the runner; a row that is not an entry is a counted skip."""

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.nightly.fold import run_meta
from profiler.formats import inputs
from profiler.run.profile import run_profile

from helpers.damage import data_lines
from helpers.random_archives import random_captures

API_NAMES = ["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"]


def _url(urlkey):
    return "http://x/" if ")" in urlkey else urlkey


def json_lines(caps):
    return [json.dumps({"urlkey": u, "timestamp": t, "url": _url(u), "mime": m, "status": s, "digest": d,
                        "length": str(n), "offset": "0", "filename": "a.warc.gz"}).encode() for u, t, m, s, d, n in caps]


def cdxj_lines(caps):
    return [("%s %s %s" % (u, t, json.dumps({"url": _url(u), "mime": m, "status": s, "digest": d, "length": str(n),
                                            "offset": "0", "filename": "a.warc.gz"}))).encode()
            for u, t, m, s, d, n in caps]


def api_lines(caps):
    rows = [API_NAMES] + [[u, t, _url(u), m, s, d, str(n)] for u, t, m, s, d, n in caps]
    out = [json.dumps(row).encode() + b"," for row in rows]
    out[0] = b"[" + out[0]
    out[-1] = out[-1][:-1] + b"]"
    return out


def api_cdx_lines(caps):
    return [b" CDX N b a m s k S"] + [("%s %s %s %s %s %s %d" % (u, t, _url(u), m, s, d, n)).encode()
                                      for u, t, m, s, d, n in caps]


def profile(tmp_path, name, lines, *args, **options):
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / (name + ".cdxj")
    run_profile([str(path)], str(out), created="2026-01-01T00:00:00Z", **options)
    return out


def skipped(path):
    return {k: v for k, v in run_meta(str(path))[0].get("skipped", {}).items() if v}


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2 ** 32 - 1), split_size=st.sampled_from([None, 300, 1000]),
       runner=st.sampled_from(["inline", "local"]))
def test_both_shapes_profile_as_the_same_index(tmp_path_factory, seed, split_size, runner):
    """Random entries (revisits, '-' statuses and digests, dns: keys) of both shapes, cut in
    splits of a few hundred bytes: the profile of the same entries as CDXJ lines (JSON lines)
    or as a CDX of the API's seven fields (the array)."""
    tmp = tmp_path_factory.mktemp("s")
    caps = sorted(random_captures(random.Random(seed)))
    options = dict(runner=runner, **({"split_size": split_size} if split_size else {}))
    assert data_lines(profile(tmp, "a.jsonl", json_lines(caps), **options)) == \
        data_lines(profile(tmp, "a.cdxj", cdxj_lines(caps), **options))
    assert data_lines(profile(tmp, "b.json", api_lines(caps), **options)) == \
        data_lines(profile(tmp, "b.cdx", api_cdx_lines(caps), **options))


def test_the_shapes_are_recognised(tmp_path):
    caps = sorted(random_captures(random.Random(1)))
    (tmp_path / "a.jsonl").write_bytes(b"\n".join(json_lines(caps)) + b"\n")
    (tmp_path / "b.json").write_bytes(b"\n".join(api_lines(caps)) + b"\n")
    assert inputs.sniff(str(tmp_path / "a.jsonl"))["format"] == "cdxserver"
    found = inputs.sniff(str(tmp_path / "b.json"))
    assert found["format"] == "cdxserver" and found["fields"] == " ".join(API_NAMES)


@pytest.mark.parametrize("bad, reason", [
    (b'["com,a)/", "20130101000000"],', "bad_field_count"),        # a row shorter than the names
    (b'{"not": "json",', "bad_json"),
    (b'"just a string",', "bad_json"),
])
def test_a_row_that_is_no_entry_is_a_counted_skip(tmp_path, bad, reason):
    caps = sorted(random_captures(random.Random(2)))
    lines = api_lines(caps)
    lines.insert(2, bad)
    out = profile(tmp_path, "b.json", lines)
    assert skipped(out) == {reason: 1}
    assert data_lines(out) == data_lines(profile(tmp_path, "b.cdx", api_cdx_lines(caps)))


def test_json_lines_with_a_bad_line_count_it(tmp_path):
    caps = sorted(random_captures(random.Random(3)))
    lines = json_lines(caps)
    lines.insert(1, b'{"urlkey": "com,a)/", "timestamp": "20130101000000", "url": "http://a.com/"')
    lines.insert(2, b"[1, 2, 3]")
    out = profile(tmp_path, "a.jsonl", lines)
    assert skipped(out) == {"bad_json": 2}
    assert data_lines(out) == data_lines(profile(tmp_path, "a.cdxj", cdxj_lines(caps)))
