"""No writing command ever destroys a file: a symlink is written through to its regular target,
a device, FIFO, folder or dangling link is refused (exit 2), an input is never overwritten
(same device and inode, whatever the name), '-' is standard output, and stale temp files of a
killed run are removed only when provably this tool's."""

import os
import shutil
import socket
import stat
import subprocess
import sys

import pytest

from profiler.files import outfiles

from helpers.cliruns import one_line_refusal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def cli(*args, cwd=None, timeout=120, env=None):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True,
                          cwd=cwd, timeout=timeout, env=dict(env or os.environ, PYTHONPATH=ROOT))


def commands(profile, out):
    """Every writing command, writing out (merge: the profile and a copy, another file)."""
    copy = profile[:-len(".cdxj")] + "-copy.cdxj"
    if not os.path.exists(copy):
        shutil.copyfile(profile, copy)
    return {
        "profile": ["profile", SAMPLE, "-o", out, "-q"],
        "ukvs": ["ukvs", profile, "-o", out],
        "merge": ["merge", profile, copy, "-o", out],
        "compact": ["compact", profile, "--max-lines", "200", "-o", out],
        "report": ["report", profile, "-o", out],
        "split": ["split", profile, "--max-lines", "4000", "-o", out],
    }


def target_of(name, out):
    return out + "-00001.cdxj" if name == "split" else out


NAMES = ["profile", "ukvs", "merge", "compact", "report", "split"]


@pytest.mark.parametrize("name", NAMES)
def test_link_to_a_device_is_refused(tmp_path, profile, name):
    out = str(tmp_path / "out")
    os.symlink("/dev/null", target_of(name, out))
    r = cli(*commands(profile, out)[name])
    one_line_refusal(r, "character device")
    assert os.path.islink(target_of(name, out)) and os.readlink(target_of(name, out)) == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("name", NAMES)
def test_an_output_in_a_folder_of_the_kernel_s_is_refused(profile, name):
    """/sys/kernel (0755 to root) and /proc/self: one line, exit 2, before any temp file is
    tried (root's run failed creating one, exit 1, with the system's message)."""
    for folder, fstype in (("/sys/kernel", "sysfs"), ("/proc/self", "proc")):
        r = cli(*commands(profile, folder + "/ap-out")[name], timeout=60)
        one_line_refusal(r, "output folder %s is on the kernel's %s filesystem" % (folder, fstype))


@pytest.mark.parametrize("name", NAMES)
def test_fifo_folder_and_dangling_link_are_refused(tmp_path, profile, name):
    for kind in ("fifo", "folder", "dangling"):
        out = str(tmp_path / kind)
        path = target_of(name, out)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "folder":
            os.mkdir(path)
        else:
            os.symlink(str(tmp_path / "nowhere"), path)
        r = cli(*commands(profile, out)[name], timeout=60)     # never opens the FIFO: no hang
        one_line_refusal(r)
        assert os.path.lexists(path)
        assert (kind != "fifo" or stat.S_ISFIFO(os.lstat(path).st_mode)) and \
            (kind != "folder" or os.path.isdir(path)) and (kind != "dangling" or os.path.islink(path))


def test_socket_is_refused(tmp_path, profile):
    path = str(tmp_path / "s.cdxj")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(path)
    try:
        one_line_refusal(cli("ukvs", profile, "-o", path), "socket")
    finally:
        sock.close()


@pytest.mark.parametrize("name", NAMES)
def test_link_to_a_regular_file_is_written_through(tmp_path, profile, name):
    out = str(tmp_path / "out")
    real = tmp_path / "elsewhere" / "real"
    real.parent.mkdir()
    real.write_bytes(b"old\n")
    os.symlink(str(real), target_of(name, out))
    r = cli(*commands(profile, out)[name])
    assert r.returncode == 0, r.stderr
    assert os.path.islink(target_of(name, out))
    assert real.read_bytes() != b"old\n" and len(real.read_bytes()) > 100
    assert not [e for e in os.listdir(real.parent) if e.endswith(".tmp")]


