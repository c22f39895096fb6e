"""The commands README.md and docs/*.md show, as the docs write them, for the tests that run
them (tests/test_doc_commands.py, tests/test_newcomer.py).

A command is a line of a fenced ``sh`` block (after ``$ `` when the block shows output too;
``\\`` continues a line; ``#`` lines are comments), a line of a ``crontab`` block, or an inline
code span that starts with a program a reader would type (``archive-profiler``, ``pip``,
``python``, ``zcat``) and has no placeholder (``FILE``, ``bash|zsh``, ``[-q]``, ``...``).

Markers, in the docs:
- ``# exit N`` at the end of a command: it is meant to exit with status N (a documented mistake).

Commands that cannot run here are in NOT_RUN below, each with its reason.
"""

import os
import re

from helpers.paths import ROOT

#: the pages, in the order a reader meets them (the README first)
PAGES = ["README.md"] + sorted("docs/" + name for name in os.listdir(os.path.join(ROOT, "docs"))
                               if name.endswith(".md"))

#: (regular expression searched in a command, why it is not run here); installs=True: an install
#: into the environment, which the newcomer's test runs for the README in a new venv
NOT_RUN = [
    (r"-m pytest", "the test suite itself (.ci/run runs it)", False),
    (r"^python3 -m venv |^\. \.venv/bin/activate|^(\.venv/bin/)?pip install\b|^\.venv/bin/python setup\.py",
     "sets up or installs into an environment: the test's own has every extra (tests/test_newcomer.py runs "
     "the README's in a new venv)", True),
    (r"\s-r (spark|hadoop|emr|dataproc)\b", "a cluster runner (tests/runtime runs them on a local Spark and "
     "a fake hadoop)", False),
    (r"^(setsid |kill |export SPARK|SPARK=|aws |hadoop |sed 's/my-bucket|python3 -m venv /shared)",
     "sets up or stops a cluster", False),
    (r"^30 2 \* \* \* ", "cron: a crontab line", False),
    (r"^(cp conf/systemd/|systemctl )", "systemd: installs units on this machine", False),
    (r"^archive-profiler serve ", "serves until stopped (tests/serve/test_serve.py runs the server)", False),
    (r"^archive-profiler explore ", "serves until stopped (tests/explore/ runs the explorer, in a browser too)", False),
    (r"^curl ", "asks a running serve", False),
    (r"scripts/(bench|compare_|eval_)", "a benchmark or a measurement: minutes of CPU (its figures are in "
     "the docs)", False),
    (r"--detect-language crawl/", "needs WARC files of one's own in crawl/ (tests/formats/test_warc_language.py "
     "profiles generated ones)", False),
]

_FENCE = re.compile(r"^(```+|~~~+)\s*([\w-]*)")
_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_PROGRAMS = ("archive-profiler", "pip", "python", "python3", "zcat")
_EXIT = re.compile(r"#\s*exit (\d+)\b")


class Command:
    """One command of a page: where it is, its text, the exit status it is meant to have."""

    def __init__(self, page, line, text):
        self.page, self.line, self.text = page, line, text
        m = _EXIT.search(text)
        self.expected = int(m.group(1)) if m else 0
        self.reason, self.installs = None, False
        for pattern, reason, installs in NOT_RUN:
            if re.search(pattern, text):
                self.reason, self.installs = reason, installs
                break

    @property
    def where(self):
        return "%s:%d" % (self.page, self.line)

    def __repr__(self):
        return "%s %s" % (self.where, self.text)


def commands(page):
    """The commands of a page (a path relative to the project root), in order."""
    found = []
    fence, language, prompt, pending = None, None, False, None
    lines = open(os.path.join(ROOT, page), encoding="utf-8").read().split("\n")
    for number, line in enumerate(lines, 1):
        m = _FENCE.match(line)
        if fence is None and m:
            fence, language = m.group(1), m.group(2)
            block = _block(lines, number)
            prompt = any(b.startswith("$ ") for b in block)
            continue
        if fence is not None:
            if line.startswith(fence[0] * len(fence)) and not line[len(fence):].strip():
                fence = None
                continue
            if language not in ("sh", "crontab"):
                continue
            text = line
            if pending is not None:
                start, before = pending
                text, pending = before + " " + line.strip(), None
            else:
                start = number
                if prompt:
                    if not line.startswith("$ "):
                        continue
                    text = line[2:]
                if not text.strip() or text.lstrip().startswith("#"):
                    continue
            if text.endswith("\\"):
                pending = (start, text[:-1].rstrip())
                continue
            found.append(Command(page, start, text.strip()))
            continue
        for span in _SPAN.findall(line):
            if _runnable_span(span):
                found.append(Command(page, number, span.strip()))
    return found


def _block(lines, opening):
    """The lines of the fenced block that opens on line number opening."""
    fence = _FENCE.match(lines[opening - 1]).group(1)
    out = []
    for line in lines[opening:]:
        if line.startswith(fence):
            break
        out.append(line)
    return out


def _runnable_span(span):
    """Whether an inline code span is a command to run: a program and its arguments, no
    placeholder."""
    words = span.split()
    if len(words) < 2 or words[0] not in _PROGRAMS and "| archive-profiler " not in span:
        return False
    if words[0] in ("archive-profiler", "pip") and len(words) == 2 and not words[1].startswith("-"):
        return False                                            # a subcommand's name
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", span)
    return not ("/path/to/" in span                                     # a path of one's own
                or re.search(r"\b[A-Z][A-Z0-9_]*[A-Z0-9]\b", unquoted)    # FILE, NIGHTLY.yaml, URI
                or re.search(r"\w\|\w", unquoted)                       # bash|zsh
                or re.search(r"[\[\]<>]|\.\.\.", unquoted))             # [-q], <chart>, ...


def all_commands():
    return [c for page in PAGES for c in commands(page)]
