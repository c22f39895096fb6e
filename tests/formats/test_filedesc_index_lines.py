"""An index of an ARC file holds an entry of its filedesc record (``filedesc:NAME``), and of a
WARC's warcinfo record (``warcinfo:...``): not captures (spec section 1). An index whose entries
all sort after ``filedesc:`` (an ARC of ``org,`` or ``uk,`` sites) starts with that entry, and was
taken for an ARC file: every capture lost, one ``bad_record``, exit 0. In a CDXJ index such
entries (and a ``-`` urlkey with no URL) were captures, or ``bad_url``."""

import gzip
import json

import pytest

from helpers.exactness import pure_python
from profiler.formats import inputs
from profiler.run.profile import run_profile

CDX = (b"filedesc:foo.arc 20200101000000 filedesc://foo.arc text/plain - - - - 70 0 foo.arc\n"
       b"org,a)/ 20200101000000 http://a.org/ text/html 200 AAAA - - 30 0 foo.arc\n"
       b"org,b)/ 20200102000000 http://b.org/ text/html 200 BBBB - - 40 100 foo.arc\n"
       b"warcinfo:/foo.warc/1 20200101000000 warcinfo:/foo.warc/1 application/warc-fields - - - - 300 0 foo.warc\n")
CDXJ = (b'filedesc:foo.arc 20200101000000 {"url":"filedesc://foo.arc","mime":"text/plain","length":"70"}\n'
        b'org,a)/ 20200101000000 {"url":"http://a.org/","mime":"text/html","status":"200","digest":"AAAA","length":"30"}\n'
        b'org,b)/ 20200102000000 {"url":"http://b.org/","mime":"text/html","status":"200","digest":"BBBB","length":"40"}\n'
        b'warcinfo:/foo.warc/1 20200101000000 {"url":"warcinfo:/foo.warc/1","mime":"application/warc-fields","length":"300"}\n'
        b'- 20200103000000 {"mime":"text/html","length":"5"}\n')


def _profile(path, out, pure):
    """(lines, the run's !meta) of path profiled, by the compiled kernels or pure Python."""
    if pure:
        with pure_python():
            run_profile([str(path)], str(out))
    else:
        run_profile([str(path)], str(out))
    lines = out.read_text().splitlines()
    return lines, json.loads(next(l for l in lines if l.startswith('!meta {"inputs"'))[6:])


@pytest.mark.parametrize("name, data, fmt, skipped", [("i.cdx", CDX, "cdx", 2), ("i.cdxj", CDXJ, "cdxj", 3)])
@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("pure", [False, True])
def test_an_index_that_starts_with_a_filedesc_entry_is_an_index(tmp_path, name, data, fmt, skipped, compressed, pure):
    path = tmp_path / (name + (".gz" if compressed else ""))
    path.write_bytes(gzip.compress(data) if compressed else data)
    assert inputs.sniff(str(path))["format"] == fmt
    lines, meta = _profile(path, tmp_path / "p.cdxj", pure)
    assert meta["captures"] == 2 and meta["skipped"] == {"not_a_capture": skipped}
    top = next(l for l in lines if l.startswith("* - - - "))
    assert '"bytes":70,' in top


#: entries the spec names by their urlkey alone (the URL field another value): a warcinfo and a
#: filedesc entry whose URL is '-', and a '-' urlkey beside a URL
BY_URLKEY = {
    "cdx": (b"filedesc:foo.arc 20200101000000 - text/plain 200 - - - 70 0 foo.arc\n"
            b"org,a)/ 20200101000000 http://a.org/ text/html 200 AAAA - - 30 0 foo.arc\n"
            b"warcinfo:/foo.warc/1 20200101000000 - application/warc-fields - - - - 300 0 foo.warc\n"
            b"- 20200103000000 http://c.org/ text/html 200 CCCC - - 5 0 foo.warc\n"),
    "cdxj": (b'- 20200103000000 {"url":"http://c.org/","mime":"text/html","status":"200","length":"5"}\n'
             b'filedesc:foo.arc 20200101000000 {"mime":"text/plain","status":"200","length":"70"}\n'
             b'org,a)/ 20200101000000 {"url":"http://a.org/","mime":"text/html","status":"200","length":"30"}\n'
             b'warcinfo:/foo.warc/1 20200101000000 {"url":"-","mime":"text/plain","length":"300"}\n'),
}


@pytest.mark.parametrize("fmt", sorted(BY_URLKEY))
@pytest.mark.parametrize("pure", [False, True])
def test_entries_named_by_their_urlkey_alone_are_not_captures(tmp_path, fmt, pure):
    """Spec section 1: urlkeys starting filedesc: or warcinfo:, and urlkey '-', are not captures,
    whatever the URL field holds."""
    path = tmp_path / ("i." + fmt)
    path.write_bytes(BY_URLKEY[fmt])
    lines, meta = _profile(path, tmp_path / "p.cdxj", pure)
    assert meta["captures"] == 1 and meta["skipped"] == {"not_a_capture": 3}
    keys = [l.split(" {")[0] for l in lines if not l.startswith("!")]
    assert [k for k in keys if k.endswith(" - - -")] == ["* - - -", "org,* - - -", "org,a)/* - - -"]


def test_an_arc_file_still_starts_with_its_filedesc_header(tmp_path):
    path = tmp_path / "a.arc"
    path.write_bytes(b"filedesc://a.arc 0.0.0.0 20200101000000 text/plain 4\n1 0 \n\n"
                     b"http://a.org/ 1.2.3.4 20200101000000 text/html 0\n\n")
    assert inputs.sniff(str(path))["format"] == "arc"
