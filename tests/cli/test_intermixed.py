"""Options anywhere: every subcommand takes its options before, between and after its
positionals (also around nargs='+' lists and before profile's '--'); a usage mistake is one
line with a hint, not the usage block."""

import os
import subprocess
import sys

import pytest

from profiler.cli import main as cli
from profiler.cli.commands import SUBCOMMANDS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A profile of the sample, a second one (of other captures: the hosts policy's is not
    mergeable, so the same policy on another archive's sample) and its map."""
    folder = tmp_path_factory.mktemp("intermixed")
    profile, other, umap = folder / "p.cdxj", folder / "q.cdxj", folder / "p.ukvs"
    assert cli.main(["profile", SAMPLE, "-o", str(profile), "-q"]) == 0
    assert cli.main(["profile", SAMPLE, "-o", str(other), "-q", "--archive-uri", "https://b.example/"]) == 0
    assert cli.main(["ukvs", str(profile), "-o", str(umap), "-q"]) == 0
    return folder, str(profile), str(other), str(umap)


def _commands(folder, profile, other, umap):
    """{subcommand: its arguments with options after (or between) the positionals}."""
    config = folder / "nightly.yaml"
    config.write_text("inputs: [%s]\noutput_dir: %s\nname: a\nrunner: inline\nreport: false\n"
                      % (SAMPLE, folder / "nightly"))
    (folder / "pages").mkdir(exist_ok=True)
    return {
        "profile": [SAMPLE, "-o", str(folder / "o.cdxj"), "--policy", "hosts", "-q", "--", "--no-conf"],
        "report": [profile, "-o", str(folder / "r.html"), "--top", "5", "-q"],
        "ukvs": [profile, "-o", str(folder / "m.ukvs"), "--keys", "surt,datetime", "-q"],
        "lookup": [profile, "--datetime", "2013", "http://www.cnn.com/", "-q"],
        "compact": [umap, "--max-lines", "200", "-o", str(folder / "c.ukvs"), "-q"],
        "validate": [profile, "--max-problems", "5", profile, "--type", "cdxj", "-q"],
        "query": [profile, "--surt", "com,*", "--group", "mime", "--top", "3", "--by", "bytes", "-q"],
        "merge": [profile, "--archive-uri", "https://m.example/", other, "-o", str(folder / "merged.cdxj"), "-q"],
        "split": [profile, "--max-lines", "2000", "-o", str(folder / "pages") + "/", "-q"],
        "export": [profile, "-o", str(folder / "p.jsonld"), "--format", "jsonld", "-q"],
        "diff": [profile, "--summary", other, "-q"],
        "overlap": [profile, "--lines", other, "-q"],
        "nightly": ["-q", "--config", str(config)],
        "completion": ["bash", "-q"],
    }


def test_every_subcommand_is_in_the_table(files):
    assert sorted(list(_commands(*files)) + sorted(SERVERS)) == sorted(SUBCOMMANDS)


#: the commands that run until stopped: only their parse is tried
SERVERS = {"serve", "explore"}


@pytest.mark.parametrize("command", sorted(set(SUBCOMMANDS) - SERVERS))
def test_options_after_positionals(files, command, capsys):
    args = _commands(*files)[command]
    code = cli.main([command] + args)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "usage:" not in err and "error:" not in err


def test_serve_parses_options_after_its_files(files):
    """serve runs until stopped: its parse, with options between and after the FILE list."""
    _, profile, other, _ = files
    parser = cli.build_parser(["serve"])
    args = cli.parse(parser, ["serve", "A=" + profile, "--port", "0", "B=" + other, "--workers", "1"])
    assert args.files == ["A=" + profile, "B=" + other] and args.port == 0 and args.workers == 1


def test_explore_parses_options_after_its_files(files):
    _, profile, other, _ = files
    parser = cli.build_parser(["explore"])
    args = cli.parse(parser, ["explore", profile, "--port", "0", other, "--host", "::1"])
    assert args.files == [profile, other] and args.port == 0 and args.host == "::1"


def test_positionals_in_any_order_with_options():
    parser = cli.build_parser(["lookup"])
    for argv in (["lookup", "F", "--datetime", "2013", "U"], ["lookup", "--datetime", "2013", "F", "U"],
                 ["lookup", "F", "U", "--datetime", "2013"]):
        args = cli.parse(parser, argv)
        assert (args.file, args.uri, args.datetime) == ("F", "U", "2013")
    parser = cli.build_parser(["profile"])
    args = cli.parse(parser, ["profile", "a.cdx", "-o", "-", "b.cdx", "-r", "local", "c.cdx"])
    assert args.inputs == ["a.cdx", "b.cdx", "c.cdx"] and args.output == "-" and args.runner == "local"


@pytest.mark.parametrize("argv, words", [
    (["lookup"], ["lookup: error:", "required: FILE", "try 'archive-profiler lookup --help'"]),
    (["lookup", "F", "U", "--bogus"], ["unrecognized arguments: --bogus", "try 'archive-profiler lookup --help'"]),
    (["query", "P", "--top", "many"], ["not a whole number", "try 'archive-profiler query --help'"]),
    (["merge", "-o", "x"], ["required: FILE", "try 'archive-profiler merge --help'"]),
    (["nosuch"], ["invalid choice: 'nosuch'", "try 'archive-profiler --help'"]),
])
def test_usage_mistake_is_one_line_with_a_hint(argv, words):
    r = subprocess.run([sys.executable, "-m", "profiler.cli"] + argv, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    for word in words:
        assert word in lines[0], r.stderr
