"""The routing service, for real: `archive-profiler serve` started on a free loopback port,
asked with a real HTTP client, every answer compared with the `lookup` command's, a published
version swapped under load, hostile requests, and a clean shutdown."""

import http.client
import os
import random
import signal
import subprocess
import threading
import time
import urllib.parse

import pytest

pytest.importorskip("uvicorn")

from profiler.testing import synthetic  # noqa: E402
from profiler.run.profile import run_profile  # noqa: E402
from profiler.files.ukvs import profile_to_map  # noqa: E402

from helpers.serving import CLI, ROOT, Server, env  # noqa: E402


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    """Three archives with overlapping holdings of one generated crawl: A and B as maps (A
    also by datetime), C as a profile; and the URIs to ask (held somewhere, nowhere, not URIs)."""
    folder = tmp_path_factory.mktemp("serve")
    lines = [line.rstrip("\n") for line in synthetic.cdx_lines(6000, seed=11)]
    rng = random.Random(5)
    parts = {"a": [], "b": [], "c": []}
    for line in lines:
        r = rng.random()
        for name, (low, high) in (("a", (0, 0.5)), ("b", (0.35, 0.8)), ("c", (0.7, 1.0))):
            if low <= r < high:
                parts[name].append(line)
    files = {}
    for name, chosen in parts.items():
        cdx = folder / ("%s.cdx" % name)
        cdx.write_text(synthetic.LEGEND + "\n" + "\n".join(chosen) + "\n")
        profile = folder / ("%s.cdxj" % name)
        run_profile([str(cdx)], str(profile), archive_uri="https://%s.example.org/" % name)
        files[name] = profile
    a_map, a_dated, b_map = folder / "a.ukvs", folder / "a-dated.ukvs", folder / "b.ukvs"
    profile_to_map(str(files["a"]), str(a_map), ("surt",))
    profile_to_map(str(files["a"]), str(a_dated), ("surt", "datetime"), archive_uri="https://a2.example.org/")
    profile_to_map(str(files["b"]), str(b_map), ("surt",))
    # D: a hand-written map that rules whole TLDs out (zero counts: an explicit "not held")
    d_map = folder / "d.ukvs"
    d_map.write_text('!context ["http://oduwsdl.github.io/contexts/ukvs"]\n'
                     '!fields {"keys":["surt"],"values":["frequency"]}\n'
                     '!id {"uri":"https://d.example.org/"}\n'
                     '* 900/300\ncom,* 0\nnet,* 0/0\norg,* 900/300\n')
    urls = sorted({line.split(" ")[2] for line in rng.sample(lines, 150)})
    urls += ["http://nowhere.invalid/x", "http://example.org/never", "com,*", "*", "org,example)/a/b",
             "https://www.%s/deep/path/x.html" % urls[0].split("/")[2].lstrip("w.")]
    return {"a": str(a_map), "a_dated": str(a_dated), "b": str(b_map), "c": str(files["c"]), "d": str(d_map),
            "urls": urls,
            "folder": folder}


@pytest.fixture
def server(archives):
    s = Server(["%s" % archives["a"], "B=%s" % archives["b"], archives["c"], archives["a_dated"], archives["d"]])
    yield s
    s.stop()


def lookup_command(path, urls, dt=None):
    args = CLI + ["lookup", path, "-"] + (["--datetime", dt] if dt else [])
    r = subprocess.run(args, input="\n".join(urls).encode() + b"\n", capture_output=True, env=env(), cwd=ROOT)
    out = {}
    for line in r.stdout.decode().splitlines():
        query, status, key, freq, level, date = line.split("\t")
        out[query] = (status, None if key == "-" else key, None if freq == "-" else freq,
                      None if level == "-" else level, None if date == "-" else date)
    return out


@pytest.mark.parametrize("dt", [None, "2012", "199001", "20140315"])
def test_every_answer_equals_the_lookup_command(server, archives, dt):
    urls = [u for u in archives["urls"]]
    files = [("https://a.example.org/", archives["a"]), ("B", archives["b"]), ("https://c.example.org/", archives["c"]),
             ("https://a2.example.org/", archives["a_dated"]), ("https://d.example.org/", archives["d"])]
    expected = {name: lookup_command(path, urls, dt) for name, path in files}
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    checked = 0
    for url in urls:
        target = "/lookup?" + urllib.parse.urlencode(dict(url=url, **({"datetime": dt} if dt else {})))
        status, body = server.get(target, conn)
        if expected[files[0][0]][url][0] == "invalid":
            assert status == 400
            continue
        assert status == 200, body
        assert [a["archive"] for a in body["archives"]] == [n for n, _ in files]
        for answer, (name, _) in zip(body["archives"], files):
            want = expected[name][url]
            got = (answer["answer"], answer["key"], answer["frequency"], answer["level"], answer.get("date"))
            assert got == want, (url, name, got, want)
            checked += 1
    assert checked >= 5 * 100


