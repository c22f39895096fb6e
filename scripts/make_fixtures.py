#!/usr/bin/env python
"""Write tests/data: tiny real-shaped inputs of every format, a broken one of each, and their
golden profiles.

    python scripts/make_fixtures.py [--golden-only]

The copied files come from ../shared/data, permissively licensed sources only (their origin in
tests/data/README.md); the others are written here from the tests' generators, in the shapes of
real files. --golden-only rewrites the golden profiles (tests/data/golden/) from the inputs as
they are: run it when a change of the profile is intended, and read the diff.
"""

import argparse
import base64
import hashlib
import io
import json
import os
import shutil
import sys
import zipfile
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [REPO, os.path.join(REPO, "tests")]

from helpers import fixtures  # noqa: E402
from profiler.testing import synthetic, synthetic_cc, synthetic_crawllog, synthetic_warc  # noqa: E402

DATA = fixtures.DATA
SHARED = os.path.join(os.path.dirname(REPO), "shared", "data")
#: copied excerpts: (fixture, source in ../shared/data, first lines kept or None: the whole file)
COPIED = [
    ("cdx10-archive-it.cdx", "archive_profiler/index-1.cdx", 12),
    ("cdx7-wayback-api.cdx", "edgi-wayback/zew.de-cdx-api-response.txt", 12),
    ("cdxj-ipwb.cdxj", "ipwb/indexes/salam-home.cdxj", None),
    ("warc-commoncrawl.warc.gz", "cdxj-indexer/cc.warc.gz", None),
    ("broken-space-in-url.arc", "warcio/example-space-in-url.arc", None),
]


def write(name, data):
    with open(os.path.join(DATA, name), "wb") as f:
        f.write(data)


def copied():
    os.makedirs(os.path.join(DATA, "licences"), exist_ok=True)
    for name, source, lines in COPIED:
        licence = os.path.join(DATA, "licences", source.split("/")[0] + ".txt")
        shutil.copyfile(os.path.join(SHARED, source.split("/")[0], "LICENSE"), licence)
        os.chmod(licence, 0o644)
        path = os.path.join(SHARED, source)
        if lines is None:
            shutil.copyfile(path, os.path.join(DATA, name))
        else:
            with open(path, "rb") as f:
                write(name, b"".join(f.readlines()[:lines]))
        os.chmod(os.path.join(DATA, name), 0o644)


def generated():
    cdx11 = [line.rstrip("\n") for line in synthetic.cdx_lines(14, seed=21)]
    write("cdx11-legend.cdx", ("%s\n%s\n" % (synthetic.LEGEND, "\n".join(cdx11))).encode())
    # 9 fields (N b a m s k r V g, no legend): the 11-field lines without M and S
    cdx9 = [" ".join(f[:7] + f[9:]) for f in (line.split(" ") for line in cdx11)]
    write("cdx9-legendless.cdx", ("\n".join(cdx9) + "\n").encode())
    # NetarchiveSuite's 8 fields (url ip date mime length file offset md5), no legend
    nas = ["%s 192.0.2.%d %s %s %s nas-%s.arc %d %032x" % (f[2], i, f[1], f[3], f[8], f[1][:8], 1000 * i, i * 7919)
           for i, f in enumerate(line.split(" ") for line in cdx11)]
    write("cdx8-netarchivesuite.cdx", ("\n".join(nas) + "\n").encode())
    # two CDX files concatenated: a legend mid-file names another layout
    second = [" ".join([f[2], f[1], f[0], f[4], f[3], f[5], f[6], f[7], f[9], f[8], f[10]])
              for f in (line.split(" ") for line in cdx11[7:])]
    write("cdx-mid-file-legend.cdx", ("%s\n%s\n CDX a b N s m k r M V S g\n%s\n"
                                      % (synthetic.LEGEND, "\n".join(cdx11[:7]), "\n".join(second))).encode())
    # pywb's CDXJ (surt timestamp {url, mime, status, digest, length, offset, filename})
    pywb = []
    for f in (line.split(" ") for line in cdx11):
        block = {"url": f[2], "mime": f[3], "status": f[4], "digest": "sha1:" + f[5], "length": f[8],
                 "offset": f[9], "filename": f[10]}
        if f[3] == "warc/revisit":
            del block["status"]
        pywb.append("%s %s %s" % (f[0], f[1], json.dumps(block)))
    write("cdxj-pywb.cdxj", ("\n".join(pywb) + "\n").encode())
    # OpenWayback's CDXJ 1.0 of the same entries: its SURT, a W3C date, the record type, its JSON keys
    write("owb-cdxj.cdxj", ("!OpenWayback-CDXJ 1.0\n" + "\n".join(owb_line(f) for f in (line.split(" ") for line in cdx11))
                            + "\n").encode())
    write("cdxj-commoncrawl.cdxj", "".join(synthetic_cc.cc_lines(12, seed=5)).encode())
    # the Wayback CDX API's output=json of the real API lines: one array, a row a line, names first
    with open(os.path.join(DATA, "cdx7-wayback-api.cdx"), "rb") as f:
        rows = [["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"]] + \
            [line.decode().split(" ") for line in f.read().splitlines() if line.strip()]
    write("cdxserver-wayback-api.json", ("[" + ",\n".join(json.dumps(row) for row in rows) + "]\n").encode())
    write("ache-files.deflate", ache_files(ache_pages()))
    write("crawllog-heritrix3.crawl.log", "".join(synthetic_crawllog.crawl_log(seed=2, pages=16)[0]).encode())
    synthetic_warc.write_language_warc(os.path.join(DATA, "arc-generated.arc.gz"), 4, seed=3, gzip=True, arc=True,
                                       bound_share=0)
    write("wacz-generated.wacz", wacz_package(["warc-commoncrawl.warc.gz", "arc-generated.arc.gz"]))


