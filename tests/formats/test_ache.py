"""ACHE crawler output: FILES (deflate JSON lines, profiler.formats.ache) and ACHE WARCs (profiler.formats.warc).

No public ACHE output exists: these fixtures are built from ACHE's documented formats
(docs/data-formats.rst, FilesTargetRepository, WarcTargetRepository of ViDA-NYU/ache).
"""

import base64
import collections
import gzip
import hashlib
import json
import zlib

import pytest

from profiler.formats import ache, inputs, warc
from profiler.run.profile import run_profile

from helpers.captures import expected, fields

MS = 1577934245000              # 2020-01-02T03:04:05Z in milliseconds
TS = "20200102030405"
HTML = b"<html><body>relevant page</html>"


def sha1(data):
    return base64.b32encode(hashlib.sha1(data).digest()).decode()


def page(url="http://example.com/a", content=HTML, fetch_time=MS, redirected=None, ctype="text/html; charset=UTF-8",
         headers=None):
    p = {"url": url, "redirected_url": redirected, "content": base64.b64encode(content).decode(),
         "content_type": ctype, "response_headers": headers if headers is not None else
         {"Content-Type": [ctype or "text/html"], "Server": ["nginx"]},
         "fetch_time": fetch_time, "relevance": {"isRelevant": True, "relevance": 0.93},
         "crawler_id": "default"}
    return json.dumps(p).encode() + b"\n"


def write_files(path, lines, finish=True):
    """As ACHE does: one DeflaterOutputStream (zlib) per file, sync-flushed after every line."""
    c = zlib.compressobj()
    with open(path, "wb") as f:
        for line in lines:
            f.write(c.compress(line) + c.flush(zlib.Z_SYNC_FLUSH))
        if finish:
            f.write(c.flush())


def captures(path):
    got = list(ache.iter_captures(str(path)))
    return [c for c in got if not isinstance(c, str)], collections.Counter(c for c in got if isinstance(c, str))


def test_files_format_is_sniffed(tmp_path):
    path = tmp_path / "crawl_data-1577934245000-0.deflate"
    write_files(path, [page()])
    info = inputs.sniff(str(path))
    assert (info["format"], info["compression"]) == ("ache", "deflate")
    assert inputs.plan_splits([info], split_size=10)[0]["end"] is None


