"""Record framing: a WARC or ARC file gives exactly the records it holds, whatever lies between them.

A record may be followed by the next record's header with no blank line between (NetarchiveSuite
writes ARC files so), by one CRLF or LF, by several blank lines, or at the end of the file by
nothing. warcio takes whatever line follows a record for its separator, so it loses the next
record's header and reads the lines of that record's block as records. The reader reads the
record, and notes it (`unseparated_record`, counted with the skip reasons; no record is lost).
An independent strict framer (below, from the WARC 1.1 and ARC specifications, without warcio:
an ARC header line and its length, a WARC header and its Content-Length; plain, or each gzip
member on its own) counts every file's records and the records followed straight by another:
both readers agree with it, record by record and note by note, on every WARC/ARC file of the
shared corpus, or the framer fails on the file and what the readers give there is listed and
explained (the damage reasons they count); warcio's own count is checked against it too, and
listed where it is wrong.
"""

import base64
import glob
import gzip
import hashlib
import json
import os
import re
import zlib
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from warcio.archiveiterator import ArchiveIterator

from profiler.formats import inputs, registry
from profiler.formats.warc_records import UNSEPARATED
from profiler.run.profile import run_profile

from helpers.exactness import assert_same_profile, pure_python
from helpers.oracle import profile as oracle_profile, read_profile, resolve_revisits
from helpers.paths import SHARED_DATA, shared_data
from profiler.model.policy import load as load_policy

# ---------------------------------------------------------------- the strict framer


class Framed(NamedTuple):
    offset: int        # of its header (gzip: of its member)
    length: int        # stored bytes: header and block; a member that holds only it: the member
    kind: str          # the WARC-Type; 'filedesc' or 'arc' for an ARC file's records
    followed: bool     # the next record's header starts right after its block (no separator)


_BLANK_TO_END = re.compile(rb"\s*\Z")


def _line(data, pos):
    """(line, offset after it) from pos of data."""
    end = data.find(b"\n", pos)
    end = len(data) if end < 0 else end + 1
    return data[pos:end], end


def _warc_header(data, pos, after):
    """(WARC-Type, Content-Length, offset of the block) of the WARC header whose first line ends
    at after, or a str saying why it is none (WARC 1.1 section 4: named fields, CRLF, a blank line;
    a line that starts with white space continues the field before it)."""
    kind = length = None
    at = after
    while True:
        field, at = _line(data, at)
        if not field.endswith(b"\n"):
            return "a WARC header without its end at %d" % pos
        if not field.rstrip(b"\r\n"):
            break
        if field[:1] in (b" ", b"\t"):
            continue                                       # a continuation line
        name, colon, value = field.partition(b":")
        if not colon:
            return "a WARC header line that is no field at %d" % pos
        name, value = name.strip().lower(), value.strip()
        if name == b"content-length" and length is None:
            if not value.isdigit():
                return "a Content-Length that is no length at %d" % pos
            length = int(value)
        elif name == b"warc-type" and kind is None:
            kind = value.decode("latin-1")
    if length is None:
        return "no Content-Length at %d" % pos
    return kind, length, at


def frame_plain(data, base=0):
    """The records of plain bytes, and where framing fails (a str) or None. Between records and
    after the last only blank lines may stand (or nothing)."""
    records, pos, previous = [], 0, None
    while True:
        line, after = _line(data, pos)
        while line and not line.strip():                 # blank lines between records
            previous = None
            pos = after
            line, after = _line(data, pos)
        if not line:
            return records, None
        if previous is not None:                         # the record before ends right here
            records[previous] = records[previous]._replace(followed=True)
        if not line.endswith(b"\n"):
            return records, "a header line cut at %d" % (base + pos)
        if line.startswith(b"WARC/"):
            header = _warc_header(data, base + pos, after)
            if isinstance(header, str):
                return records, header
            kind, length, block = header
        else:
            # ARC (v1 and v2): 'URL IP-address Archive-date Content-type [...] Archive-length'
            fields = line.rstrip(b"\r\n").split(b" ")
            if len(fields) < 5 or b":" not in fields[0] or not fields[-1].isdigit():
                return records, "no record header at %d: %r" % (base + pos, line[:60])
            kind = "filedesc" if line.startswith(b"filedesc:") else "arc"
            length, block = int(fields[-1]), after
        if block + length > len(data):
            return records, "a record cut at %d (%d of %d bytes)" % (base + pos, len(data) - block, length)
        records.append(Framed(base + pos, block + length - pos, kind, False))
        previous = len(records) - 1
        pos = block + length


