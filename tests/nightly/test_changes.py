from profiler.nightly import changes

HEAD = (b'!keys ["surt","datetime","mime","status"]\n'
        b'!meta {"inputs":["a.cdx"],"captures":%d,"skipped":{}}\n'
        b'!meta {"type":"ArchiveProfile","created":"2026-11-2%dT03:00:00Z","policy":{}}\n')


def line(key, total, urir, size):
    return b'%s {"urim":{"total":%d,"min":1,"max":%d},"urir":%d,"bytes":%d,"digests":1,"dedup_bytes":%d,' \
           b'"first":"20130101000000","last":"20250101000000"}\n' % (key, total, total, urir, size, size)


def write(path, created, captures, lines):
    path.write_bytes(HEAD % (captures, created) + b"".join(lines))
    return str(path)


def test_report_of_growth_new_and_vanished(tmp_path):
    old = write(tmp_path / "old.cdxj", 1, 10, [
        line(b"* - - -", 10, 4, 1000), line(b"* - text/html -", 10, 4, 1000), line(b"* 2013 - -", 10, 4, 1000),
        line(b"com,* - - -", 6, 2, 600), line(b"com,a)/* - - -", 6, 2, 600),
        line(b"org,* - - -", 4, 2, 400), line(b"org,old)/* - - -", 4, 2, 400)])
    new = write(tmp_path / "new.cdxj", 2, 17, [
        line(b"* - - -", 17, 7, 1700), line(b"* - image/png -", 3, 3, 300), line(b"* - text/html -", 14, 4, 1400),
        line(b"* 2013 - -", 10, 4, 1000), line(b"* 2026 - -", 7, 3, 700),
        line(b"com,* - - -", 13, 5, 1300), line(b"com,a)/* - - -", 10, 2, 1000), line(b"com,b)/* - - -", 3, 3, 300),
        line(b"org,* - - -", 4, 2, 400)])
    r = changes.compare(old, new)
    assert r["totals"]["urim.total"] == [10, 17, 7] and r["totals"]["urir"] == [4, 7, 3]
    assert r["new_hosts"] == {"count": 1, "top": [changes._row("com,b)/*", None, {"urim.total": 3, "urir": 3,
                                                                                    "bytes": 300, "dedup_bytes": 300})]}
    assert [h["key"] for h in r["vanished_hosts"]["top"]] == ["org,old)/*"]
    assert [(t["key"], t["urim.total"][2]) for t in r["by_tld"]] == [("com,*", 7), ("org,*", 0)]
    assert [(y["key"], y["urim.total"]) for y in r["by_year"]] == [("2013", [10, 10, 0]), ("2026", [0, 7, 7])]
    assert [(m["key"], m["urim.total"][2]) for m in r["by_mime"]] == [("text/html", 4), ("image/png", 3)]
    assert r["keys"] == {"appeared": 3, "vanished": 1, "changed": 4, "same": 2}
    assert r["vanished_keys"] == ["org,old)/* - - -"]
    text = changes.markdown(r)
    assert "| `com,*` | 13 | +7 | 5 | +3 | 1,300 | +700 |" in text
    assert "## Vanished keys (1)" in text and "- `org,old)/* - - -`" in text
    first = changes.compare(None, new)
    assert first["old"] is None and first["keys"]["appeared"] == 9 and first["new_hosts"]["count"] == 2
    assert "First profile" in changes.markdown(first)


def test_written_report_has_its_chart(tmp_path):
    old = write(tmp_path / "old.cdxj", 1, 10, [line(b"* - - -", 10, 4, 1000), line(b"* 2013 - -", 10, 4, 1000),
                                               line(b"com,* - - -", 10, 4, 1000)])
    new = write(tmp_path / "new.cdxj", 2, 12, [line(b"* - - -", 12, 5, 1200), line(b"* 2013 - -", 10, 4, 1000),
                                               line(b"* 2026 - -", 2, 1, 200), line(b"com,* - - -", 9, 3, 900),
                                               line(b"org,* - - -", 3, 2, 300)])
    changes.write(old, new, str(tmp_path / "r.changes.json"), str(tmp_path / "r.changes.md"))
    import xml.etree.ElementTree as ET
    root = ET.parse(str(tmp_path / "r.changes.svg")).getroot()
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    bars = [r.find("{http://www.w3.org/2000/svg}title").text for r in root.iter("{http://www.w3.org/2000/svg}rect")]
    assert bars == ["2026: +2", "org,*: +3", "com,*: -1"]
    assert "Captures added by year" in texts and "+3" in texts
    assert "![growth by year and TLD](r.changes.svg)" in (tmp_path / "r.changes.md").read_text()