def test_files_page_fields(tmp_path):
    path = tmp_path / "crawl_data-1-0.deflate"
    lines = [page(), page(url="http://example.com/old", redirected="https://www.example.com/new", fetch_time=MS // 1000),
             page(url="http://example.com/img", content=b"\x89PNG", ctype=None,
                  headers={"content-type": ["image/png"]})]
    write_files(path, lines)
    caps, skipped = captures(path)
    assert not skipped
    assert caps[0] == expected(urlkey="com,example)/a", timestamp=TS, mime="text/html", digest=sha1(HTML),
                              length=len(lines[0]))
    assert fields(caps[1], "urlkey", "timestamp") == ("com,example)/new", TS)       # the final URL, as in ACHE's WARCs
    assert caps[2].mime == "image/png" and caps[2].digest == sha1(b"\x89PNG")


def test_files_bad_lines_are_counted(tmp_path):
    path = tmp_path / "crawl_data-1-0.deflate"
    bad_b64 = page().replace(base64.b64encode(HTML), b"%%%not-base64%%%")
    write_files(path, [page(), b"{not json\n", b"[1,2]\n", page(fetch_time=0), page(url=None), bad_b64, page()])
    caps, skipped = captures(path)
    assert len(caps) == 2
    assert skipped == {"bad_json": 2, "bad_timestamp": 1, "bad_url": 1, "bad_content": 1}


def test_files_of_a_running_crawl_count_their_complete_lines(tmp_path):
    path = tmp_path / "crawl_data-1-0.deflate"
    write_files(path, [page(), page(url="http://example.com/b")], finish=False)
    caps, skipped = captures(path)
    assert len(caps) == 2 and skipped == {"truncated_file": 1}


def test_damaged_files_stream(tmp_path):
    path = tmp_path / "crawl_data-1-0.deflate"
    write_files(path, [page()] * 50)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    data[len(data) // 2 + 1] ^= 0xFF
    path.write_bytes(bytes(data))
    caps, skipped = captures(path)
    assert len(caps) + sum(skipped.values()) >= 1 and set(skipped) <= {"unreadable_file", "bad_json", "truncated_file"}
    assert len(caps) < 50


def ache_warc_record(url, requested, block, relevant=True):
    """A response record as ACHE's WarcTargetRepository writes it: the block is the response
    headers (no HTTP status line), a blank line and the content; no digests."""
    head = ("WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: %s\r\nWARC-Date: 2020-01-02T03:04:05Z\r\n"
            "WARC-Record-ID: <urn:uuid:0>\r\nContent-Type: application/http; msgtype=response\r\n"
            "ACHE-IsRelevant: %s\r\nACHE-Relevance: 0.9300000000\r\nACHE-Requested-URL: %s\r\n"
            "Content-Length: %d\r\n\r\n" % (url, str(relevant).lower(), requested, len(block)))
    return head.encode() + block + b"\r\n\r\n"


def write_ache_warc(path):
    info = (b"WARC/1.0\r\nWARC-Type: warcinfo\r\nWARC-Date: 2020-01-02T03:04:05Z\r\nWARC-Record-ID: <urn:uuid:9>\r\n"
            b"Content-Type: application/warc-fields\r\nContent-Length: 14\r\n\r\nsoftware: ache\r\n\r\n")
    records = [info,
               ache_warc_record("http://example.com/a", "http://example.com/a",
                                b"Content-Type: text/html; charset=UTF-8\r\nServer: nginx\r\n\r\n" + HTML),
               ache_warc_record("https://www.example.com/new", "http://example.com/old",
                                b"Server: nginx\r\nContent-Type: text/html\r\n\r\n" + HTML, relevant=False),
               ache_warc_record("http://example.com/img", "http://example.com/img",
                                b"Content-Type: image/png\r\n\r\n\x89PNG")]
    with open(path, "wb") as f:
        for r in records:
            f.write(gzip.compress(r))


def test_ache_warc_response_without_status_line(tmp_path):
    path = tmp_path / "crawl_data-20200102030405000-00000.warc.gz"
    write_ache_warc(path)
    assert inputs.sniff(str(path))["format"] == "warc"
    got = list(warc.iter_captures(str(path)))
    assert got[0] == "warcinfo_record"
    a, new, img = got[1:]
    assert fields(a, "urlkey", "timestamp", "mime", "status", "digest") == ("com,example)/a", TS, "text/html", "unk", sha1(HTML))
    assert fields(new, "urlkey", "timestamp", "mime", "status", "digest") == ("com,example)/new", TS, "text/html", "unk", sha1(HTML))
    assert img.mime == "image/png" and img.digest == sha1(b"\x89PNG")


def test_ache_warc_and_files_give_the_same_profile_but_bytes(tmp_path):
    """The same three pages, as ACHE WARC and as ACHE FILES: only the stored lengths differ."""
    warc_path, files_path = tmp_path / "crawl.warc.gz", tmp_path / "crawl_data-1-0.deflate"
    write_ache_warc(warc_path)
    write_files(files_path, [page(), page(url="http://example.com/old", redirected="https://www.example.com/new",
                                          ctype="text/html"),
                             page(url="http://example.com/img", content=b"\x89PNG", ctype="image/png")])
    profiles = []
    for path in (warc_path, files_path):
        out = tmp_path / (path.name + ".cdxj")
        run_profile([str(path)], str(out), policy="full")
        data = {}
        for line in out.read_bytes().splitlines():
            if not line.startswith(b"!"):
                key, _, value = line.partition(b" {")
                value = json.loads(b"{" + value)
                del value["bytes"], value["dedup_bytes"]
                data[key] = value
        profiles.append(data)
    assert profiles[0] == profiles[1]
    assert profiles[0][b"* - - -"]["urim"]["total"] == 3 and profiles[0][b"* - - -"]["digests"] == 2


@pytest.mark.parametrize("head", [b"", b"x", b"\x78\x00", b"\x1f\x8b\x08"])
def test_is_zlib(head):
    assert not ache.is_zlib(head)
    assert ache.is_zlib(zlib.compress(b"{}"))


def _peak_of_profile(path, out):
    """Exit status and the run's own peak RSS in KB (VmHWM: ru_maxrss keeps pytest's across fork
    and exec)."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = ("import sys; from profiler.cli.main import main; r = main(sys.argv[1:]); "
            "print(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]); sys.exit(r)")
    r = subprocess.run([sys.executable, "-c", code, "profile", str(path), "-o", str(out), "-q"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=root))
    assert r.returncode == 0, r.stderr
    return int(r.stdout.split()[-1])


@pytest.mark.parametrize("bomb", ["newlines", "one_line"])
def test_a_deflate_bomb_is_read_in_bounded_memory(tmp_path, bomb):
    """400 MB inflated from 400 KB: read a bounded piece at a time (it was inflated a read at a
    time, up to 1,000 times the read, and a line held whole: 2 to 4 GB); a line longer than
    ache.MAX_LINE is skipped without being held (`line_too_long`), the pages around it counted."""
    c = zlib.compressobj(9)
    data = c.compress(page("http://example.com/first"))
    if bomb == "one_line":
        data += c.compress(page("http://example.com/big")[:-40])
    block = (b"\n" if bomb == "newlines" else b"A") * (1 << 20)
    for _ in range(400):
        data += c.compress(block)
    data += c.compress(b"\n" + page("http://example.com/after")) + c.flush()
    path = tmp_path / "crawl_data-1577934245000-0.deflate"
    path.write_bytes(data)
    out = tmp_path / "out.cdxj"
    assert _peak_of_profile(path, out) < 300 * 1024          # KB: well under the bomb's 400 MB
    found, reasons = captures(path)
    assert [c.urlkey for c in found] == ["com,example)/first", "com,example)/after"]
    assert reasons == (collections.Counter({"line_too_long": 1}) if bomb == "one_line" else collections.Counter())