@pytest.mark.parametrize("name", ["profile", "ukvs", "compact", "report"])
def test_an_input_is_never_the_output(tmp_path, profile, name):
    src = SAMPLE if name == "profile" else profile
    copy = tmp_path / ("in.cdx.gz" if name == "profile" else "in.cdxj")
    copy.write_bytes(open(src, "rb").read())
    before = copy.read_bytes()
    hard = tmp_path / "hard"
    os.link(str(copy), str(hard))
    link = tmp_path / "link"
    os.symlink(str(copy), str(link))
    for out in (str(copy), str(hard), str(link)):
        argv = commands(str(copy), out)[name]
        if name == "profile":
            argv = ["profile", str(copy), "-o", out, "-q"]
        one_line_refusal(cli(*argv), "is the input")
    assert copy.read_bytes() == before


def test_profile_refuses_an_input_named_in_a_manifest(tmp_path):
    data = tmp_path / "x.cdx.gz"
    data.write_bytes(open(SAMPLE, "rb").read())
    manifest = tmp_path / "m.txt"
    manifest.write_text(str(data) + "\n")
    one_line_refusal(cli("profile", "--manifest", str(manifest), "-o", str(data)), "is the input")
    assert data.read_bytes() == open(SAMPLE, "rb").read()


@pytest.mark.parametrize("name", ["merge", "export"])
def test_merge_and_export_never_write_over_an_input(tmp_path, profile, name):
    """merge's output named like any of its inputs (itself, a hard link, a symlink), and
    export's like its profile: refused in one line, the input unchanged."""
    a = tmp_path / "a.cdxj"
    a.write_bytes(open(profile, "rb").read())
    before = a.read_bytes()
    hard, link = tmp_path / "hard", tmp_path / "link"
    os.link(str(a), str(hard))
    os.symlink(str(a), str(link))
    for out in (str(a), str(hard), str(link)):
        argv = ["merge", profile, str(a), "-o", out] if name == "merge" else ["export", str(a), "-o", out]
        one_line_refusal(cli(*argv), "is the input")
    assert a.read_bytes() == before


@pytest.mark.parametrize("bad", ["", "-x.cdxj", "dir/"])
def test_bad_names(tmp_path, profile, bad):
    work = tmp_path / "work"
    work.mkdir()
    one_line_refusal(cli("ukvs", profile, "--output=" + bad, cwd=str(work)))
    assert os.listdir(work) == []


@pytest.mark.parametrize("name", ["profile", "ukvs", "merge", "compact", "report"])
def test_dash_is_standard_output(tmp_path, profile, name):
    work = tmp_path / "work"
    work.mkdir()
    r = cli(*commands(profile, "-")[name], cwd=str(work))
    assert r.returncode == 0, r.stderr
    assert len(r.stdout) > 100
    assert os.listdir(work) == []
    if name == "profile":
        file_out = tmp_path / "p.cdxj"
        assert cli("profile", SAMPLE, "-o", str(file_out), "-q").returncode == 0
        strip = lambda b: [x for x in b.splitlines() if b"created" not in x]     # noqa: E731
        assert strip(r.stdout) == strip(file_out.read_bytes())


def test_a_signal_right_after_the_temp_file_is_made_leaves_none(tmp_path, monkeypatch):
    """Python runs a signal's handler right after the call it came in returns: a hangup that came
    while os.open made the temp file raised before the write knew the file was its own, and left
    it (the hangup test's merge, once under load). The signal now waits until it is known."""
    import signal
    from profiler.errors import HungUp
    real_open = os.open

    def open_then_hung_up(path, *args, **kw):
        fd = real_open(path, *args, **kw)
        if str(path).endswith(".tmp"):
            os.kill(os.getpid(), signal.SIGHUP)         # delivered now, its handler run on return
        return fd

    def hangup(signum, frame):
        raise HungUp()
    before = sorted(os.listdir(str(tmp_path)))
    previous = signal.signal(signal.SIGHUP, hangup)
    try:
        monkeypatch.setattr(os, "open", open_then_hung_up)
        with pytest.raises(HungUp):
            outfiles.write(str(tmp_path / "out.txt"), lambda f: f.write(b"x\n"))
    finally:
        monkeypatch.undo()
        signal.signal(signal.SIGHUP, previous)
    assert sorted(os.listdir(str(tmp_path))) == before


