"""Shell completion from the parser: the script bash and zsh load, and the completions they get
(subcommands, options, choices), driven through each shell's own completion function."""

import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)       # where pip put the archive-profiler console script


def shell_env():
    return dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""), PYTHONPATH=ROOT)


def need(program):
    if shutil.which(program) is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs %s for this test" % program)
        pytest.skip("needs %s" % program)


def bash_complete(words, cword_text):
    line = " ".join(words)
    script = ('eval "$(archive-profiler completion bash)"; COMP_LINE=%s; COMP_POINT=${#COMP_LINE}; '
              'COMP_WORDS=(%s); COMP_CWORD=%d; _python_argcomplete archive-profiler %s %s; '
              'printf "%%s\\n" "${COMPREPLY[@]}"') % (
        _quote(line), " ".join(_quote(w) for w in words), len(words) - 1, _quote(cword_text),
        _quote(words[-2]))
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=shell_env(), timeout=60)
    assert r.returncode == 0, r.stderr
    return sorted(w.strip() for w in r.stdout.splitlines() if w.strip())


def _quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def test_completion_script_requires_a_known_shell():
    r = subprocess.run([sys.executable, "-m", "profiler.cli", "completion", "fish"], capture_output=True,
                       env=shell_env())
    assert r.returncode == 2


def test_bash_completes_commands_options_and_choices():
    need("bash")
    assert bash_complete(["archive-profiler", "pro"], "pro") == ["profile"]
    assert "lookup" in bash_complete(["archive-profiler", ""], "")
    assert bash_complete(["archive-profiler", "profile", "--dr"], "--dr") == ["--dry-run"]
    assert bash_complete(["archive-profiler", "profile", "-r", "l"], "l") == ["local"]
    assert bash_complete(["archive-profiler", "profile", "--format", "ukvs"], "ukvs") == ["ukvs", "ukvs:surt,datetime"]


def test_zsh_loads_it_and_gets_completions():
    need("zsh")
    script = ('autoload -Uz compinit && compinit -u; eval "$(archive-profiler completion zsh)"; '
              'print -r -- "registered=$_comps[archive-profiler]"; '
              'BUFFER="archive-profiler profile --runner sp"; CURSOR=${#BUFFER}; '
              "IFS=$'\\013' COMP_LINE=\"$BUFFER\" COMP_POINT=\"$CURSOR\" _ARGCOMPLETE=1 _ARGCOMPLETE_SHELL=zsh "
              "_ARGCOMPLETE_SUPPRESS_SPACE=1 __python_argcomplete_run archive-profiler")
    r = subprocess.run(["zsh", "-f", "-c", script], capture_output=True, text=True, env=shell_env(), timeout=60)
    assert r.returncode == 0, r.stderr
    assert "registered=_python_argcomplete" in r.stdout
    assert r.stdout.rstrip().endswith("spark:"), r.stdout


def test_tab_in_an_interactive_bash():
    """As a person types it: an interactive bash in tmux, the line completed by TAB."""
    need("tmux")
    need("bash")
    socket = "ap-%s" % uuid.uuid4().hex[:8]
    tmux = ["tmux", "-L", socket]
    env = shell_env()
    env["PS1"] = "$ "
    subprocess.run(tmux + ["new-session", "-d", "-s", "t", "-x", "120", "-y", "10", "bash --norc --noprofile -i"],
                   check=True, env=env)
    try:
        def send(*keys):
            subprocess.run(tmux + ["send-keys", "-t", "t"] + list(keys), check=True)

        send('export PATH=%s:"$PATH" PYTHONPATH=%s; eval "$(archive-profiler completion bash)"; clear'
             % (BIN, ROOT), "Enter")
        time.sleep(1.5)
        send("archive-profiler pro", "Tab")
        deadline = time.monotonic() + 30
        pane = ""
        while time.monotonic() < deadline:
            pane = subprocess.run(tmux + ["capture-pane", "-p", "-t", "t"], capture_output=True, text=True).stdout
            if "archive-profiler profile" in pane:
                break
            time.sleep(0.3)
        assert "archive-profiler profile" in pane, pane
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)


def test_readme_completion_line_writes_nothing_when_it_fails(tmp_path):
    """The README's bash one-liner: without archive-profiler on PATH it writes no file (an empty
    completion file would silence bash's default completion); with it, a script bash loads."""
    need("bash")
    from helpers import doc_commands
    [line] = [c.text for c in doc_commands.commands("README.md")
              if "completion bash" in c.text and "bash-completion/completions" in c.text]
    target = tmp_path / ".local" / "share" / "bash-completion" / "completions" / "archive-profiler"
    r = subprocess.run(["bash", "-c", line], env=dict(os.environ, HOME=str(tmp_path), PATH="/usr/bin:/bin"),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and not target.exists()
    r = subprocess.run(["bash", "-c", line], env=dict(shell_env(), HOME=str(tmp_path)), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and target.stat().st_size > 1000, r.stderr
    r = subprocess.run(["bash", "-c", "source %s && complete -p archive-profiler" % target], env=shell_env(),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "_python_argcomplete" in r.stdout, r.stderr
