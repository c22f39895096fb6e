"""The command line run in the test's process, and a profile made with it (tests that add
criteria compare every command's answers); what a run refused as a user error looks like."""

from profiler.cli import main as cli


def run(*args):
    """archive-profiler ARGS... (any value as its text) -> the exit status."""
    return cli.main([str(a) for a in args])


def profile(made, name, inputs, policy, *extra):
    """Profile inputs with made["policies"][policy] into made["folder"]/NAME.cdxj, quietly."""
    out = made["folder"] / ("%s.cdxj" % name)
    assert run("profile", *inputs, "-o", out, "--policy", made["policies"][policy], "-q", *extra) == 0
    return str(out)


def one_line_refusal(r, *words):
    """Assert a finished subprocess (stderr in bytes) was refused as a user error: exit 2, one
    line of stderr, no traceback, each of words in it."""
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