def test_stale_temp_files_are_removed_only_when_provably_ours(tmp_path, profile):
    out = tmp_path / "m.ukvs"
    dead = subprocess.Popen(["true"])
    dead.wait()
    host = outfiles._HOST
    stale = tmp_path / (".m.ukvs.%d-%s.0123abcd.tmp" % (dead.pid, host))
    alive = tmp_path / (".m.ukvs.%d-%s.0123abcd.tmp" % (os.getpid(), host))
    other_host = tmp_path / (".m.ukvs.%d-otherhost.0123abcd.tmp" % dead.pid)
    foreign = tmp_path / ".m.ukvs.notes.tmp"
    other_output = tmp_path / (".n.ukvs.%d-%s.0123abcd.tmp" % (dead.pid, host))
    for p in (stale, alive, other_host, foreign, other_output):
        p.write_text("x")
    stale_link = tmp_path / (".m.ukvs.%d-%s.89abcdef.tmp" % (dead.pid, host))
    os.symlink(str(foreign), str(stale_link))
    assert cli("ukvs", profile, "-o", str(out)).returncode == 0
    assert not stale.exists()
    for p in (alive, other_host, foreign, other_output):
        assert p.exists()
    assert os.path.islink(stale_link)


def test_a_stale_looking_temp_file_of_another_owner_or_with_other_names_is_kept(tmp_path, profile):
    """A file named like a temp file of a killed run (pattern, this host, a dead process) was
    removed whoever owned it, and whatever other names it had: in a shared folder (/tmp) another
    user's file, or a hard link to one. Ours are owned by us and have no other name."""
    out = tmp_path / "m.ukvs"
    dead = subprocess.Popen(["true"])
    dead.wait()
    host = outfiles._HOST
    mine = tmp_path / (".m.ukvs.%d-%s.00000000.tmp" % (dead.pid, host))
    linked = tmp_path / (".m.ukvs.%d-%s.11111111.tmp" % (dead.pid, host))
    theirs = tmp_path / (".m.ukvs.%d-%s.22222222.tmp" % (dead.pid, host))
    precious = tmp_path / "precious.txt"
    for p in (mine, theirs, precious):
        p.write_text("x")
    os.link(str(precious), str(linked))
    if os.geteuid() == 0:
        os.chown(str(theirs), 12345, 12345)
    assert cli("ukvs", profile, "-o", str(out)).returncode == 0
    assert not mine.exists() and linked.exists() and precious.exists()
    assert theirs.exists() == (os.geteuid() == 0)


def test_temp_name_matches_the_stale_pattern(tmp_path):
    name = os.path.basename(outfiles.temp_name(str(tmp_path / "x.cdxj")))
    assert outfiles._temp_pattern("x.cdxj").match(name)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755, 0o4755, 0o6775])
def test_a_replaced_file_keeps_its_mode(tmp_path, profile, name, mode):
    """Every command wrote 0644 over a file of mode 0600 (a private profile made readable by
    all). The replaced file's permissions stay; the setuid and setgid bits are dropped (an output
    is data, never a program to run as its owner)."""
    out = str(tmp_path / "out")
    path = target_of(name, out)
    with open(path, "wb") as f:
        f.write(b"old\n")
    os.chmod(path, mode)
    r = cli(*commands(profile, out)[name])
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(os.stat(path).st_mode) == mode & 0o777
    assert os.path.getsize(path) > 100


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another owner")
@pytest.mark.parametrize("name", NAMES)
def test_as_root_a_replaced_file_keeps_its_owner_and_group(tmp_path, profile, name):
    out = str(tmp_path / "out")
    path = target_of(name, out)
    with open(path, "wb") as f:
        f.write(b"old\n")
    os.chown(path, 12345, 23456)
    os.chmod(path, 0o640)
    r = cli(*commands(profile, out)[name])
    assert r.returncode == 0, r.stderr
    st = os.stat(path)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (12345, 23456, 0o640)