def frame(data):
    """The records of a WARC or ARC file's bytes, and where framing fails or None. A gzip file's
    members are framed one at a time: one that holds one record is its stored bytes; one that
    holds several (one gzip stream) is framed in its inflated bytes."""
    if not data.startswith(b"\x1f\x8b"):
        return frame_plain(data)
    records, pos, view = [], 0, memoryview(data)
    while not _BLANK_TO_END.match(data, pos):
        if not data.startswith(b"\x1f\x8b", pos):
            return records, "no gzip member at %d" % pos
        inflater = zlib.decompressobj(31)
        try:
            inflated = inflater.decompress(view[pos:])
        except zlib.error:
            return records, "a gzip member that does not inflate at %d" % pos
        if not inflater.eof:
            return records, "a gzip member cut at %d" % pos
        end = len(data) - len(inflater.unused_data)
        found, fault = frame_plain(inflated)
        if fault:
            return records, "in the member at %d: %s" % (pos, fault)
        if len(found) == 1:
            found = [Framed(pos, end - pos, found[0].kind, False)]
        records += found
        pos = end
    return records, None


# ---------------------------------------------------------------- what the reader gives

CAPTURE_KINDS = ("response", "revisit", "resource", "arc")
#: the reason of a record that is no capture, by its kind
NOT_CAPTURES = {"request": "request_record", "metadata": "metadata_record", "warcinfo": "warcinfo_record",
                "filedesc": "warcinfo_record"}
#: reasons a capture record may be given instead of a capture (not damage)
RECORD_REASONS = {"bad_timestamp", "bad_url", "warc_fields_record", "header_only_record", "other_record"}


#: the reasons that note how a file was read, and lose no record
NOTES = ("not_chunked", UNSEPARATED)


def read_all(path, reader="warcio"):
    """All the reader gives for a file, through sniffing and splitting as `profile` does."""
    info = inputs.sniff(str(path))
    splits = registry.choose_warc_reader(inputs.plan_splits([info]), reader)
    return [c for s in splits for c in registry.captures(s)]


def read(path, reader="warcio"):
    """What the reader gives for a file's records: without the notes (NOTES)."""
    return [c for c in read_all(path, reader) if c not in NOTES]


def unseparated(path, reader="warcio"):
    """How many records the reader noted were followed straight by the next record's header."""
    return read_all(path, reader).count(UNSEPARATED)


def agrees(result, record):
    """Whether what the reader gave for a record fits the record the framer found."""
    if isinstance(result, tuple):
        return record.kind in CAPTURE_KINDS and result[5] == record.length
    if record.kind in NOT_CAPTURES:
        return result == NOT_CAPTURES[record.kind]
    return result in RECORD_REASONS


def warcio_count(path):
    """The records warcio's ArchiveIterator gives (as the data README counts them)."""
    n = 0
    with open(path, "rb") as f:
        try:
            for record in ArchiveIterator(f):
                record.content_stream().read()
                n += 1
        except Exception:
            pass
    return n


# ---------------------------------------------------------------- the shared corpus

ARCHIVES = sorted(
    os.path.relpath(p, SHARED_DATA) for p in glob.glob(os.path.join(SHARED_DATA, "**", "*"), recursive=True)
    if os.path.isfile(p) and (".warc" in os.path.basename(p) or ".arc" in os.path.basename(p))
    and not p.endswith((".cdx", ".cdxj")))

