"""A criterion and an input format added at run time reach every command through the registries.

The plugin tests/helpers/throwaway.py registers an optional criterion ``scheme`` (its capture
field, its registry entry) and a line format ``urllist`` (``TIMESTAMP URL`` a line, the only
reader that gives the scheme). With it registered here (the registries monkeypatched, restored
after) and named in ARCHIVE_PROFILER_PLUGINS for the other processes (local tasks, the server),
every command runs with no code of its own for either: profile (inline, local, pure Python: the
same bytes, the oracle's numbers), query, lookup, merge, split, compact, diff, overlap, ukvs,
validate, nightly (a fold night and an approximate one), report, and serve (a real server).
"""

import json
import os
import random
import re
import subprocess
import sys
import signal
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
import yaml

from profiler import contract, plugins
from profiler.accel import fast
from profiler.cli import main as cli
from profiler.files.validate import validate
from profiler.formats import inputs
from profiler.formats.cdx import urlkey
from profiler.model import capture, criteria
from profiler.testing import synthetic

from helpers import throwaway
from helpers.registries import keep
from helpers.nightly_archive import check_within_bounds
from helpers.oracle import profile as oracle_profile, read_profile, resolve_revisits

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
SCHEMES = ["http", "https", "HTTPS", "ftp"]


@pytest.fixture(scope="module")
def added():
    """The registries with the plugin's criterion and format, for this module's tests; the
    environment names the plugin for every process a command starts."""
    with pytest.MonkeyPatch.context() as mp:
        keep(mp)
        mp.setenv(contract.PLUGINS_ENV, "helpers.throwaway")
        mp.setenv("PYTHONPATH", os.pathsep.join([TESTS, ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        assert plugins.load() == ["helpers.throwaway"]
        yield mp


def url_lines(n, seed):
    """A URL list of the generator's captures (its URLs with random schemes, some of a host's):
    lines and the oracle's captures."""
    rng = random.Random(seed)
    lines, caps, of_host = [], [], {}
    for key, ts, url, *_ in synthetic.generate_captures(n, seed):
        host = key.split(")")[0]
        if host not in of_host:
            of_host[host] = rng.sample(SCHEMES, rng.randint(1, len(SCHEMES)))
        scheme = rng.choice(of_host[host])
        url = scheme + url[url.index(":"):]
        lines.append("%s %s" % (ts, url))
        caps.append([urlkey(None, url.encode()), ts, "unk", "unk", "-", 0, False, "unk", {"scheme": scheme.lower()}])
    return lines, caps


@pytest.fixture(scope="module")
def made(added, tmp_path_factory):
    """Two URL lists (the second's hosts partly the first's), a policy of the criterion, and a
    profile of both."""
    folder = tmp_path_factory.mktemp("added")
    a_lines, a_caps = url_lines(1500, 3)
    b_lines, b_caps = url_lines(900, 4)
    files = {}
    for name, lines in (("a", a_lines), ("b", b_lines)):
        files[name] = folder / ("%s.txt" % name)
        files[name].write_text("\n".join(lines) + "\n")
    policy = folder / "scheme.yaml"
    policy.write_text(yaml.safe_dump(throwaway.POLICY))
    return {"folder": folder, "files": files, "caps": {"a": a_caps, "b": b_caps}, "policy": str(policy)}


def run(*args):
    """The console script in this process: its exit status."""
    return cli.main([str(a) for a in args])


def data_lines(path):
    with open(path, "rb") as f:
        return [line for line in f if not line.startswith(b"!")]


def profile(made, name, *extra):
    out = made["folder"] / ("%s.cdxj" % name)
    assert run("profile", *extra, "-o", out, "--policy", made["policy"], "-q") == 0
    return out


@pytest.fixture(scope="module")
def profiles(made):
    a, b = (str(made["files"][n]) for n in "ab")
    return {"a": profile(made, "pa", a), "b": profile(made, "pb", b), "ab": profile(made, "pab", a, b)}


def test_the_plugin_adds_a_field_a_criterion_and_a_format(added, made):
    assert capture.Capture._field_defaults["scheme"] == "unk" and criteria.BY_NAME["scheme"] is throwaway.SCHEME
    info = inputs.sniff(str(made["files"]["a"]))
    assert info["format"] == "urllist"


def test_profile_inline_local_and_pure_python_give_the_oracle_s_numbers(made, profiles, monkeypatch):
    a, b = (str(made["files"][n]) for n in "ab")
    local = profile(made, "local", a, b, "-r", "local", "--cores", "2", "--split-size", "1M")
    assert data_lines(local) == data_lines(profiles["ab"])
    monkeypatch.setenv(fast.PURE_ENV, "1")
    pure = profile(made, "pure", a, b, "-r", "local", "--cores", "2")
    assert data_lines(pure) == data_lines(profiles["ab"])
    from profiler.model.policy import load
    caps = [list(c[:8]) + [dict(c[8])] for c in made["caps"]["a"] + made["caps"]["b"]]
    expected = oracle_profile(resolve_revisits(caps), load(made["policy"]))
    assert read_profile(str(profiles["ab"])) == expected
    assert {k.split(" ")[4] for k in expected} == {"-", "http", "https", "ftp"}


def test_profile_cut_into_byte_ranges(made, profiles):
    from profiler.run.profile import run_profile
    out = made["folder"] / "ranges.cdxj"
    summary = run_profile([str(made["files"]["a"]), str(made["files"]["b"])], str(out), policy=made["policy"],
                          split_size=4000)
    assert summary["splits"] > 10 and data_lines(out) == data_lines(profiles["ab"])


def test_dry_run_samples_the_format_as_lines(made, capfd):
    """The dry run samples a line format's lines (the registry says which are), not the whole file."""
    big = made["folder"] / "big.txt"
    lines, caps = url_lines(30000, 9)
    big.write_text("\n".join(lines) + "\n")
    assert run("profile", big, "--dry-run", "--policy", made["policy"]) == 0
    out = capfd.readouterr().out
    assert "  urllist  " in out
    low, high = (int(n.replace(",", "")) for n in re.search(r"at least ([0-9,]+) lines, at most ([0-9,]+)", out).groups())
    assert low <= high
    captures = int(re.search(r"captures  about ([0-9,]+)", out).group(1).replace(",", ""))
    assert len(caps) / 2 < captures < len(caps) * 2


def test_local_tasks_run_the_compiled_reduce_side_over_the_python_map_side(made, capsys):
    """The compiled kernels do not parse the format nor find the criterion's values; its values
    come from the Python reader and the compiled reduce side expands them."""
    if fast.load() is None:
        pytest.skip("the C extension is not built")
    from profiler.run.profile import run_profile
    summary = run_profile([str(made["files"]["a"])], str(made["folder"] / "k.cdxj"), policy=made["policy"],
                          runner="local", cores=1)
    counted = {name for step in summary["counters"] for group in step.values() for name in group}
    assert "step-1 reducers (compiled)" in counted and "step-1 reducers (pure Python)" not in counted, counted


def test_query_by_the_criterion_and_grouped_by_it(made, profiles, capfd):
    assert run("query", profiles["ab"], "--scheme", "https") == 0
    out = capfd.readouterr().out.splitlines()
    caps = made["caps"]["a"] + made["caps"]["b"]
    [line] = out
    assert line.startswith("* - - - https ") and \
        json.loads(line.split(" ", 5)[5])["urim"]["total"] == sum(1 for c in caps if c[8]["scheme"] == "https")
    assert run("query", profiles["ab"], "--group", "scheme") == 0
    assert {line.split(" ")[4] for line in capfd.readouterr().out.splitlines()} == {"http", "https", "ftp"}
    assert run("query", profiles["ab"], "--scheme", "HTTP S") == 2


def test_lookup_a_value_of_the_criterion(made, profiles, capfd):
    """The host line tells the host's schemes (the policy's host keys have them): held when the
    host has a capture of that scheme, else not-held there."""
    caps = made["caps"]["a"] + made["caps"]["b"]
    by_host = {}
    for c in caps:
        by_host.setdefault(c[0].split(")")[0], set()).add(c[8]["scheme"])
    urlkeys = sorted({c[0] for c in caps})
    lacking = [u for u in urlkeys if "ftp" not in by_host[u.split(")")[0]]][:4]
    answers = set()
    for urlkey in urlkeys[::60] + lacking:
        for scheme in ("ftp", "https"):
            assert run("lookup", profiles["ab"], urlkey, "--scheme", scheme) == 0
            fields = capfd.readouterr().out.rstrip("\n").split("\t")
            held = scheme in by_host[urlkey.split(")")[0]]
            assert (fields[1], fields[2].endswith(" " + scheme), fields[-1]) == ("held" if held else "not-held", held,
                                                                                 scheme), fields
            answers.add(fields[1])
    assert answers == {"held", "not-held"}
    assert run("lookup", profiles["ab"], caps[0][0], "--scheme", "ftp", "--lang", "ara") == 2
    capfd.readouterr()
    # a value no key of the criterion can have (its field pattern) is refused, not answered not-held
    assert run("lookup", profiles["ab"], caps[0][0], "--scheme", "HTTP S") == 2
    out, err = capfd.readouterr()
    assert out == "" and err.count("\n") == 1 and "not a scheme value" in err


def test_merge_diff_and_overlap(made, profiles, capfd):
    merged = made["folder"] / "merged.cdxj"
    assert run("merge", profiles["a"], profiles["b"], "-o", merged, "-q") == 0
    assert validate(str(merged)).ok
    keys = [line.split(b" {")[0] for line in data_lines(merged)]
    assert keys == [line.split(b" {")[0] for line in data_lines(profiles["ab"])]
    assert run("diff", profiles["a"], profiles["ab"], "--summary") == 0
    assert capfd.readouterr().out
    assert run("overlap", profiles["a"], profiles["b"], "--scheme", "https") == 0
    rows = [json.loads(line) for line in capfd.readouterr().out.splitlines()]
    assert rows and rows[0]["level"] == "root" and rows[0]["both"] == 1


def test_split_compact_ukvs_and_validate(made, profiles, capfd):
    folder = made["folder"]
    assert run("split", profiles["ab"], "--max-lines", "500", "-o", folder / "page", "-q") == 0
    pages = sorted(folder.glob("page*"))
    assert len(pages) > 2
    assert run("validate", *pages, "-q") == 0
    ukvs = folder / "ab.ukvs"
    assert run("ukvs", profiles["ab"], "-o", ukvs, "-q") == 0
    text = ukvs.read_text()
    assert re.search(r'"scheme":\{"ftp":"[0-9]+/[0-9]+"', text) and '"breakdown":["scheme"]' in text
    assert run("validate", ukvs, "-q") == 0
    small = folder / "small.ukvs"
    assert run("compact", ukvs, "-o", small, "--max-lines", "200", "-q") == 0
    assert run("validate", small, "-q") == 0
    assert run("lookup", ukvs, made["caps"]["a"][0][0], "--scheme", "https") == 0
    assert capfd.readouterr().out.rstrip("\n").split("\t")[-1] in ("https", "-")


def test_report(made, profiles, capfd):
    pytest.importorskip("matplotlib")
    out = made["folder"] / "report.html"
    assert run("report", profiles["ab"], "-o", out, "-q") == 0
    assert out.read_text().count("<svg") > 3


def test_nightly_fold_and_approximate(made, capsys):
    """Nights of URL lists: the first rebuilds, the second (new hosts) folds exactly, the third
    (URI-Rs seen before) folds approximately: its captures file holds every field of the night's
    captures, the scheme too, so the keys it labels are the scheme's own."""
    root = made["folder"] / "nightly"
    inputs_dir = root / "in"
    inputs_dir.mkdir(parents=True)
    config = root / "nightly.yaml"
    config.write_text(yaml.safe_dump({"inputs": ["in"], "output_dir": "out", "runner": "inline",
                                      "policy": made["policy"], "archive_uri": "https://a.example/",
                                      "on_overlap": "approximate", "settle_seconds": 0}))
    lines, _ = url_lines(2000, 7)
    hosts = sorted({line.split(" ")[1].split("/")[2] for line in lines})
    parts = [[line for line in lines if line.split(" ")[1].split("/")[2] in hosts[i::3]] for i in range(3)]

    def night(name, chosen):
        (inputs_dir / name).write_text("\n".join(chosen) + "\n")
        assert run("nightly", "--config", config, "-q") == 0
        with open(root / "out" / ".nightly" / "runs.jsonl", "rb") as f:
            return json.loads(f.read().splitlines()[-1])

    assert night("n1.txt", parts[0])["mode"] == "rebuild"
    assert night("n2.txt", parts[1])["mode"] == "fold"
    recrawl = [re.sub(r"^[0-9]{4}", "2025", line) for line in parts[0][::4]]
    assert night("n3.txt", recrawl + parts[2])["mode"] == "approximate"
    scratch = root / "scratch.cdxj"
    assert run("profile", inputs_dir, "-o", scratch, "--policy", made["policy"], "-q") == 0
    exact, bounded = check_within_bounds(str(root / "out" / "archive-latest.cdxj"), str(scratch))
    assert bounded > 0 and exact > bounded
    keys = [line.split(b" {")[0].split(b" ") for line in data_lines(root / "out" / "archive-latest.cdxj")]
    assert {k[4] for k in keys} == {b"-", b"http", b"https", b"ftp"}


def test_serve_answers_a_value_of_the_criterion(made, profiles):
    """A real server (another process: it loads the plugin the environment names) asked with a
    real client for a value of the criterion."""
    pytest.importorskip("uvicorn")
    proc = subprocess.Popen([sys.executable, "-m", "profiler.cli", "serve", "ab=%s" % profiles["ab"], "--port", "0"],
                            stderr=subprocess.PIPE, cwd=ROOT, start_new_session=True)
    try:
        line = proc.stderr.readline().decode()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found, line + (proc.stderr.read().decode() if proc.poll() is not None else "")
        base = "http://127.0.0.1:%s" % found.group(1)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(base + "/health", timeout=5).read()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not answer /health"
                time.sleep(0.05)
        https = {c[0] for c in made["caps"]["a"] + made["caps"]["b"] if c[8]["scheme"] == "https"}
        urlkey = sorted(https)[0]
        with urllib.request.urlopen(base + "/lookup?" + urllib.parse.urlencode({"url": urlkey, "scheme": "https"}),
                                    timeout=30) as r:
            answer = json.loads(r.read())
        assert answer["scheme"] == "https"
        [archive] = answer["archives"]
        assert archive["answer"] == "held" and archive["scheme"]["answer"] == "held"
        assert archive["scheme"]["scheme"] == "https"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + "/lookup?" + urllib.parse.urlencode({"url": urlkey, "scheme": "HTTP S"}),
                                   timeout=30)
        assert refused.value.code == 400 and "not a scheme value" in json.loads(refused.value.read())["error"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
