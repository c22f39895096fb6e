"""Damaged WARC and ARC files: cut, corrupted or followed by garbage at random places.

Real archives are written with warcio (WARC) or by hand (ARC v1), plain, a gzip member per
record, or one gzip stream, then damaged. The oracle is the reader's own answer on the
undamaged file, record by record: every record that lies wholly before the damage is counted
exactly as there; the damage is one counted reason; in a file of gzip members the records
after a damaged member are read too; no length is ever negative; warcio and fastwarc give the
same; and the profile validates, the same with the compiled kernels and the Python ones.
"""

import gzip
import io
import random
import re
import zlib

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from profiler.files.validate import validate
from profiler.formats import inputs, registry, warc
from profiler.formats import warc_records as framing
from profiler.run.profile import run_profile
from profiler.nightly import fold

from helpers.exactness import pure_python

#: the reasons that name damage
DAMAGE = {"corrupt_gzip", "bad_record", "truncated_record", "truncated_file"}
LAYOUTS = ("plain", "records", "whole")
HOSTS = ["example.com", "a.example.org", "b.example.org", "x.co.uk"]


def _http_block(rng, mime):
    body = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300))) if rng.random() < 0.3 else \
        (b"<html><body>%s</body></html>" % (b"page %d " % rng.randint(0, 9)) * rng.randint(1, 40))
    return StatusAndHeaders(rng.choice(["200 OK", "404 Not Found", "301 Moved"]),
                            [("Content-Type", mime)], protocol="HTTP/1.1"), body


def warc_records(seed, n):
    """The plain bytes of n WARC records (warcio's writer, fixed ids and dates)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        buf = io.BytesIO()
        writer = WARCWriter(buf, gzip=False)
        url = "http://%s/p%d" % (rng.choice(HOSTS), rng.randint(0, 20))
        date = "20%02d-%02d-01T00:00:00Z" % (rng.randint(10, 20), rng.randint(1, 12))
        headers = {"WARC-Date": date, "WARC-Record-ID": "<urn:uuid:%032x>" % rng.getrandbits(128)}
        kind = rng.choice(["response", "response", "response", "resource", "request", "metadata", "warcinfo"])
        if kind == "warcinfo":
            record = writer.create_warcinfo_record("x.warc", {"software": "test"})
            record.rec_headers.replace_header("WARC-Record-ID", headers["WARC-Record-ID"])
        elif kind == "response":
            http, body = _http_block(rng, rng.choice(["text/html", "image/png"]))
            record = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http,
                                               warc_headers_dict=headers)
        elif kind == "request":
            body = b"GET /p HTTP/1.1\r\nHost: %s\r\n\r\n" % rng.choice(HOSTS).encode()
            record = writer.create_warc_record(url, kind, payload=io.BytesIO(body), warc_headers_dict=headers)
        else:
            body = b"x" * rng.randint(0, 200)
            record = writer.create_warc_record(url, kind, payload=io.BytesIO(body), warc_headers_dict=headers,
                                               warc_content_type="text/plain")
        writer.write_record(record)
        out.append(buf.getvalue())
    return out


def arc_records(seed, n):
    """The plain bytes of an ARC v1 file's filedesc record and n - 1 response records."""
    rng = random.Random(seed)
    version = b"1 0 test\nURL IP-address Archive-date Content-type Archive-length\n"
    out = [b"filedesc://x.arc 0.0.0.0 20150101000000 text/plain %d\n%s\n" % (len(version), version)]
    for i in range(n - 1):
        mime = rng.choice(["text/html", "image/png"])
        http, body = _http_block(rng, mime)
        block = http.to_bytes() + body
        line = b"http://%s/p%d 192.0.2.1 20%02d0101000000 %s %d\n" % (
            rng.choice(HOSTS).encode(), rng.randint(0, 20), rng.randint(10, 20), mime.encode(), len(block))
        out.append(line + block + b"\n")
    return out


def _member(data):
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