@pytest.mark.parametrize("name", NAMES)
def test_a_new_file_gets_the_umask_mode(tmp_path, profile, name):
    out = str(tmp_path / "out")
    r = subprocess.run([sys.executable, "-m", "profiler.cli"] + commands(profile, out)[name], capture_output=True,
                       env=dict(os.environ, PYTHONPATH=ROOT), preexec_fn=lambda: os.umask(0o077))
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(os.stat(target_of(name, out)).st_mode) == 0o600


def test_a_kept_file_is_replaced_atomically_and_only_its_own_temp_file_removed(tmp_path, monkeypatch):
    """profiler.io.descriptors.replace_at (the cache folder's kept files): the file is replaced
    whole, never through a link, and a temp name someone else holds is left alone."""
    from profiler.io import descriptors
    folder = tmp_path / "kept"
    folder.mkdir()
    (folder / "name").write_bytes(b"old")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        descriptors.replace_at(fd, "name", b"new")
        assert (folder / "name").read_bytes() == b"new" and sorted(os.listdir(folder)) == ["name"]
        monkeypatch.setattr(descriptors.secrets, "token_hex", lambda n: "fixed")
        theirs = folder / (".name.%d.fixed.tmp" % os.getpid())
        theirs.write_bytes(b"someone else's")
        with pytest.raises(FileExistsError):
            descriptors.replace_at(fd, "name", b"newer")
        assert theirs.read_bytes() == b"someone else's" and (folder / "name").read_bytes() == b"new"
    finally:
        os.close(fd)


@pytest.mark.parametrize("made_again", [False, True])
def test_an_output_folder_renamed_while_it_is_written_keeps_no_temp_file(tmp_path, monkeypatch, made_again):
    """The output's folder renamed while the output is written (a rotation: `mv profiles
    profiles.old`, maybe `mkdir profiles`): the write fails in one error and the renamed folder
    keeps no temp file (it kept one, as big as the output, named by path and so never removed);
    with the folder made again, the output is written where it was asked."""
    monkeypatch.chdir(tmp_path)
    os.mkdir("out")

    def write_to(f):
        f.write(b"x" * 4096)
        os.rename("out", "moved")
        if made_again:
            os.mkdir("out")
    if made_again:
        outfiles.write("out/p.cdxj", write_to)
        assert os.listdir("out") == ["p.cdxj"] and open("out/p.cdxj", "rb").read() == b"x" * 4096
    else:
        with pytest.raises(FileNotFoundError):
            outfiles.write("out/p.cdxj", write_to)
    assert os.listdir("moved") == []


@pytest.mark.parametrize("bad", ["dangling", "fifo", "folder", "input"])
def test_report_checks_every_output_before_writing_any(tmp_path, profile, bad):
    """report --png replaced the PNGs before a bad one (a dangling link, a FIFO, a folder, the
    profile itself), then refused it: the earlier charts new, the page old. Every output is
    checked first: one line, exit 2, each file as it was."""
    pngs = tmp_path / "pngs"
    pngs.mkdir()
    names = ["captures-per-year", "mime-by-bytes", "mime-by-captures", "status-classes"]
    for name in names:
        (pngs / (name + ".png")).write_bytes(b"old " + name.encode())
    page = tmp_path / "r.html"
    page.write_bytes(b"old page")
    in_the_way = str(pngs / "tlds-by-urim.png")            # drawn after the charts above
    if bad == "dangling":
        os.symlink("nowhere", in_the_way)
    elif bad == "fifo":
        os.mkfifo(in_the_way)
    elif bad == "folder":
        os.mkdir(in_the_way)
    else:
        os.link(profile, in_the_way)
    one_line_refusal(cli("report", profile, "-o", str(page), "--png", str(pngs)))
    assert page.read_bytes() == b"old page"
    for name in names:
        assert (pngs / (name + ".png")).read_bytes() == b"old " + name.encode()
    assert sorted(os.listdir(str(pngs))) == sorted([n + ".png" for n in names] + ["tlds-by-urim.png"])