#: files whose framing fails: (records framed before the fault, what the reader gives, in order of
#: kinds: 'capture' or the reason). Why, file by file:
FRAMING_FAULTS = {
    # a record 3 bytes short of its Content-Length: its member ends first
    "cdx-writer/small_warcs/date_resolution_microsecond.warc.gz": (0, ["truncated_record"]),
    "cdx-writer/small_warcs/date_resolution_nanosecond.warc.gz": (0, ["truncated_record"]),
    # an Archive-length of -2046788874: its member holds its header line alone, and frames it
    "cdx-writer/small_warcs/negative_content_length.arc.gz": (2, ["warcinfo_record", "capture", "capture",
                                                                  "capture"]),
    # the warcinfo's Content-Length is 8 bytes short ("ab/1.0" of its last line is left): the rest
    # of that line is taken for the end of its block (warcio's rule for a line after a record
    # that starts none), and the records after it are read
    "ipwb/warcs/HTTP204.warc": (1, ["warcinfo_record", "capture", "capture"]),
    # a request record 1 byte short ("m" of its last line is left)
    "pywb/warcs/example.warc": (5, ["warcinfo_record", "capture", "request_record", "capture", "request_record",
                                    "capture"]),
    # a response 2 bytes short ("\0\0" of its last line)
    "warcio/example-trunc.warc": (3, ["warcinfo_record", "warcinfo_record", "capture", "request_record"]),
    # a record header is missing partway through: the plain file ends at its damage
    "ipwb/warcs/broken.warc": (6, ["warcinfo_record", "request_record", "metadata_record", "capture",
                                   "request_record", "capture", "bad_record"]),
    # the last record ends before its Content-Length (the file is cut)
    "ipwb/warcs/redirect.warc": (1, ["warcinfo_record", "truncated_record"]),
    "warcio/example-space-in-url.arc": (1, ["warcinfo_record", "truncated_record"]),
    # the filedesc's Archive-length is -1 and a later one "abc"
    "pywb/warcs/bad.arc": (0, ["warcinfo_record", "capture", "capture", "bad_record"]),
    # a record cut apart by member boundaries; the request record in the member after them (which
    # starts with the blank lines that end the record before it) is read
    "warcio/example-wrong-chunks.warc.gz": (0, ["truncated_record", "bad_record", "request_record"]),
}

#: files where warcio's count (the data README's) differs from the framer's: (warcio's count, why)
WARCIO_WRONG = {
    # no blank line after the filedesc record: warcio takes the metadata record's header for the
    # separator and reads the CDX lines of its block as 43 ARC records
    "netarchivesuite/2-metadata-1.arc": (44, "misframed"),
    # one gzip stream over 6 records: warcio refuses it after the first
    "pywb/warcs/example-bad.warc.gz.bad": (1, "refused"),
    "warcio/example-bad-non-chunked.warc.gz": (1, "refused"),
}


def kinds(results):
    return ["capture" if isinstance(r, tuple) else r for r in results]


def test_every_corpus_archive_gives_the_records_the_framer_finds():
    shared_data()
    assert len(ARCHIVES) >= 110
    wrong, warcio_wrong = {}, {}
    for name in ARCHIVES:
        path = os.path.join(SHARED_DATA, name)
        with open(path, "rb") as f:
            records, fault = frame(f.read())
        for reader in ("warcio", "fastwarc"):
            everything = read_all(path, reader)
            got = [r for r in everything if r not in NOTES]
            if fault is None:
                ok = len(got) == len(records) and all(map(agrees, got, records)) and \
                    everything.count(UNSEPARATED) == sum(r.followed for r in records)
            else:
                before, expected = FRAMING_FAULTS.get(name, (None, None))
                ok = before == len(records) and kinds(got) == expected and \
                    all(map(agrees, got[:before], records[:before]))
            if not ok:
                wrong[name, reader] = (fault, len(records), kinds(got))
        if fault is None:
            n = warcio_count(path)
            if n != len(records):
                warcio_wrong[name] = (n, len(records))
    assert wrong == {}
    assert sorted(name for name in FRAMING_FAULTS if name in ARCHIVES) == sorted(FRAMING_FAULTS)
    unseparated_files = sorted(name for name in ARCHIVES if name not in FRAMING_FAULTS and
                               any(r.followed for r in frame(open(os.path.join(SHARED_DATA, name), "rb").read())[0]))
    assert unseparated_files == ["netarchivesuite/2-metadata-1.arc"]
    assert {name: n for name, (n, _) in warcio_wrong.items()} == {n: c for n, (c, _) in WARCIO_WRONG.items()}