def build(records, layout, arc):
    """(file bytes, [(start, end)] of each record's stored bytes that must be whole for it to
    count: plain, its header and block; a member per record, its member; one gzip stream, its
    header and block in the inflated bytes)."""
    tail = 1 if arc else 4                      # the blank line(s) after a record's block
    spans, pos = [], 0
    if layout == "records" or (layout == "whole" and len(records) == 1):     # one record: its member
        parts = [_member(r) for r in records]
        for part in parts:
            spans.append((pos, pos + len(part)))
            pos += len(part)
        return b"".join(parts), spans
    for r in records:
        spans.append((pos, pos + len(r) - tail))
        pos += len(r)
    data = b"".join(records)
    return (gzip.compress(data) if layout == "whole" else data), spans


def read(path, reader="warcio"):
    """What the reader gives for a file, through sniffing and splitting as `profile` does."""
    info = inputs.sniff(str(path))
    if info["format"] is None:
        return None
    splits = registry.choose_warc_reader(inputs.plan_splits([info]), reader)
    return [c for s in splits for c in registry.captures(s)]


def records_of(results):
    """Results without the note that a file is one gzip stream (one per file, wherever found)."""
    return [r for r in results if r != "not_chunked"]


def whole_before(data, spans, layout, damage_at, records=None):
    """How many records lie wholly before the damage at offset damage_at. A gzip stream
    damaged before the first line of its second record is whole is a damaged member that holds
    one record (nothing tells it from one): none then (records given)."""
    if layout == "whole":
        inflater = zlib.decompressobj(31)
        try:
            limit = len(inflater.decompress(data[:damage_at]))
        except zlib.error:
            limit = 0
        if records is not None and len(records) > 1 and limit < spans[1][0] + records[1].index(b"\n") + 1:
            return 0
    else:
        limit = damage_at
    return next((i for i, (_, end) in enumerate(spans) if end > limit), len(spans))


garbage = st.binary(min_size=1, max_size=300).filter(
    lambda g: b"\x1f\x8b" not in g and g.strip() and not g.lstrip().startswith((b"WARC/", b"filedesc:")))
damages = st.one_of(
    st.tuples(st.just("cut"), st.floats(0, 1, exclude_max=True)),
    st.tuples(st.just("append"), garbage),
    st.tuples(st.just("insert"), st.floats(0, 1, exclude_min=True, exclude_max=True), garbage),
    st.tuples(st.just("flip"), st.floats(0, 1, exclude_max=True), st.integers(1, 255)))


def damaged(data, damage):
    """(damaged bytes, offset of the first damaged byte)."""
    kind = damage[0]
    if kind == "append":
        return data + damage[1], len(data)
    k = int(damage[1] * len(data))
    if kind == "cut":
        return data[:k], k
    if kind == "insert":
        k = max(1, k)
        return data[:k] + damage[2] + data[k:], k
    flipped = bytearray(data)
    flipped[k] ^= damage[2]
    return bytes(flipped), k