def test_report_png_folder_a_dangling_link_is_one_line(tmp_path, profile):
    """--png a dangling link: exit 1 with the system's 'File exists' before; one line, exit 2."""
    os.symlink("nowhere", str(tmp_path / "pngs"))
    one_line_refusal(cli("report", profile, "-o", str(tmp_path / "r.html"), "--png", str(tmp_path / "pngs")),
                     "--png")
    assert not os.path.exists(str(tmp_path / "r.html"))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("where", ["file", "folder"])
def test_a_read_only_output_is_never_replaced(tmp_path, profile, name, where):
    """An output that is write-protected (mode 0444), or in a folder that is (0555), was
    replaced by the rename (as root, or by any owner of the folder): refused in one line, exit
    2, before any work; the file and the folder as they were."""
    folder = tmp_path / "ro"
    folder.mkdir()
    out = str(folder / "out")
    path = target_of(name, out)
    with open(path, "wb") as f:
        f.write(b"old\n")
    os.chmod(path, 0o444)
    if where == "folder":
        os.chmod(path, 0o644)
        os.chmod(str(folder), 0o555)
    try:
        one_line_refusal(cli(*commands(profile, out)[name]), "read-only" if where == "file" else "folder")
        assert open(path, "rb").read() == b"old\n"
        assert os.listdir(str(folder)) == [os.path.basename(path)]
    finally:
        os.chmod(str(folder), 0o755)


def _mounted_read_only_at(monkeypatch, folder):
    """os.statvfs and os.fstatvfs as on a filesystem mounted read-only at folder (none is
    mounted here for a test): its files' modes still say they may be written."""
    real_statvfs, real_fstatvfs = os.statvfs, os.fstatvfs

    def read_only(result):
        return os.statvfs_result(result[:8] + (result.f_flag | os.ST_RDONLY,) + result[9:])

    def statvfs(path):
        found = real_statvfs(path)
        return read_only(found) if os.path.realpath(path).startswith(str(folder)) else found

    def fstatvfs(fd):
        found = real_fstatvfs(fd)
        return read_only(found) if os.path.realpath("/proc/self/fd/%d" % fd).startswith(str(folder)) else found
    monkeypatch.setattr(os, "statvfs", statvfs)
    monkeypatch.setattr(os, "fstatvfs", fstatvfs)


@pytest.mark.parametrize("where", ["file", "folder"])
def test_an_output_on_a_read_only_mount_says_so(tmp_path, monkeypatch, where):
    """An output (or its folder) on a filesystem mounted read-only was called read-only by its
    mode (0644 or 0755) and the user told to chmod it, which cannot help."""
    folder = tmp_path / "mnt"
    folder.mkdir()
    path = str(folder / "p.cdxj")
    if where == "file":
        with open(path, "wb") as f:
            f.write(b"old\n")
    _mounted_read_only_at(monkeypatch, folder)
    monkeypatch.setattr(os, "access", lambda *a, **k: False)       # EROFS: nothing may be written there
    with pytest.raises(outfiles.OutputError) as e:
        outfiles.target(path)
    assert "mounted read-only" in str(e.value) and "chmod" not in str(e.value), e.value


@pytest.mark.parametrize("name", NAMES)
def test_a_long_output_name_is_written(tmp_path, profile, name):
    """An output name the system takes (up to 255 bytes) but whose temp name beside it is longer:
    exit 1 after all the work ('File name too long', naming the temp file). The temp name is
    shortened, still ours to remove when a killed run leaves it."""
    out = str(tmp_path / ("é" * 117))           # 234 bytes; split's pages add 11
    assert len(os.fsencode(os.path.basename(target_of(name, out)))) <= 255
    r = cli(*commands(profile, out)[name])
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(target_of(name, out)) > 100
    assert [n for n in os.listdir(str(tmp_path)) if n.startswith(".")] == []
    tmp = outfiles.temp_name(out)
    assert len(os.fsencode(os.path.basename(tmp))) <= 255
    assert outfiles._temp_pattern(os.path.basename(out)).match(os.path.basename(tmp))