def test_the_netarchivesuite_metadata_arc_is_one_capture():
    """Its filedesc record (77 bytes, the last a blank line) is followed straight by a metadata
    record of 17,620 bytes: one capture, with either reader and either kernels."""
    path = shared_data("netarchivesuite", "2-metadata-1.arc")
    for reader in ("warcio", "fastwarc"):
        assert kinds(read_all(path, reader)) == ["warcinfo_record", UNSEPARATED, "capture"]
        got = read(path, reader)
        assert kinds(got) == ["warcinfo_record", "capture"]
        capture = got[1]
        assert capture[0] == ("dk,netarkivet)/crawl/index/cdx?harvestid=2&jobid=2&majorversion=1&minorversion=0"
                              "&serialno=00000&timestamp=20060329081336")
        assert capture[1] == "26050908173821"           # the year 2605: a valid timestamp
        assert capture[5] == 185 + 17620                 # its header line and its block
        block = open(path, "rb").read()[142 + 185:][:17620]
        assert capture[4] == base64.b32encode(hashlib.sha1(block).digest()).decode()


def test_the_netarchivesuite_metadata_arc_profiles_one_capture(tmp_path):
    path = shared_data("netarchivesuite", "2-metadata-1.arc")
    outs = []
    for reader in ("warcio", "fastwarc"):
        for pure in (False, True):
            out = tmp_path / ("%s-%s.cdxj" % (reader, pure))
            if pure:
                with pure_python():
                    run_profile([path], str(out), warc_reader=reader, created="2026-01-01T00:00:00Z")
            else:
                run_profile([path], str(out), warc_reader=reader, created="2026-01-01T00:00:00Z")
            outs.append(out.read_bytes())
    assert len(set(outs)) == 1
    total = read_profile(str(tmp_path / "warcio-False.cdxj"))["* - - -"]
    assert total[0] == 1 and total[4] == 17805 and total[7] == total[8] == "26050908173821"
    meta = json.loads(outs[0].decode().split("\n!meta ", 1)[1].split("\n", 1)[0])
    assert meta["skipped"] == {"warcinfo_record": 1, UNSEPARATED: 1}


# ---------------------------------------------------------------- NetarchiveSuite-style files, by hand

def _sha1(data):
    return base64.b32encode(hashlib.sha1(data).digest()).decode()


def _http(body, ctype=b"text/html", status=b"200 OK"):
    return b"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s" % (status, ctype, len(body), body)


#: a NetarchiveSuite CDX inside a metadata record, with a line that is an ARC record's header and
#: a WARC record's start: a reader that misframed would count them
CDX_BLOCK = (b"dns:sb-test-net-001.statsbiblioteket.dk 130.225.24.33 20060329081336 text/dns 56 "
             b"2-2-20060329081336-00000-sb-test-har-001.arc 1036 9e4f4a8d0b6f3e0f6c0f2e0a4b3c7d11\n"
             b"http://netarkivet.dk/robots.txt 130.225.24.33 20060329081337 text/plain 1234\n"
             b"WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 2\r\n\r\nxx\r\n\r\n"
             b"http://netarkivet.dk/ 130.225.27.140 20060329081338 text/html 5917 "
             b"2-2-20060329081336-00000-sb-test-har-001.arc 2105 0a1b2c3d4e5f60718293a4b5c6d7e8f9\n")
CRAWL_LOG = (b"2006-03-29T08:13:37.123Z   200       1234 http://netarkivet.dk/robots.txt P http://netarkivet.dk/ "
             b"text/plain #001 20060329081337070+52 sha1:4MK5AUK4L6DHVEUTL7NLAQ4Q4MEVTG3R - -\n")
HTML = b'<html lang="da"><body>Netarkivet</body></html>'