def check(tmp_path, records, layout, arc, damage):
    if len(records) == 1 and layout == "whole":
        layout = "records"                      # one member that holds one record
    data, spans = build(records, layout, arc)
    clean = tmp_path / ("clean" + (".arc" if arc else ".warc") + (".gz" if layout != "plain" else ""))
    clean.write_bytes(data)
    oracle = records_of(read(clean))
    assert len(oracle) == len(records) and not DAMAGE & set(oracle)
    bad, at = damaged(data, damage)
    path = tmp_path / ("bad" + clean.name[5:])
    path.write_bytes(bad)
    got = read(path)
    assert got == read(path, "fastwarc")                 # both readers give the same
    if got is None:                                      # nothing recognisable is left
        assert whole_before(data, spans, layout, at) == 0
        return got
    lengths = [c[5] for c in got if isinstance(c, tuple)]
    assert all(isinstance(n, int) and n >= 0 for n in lengths)
    got = records_of(got)
    before = whole_before(data, spans, layout, at)
    if got[:before] != oracle[:before]:                  # a stream damaged before its second record
        before = whole_before(data, spans, layout, at, records)
    assert got[:before] == oracle[:before]               # every record before the damage, exactly
    rest = got[before:]
    kind = damage[0]
    if layout == "records" and len(records) == 1 and kind in ("flip", "insert"):
        assert DAMAGE & set(rest) or rest == oracle     # one damaged member: a stream or a record
    elif layout == "records" and kind != "cut":          # read around the damaged member
        damaged_member = next((i for i, (s, e) in enumerate(spans) if s < at < e or (s == at and kind == "flip")),
                              None)
        if kind == "append":
            assert rest == [rest[0]] and rest[0] in DAMAGE
        elif kind == "insert" and damaged_member is None:      # garbage between two members
            assert rest[0] in DAMAGE and rest[1:] == oracle[before:]
        else:
            assert rest[1:] == oracle[before + 1:]
            assert rest[0] == oracle[before] or rest[0] in DAMAGE
    elif kind in ("cut", "append"):                      # the damage is the end: one reason, or none
        assert len(rest) <= 1 and set(rest) <= DAMAGE
        if layout == "whole" or kind == "append":
            assert len(rest) == 1
    elif layout == "whole" and _stream_damaged(bad, data):
        assert DAMAGE & set(rest)
    return got


def _stream_damaged(bad, data):
    try:
        return zlib.decompress(bad, 31) != zlib.decompress(data, 31)
    except zlib.error:
        return True


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 7), layout=st.sampled_from(LAYOUTS), arc=st.booleans(),
       damage=damages)
# a flip in the filedesc record's member inflates to bytes that split into seven fields: the sniff
# took the damaged start for a CDX line (an index's filedesc entry) and read nothing
@example(seed=0, n=1, layout="records", arc=True, damage=("flip", 0.1875, 1))
@example(seed=1, n=1, layout="records", arc=True, damage=("flip", 0.21484375, 1))
# one gzip stream: the first line inflated up to the damage, 'filedesc://x.arc 0.0.0.0 ...' in 7
# fields, was taken for an index's filedesc entry (an IP address is no index's second field)
@example(seed=2, n=1, layout="whole", arc=True, damage=("flip", 0.119140625, 1))
def test_damaged_archives_count_what_lies_before_the_damage(tmp_path, seed, n, layout, arc, damage):
    records = arc_records(seed, n + 1) if arc else warc_records(seed, n)
    check(tmp_path, records, layout, arc, damage)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6), layout=st.sampled_from(LAYOUTS), arc=st.booleans(), damage=damages)
def test_profiles_of_damaged_archives_validate(tmp_path, seed, layout, arc, damage):
    records = arc_records(seed, 6) if arc else warc_records(seed, 6)
    data, _ = build(records, layout, arc)
    bad, _ = damaged(data, damage)
    path = tmp_path / ("in.arc.gz" if arc else "in.warc.gz")
    path.write_bytes(bad)
    got = read(path)
    outs = []
    for reader in ("warcio", "fastwarc"):
        out = tmp_path / (reader + ".cdxj")
        try:
            run_profile([str(path)], str(out), warc_reader=reader, created="2026-01-01T00:00:00Z")
        except inputs.InputError:
            assert got is None                           # nothing recognisable: refused in one line
            return
        outs.append(out.read_bytes())
        assert validate(str(out)).ok
        assert b'":-' not in out.read_bytes() and b"[-" not in out.read_bytes()
    with pure_python():                                  # the Python kernels, not the compiled ones
        run_profile([str(path)], str(tmp_path / "pure.cdxj"), created="2026-01-01T00:00:00Z")
    assert outs[0] == outs[1] == (tmp_path / "pure.cdxj").read_bytes()
    meta = fold.run_meta(str(tmp_path / "warcio.cdxj"))[0]
    assert meta["captures"] == sum(isinstance(c, tuple) for c in got)
    reasons = [c for c in got if isinstance(c, str)]
    assert meta["skipped"] == {r: reasons.count(r) for r in set(reasons)}