#: the time every member of a generated WACZ carries (a ZIP holds no earlier one)
WACZ_TIME = (1980, 1, 1, 0, 0, 0)


def wacz_package(names):
    """A WACZ (spec 1.1.1) of fixtures as its archive/ files, STORED, with their CDXJ index (cdxj-indexer),
    pages and datapackage.json, the same bytes every time."""
    from cdxj_indexer.main import write_cdx_index
    files = {}
    for name in names:
        with open(os.path.join(DATA, name), "rb") as f:
            files["archive/" + name] = f.read()
    index = io.StringIO()
    for name in names:
        write_cdx_index(index, [os.path.join(DATA, name)], {"filename": name})
    files["indexes/index.cdxj"] = "".join(sorted(index.getvalue().splitlines(True))).encode()
    pages = [{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}]
    pages += [{"id": "page-%d" % i, "url": json.loads(line.split(" ", 2)[2])["url"], "ts": line.split(" ")[1]}
              for i, line in enumerate(index.getvalue().splitlines()[:3])]
    files["pages/pages.jsonl"] = "".join(json.dumps(p) + "\n" for p in pages).encode()
    resources = [{"name": os.path.basename(path), "path": path, "hash": "sha256:" + hashlib.sha256(data).hexdigest(),
                  "bytes": len(data)} for path, data in files.items()]
    files["datapackage.json"] = json.dumps({"profile": "data-package", "wacz_version": "1.1.1",
                                            "created": "2026-01-01T00:00:00Z", "software": "make_fixtures.py",
                                            "resources": resources}, indent=2).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as package:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, WACZ_TIME)
            info.external_attr = 0o644 << 16
            package.writestr(info, data)
    return out.getvalue()


def owb_line(f):
    """An OpenWayback CDXJ line of an 11-field CDX line's fields."""
    host, path = f[0].split(")", 1)
    revisit = f[3] == "warc/revisit"
    block = {"uri": f[2], "sha": f[5], "hsc": f[4], "mct": f[3], "rle": f[8], "ref": "warcfile:%s#%s" % (f[10], f[9])}
    if revisit:
        del block["hsc"], block["mct"]
    ts = "%s-%s-%sT%s:%s:%sZ" % (f[1][:4], f[1][4:6], f[1][6:8], f[1][8:10], f[1][10:12], f[1][12:14])
    return "(%s,)%s %s %s %s" % (host, path, ts, "revisit" if revisit else "response", json.dumps(block))


def ache_pages():
    html = b"<html lang='fr'><body>Bonjour</body></html>"
    out = []
    for i, (url, ctype, when) in enumerate([("http://example.com/a", "text/html; charset=UTF-8", 1577934245000),
                                            ("http://example.com/b", "text/html", 1577934246000),
                                            ("https://www.example.org/i.png", "image/png", 1577934247)]):
        out.append(json.dumps({"url": url, "redirected_url": None, "content": base64.b64encode(html + b"%d" % i).decode(),
                               "content_type": ctype, "response_headers": {"Content-Type": [ctype]},
                               "fetch_time": when, "crawler_id": "default"}).encode() + b"\n")
    return out