def arc_file():
    """(records, expected) of a NetarchiveSuite-style ARC file: a filedesc whose block ends with
    its blank line, metadata records and responses, each followed by nothing. expected: per
    record, (urlkey, timestamp, mime, status, digest) or the reason."""
    desc = b"1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n\n"
    page, robots = _http(HTML), _http(b"User-agent: *\n", b"text/plain")
    parts = [
        (b"filedesc://2-metadata-1.arc 0.0.0.0 20060329081421 text/plain", desc, "warcinfo_record"),
        (b"metadata://netarkivet.dk/crawl/index/cdx?jobid=2 130.225.27.140 26050908173821 application/x-cdx",
         CDX_BLOCK, ("dk,netarkivet)/crawl/index/cdx?jobid=2", "26050908173821", "unk", "unk", _sha1(CDX_BLOCK))),
        (b"http://netarkivet.dk/ 130.225.27.140 20060329081338 text/html", page,
         ("dk,netarkivet)/", "20060329081338", "text/html", "200", _sha1(HTML))),
        (b"metadata://netarkivet.dk/crawl/logs/crawl.log?jobid=2 130.225.27.140 20060329081422 text/plain",
         CRAWL_LOG, ("dk,netarkivet)/crawl/logs/crawl.log?jobid=2", "20060329081422", "unk", "unk",
                     _sha1(CRAWL_LOG))),
        (b"http://netarkivet.dk/robots.txt 130.225.24.33 20060329081337 text/plain", robots,
         ("dk,netarkivet)/robots.txt", "20060329081337", "text/plain", "200", _sha1(b"User-agent: *\n"))),
    ]
    return [b"%s %d\n%s" % (line, len(block), block) for line, block, _ in parts], [e for _, _, e in parts]


def _warc(kind, block, uri=None, extra=b""):
    head = b"WARC/1.0\r\nWARC-Type: %s\r\nWARC-Date: 2010-09-09T16:33:24Z\r\n" % kind
    if uri:
        head += b"WARC-Target-URI: %s\r\n" % uri
    return head + extra + b"Content-Length: %d\r\n\r\n%s" % (len(block), block)


def warc_file():
    """(records, expected) of a WARC file as Heritrix writes it, for records followed by nothing."""
    page = _http(HTML)
    metadata = b"via: http://netarkivet.dk/\r\nhopsFromSeed: L\r\n" + CDX_BLOCK
    request = b"GET / HTTP/1.1\r\nHost: netarkivet.dk\r\n\r\n"
    text = b"WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 1\r\n\r\nx"       # a WARC inside a resource
    parts = [
        (_warc(b"warcinfo", b"software: Heritrix/1.14.4\r\n", extra=b"Content-Type: application/warc-fields\r\n"),
         "warcinfo_record"),
        (_warc(b"response", page, b"http://netarkivet.dk/"),
         ("dk,netarkivet)/", "20100909163324", "text/html", "200", _sha1(HTML))),
        (_warc(b"request", request, b"http://netarkivet.dk/"), "request_record"),
        (_warc(b"metadata", metadata, b"http://netarkivet.dk/"), "metadata_record"),
        (_warc(b"resource", text, b"metadata://netarkivet.dk/crawl/setup/text",
               extra=b"Content-Type: text/plain\r\n"),
         ("dk,netarkivet)/crawl/setup/text", "20100909163324", "text/plain", "unk", _sha1(text))),
        (_warc(b"revisit", _http(b"", status=b"304 Not Modified"), b"http://netarkivet.dk/",
               extra=b"WARC-Payload-Digest: sha1:%s\r\n" % _sha1(HTML).encode()),
         ("dk,netarkivet)/", "20100909163324", "warc/revisit", "304", _sha1(HTML))),
    ]
    return [r for r, _ in parts], [e for _, e in parts]


SEPARATORS = {"warc": b"\r\n\r\n", "arc": b"\n"}
LAYOUTS = ("plain", "records", "whole")


def write(tmp_path, records, separators, layout, kind):
    data = [r + s for r, s in zip(records, separators)]
    path = tmp_path / ("n.%s%s" % (kind, "" if layout == "plain" else ".gz"))
    if layout == "records":
        path.write_bytes(b"".join(gzip.compress(d) for d in data))
    else:
        joined = b"".join(data)
        path.write_bytes(gzip.compress(joined) if layout == "whole" else joined)
    return path


def check(path, expected, unseparated_records=None):
    """Both readers give the expected record after record, lengths as the framer frames them,
    and note the records followed straight by another (when unseparated_records is given)."""
    records, fault = frame(path.read_bytes())
    assert fault is None and len(records) == len(expected)
    got = read(path)
    assert got == read(path, "fastwarc")
    if unseparated_records is not None:
        assert unseparated(path) == unseparated(path, "fastwarc") == unseparated_records
    assert len(got) == len(expected)
    for result, record, want in zip(got, records, expected):
        if isinstance(want, str):
            assert result == want
        else:
            assert isinstance(result, tuple) and result[:5] == want and result[5] == record.length
    return got


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", ["arc", "warc"])
def test_records_followed_by_no_blank_line(tmp_path, kind, layout):
    records, expected = arc_file() if kind == "arc" else warc_file()
    # a record at the end of its gzip member is followed by the member's end, not by the next record
    noted = 0 if layout == "records" else len(records) - 1
    check(write(tmp_path, records, [b""] * len(records), layout, kind), expected, noted)