# ---------------------------------------------------------------- the cases, one by one

def _captures(results):
    return [r for r in results if isinstance(r, tuple)]


def _reasons(results):
    return sorted(r for r in results if isinstance(r, str))


@pytest.fixture
def twelve():
    return warc_records(3, 12)


def test_whole_file_gzip_followed_by_garbage(tmp_path, twelve):
    data, _ = build(twelve, "whole", False)
    path = tmp_path / "w.warc.gz"
    path.write_bytes(data + b"trailing garbage\n" * 20)
    got = read(path)
    clean = tmp_path / "c.warc.gz"
    clean.write_bytes(data)
    assert _captures(got) == _captures(read(clean)) and len(_captures(got)) >= 3
    assert _reasons(got) == sorted(_reasons(read(clean)) + ["corrupt_gzip"])
    assert min(c[5] for c in _captures(got)) > 0


def test_whole_file_gzip_cut_or_corrupt_mid_stream(tmp_path, twelve):
    data, spans = build(twelve, "whole", False)
    clean = tmp_path / "c.warc.gz"
    clean.write_bytes(data)
    oracle = records_of(read(clean))
    path = tmp_path / "w.warc.gz"
    half = len(data) // 2
    path.write_bytes(data[:half])
    got = records_of(read(path))
    before = whole_before(data, spans, "whole", half)
    assert before >= 3 and got == oracle[:before] + ["truncated_record"]
    corrupt = bytearray(data)
    corrupt[-6] ^= 0xFF                    # the stream's length check fails at its end
    path.write_bytes(bytes(corrupt))
    assert records_of(read(path)) == oracle + ["corrupt_gzip"]


