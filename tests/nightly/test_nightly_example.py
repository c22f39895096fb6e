"""The shipped example config (conf/nightly.yaml) does what the docs say: a fresh user who copies
it next to an archive, edits its paths and runs it at once gets a published profile (exit 0),
then "nothing new"."""

import os
import re
import shutil
import time

import orjson
import yaml

from profiler.cli import main as cli

from helpers.nightly_archive import ROOT, Archive, assert_same_profile, captures_by_host

EXAMPLE = os.path.join(ROOT, "conf", "nightly.yaml")
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def copied_example(folder, inputs=("cdx/",)):
    """The example's text with only its paths edited, as its comments tell a user to."""
    text = open(EXAMPLE, encoding="utf-8").read()
    edited = re.sub(r"(?m)^inputs:\n(  - .*\n)+", "inputs:\n" + "".join("  - %s\n" % i for i in inputs), text)
    edited = re.sub(r"(?m)^output_dir: .*$", "output_dir: profiles", edited)
    assert edited != text and "/data/archive" not in edited.replace("# state_dir", "")
    path = os.path.join(folder, "nightly.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(edited)
    example, copy = yaml.safe_load(text), yaml.safe_load(edited)
    assert {k: v for k, v in example.items() if k not in ("inputs", "output_dir")} == \
        {k: v for k, v in copy.items() if k not in ("inputs", "output_dir")}
    return path


def test_the_example_config_run_at_once_publishes(tmp_path, capsys):
    os.makedirs(tmp_path / "cdx")
    shutil.copy(SAMPLE, tmp_path / "cdx")           # just copied: modified a moment ago
    config = copied_example(str(tmp_path))
    status = cli.main(["nightly", "--config", config, "-q"])
    line = capsys.readouterr().out.strip()
    assert status == 0, line
    assert re.match(r"archive-profiler nightly: published archive-\d{8}T\d{6}Z\.cdxj \(rebuild: first run; "
                    r"[\d,]+ captures new, [\d,]+ in all, [\d,]+ lines; exact\) in [\d.]+ s$", line), line
    latest = str(tmp_path / "profiles" / "archive-latest.cdxj")
    assert os.path.isfile(str(tmp_path / "profiles" / "archive-latest.ukvs"))
    scratch = str(tmp_path / "scratch.cdxj")
    from profiler.run.profile import run_profile
    run_profile([str(tmp_path / "cdx")], scratch, archive_uri="https://archive.example.org/")
    assert_same_profile(latest, scratch)
    status = cli.main(["nightly", "--config", config, "-q"])
    line = capsys.readouterr().out.strip()
    assert status == 0 and line.startswith("archive-profiler nightly: nothing new in 1 input(s);"), line


def test_a_first_night_with_every_input_still_settling_waits_with_exit_0(tmp_path, capsys):
    a = Archive(tmp_path, settle_seconds=3600)
    a.add_cdx("a.cdx", [c for g in captures_by_host(300, seed=61) for c in g])
    status, line = a.night(capsys)
    assert status == 0, line
    assert line.startswith("archive-profiler nightly: nothing settled yet: 1 input(s) modified in the last "
                           "3600 s wait for the next run"), line
    with open(os.path.join(a.state_dir, "runs.jsonl"), "rb") as f:
        run = orjson.loads(f.read().splitlines()[-1])
    assert run["status"] == "waiting" and run["settling_inputs"] == 1
    assert not os.path.lexists(a.latest)
    old = time.time() - 7200
    os.utime(os.path.join(a.inputs, "a.cdx"), (old, old))
    status, line = a.night(capsys)
    assert status == 0 and "published" in line, line


def test_an_index_and_the_warc_it_indexes_are_refused_not_counted_twice(tmp_path, capsys):
    """An archive's index folder and its WARC files both listed (as the example once did) would
    publish every capture twice, 'exact', with the warning lost under -q: the night is refused."""
    from io import BytesIO
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter
    os.makedirs(tmp_path / "warcs")
    os.makedirs(tmp_path / "cdx")
    with open(tmp_path / "warcs" / "a.warc.gz", "wb") as f:
        w = WARCWriter(f, gzip=True)
        head = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        w.write_record(w.create_warc_record("http://example.com/", "response", payload=BytesIO(b"<p>hi</p>"),
                                            http_headers=head))
    (tmp_path / "cdx" / "a.cdxj").write_text(
        'com,example)/ 20130101000000 {"url": "http://example.com/", "mime": "text/html", "status": "200", '
        '"length": "300", "offset": "0", "filename": "a.warc.gz"}\n')
    config = copied_example(str(tmp_path), inputs=("cdx/", "warcs/**/*.warc.gz"))
    status = cli.main(["nightly", "--config", config, "-q"])
    line = capsys.readouterr().out.strip()
    assert status == 2, line
    assert "a.cdxj indexes" in line and "a.warc.gz, which is an input too" in line, line
    assert "list the indexes or the WARC/ARC files in inputs, not both" in line, line
    assert not os.path.exists(tmp_path / "profiles" / "archive-latest.cdxj")