#: what may follow a record: blank lines (CRLF, LF, white space) or nothing
blank_lines = st.lists(st.sampled_from([b"\r\n", b"\n", b" \r\n", b"\t\n", b"\r\n\r\n"]), max_size=4).map(b"".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["arc", "warc"]), layout=st.sampled_from(LAYOUTS), data=st.data())
def test_whatever_blank_lines_follow_each_record(tmp_path, kind, layout, data):
    records, expected = arc_file() if kind == "arc" else warc_file()
    chosen = data.draw(st.permutations(range(len(records))).map(lambda order: [0] + [i for i in order if i]))
    records, expected = [records[i] for i in chosen], [expected[i] for i in chosen]
    separators = data.draw(st.lists(blank_lines, min_size=len(records), max_size=len(records)))
    noted = 0 if layout == "records" else separators[:-1].count(b"")
    got = check(write(tmp_path, records, separators, layout, kind), expected, noted)
    canonical = check(write(tmp_path, records, [SEPARATORS[kind]] * len(records), layout, kind), expected, 0)
    if layout == "plain":                        # a record's length leaves out what follows it
        assert got == canonical


@pytest.mark.parametrize("layout", ["plain", "records"])
@pytest.mark.parametrize("kind", ["arc", "warc"])
def test_profiles_of_files_without_blank_lines_are_the_oracles(tmp_path, kind, layout):
    """The profile of a file whose records follow each other with nothing between equals the
    brute-force oracle's over the records the file holds, with both readers and both kernels."""
    records, expected = arc_file() if kind == "arc" else warc_file()
    path = write(tmp_path, records, [b""] * len(records), layout, kind)
    framed, _ = frame(path.read_bytes())
    captures = [list(e) + [r.length, e[2] == "warc/revisit", "unk"] for e, r in zip(expected, framed)
                if not isinstance(e, str)]
    assert len(captures) >= 3
    policy = load_policy("default")
    want = oracle_profile(resolve_revisits(captures), policy)
    for reader in ("warcio", "fastwarc"):
        for pure in (False, True):
            out = tmp_path / ("%s-%s.cdxj" % (reader, pure))
            if pure:
                with pure_python():
                    run_profile([str(path)], str(out), warc_reader=reader, created="2026-01-01T00:00:00Z")
            else:
                run_profile([str(path)], str(out), warc_reader=reader, created="2026-01-01T00:00:00Z")
            assert_same_profile(read_profile(str(out)), want)


def test_corpus_files_without_their_separators_give_the_same_records(tmp_path):
    """Every plain WARC/ARC of the corpus that frames whole, rewritten with its records straight
    after each other (the blank lines between them taken out), gives the records it gave, lengths
    included (a plain file's record length leaves out what follows it), and notes each record
    followed straight by another."""
    shared_data()
    rewritten = 0
    for name in ARCHIVES:
        path = os.path.join(SHARED_DATA, name)
        with open(path, "rb") as f:
            data = f.read()
        if data.startswith(b"\x1f\x8b"):
            continue
        records, fault = frame(data)
        if fault or len(records) < 2 or not any(
                data[r.offset + r.length:n.offset] for r, n in zip(records, records[1:])):
            continue
        # an ARC filedesc's two lines are read as lines (warcio's rule), so one whose block ends
        # inside a line keeps what followed it
        ends = [n.offset for n in records[1:]] + [len(data)]
        kept = [r.kind == "filedesc" and not data[:r.offset + r.length].endswith(b"\n") for r in records]
        joined = tmp_path / os.path.basename(name)
        joined.write_bytes(b"".join(data[r.offset:end if keep else r.offset + r.length]
                                    for r, end, keep in zip(records, ends, kept)))
        for reader in ("warcio", "fastwarc"):
            assert read(joined, reader) == read(path, reader), (name, reader)
            assert unseparated(joined, reader) == len(records) - 1 - sum(kept[:-1]), (name, reader)
        rewritten += 1
    assert rewritten >= 25, rewritten