@pytest.mark.parametrize("nohup", [False, True])
def test_a_hangup_while_writing_leaves_no_temp_file(tmp_path, profile, nohup):
    """SIGHUP (the terminal closed) ended a write by its default action: the temp file beside
    the output stayed (as big as the output) until the next write of that output. It ends the
    run as SIGTERM does (exit 129, temp file removed, the old output kept); under nohup
    (SIGHUP ignored) the write goes on."""
    import signal
    import time
    lines = open(profile, "rb").read().splitlines(True)
    headers = [line for line in lines if line.startswith(b"!")]
    value = b'{"urim":{"total":3,"min":1,"max":2},"urir":2,"bytes":300,"digests":2,"dedup_bytes":200,' \
            b'"first":"20100101000000","last":"20110101000000"}'
    for attempt in range(4):                        # a machine under load may finish first: more lines
        n = 150000 << attempt
        inputs = []
        for part in range(2):
            path = tmp_path / ("in%d.cdxj" % part)
            with open(path, "wb") as f:
                f.writelines(headers)
                f.writelines(b"com,p%d-%07d)/* - - - %s\n" % (part, i, value) for i in range(n))
            inputs.append(str(path))
        out = tmp_path / "out.cdxj"
        out.write_bytes(b"old\n")
        # the merge's SIGHUP as nohup leaves it, or as a terminal's: the default action, also when
        # the tests themselves run under nohup (whose SIG_IGN a child inherits)
        disposition = signal.SIG_IGN if nohup else signal.SIG_DFL
        proc = subprocess.Popen([sys.executable, "-m", "profiler.cli", "merge"] + inputs + ["-o", str(out)],
                                stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=ROOT),
                                preexec_fn=lambda: signal.signal(signal.SIGHUP, disposition))
        while not [n for n in os.listdir(str(tmp_path)) if n.startswith(".out.cdxj.")] and proc.poll() is None:
            time.sleep(0.01)
        if proc.poll() is not None:                 # done before its temp file was seen
            assert proc.returncode == 0, proc.stderr.read()
            continue
        proc.send_signal(signal.SIGHUP)
        err = proc.communicate(timeout=240)[1].decode()
        assert [n for n in os.listdir(str(tmp_path)) if n.startswith(".out.cdxj.")] == []
        if nohup:
            assert proc.returncode == 0 and os.path.getsize(str(out)) > 1000, err
            return
        if proc.returncode == 0 or out.read_bytes() != b"old\n":
            continue                                # the output was in place before the signal came
        assert proc.returncode == 129 and "hung up" in err and "Traceback" not in err, err
        return
    pytest.fail("every merge was written before its SIGHUP")


def _entries(folder, depth=1):
    """The names in folder, and with depth 2 in its folders too."""
    names = []
    for entry in os.listdir(folder):
        names.append(entry)
        if depth > 1 and os.path.isdir(os.path.join(folder, entry)):
            try:
                names += os.listdir(os.path.join(folder, entry))
            except OSError:
                pass
    return names


def _killed_while_present(args, folder, prefix, env=None, attempts=30, wait_for=None):
    """Run the CLI with args and SIGKILL it once an entry of folder starting with prefix (its work
    folder or file) appears (and one starting with wait_for in it or beside it, when given); the
    entries of that prefix it left. A run too quick to be caught is started again."""
    for _ in range(attempts):
        proc = subprocess.Popen([sys.executable, "-m", "profiler.cli"] + args, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=dict(env or os.environ, PYTHONPATH=ROOT))
        try:
            while proc.poll() is None:
                names = _entries(folder, 2 if wait_for else 1)
                if any(e.startswith(prefix) for e in names) and \
                        (wait_for is None or any(e.startswith(wait_for) for e in names)):
                    proc.kill()
                    proc.wait()
                    left = sorted(e for e in os.listdir(folder) if e.startswith(prefix))
                    if left:
                        return left
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    pytest.fail("%s never caught with its %s entry" % (args[0], prefix))