def test_route_orders_and_leaves_out(server, archives):
    seen_left_out = seen_several = False
    for url in archives["urls"]:
        status, body = server.get("/route?" + urllib.parse.urlencode({"url": url}))
        if status == 400:
            continue
        _, full = server.get("/lookup?" + urllib.parse.urlencode({"url": url}))
        held = [a["archive"] for a in full["archives"] if a["answer"] == "held" and a["listed"]]
        assert all(("listed" in a) == (a["answer"] == "held") for a in full["archives"])
        assert sorted(a["archive"] for a in body["archives"]) == sorted(held)
        scores = [a["score"] for a in body["archives"]]
        assert scores == sorted(scores, reverse=True)
        for a in body["archives"]:
            weight = {"exact": 50, "path": 40, "host": 30, "domain": 20, "tld": 10, "root": 0}[a["level"]]
            assert weight <= a["score"] < weight + 10
        seen_left_out |= body["left_out"] > 0
        seen_several |= len(body["archives"]) > 1
        if len(body["archives"]) > 1:
            _, limited = server.get("/route?" + urllib.parse.urlencode({"url": url, "limit": 1}))
            assert limited["archives"] == body["archives"][:1]
    assert seen_left_out and seen_several


def test_archives_and_health(server, archives):
    status, body = server.get("/health")
    assert status == 200 and body == {"status": "ok", "archives": 5}
    deadline = time.monotonic() + 10
    while True:
        status, body = server.get("/archives")
        if all(a["lines"] is not None for a in body["archives"]) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    names = [a["archive"] for a in body["archives"]]
    assert names == ["https://a.example.org/", "B", "https://c.example.org/", "https://a2.example.org/",
                     "https://d.example.org/"]
    for a, path in zip(body["archives"], [archives[k] for k in ("a", "b", "c", "a_dated", "d")]):
        with open(path, "rb") as f:
            data = [line for line in f if not line.startswith((b"!", b"@"))]
        assert a["lines"] == len(data)
    assert body["archives"][2]["kind"] == "cdxj" and body["archives"][3]["keys"] == ["surt", "datetime"]


@pytest.mark.parametrize("target, status", [
    ("/lookup", 400), ("/lookup?url=", 400), ("/lookup?url=not%20a%20uri", 400),
    ("/lookup?url=http://a.com/&datetime=20x3", 400), ("/lookup?url=http://a.com/&url=http://b.com/", 400),
    ("/route?url=http://a.com/&limit=0", 400), ("/route?url=http://a.com/&limit=abc", 400),
    ("/etc/passwd", 404), ("/../../etc/passwd", 404), ("/lookup/../archives", 404), ("/", 404),
    ("/lookup?url=http://a.com/" + "x" * 9000, 414), ("/lookup?url=%ff%fe", 400),
])
def test_bad_requests_get_json_errors(server, target, status):
    got, body = server.get(target)
    assert got == status and isinstance(body["error"], str)


def test_methods_headers_and_the_server_survives(server):
    assert server.get("/health", method="POST")[0] == 405
    assert server.get("/health", method="DELETE")[0] == 405
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.putrequest("GET", "/health")
    conn.putheader("X-Big", "y" * 200000)         # a header far beyond any limit
    conn.endheaders()
    try:
        r = conn.getresponse()
        assert r.status in (400, 413, 431)
    except (http.client.HTTPException, ConnectionError):
        pass                                    # the server may just close the connection
    conn.close()
    assert server.get("/health")[0] == 200