@pytest.mark.parametrize("arc", [False, True])
def test_a_corrupt_member_is_skipped_and_the_rest_read(tmp_path, arc):
    records = arc_records(5, 10) if arc else warc_records(5, 10)
    data, spans = build(records, "records", arc)
    clean = tmp_path / "c.gz"
    clean.write_bytes(data)
    oracle = records_of(read(clean))
    start, end = spans[4]
    corrupt = bytearray(data)
    corrupt[(start + end) // 2] ^= 0x55
    path = tmp_path / "b.gz"
    path.write_bytes(bytes(corrupt))
    assert read(path) == read(path, "fastwarc") == oracle[:4] + ["corrupt_gzip"] + oracle[5:]
    path.write_bytes(data[:end] + gzip.compress(b"a valid gzip member that holds no record\n") + data[end:])
    assert read(path) == read(path, "fastwarc") == oracle[:5] + ["bad_record"] + oracle[5:]


def test_a_member_of_blank_lines_is_no_part_of_the_record_before(tmp_path, twelve):
    """Both readers pass over it, as if it were not there (warcio read it as a record of its own:
    a phantom other_record)."""
    data, spans = build(twelve, "records", False)
    path = tmp_path / "b.warc.gz"
    path.write_bytes(data[:spans[5][1]] + gzip.compress(b"\r\n\r\n") + data[spans[5][1]:])
    got = read(path)
    assert got == read(path, "fastwarc") == read(_write(tmp_path, data))


def _write(tmp_path, data):
    path = tmp_path / "clean.warc.gz"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("layout", LAYOUTS)
def test_lengths_are_never_negative_whatever_the_damage(tmp_path, layout, twelve):
    data, _ = build(twelve, layout, False)
    path = tmp_path / "n.warc.gz"
    rng = random.Random(1)
    for _ in range(40):
        bad, _ = damaged(data, rng.choice([("cut", rng.random()), ("append", b"junk\n" * 9),
                                           ("insert", rng.random() or 0.5, b"\x00junk" * 7),
                                           ("flip", rng.random(), rng.randint(1, 255))]))
        path.write_bytes(bad)
        for reader in ("warcio", "fastwarc"):
            assert all(c[5] >= 0 for c in _captures(read(path, reader) or []))


@pytest.mark.parametrize("content_length", [b"-5", b"-2046788874", b"99999999999", b"12abc"])
@pytest.mark.parametrize("gz", [False, True])
def test_lying_content_lengths(tmp_path, content_length, gz, twelve):
    """A Content-Length that is negative, huge or not a number: the records before it count,
    it is counted as warcio frames it, and no length is negative."""
    lying = twelve[4].replace(b"Content-Length: ", b"Content-Length: " + content_length + b"\r\nX-Was: ", 1)
    records = twelve[:4] + [lying] + twelve[5:]
    data = b"".join(_member(r) for r in records) if gz else b"".join(records)
    path = tmp_path / ("l.warc.gz" if gz else "l.warc")
    path.write_bytes(data)
    got = read(path)
    assert got == read(path, "fastwarc")
    clean = _write(tmp_path, b"".join(_member(r) for r in twelve) if gz else b"".join(twelve))
    assert got[:4] == read(clean)[:4]
    assert all(c[5] >= 0 for c in _captures(got))
    if gz:                                    # the member frames the record: the rest is read
        assert got[5:] == read(clean)[5:]


def test_an_arc_record_with_a_lying_length(tmp_path):
    records = arc_records(7, 8)
    line, _, rest = records[3].partition(b"\n")
    records[3] = line.rsplit(b" ", 1)[0] + b" 5\n" + rest        # says 5 bytes, holds more
    for layout in ("plain", "records"):
        data, _ = build(records, layout, True)
        path = tmp_path / ("a.arc" + (".gz" if layout == "records" else ""))
        path.write_bytes(data)
        got = read(path)
        assert got == read(path, "fastwarc")
        clean = tmp_path / ("c.arc" + (".gz" if layout == "records" else ""))
        clean.write_bytes(build(arc_records(7, 8), layout, True)[0])
        assert got[:3] == read(clean)[:3] and all(c[5] >= 0 for c in _captures(got))
        if layout == "records":
            assert got[4:] == read(clean)[4:]


def test_truncated_warc_headers(tmp_path, twelve):
    for gz in (False, True):
        data = b"".join(_member(r) for r in twelve[:3]) if gz else b"".join(twelve[:3])
        head = twelve[3][:twelve[3].index(b"Content-Length")]
        path = tmp_path / ("h.warc.gz" if gz else "h.warc")
        path.write_bytes(data + (_member(head) if gz else head))
        got = read(path)
        assert got[:3] == read(_write(tmp_path, data))[:3] and got[3:] == ["truncated_record"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", [b"response", b"request", b"revisit"])
def test_a_record_without_a_target_uri_is_skipped_and_the_rest_read(tmp_path, layout, kind, twelve):
    """A well-framed response, request or revisit record with no WARC-Target-URI (warcio's
    loader failed on it, and a plain file lost every record after it): that record is
    'bad_url' (a request: 'request_record'), every other counts as in the file without it."""
    records = list(twelve)
    at = next(i for i, r in enumerate(records) if i >= 3 and b"WARC-Type: response\r\n" in r)
    head, sep, block = records[at].partition(b"\r\n\r\n")
    head = re.sub(rb"WARC-Target-URI: [^\r]*\r\n", b"", head).replace(b"WARC-Type: response", b"WARC-Type: " + kind)
    records[at] = head + sep + block
    path = tmp_path / ("n.warc" + (".gz" if layout != "plain" else ""))
    path.write_bytes(build(records, layout, False)[0])
    got = records_of(read(path))
    clean = tmp_path / ("c.warc" + (".gz" if layout != "plain" else ""))
    clean.write_bytes(build(twelve[:at] + twelve[at + 1:], layout, False)[0])
    expected = records_of(read(clean))
    reason = "request_record" if kind == b"request" else "bad_url"
    assert got == expected[:at] + [reason] + expected[at:]
    if layout != "whole":
        assert got == records_of(read(path, "fastwarc"))


def _huge_header_member(head, size, tail):
    """A gzip member of head, size bytes of 'a' (no newline) and tail, inflated a MiB at a time."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [c.compress(head)]
    block = b"a" * (1 << 20)
    for _ in range(size >> 20):
        out.append(c.compress(block))
    out.append(c.compress(tail) + c.flush())
    return b"".join(out)


@pytest.mark.parametrize("where", ["warc", "http"])
def test_a_record_header_of_400_mb_is_read_in_bounded_memory(tmp_path, twelve, where):
    """A WARC header line, or an HTTP header line in a response block, of 400 MB from 400 KB
    (warcio reads a header line whole: 1 GB and more): the record is 'bad_record' (warcio and
    fastwarc alike) once its header
    lines pass framing.MAX_HEAD (profiler.formats.warc_records), the records around it count."""
    import os
    import subprocess
    import sys
    size = 400 << 20
    if where == "warc":
        bad = _huge_header_member(b"WARC/1.0\r\nWARC-Type: response\r\nX-Big: ", size, b"\r\nContent-Length: 0\r\n\r\n\r\n\r\n")
    else:
        head = (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://example.com/h\r\n"
                b"WARC-Date: 2013-01-01T00:00:00Z\r\nContent-Type: application/http; msgtype=response\r\n"
                b"Content-Length: %d\r\n\r\nHTTP/1.1 200 OK\r\nX-Big: " % (size + 29))
        bad = _huge_header_member(head, size, b"\r\n\r\n\r\n\r\n")
    path = tmp_path / "h.warc.gz"
    path.write_bytes(b"".join(_member(r) for r in twelve[:4]) + bad + b"".join(_member(r) for r in twelve[4:]))
    clean = _write(tmp_path, b"".join(_member(r) for r in twelve))
    expected = read(clean)
    assert read(path) == expected[:4] + ["bad_record"] + expected[4:] == read(path, "fastwarc")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = ("import sys; from profiler.cli.main import main; r = main(sys.argv[1:]); "
            "print(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]); sys.exit(r)")
    r = subprocess.run([sys.executable, "-c", code, "profile", str(path), "-o", str(tmp_path / "out.cdxj"), "-q"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=root))
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.split()[-1]) < 200 * 1024          # KB: well under the 400 MB line


def test_header_lines_past_the_bound_end_the_record_not_the_file(tmp_path, twelve, monkeypatch):
    """Many short header lines (a header of 100,000 fields) count toward the bound as one long
    line does; plain, the records before it count; many blank lines between records do not."""
    monkeypatch.setattr(framing, "MAX_HEAD", 1 << 16)
    fields = b"".join(b"X-F%d: v\r\n" % i for i in range(20000))
    bad = twelve[4].replace(b"WARC-Type: ", fields + b"WARC-Type: ", 1)
    plain = b"".join(twelve[:4]) + bad + b"".join(twelve[5:])
    path = tmp_path / "p.warc"
    path.write_bytes(plain)
    expected = read(_write(tmp_path, b"".join(twelve)))
    got = read(path)
    assert got[:4] == expected[:4] and got[4:] == ["bad_record"]
    gz = tmp_path / "g.warc.gz"
    gz.write_bytes(b"".join(_member(r) for r in twelve[:4] + [bad] + twelve[5:]))
    expected = read(_write(tmp_path, b"".join(_member(r) for r in twelve)))
    assert read(gz) == expected[:4] + ["bad_record"] + expected[5:]
    spaced = tmp_path / "s.warc"
    spaced.write_bytes(b"".join(r + b"\r\n" * 40000 for r in twelve))
    assert records_of(read(spaced)) == records_of(read(_write(tmp_path, b"".join(twelve))))
