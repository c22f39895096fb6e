"""`archive-profiler completion bash|zsh`: the shell's completion script, generated from the
parser by argcomplete (subcommands, options, choices; file names for inputs)."""

NAME = "completion"
HELP = "print the bash or zsh completion script (see the README: one line installs it)"
DESCRIPTION = ("Print the completion script of archive-profiler for bash or zsh, generated from its "
               "argument parser; it completes where archive-profiler is on PATH. Install it with: "
               "eval \"$(archive-profiler completion bash)\" in ~/.bashrc, or with the bash-completion package: "
               "s=$(archive-profiler completion bash) && mkdir -p ~/.local/share/bash-completion/completions && "
               "echo \"$s\" > ~/.local/share/bash-completion/completions/archive-profiler "
               "(zsh: eval \"$(archive-profiler completion zsh)\" in ~/.zshrc, after compinit).")


def add_arguments(p):
    p.add_argument("shell", choices=["bash", "zsh"])


def run(args):
    import sys
    import argcomplete
    sys.stdout.write(argcomplete.shellcode(["archive-profiler"], shell=args.shell))
    return 0
