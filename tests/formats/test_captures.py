"""The captures file (profiler.formats.captures): every field by name, read back as the same
captures, recognised by the registry, and hostile lines counted as skips."""

import os

import pytest

from profiler.formats import captures, inputs, registry
from profiler.model.capture import Capture
from profiler.run.profile import run_profile

from helpers.exactness import without_created

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def read_all(path):
    info = inputs.sniff(str(path))
    assert info["format"] == "captures"
    return [c for s in inputs.plan_splits([info], split_size=1 << 20) for c in registry.captures(s)]


def sample_captures():
    split = inputs.plan_splits([inputs.sniff(SAMPLE)])[0]
    return [c for c in registry.captures(split) if not isinstance(c, str)]


def test_every_field_by_name_and_back(tmp_path):
    caps = sample_captures()
    path = tmp_path / "caps.jsonl"
    with open(path, "wb") as f:
        assert captures.write(f, caps) == len(caps) == 5000
    first = path.read_bytes().split(b"\n", 1)[0]
    assert first.startswith(b'{"urlkey":"') and all(b'"%s":' % n.encode() in first for n in Capture._fields)
    assert read_all(path) == caps


def test_a_profile_of_the_captures_is_the_profile_of_their_index(tmp_path):
    """Cut into splits like any line format: the same bytes as the index's profile."""
    path = tmp_path / "caps.jsonl"
    with open(path, "wb") as f:
        captures.write(f, sample_captures())
    for name, src in (("index", SAMPLE), ("captures", str(path))):
        run_profile([src], str(tmp_path / (name + ".cdxj")), runner="inline", split_size=1 << 20)
    def data(name):
        return [line for line in without_created(tmp_path / name).split(b"\n") if not line.startswith(b"!meta")]
    assert data("index.cdxj") == data("captures.cdxj") and len(data("index.cdxj")) > 9000


GOOD = {"urlkey": "com,example)/", "timestamp": "20130101000000", "mime": "text/html", "status": "200",
        "digest": "ABC", "length": 12, "revisit": False, "lang": "fra"}


@pytest.mark.parametrize("change, reason", [
    ({"scheme": "https"}, "unknown_field"),          # a field this build's Capture has not
    ({"urlkey": None}, "bad_field"),
    ({"urlkey": ""}, "bad_field"),
    ({"urlkey": "!com,example)/"}, "bad_field"),     # would start a special line of the profile
    ({"urlkey": "com,example)/a b"}, "bad_field"),   # a blank in a key field
    ({"timestamp": "2013"}, "bad_field"),            # readers pad it
    ({"timestamp": "20131301000000"}, "bad_field"),
    ({"mime": "Text/HTML"}, "bad_field"),
    ({"status": "20"}, "bad_field"),
    ({"digest": "sha1:abc"}, "bad_field"),
    ({"length": -1}, "bad_field"),
    ({"length": 1 << 64}, "bad_field"),
    ({"length": True}, "bad_field"),
    ({"length": "12"}, "bad_field"),
    ({"revisit": 1}, "bad_field"),
    ({"lang": "ARA"}, "bad_field"),                  # not a field the lang criterion writes
    ({"lang": "fr"}, "bad_field"),
    ({"collection": "-"}, "bad_field"),              # any: a name '-' is '%2D'
])
def test_a_value_no_reader_gives_is_a_skip(change, reason):
    import json
    record = dict(GOOD, **change)
    if change.get("urlkey", "") is None:
        del record["urlkey"]
    assert captures.parse(json.dumps(record).encode()) == reason
    assert captures.parse(json.dumps(GOOD).encode()) == Capture(**GOOD)


@pytest.mark.parametrize("line", [b"{", b"[1,2]", b'"x"', b"{" * 100000, b'{"urlkey":' + b"1" * 5000 + b"}"])
def test_a_line_that_is_no_object_is_a_skip(line):
    assert captures.parse(line) in ("bad_json", "bad_field")


def test_a_damaged_captures_file_is_profiled_with_its_skips_counted(tmp_path):
    import orjson
    path = tmp_path / "caps.jsonl"
    lines = [orjson.dumps(dict(GOOD, urlkey="com,example)/%d" % i)) for i in range(5)]
    lines[2] = b'{"urlkey":"com,x)/","timestamp":"2013"}'
    lines[3] = b'{"urlkey":"com,x)/","timestamp":"20130101000000","scheme":"https"}'
    path.write_bytes(b"\n".join(lines) + b"\n" + b'{"urlkey":"com,')      # cut mid-line
    out = tmp_path / "p.cdxj"
    run_profile([str(path)], str(out), runner="inline")
    from profiler.nightly.fold import run_meta
    meta = run_meta(str(out))[0]
    assert meta["captures"] == 3
    assert meta["skipped"] == {"bad_field": 1, "unknown_field": 1, "bad_json": 1}


def test_the_format_is_internal():
    assert registry.FORMATS["captures"].internal and registry.FORMATS["captures"].lines
    assert "captures" not in registry.listing()


CC_INDEX_JSON = [
    b'{"urlkey": "com,example)/", "timestamp": "20251014220259", "url": "https://example.com/", "mime": "text/html",'
    b' "mime-detected": "text/html", "status": "200", "digest": "D4IRZZ6NS7QW37BB2ODQPCUGG7ISRFGV", "length": "12675",'
    b' "offset": "686242195", "filename": "crawl-data/CC-MAIN-2025-43/x.warc.gz", "languages": "eng"}',
    b'{"urlkey":"com,example)/a","timestamp":"20200702224725","url":"https://example.com/a","mime":"text/html",'
    b'"status":"200","length":"36197","offset":"333179634","filename":"b.warc.gz"}',
]


@pytest.mark.parametrize("line", CC_INDEX_JSON)
def test_a_cdx_servers_json_lines_are_not_read_as_captures(tmp_path, line):
    """Common Crawl's index server (and pywb's output=json) writes a JSON object a line that
    starts with urlkey: read as the captures format, every line was an unknown_field skip and
    the run said 0 captures (exit 0). They are the cdxserver format's
    (tests/formats/test_cdxserver.py)."""
    path = tmp_path / "cc.jsonl"
    path.write_bytes(line + b"\n" + line + b"\n")
    assert inputs.sniff(str(path))["format"] == "cdxserver"


def test_a_captures_file_of_a_field_this_build_does_not_know_is_still_read(tmp_path):
    path = tmp_path / "caps.jsonl"
    path.write_bytes(b'{"urlkey":"com,x)/","timestamp":"20130101000000","scheme":"https"}\n')
    assert inputs.sniff(str(path))["format"] == "captures"


@pytest.mark.parametrize("field", ["unk", "%75nk", "%2D", "crawl%202013"])
def test_a_collection_field_a_reader_gives_is_read(field):
    """'unk' (no collection) and the fields of the names 'unk' and '-' are a reader's: a captures
    file of a night before keeps its captures."""
    import json
    record = dict(GOOD, collection=field)
    assert captures.parse(json.dumps(record).encode()) == Capture(**record)
