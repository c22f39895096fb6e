"""Damaged copies of profiles and maps, and the toolkit commands run on them in this process."""

import contextlib
import io
import os
import sys

from profiler.cli.main import main

#: values that are not counts, for a feature of a profile line
NOT_COUNTS = [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-3", b"2.5", b"1.0", b"true", b"false", b"null",
              b'"12"', b"[]", b"{}", b"[" * 3000 + b"]" * 3000, b"9" * 5000]


def split_file(data):
    """(header lines, data lines) of a file's bytes, each line with its newline."""
    lines = data.splitlines(keepends=True)
    headers = [x for x in lines if x[:1] in (b"!", b"@")]
    return headers, lines[len(headers):]


def with_value(line, feature, value):
    """A profile line whose feature ('urir', 'urim.total', 'first') holds value (JSON bytes)."""
    key, _, rest = line.partition(b" {")
    name = feature.split(".")[-1].encode()
    i = rest.index(b'"%s":' % name) + len(name) + 3
    j = i
    depth = 0
    while True:                             # the end of the value: a ',' or '}' outside strings/brackets
        c = rest[j:j + 1]
        if c == b'"':
            j = rest.index(b'"', j + 1)
        elif c in (b"[", b"{"):
            depth += 1
        elif c in (b"]",) or (c == b"}" and depth):
            depth -= 1
        elif c in (b",", b"}") and not depth:
            break
        j += 1
    return key + b" {" + rest[:i] + value + rest[j:]


@contextlib.contextmanager
def captured():
    """Standard output and error of the code run inside, as {'out': bytes, 'err': str} after."""
    out, err = io.BytesIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    wrapper = sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = err
    found = {}
    try:
        yield found
    finally:
        wrapper.flush()
        wrapper.detach()                    # (closing the wrapper would close out)
        sys.stdout, sys.stderr = old
        found["out"], found["err"] = out.getvalue(), err.getvalue()


def run(argv):
    """(exit status, stdout bytes, stderr text) of `archive-profiler ARGV` run in this process."""
    with captured() as found:
        try:
            status = main(list(argv))
        except SystemExit as e:
            status = e.code
    return status, found["out"], found["err"]


def data_lines(path):
    """The data lines of a file (its header lines left out), or of split pages (a list of paths)."""
    paths = path if isinstance(path, list) else [path]
    out = []
    for p in paths:
        with open(p, "rb") as f:
            out += [x for x in f if x[:1] not in (b"!", b"@")]
    return out


def pages(prefix):
    folder, stem = os.path.split(prefix)
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.startswith(stem + "-"))


def one_line_error(status, err, *words):
    """Whether a run ended as a user error should: exit 2, one line, no traceback, the words."""
    lines = [x for x in err.strip().splitlines() if "error:" in x]
    return status == 2 and "Traceback" not in err and len(lines) == 1 and all(w in lines[0] for w in words)