def test_published_version_swapped_under_load(archives, tmp_path):
    """nightly moves NAME-latest to a new version: picked up without a restart, no request fails."""
    v1, v2 = tmp_path / "v1.ukvs", tmp_path / "v2.ukvs"
    v1.write_bytes(open(archives["a"], "rb").read())
    v2.write_bytes(open(archives["b"], "rb").read())
    latest = tmp_path / "arch-latest.ukvs"
    os.symlink("v1.ukvs", latest)
    s = Server(["ARCH=%s" % latest], workers=2)
    try:
        url = "/lookup?" + urllib.parse.urlencode({"url": "*"})
        before = s.get(url)[1]["archives"][0]["frequency"]
        failures, answers, stop = [], set(), threading.Event()

        def load():
            conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
            while not stop.is_set():
                try:
                    status, body = s.get(url, conn)
                    if status != 200:
                        failures.append(status)
                    else:
                        answers.add(body["archives"][0]["frequency"])
                except Exception as e:      # a failed request is what this test looks for
                    failures.append(repr(e))
                    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
        threads = [threading.Thread(target=load) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(1.0)
        tmp_link = tmp_path / ".arch-latest.tmp"
        os.symlink("v2.ukvs", tmp_link)
        os.replace(tmp_link, latest)                # as nightly publishes: an atomic rename
        deadline = time.monotonic() + 10
        after = before
        while time.monotonic() < deadline and after == before:
            after = s.get(url)[1]["archives"][0]["frequency"]
            time.sleep(0.1)
        time.sleep(1.5)                              # every worker has checked by now
        stop.set()
        for t in threads:
            t.join()
        assert failures == []
        assert after != before
        for _ in range(20):                          # every worker answers from the new version
            assert s.get(url)[1]["archives"][0]["frequency"] == after
        assert answers == {before, after}
    finally:
        s.stop()


def test_startup_mistakes_are_one_line(archives, tmp_path):
    r = subprocess.run(CLI + ["serve", str(tmp_path / "missing.ukvs"), "--port", "0"], capture_output=True,
                       env=env(), cwd=ROOT, timeout=60)
    assert r.returncode == 2 and r.stderr.decode().count("\n") == 1
    twice = subprocess.run(CLI + ["serve", archives["a"], archives["a"], "--port", "0"], capture_output=True,
                           env=env(), cwd=ROOT, timeout=60)
    assert twice.returncode == 2 and b"NAME=FILE" in twice.stderr
    s = Server([archives["a"]], workers=1)
    try:
        busy = subprocess.run(CLI + ["serve", archives["a"], "--port", str(s.port)], capture_output=True,
                              env=env(), cwd=ROOT, timeout=60)
        assert busy.returncode == 2 and busy.stderr.decode().count("\n") == 1
    finally:
        s.stop()


def test_absurd_workers_are_refused_in_one_line(tmp_path):
    """--workers past the processes any run may start (a billion forked one by one) is a usage
    error, before any file is read or any process forked."""
    for workers in ["1000000000", "1025"]:
        r = subprocess.run(CLI + ["serve", str(tmp_path / "missing.ukvs"), "--port", "0", "--workers", workers],
                           capture_output=True, env=env(), cwd=ROOT, timeout=60)
        err = r.stderr.decode()
        assert r.returncode == 2 and err.count("\n") == 1 and "--workers" in err, err


def test_sigterm_stops_every_process(archives):
    s = Server([archives["a"]], workers=2)
    pgid = os.getpgid(s.proc.pid)
    s.stop()
    assert s.proc.returncode in (0, 143, -15)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.killpg(pgid, signal.SIGKILL)
        raise AssertionError("worker processes outlived the server")


def test_files_are_read_not_mapped(tmp_path):
    """A served file is read through its descriptor, never mapped (a map truncated under a
    process kills it with SIGBUS): looking up keys all over a file maps none of its pages."""
    from profiler.serve.archives import Archive
    path = tmp_path / "big.ukvs"
    with open(path, "w") as f:
        f.write('!fields {"keys":["surt"],"values":["frequency"]}\n')
        for i in range(300000):
            f.write("com,h%07d)/* %d/1\n" % (i, i % 50 + 1))
    archive = Archive(str(path), "big")
    for i in range(0, 300000, 997):
        assert archive.current().lookup("http://h%07d.com/" % i).status == "held"
    with open("/proc/self/maps") as maps:
        assert str(path) not in maps.read()


def test_an_unsorted_file_is_refused_at_start_and_a_damaged_one_answers_for_itself(tmp_path):
    """An unsorted file is refused before the server listens (one line, exit 2); a served file
    damaged in place answers an error for its own archive only, and /health says which."""
    path = tmp_path / "bad.ukvs"
    lines = ['!fields {"keys":["surt"],"values":["frequency"]}'] + ["com,h%05d)/* 3/1" % i for i in range(3000)]
    good = "\n".join(lines) + "\n"
    lines[1000], lines[2000] = lines[2000], lines[1000]
    path.write_text("\n".join(lines) + "\n")
    r = subprocess.run(CLI + ["serve", "BAD=%s" % path, "--port", "0"], capture_output=True, env=env(), cwd=ROOT,
                       timeout=60)
    assert r.returncode == 2 and r.stderr.decode().count("\n") == 1 and b"not in byte order" in r.stderr
    assert b"-o SORTED' sorts it" in r.stderr          # another tool's file: merge sorts it
    path.write_text(good)
    other = tmp_path / "other.ukvs"
    other.write_text(good)
    s = Server(["BAD=%s" % path, "OTHER=%s" % other], workers=1)
    try:
        assert s.get("/lookup?url=http://h00007.com/")[1]["archives"][0]["answer"] == "held"
        path.write_text("\n".join(lines) + "\n")          # the same size, in place
        statuses = set()
        for i in range(0, 3000, 37):
            status, body = s.get("/lookup?url=http://h%05d.com/" % i)
            assert status == 200
            bad, fine = body["archives"]
            statuses.add(bad["answer"])
            assert fine["answer"] == "held"
            if bad["answer"] == "error":
                assert "BAD" in bad["error"] or "bad.ukvs" in bad["error"]
        assert "error" in statuses
        health = s.wait_for(lambda b: b["status"] == "degraded")
        assert [p["archive"] for p in health["problems"]] == ["BAD"] and health["problems"][0]["since"]
    finally:
        s.stop()
