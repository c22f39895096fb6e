"""The console script: subcommands, one-line errors, atomic output."""

import os
import subprocess
import sys

import pytest

from profiler import __version__
from profiler.cli import main as cli
from profiler.files.output import write_atomic

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "profiler.cli"] + list(args), capture_output=True,
                          text=True, cwd=cwd or ROOT, env=dict(os.environ, PYTHONPATH=ROOT))


def test_version_and_help():
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == "archive-profiler " + __version__
    r = run_cli("profile", "--help")
    assert r.returncode == 0 and "--policy" in r.stdout and "--runner" in r.stdout


def test_cores_with_the_inline_runner_says_it_is_not_used(tmp_path):
    """--cores 4 without -r local was taken and ignored in silence (the help says it is the local
    runner's): one warning naming -r local; the local runner takes it without one."""
    r = run_cli("profile", SAMPLE, "-o", "p.cdxj", "--cores", "4", cwd=str(tmp_path))
    assert r.returncode == 0 and r.stderr.splitlines()[0] == ("archive-profiler: --cores is for the local runner: "
                                                              "the inline runner runs in this one process "
                                                              "(-r local to use 4)"), r.stderr
    r = run_cli("profile", SAMPLE, "-o", "p.cdxj", "--cores", "2", "-r", "local", cwd=str(tmp_path))
    assert r.returncode == 0 and "--cores" not in r.stderr, r.stderr


def test_profile_help_names_the_bundled_policies_and_the_default_runner():
    """--policy's help said "bundled name" without naming one, and -r's default was unsaid (the
    description says it: an option's help would be every choice's description in zsh's completion)."""
    from profiler.model.policy import available
    r = run_cli("profile", "--help")
    text = " ".join(r.stdout.split())
    assert "bundled name: %s (default: default)" % ", ".join(available()) in text
    assert "The mrjob runner (-r) is inline (in this process) unless given" in text


def _subcommands(parser):
    return sorted(parser._subparsers._group_actions[0].choices)


def test_parser_of_the_named_subcommand_only():
    """A run builds the parser of its subcommand alone; without one (help, a mistake), all."""
    from profiler.cli.commands import SUBCOMMANDS
    assert _subcommands(cli.build_parser(["profile", "x.cdx"])) == ["profile"]
    assert _subcommands(cli.build_parser(["query", "-h"])) == ["query"]
    for argv in ([], ["--help"], ["nosuch"]):
        assert _subcommands(cli.build_parser(argv)) == sorted(SUBCOMMANDS)
    r = run_cli("nosuch")
    assert r.returncode == 2 and "invalid choice: 'nosuch'" in r.stderr and "'nightly'" in r.stderr


@pytest.mark.parametrize("args, message", [
    (["profile", "nope.cdx", "-o", "x.cdxj"], "input not found: nope.cdx"),
    (["profile", SAMPLE, "-o", "x.cdxj", "--policy", "nope"], "policy not found: nope"),
    (["profile", SAMPLE, "-o", "/no/such/folder/x.cdxj"], "output folder does not exist"),
    (["profile", os.path.join(ROOT, "setup.cfg"), "-o", "x.cdxj"], "an ARC file, a Heritrix crawl log, a CDX server's JSON answer, an OpenWayback CDXJ index, a CDXJ index or a CDX index"),
])
def test_user_mistakes_get_one_line(tmp_path, args, message):
    r = run_cli(*args, cwd=str(tmp_path))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("archive-profiler: error:") and message in lines[-1], r.stderr
    assert "Traceback" not in r.stderr


def test_bad_policy_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("host_depth: -1\n")
    r = run_cli("profile", SAMPLE, "-o", str(tmp_path / "x.cdxj"), "--policy", str(bad))
    assert r.returncode == 2 and "host_depth" in r.stderr and "Traceback" not in r.stderr


def test_a_profile_or_map_given_to_profile_says_what_it_is(tmp_path):
    """A profile given to profile was "not ... a CDX index (unrecognised layout)" and a second error
    line; a UKVS map was read as a CDX index: an empty profile, exit 0. One line naming it, exit 2;
    in a folder with an index, it is skipped with that reason and the index profiled."""
    assert run_cli("profile", SAMPLE, "-o", "p.cdxj", "-q", cwd=str(tmp_path)).returncode == 0
    assert run_cli("ukvs", "p.cdxj", "-o", "p.ukvs", "-q", cwd=str(tmp_path)).returncode == 0
    for given, what in (("p.cdxj", "an archive profile"), ("p.ukvs", "a MementoMap (UKVS)")):
        r = run_cli("profile", given, "-o", "out.cdxj", cwd=str(tmp_path))
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith("archive-profiler: error: cannot profile %s: %s, not an index or crawl file: "
                                   % (tmp_path / given, what)), r.stderr
        assert "archive-profiler merge" in r.stderr and not (tmp_path / "out.cdxj").exists()
    folder = tmp_path / "in"
    folder.mkdir()
    os.rename(str(tmp_path / "p.ukvs"), str(folder / "p.ukvs"))
    os.symlink(SAMPLE, str(folder / "sample.cdx.gz"))
    r = run_cli("profile", str(folder), "-o", "out.cdxj", cwd=str(tmp_path))
    assert r.returncode == 0 and "skipping %s: a MementoMap (UKVS), not an index" % (folder / "p.ukvs") in r.stderr
    assert "5,000 captures" in r.stderr