def test_report_covers_every_criterion_of_the_profile_at_each_level(tmp_path):
    """The report covered TLD, year and MIME type only: status, language, size (and any criterion
    of the registry the profile's keys hold) have their growth too, per level."""
    head = HEAD.replace(b'["surt","datetime","mime","status"]', b'["surt","datetime","mime","status","lang","size"]')

    def write5(path, created, captures, lines):
        path.write_bytes(head % (captures, created) + b"".join(sorted(lines, key=lambda x: x.split(b" {")[0])))
        return str(path)
    old = write5(tmp_path / "old.cdxj", 1, 10, [
        line(b"* - - - - -", 10, 4, 1000), line(b"* - - 2xx - -", 10, 4, 1000), line(b"* - - 200 - -", 10, 4, 1000),
        line(b"* - - - eng -", 10, 4, 1000), line(b"* 2013 - - - -", 10, 4, 1000)])
    new = write5(tmp_path / "new.cdxj", 2, 16, [
        line(b"* - - - - -", 16, 6, 1600), line(b"* - - 200 - -", 12, 4, 1200), line(b"* - - 2xx - -", 12, 4, 1200),
        line(b"* - - 404 - -", 4, 2, 400), line(b"* - - 4xx - -", 4, 2, 400),
        line(b"* - - - deu -", 6, 2, 600), line(b"* - - - eng -", 10, 4, 1000),
        line(b"* - - - - 1k-10k", 16, 6, 1600), line(b"* 2013 - - - -", 10, 4, 1000),
        line(b"* 2026 - - - -", 6, 2, 600)])
    r = changes.compare(old, new)
    by = r["by_criterion"]
    assert list(by) == ["datetime", "mime", "status", "lang", "size"]
    assert [(x["key"], x["urim.total"]) for x in by["status"]["class"]] == [("4xx", [0, 4, 4]), ("2xx", [10, 12, 2])]
    assert [(x["key"], x["urim.total"][2]) for x in by["status"]["code"]] == [("404", 4), ("200", 2)]
    assert [(x["key"], x["urim.total"][2]) for x in by["lang"]["code"]] == [("deu", 6), ("eng", 0)]
    assert [(x["key"], x["urim.total"][2]) for x in by["size"]["class"]] == [("1k-10k", 16)]
    assert [(x["key"], x["urim.total"][2]) for x in by["datetime"]["year"]] == [("2013", 0), ("2026", 6)]
    assert [y["key"] for y in r["by_year"]] == ["2013", "2026"]
    text = changes.markdown(r)
    for title in ("## Growth by status (class)", "## Growth by status (code)", "## Growth by lang (code)",
                  "## Growth by size (class)", "## Growth by datetime (year)"):
        assert title in text
    assert "| `404` | 4 | +4 |" in text


def test_a_field_of_two_levels_is_a_row_of_each(tmp_path):
    """Status 'unk' is a line of the class and of the code: each level's table lists its growth,
    so each adds up to the whole (the code's table left it out)."""
    old = write(tmp_path / "old.cdxj", 1, 10, [line(b"* - - -", 10, 4, 1000), line(b"* - - 200", 10, 4, 1000),
                                               line(b"* - - 2xx", 10, 4, 1000)])
    new = write(tmp_path / "new.cdxj", 2, 15, [line(b"* - - -", 15, 6, 1500), line(b"* - - 200", 10, 4, 1000),
                                               line(b"* - - 2xx", 10, 4, 1000), line(b"* - - unk", 5, 2, 500)])
    by = changes.compare(old, new)["by_criterion"]["status"]
    assert [(x["key"], x["urim.total"][2]) for x in by["class"]] == [("unk", 5), ("2xx", 0)]
    assert [(x["key"], x["urim.total"][2]) for x in by["code"]] == [("unk", 5), ("200", 0)]
