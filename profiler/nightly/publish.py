"""Publishing nightly versions: dated files, a `latest` link, pruning, and recovery after a crash.

A version is ``NAME-YYYYMMDDTHHMMSSZ.cdxj`` in the output folder, with its change report
(``.changes.json``, ``.changes.md``) beside it; ``NAME-latest.cdxj`` is a relative symbolic
link to the newest, replaced atomically (a new link renamed over the old one), so a reader
opening it gets the previous or the new profile, never a partial one.
"""

import datetime
import errno
import os
import re

from profiler.files import output

SUFFIXES = (".cdxj", ".ukvs", ".changes.json", ".changes.md", ".changes.svg")


def stamp(now=None, taken=()):
    """A UTC version stamp, unique among ``taken``: 20261122T030000Z (then _02, _03, ...: they sort after it)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    base = now.strftime("%Y%m%dT%H%M%SZ")
    out, n = base, 1
    while out in taken:
        n += 1
        out = "%s_%02d" % (base, n)
    return out


def version_path(folder, name, stamp_, suffix=".cdxj"):
    return os.path.join(folder, "%s-%s%s" % (name, stamp_, suffix))


def latest_path(folder, name, suffix=".cdxj"):
    return os.path.join(folder, "%s-latest%s" % (name, suffix))


def place(src, dst):
    """Move a finished file to dst atomically (a rename, or a copy to a temp file beside dst and a
    rename when src is on another filesystem)."""
    try:
        os.replace(src, dst)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        output.copy_atomic(src, dst)
        os.unlink(src)


def point_latest(folder, name, target, suffix=".cdxj"):
    """Make NAME-latest.cdxj (or another suffix) a link to target (a file in folder), atomically."""
    link = latest_path(folder, name, suffix)
    tmp = os.path.join(folder, ".%s-latest.%d.tmp" % (name, os.getpid()))
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    os.symlink(os.path.basename(target), tmp)
    os.replace(tmp, link)


def latest_target(folder, name, suffix=".cdxj"):
    """The file name NAME-latest.cdxj (or another suffix) points at, or None."""
    try:
        return os.readlink(latest_path(folder, name, suffix))
    except OSError:
        return None


def _versions_on_disk(folder, name):
    pattern = re.compile(r"^%s-(\d{8}T\d{6}Z(?:_\d+)?)(%s)$" % (
        re.escape(name), "|".join(re.escape(s) for s in SUFFIXES)))
    for entry in os.listdir(folder):
        m = pattern.match(entry)
        if m:
            yield m.group(1), os.path.join(folder, entry)


def prune(folder, name, keep):
    """Delete the versions (profile and reports) whose stamp is not in ``keep``. Returns the paths."""
    removed = []
    for stamp_, path in _versions_on_disk(folder, name):
        if stamp_ not in keep:
            os.unlink(path)
            removed.append(path)
    return sorted(removed)


def remove_temp_files(folder, name):
    """Temp files a killed run left in the output folder (they start with '.NAME-')."""
    removed = []
    for entry in os.listdir(folder):
        if entry.startswith(("." + name + "-", "." + name + "-latest")) and entry.endswith(".tmp"):
            os.unlink(os.path.join(folder, entry))
            removed.append(entry)
    return removed