@pytest.mark.parametrize("command, output", [(["profile", SAMPLE], "p.cdxj.gz"), (["profile", SAMPLE], "p.CDXJ.BZ2"),
                                             (["ukvs", "p.cdxj"], "m.ukvs.gz"), (["merge", "p.cdxj"], "m.cdxj.xz"),
                                             (["compact", "p.cdxj", "--max-lines", "9"], "c.cdxj.zst")])
def test_a_compressed_output_name_is_one_line(tmp_path, command, output):
    """-o p.cdxj.gz wrote an uncompressed profile under a name that tells gzip and zcat otherwise."""
    if command[0] != "profile":
        assert run_cli("profile", SAMPLE, "-o", "p.cdxj", "-q", cwd=str(tmp_path)).returncode == 0
    r = run_cli(*(command + ["-o", output]), cwd=str(tmp_path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "profiles and maps are written uncompressed" in r.stderr and "name it without ." in r.stderr
    assert not (tmp_path / output).exists()


@pytest.mark.parametrize("command", [["profile", SAMPLE], ["ukvs", "p.cdxj"], ["merge", "p.cdxj", "q.cdxj"]])
@pytest.mark.parametrize("dash", ["-out", "-output"])
def test_a_single_dash_output_is_one_line(tmp_path, command, dash):
    """'-out FILE' was read as '-o ut': a file named 'ut' written (exit 0), FILE taken for an input."""
    r = run_cli(*(command + [dash, "x.cdxj"]), cwd=str(tmp_path))
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert "%s is read as -o %s: write -o FILE or --output FILE" % (dash, dash[2:]) in r.stderr
    assert not (tmp_path / dash[2:]).exists() and not (tmp_path / "x.cdxj").exists()


def test_profile_of_bundled_sample(tmp_path):
    out = tmp_path / "sample.cdxj"
    assert cli.main(["profile", "-q", SAMPLE, "-o", str(out), "--archive-uri", "https://a.example/"]) == 0
    lines = out.read_bytes().splitlines()
    assert lines[0].startswith(b"!context") and lines[1] == b'!id {"uri":"https://a.example/"}'
    assert lines == sorted(lines) and len(set(lines)) == len(lines)
    assert any(l.startswith(b'!meta {"inputs"') and b'"captures":5000' in l for l in lines)
    assert lines[5].startswith(b"* - - - {\"urim\":{\"total\":5000,")


def test_failed_job_leaves_previous_profile_intact(tmp_path):
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "p.cdxj"
    out.write_bytes(b"previous profile\n")
    # every task of the local runner fails: its python is /bin/false
    r = run_cli("profile", SAMPLE, "-o", str(out), "-r", "local", "--", "--python-bin", "/bin/false",
                cwd=str(tmp_path))
    assert r.returncode == 1, r.stderr
    assert "previous output" in r.stderr.strip().splitlines()[-1]
    assert out.read_bytes() == b"previous profile\n"
    assert os.listdir(tmp_path / "out") == ["p.cdxj"]


def test_write_atomic_keeps_old_file_on_error(tmp_path):
    (tmp_path / "out").mkdir()
    path = tmp_path / "out" / "p.cdxj"
    path.write_bytes(b"old\n")

    def lines():
        yield b"new"
        raise RuntimeError("disk full")
    with pytest.raises(RuntimeError):
        write_atomic(str(path), lines())
    assert path.read_bytes() == b"old\n" and os.listdir(tmp_path / "out") == ["p.cdxj"]
    write_atomic(str(path), [b"a", b"b"])
    assert path.read_bytes() == b"a\nb\n"


def test_unreadable_input_is_reported_not_a_traceback(tmp_path):
    if os.geteuid() == 0:
        # root reads everything: use a dangling symlink instead of permissions
        bad = tmp_path / "gone.cdx"
        bad.symlink_to(tmp_path / "missing-target.cdx")
    else:
        bad = tmp_path / "locked.cdx"
        bad.write_text("x")
        bad.chmod(0)
    out = tmp_path / "out.cdxj"
    r = run_cli("profile", SAMPLE, str(bad), "-o", str(out), cwd=str(tmp_path))
    if r.returncode == 0:
        assert b'"unusable_file":1' in out.read_bytes()
    else:
        assert r.returncode == 2 and "Traceback" not in r.stderr


def test_mrjob_conf_and_manifest_inputs(tmp_path):
    manifest = tmp_path / "inputs.txt"
    manifest.write_text("# today's indexes\n%s\n" % SAMPLE)
    out = tmp_path / "m.cdxj"
    r = run_cli("profile", str(manifest), "-o", str(out), "-r", "local", "--cores", "2",
                "-c", os.path.join(ROOT, "conf", "mrjob.conf"), cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "mrjob." not in r.stderr                   # mrjob's own lines only with -v
    assert b'"captures":5000' in out.read_bytes()
    r = run_cli("profile", str(manifest), "-o", str(out), "-r", "local", "--cores", "2", "-v",
                "-c", os.path.join(ROOT, "conf", "mrjob.conf"), cwd=str(tmp_path))
    assert r.returncode == 0 and "Running step 3 of 3" in r.stderr