def ache_files(lines, finish=True):
    """As ACHE writes FILES: one zlib stream, sync-flushed after every line."""
    c = zlib.compressobj()
    data = b"".join(c.compress(line) + c.flush(zlib.Z_SYNC_FLUSH) for line in lines)
    return data + (c.flush() if finish else b"")


def broken():
    """One broken file of each format: what breaks in real files (cut, bad lines)."""
    def read(name):
        with open(os.path.join(DATA, name), "rb") as f:
            return f.read()
    cdx = read("cdx11-legend.cdx").split(b"\n")
    cdx[3] = cdx[3].replace(b" 20", b" 19", 1)[:-3]                      # a field short
    cdx[5] = b" ".join([cdx[5].split(b" ")[0], b"2013130101"] + cdx[5].split(b" ")[2:])   # month 13
    text = b"\n".join(cdx)
    write("broken-cut.cdx", text[:len(text) - 40])                         # cut mid-line
    cdxj = read("cdxj-pywb.cdxj").split(b"\n")
    cdxj[2] = cdxj[2][:cdxj[2].index(b"{") + 20]                           # a JSON block cut
    cdxj[4] = cdxj[4].replace(b'"mime"', b'"mime" "')                     # not JSON
    write("broken-json.cdxj", b"\n".join(cdxj))
    warc = read("warc-commoncrawl.warc.gz")
    write("broken-cut.warc.gz", warc[:len(warc) * 2 // 3])                 # cut inside its response
    arc = read("arc-generated.arc.gz")
    write("broken-cut.arc.gz", arc[:len(arc) - 100])                       # cut inside its last gzip member
    wacz = read("wacz-generated.wacz")
    name = b"archive/warc-commoncrawl.warc.gz"
    at = wacz.index(name) + len(name) + len(read("warc-commoncrawl.warc.gz")) // 2
    write("broken-cut.wacz", wacz[:at])                                    # cut inside its WARC member
    broken_crawl_log(read("crawllog-heritrix3.crawl.log"))
    entries = []                                                           # pywb's output=json lines
    for line in read("cdxj-pywb.cdxj").splitlines():
        key, ts, block = line.split(b" ", 2)
        entries.append(json.dumps(dict({"urlkey": key.decode(), "timestamp": ts.decode()}, **json.loads(block))).encode())
    entries[2] = entries[2][:40]                                           # an entry cut
    entries[4] = b"[" + entries[4][1:-1] + b"]"                            # not an entry: an array
    text = b"\n".join(entries)
    write("broken-cut.jsonl", text[:len(text) - 25])                       # cut mid-line
    owb = read("owb-cdxj.cdxj").split(b"\n")                             # owb[0] is its header, version 1.0
    owb[2] = b" ".join(owb[2].split(b" ", 3)[:2] + owb[2].split(b" ", 3)[3:])   # three fields: no record type
    owb[3] = owb[3][:owb[3].index(b"{") + 20]                              # a JSON block cut
    owb[5] = owb[5].replace(b" response ", b" request ", 1)                # a request record
    owb[7] = owb[7].replace(b"T", b"T25", 1)                               # a bad date
    text = b"\n".join(owb)
    write("broken-owb.cdxj", text[:len(text) - 30])                        # cut mid-line
    write("broken-unfinished.deflate", ache_files(ache_pages(), finish=False)[:-7])   # no end, last line cut


def broken_crawl_log(data):
    log = data.split(b"\n")
    log[3] = log[3].replace(b"   200 ", b"   2x0 ", 1)                       # a fetch status that is no number
    log[5] = b" ".join(log[5].split(b" ")[:7])                             # a line cut short
    text = b"\n".join(log)
    write("broken-cut.crawl.log", text[:len(text) - 30])                   # cut mid-line


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--golden-only", action="store_true")
    args = parser.parse_args(argv)
    os.makedirs(DATA, exist_ok=True)
    if not args.golden_only:
        copied()
        generated()
        broken()
    os.makedirs(fixtures.GOLDEN, exist_ok=True)
    for name in fixtures.names():
        for policy in fixtures.policies(name):
            with open(fixtures.golden(name, policy), "w", encoding="utf-8") as f:
                f.write(fixtures.profile_text(name, policy))
    print("wrote %d inputs and their golden profiles in %s" % (len(fixtures.names()), DATA))
    return 0


if __name__ == "__main__":
    sys.exit(main())