def test_a_killed_split_s_pages_are_removed_by_the_next_split(tmp_path, profile):
    """split writes its pages in a work folder beside them: one a SIGKILL left (as big as the
    profile) stayed for ever; the next split removes it, being provably ours (a process gone)."""
    out = tmp_path / "out"
    out.mkdir()
    left = _killed_while_present(["split", profile, "--max-lines", "500", "-o", str(out / "pg")], str(out), ".split-")
    assert cli("split", profile, "--max-lines", "500", "-o", str(out / "pg")).returncode == 0
    assert not [e for e in os.listdir(str(out)) if e.startswith(".split-")], left
    assert len(os.listdir(str(out))) == 19


def test_a_folder_renamed_while_it_is_split_keeps_no_work_folder(tmp_path, profile, monkeypatch):
    """The pages' folder renamed while split writes them: the split fails and the renamed folder
    keeps no `.split-*` work folder (removed by path, it stayed there with the pages written)."""
    from profiler.files import outfiles as outfiles_module
    from profiler.toolkit import split
    made = outfiles_module.work_folder

    def work_folder_then_rename(prefix, folder=None, record=None):
        work = made(prefix, folder, record=record)
        os.rename(str(tmp_path / "out"), str(tmp_path / "moved"))
        return work
    (tmp_path / "out").mkdir()
    monkeypatch.setattr(split.outfiles, "work_folder", work_folder_then_rename)
    with pytest.raises(OSError):
        split.split(profile, 500, str(tmp_path / "out" / "pg"))
    assert os.listdir(str(tmp_path / "moved")) == []


def test_a_killed_run_s_work_folder_is_removed_by_the_next_run(tmp_path, profile):
    """A run's work folder in $TMPDIR (the job's manifest, its runner's files, mrjob's temp folder
    of the job's step files) that a SIGKILL left stayed for ever; the next run removes it, and
    only it: a live run's, another host's, another user's, one of a container of the same host
    name whose pids this process cannot see (another pid namespace), and a file named like one
    are kept."""
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    env.pop("MRJOB_CONF", None)
    left = _killed_while_present(["profile", "-r", "inline", SAMPLE, "-o", str(tmp_path / "a.cdxj"), "-q"],
                                 str(tmp), "archive-profiler-", env, wait_for="profile_job.")
    dead = subprocess.Popen(["true"])
    dead.wait()
    namespace = "".join(c for c in os.readlink("/proc/self/ns/pid") if c.isdigit())
    assert outfiles._HOST.endswith("_" + namespace)
    other_pids = outfiles._HOST[:-len(namespace)] + "1"     # this host's name, another pid namespace
    kept = ["archive-profiler-%d-%s.0123abcd" % (os.getpid(), outfiles._HOST),
            "archive-profiler-%d-otherhost.0123abcd" % dead.pid, "archive-profiler-notes",
            "archive-profiler-%d-%s.89abcdef" % (dead.pid, other_pids)]
    for name in kept:
        (tmp / name).mkdir()
    theirs = tmp / ("archive-profiler-%d-%s.4567abcd" % (dead.pid, outfiles._HOST))
    theirs.mkdir()
    os.chown(str(theirs), 12345, 12345) if os.geteuid() == 0 else None
    assert cli("profile", "-r", "inline", SAMPLE, "-o", str(tmp_path / "b.cdxj"), "-q", env=env).returncode == 0
    assert not set(left) & set(os.listdir(str(tmp)))
    assert not [e for e in _entries(str(tmp), 2) if e.startswith("profile_job.")]
    assert set(kept) <= set(os.listdir(str(tmp)))
    assert theirs.exists() == (os.geteuid() == 0)
