"""Publishing nightly versions: dated files, a `latest` link and pruning, each proved first.

A version is ``NAME-YYYYMMDDTHHMMSSZ.cdxj`` in the output folder, with its change report
(``.changes.json``, ``.changes.md``, ``.changes.svg``) and map (``.ukvs``) beside it;
``NAME-latest.cdxj`` is a relative symbolic link to the newest, replaced atomically (a new link
renamed over the old one), so a reader opening it gets the previous or the new profile, never a
partial one.

Every file is finished in a staging folder on the output folder's filesystem, recorded in the
output ledger (profiler.nightly.ownership), then given its name with link(2), which never
replaces a name that is taken: a stamp is chosen that no file in the output or sets folder
uses. The ``latest`` link is replaced only when the ledger proves it is the one this config
made, and a version is pruned only when the ledger proves it is unchanged since.
"""

import datetime
import os
import re
import secrets
import shutil

from profiler.errors import RunError
from profiler.io import signalmask
from profiler.nightly.folder import UnsafeFile, kind

SUFFIXES = (".cdxj", ".ukvs", ".changes.json", ".changes.md", ".changes.svg")
STAMP = r"\d{8}T\d{6}Z(?:_\d+)?"
STAGING_PREFIX = ".nightly-staging-"


def utc_now():
    """The clock of version stamps."""
    return datetime.datetime.now(datetime.timezone.utc)


def stamp(now=None, taken=()):
    """A UTC version stamp, unique among ``taken``: 20261122T030000Z (then _02, _03, ...: they sort after it)."""
    now = now or utc_now()
    base = now.strftime("%Y%m%dT%H%M%SZ")
    out, n = base, 1
    while out in taken:
        n += 1
        out = "%s_%02d" % (base, n)
    return out


def version_name(name, stamp_, suffix=".cdxj"):
    return "%s-%s%s" % (name, stamp_, suffix)


def latest_name(name, suffix=".cdxj"):
    return "%s-latest%s" % (name, suffix)


def version_path(folder, name, stamp_, suffix=".cdxj"):
    return os.path.join(folder, version_name(name, stamp_, suffix))


def latest_path(folder, name, suffix=".cdxj"):
    return os.path.join(folder, latest_name(name, suffix))


def stamps_used(names, prefix):
    """The stamps of the entries (any suffix, any kind) whose names start with prefix + a stamp."""
    pattern = re.compile(r"\A%s(%s)" % (re.escape(prefix), STAMP))
    found = set()
    for entry in names:
        m = pattern.match(entry)
        if m:
            found.add(m.group(1))
    return found


def version_stamp(name, entry):
    """The stamp of a version file name of NAME (any of SUFFIXES), or None."""
    m = re.match(r"\A%s-(%s)(%s)\Z" % (re.escape(name), STAMP, "|".join(map(re.escape, SUFFIXES))), entry)
    return m.group(1) if m else None


# ---------------------------------------------------------------- placing files

def staging_for(folder, ledger, work):
    """A folder on folder's filesystem to finish files in: the work folder when it is on the same
    one, else a new staging folder inside folder (recorded in its ledger; remove_staging). SIGINT,
    SIGTERM and SIGHUP are held from before it is made until it is recorded (one between left a
    folder no ledger names, never removed)."""
    if folder.device() == work.device():
        return work
    with signalmask.held():
        for _ in range(100):
            name = STAGING_PREFIX + secrets.token_hex(4)
            try:
                os.mkdir(name, 0o700, dir_fd=folder.fd)
                break
            except FileExistsError:
                continue
        else:
            raise UnsafeFile("cannot make a staging folder in %s" % folder.path)
        try:
            ledger.record({name: folder.lstat(name)})
        except BaseException:
            try:
                os.rmdir(name, dir_fd=folder.fd)
            except OSError:
                pass
            raise
    return folder.sub(name, make=False)


def remove_staging(folder, ledger, staging, work):
    """Remove a staging folder of staging_for (not the work folder)."""
    if staging is work:
        return
    staging.close()
    ledger.remove([os.path.basename(staging.path)])


def leftover_staging(ledger):
    """The staging folders a killed run left (ledger names)."""
    return [n for n in ledger.names() if n.startswith(STAGING_PREFIX)]


def stage(path, staging, work):
    """The name in staging of the finished file at path (a file of the work folder): the same file
    when staging is the work folder, else a copy made there."""
    if staging is work:
        return os.path.basename(path)
    name, fd = staging.new_temp(os.path.basename(path))
    with open(path, "rb") as src, os.fdopen(fd, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
        out.flush()
        os.fsync(out.fileno())
    return name


def place(staging, src_name, folder, ledger, name, mode):
    """Give the finished file src_name of staging the new name ``name`` in folder, with mode:
    recorded in ledger first, then linked (never over a taken name), then its staging name removed."""
    fd = staging.open_read(src_name)
    try:
        os.fchmod(fd, mode)
        os.fsync(fd)
        st = os.fstat(fd)
    finally:
        os.close(fd)
    ledger.record({name: st})
    try:
        folder.link_from(staging, src_name, name)
    except FileExistsError:
        ledger.forget([name])
        raise RunError("%s appeared while nightly was publishing it: it is left alone; nothing was published"
                       % folder.join(name))
    staging.discard(src_name)
    return folder.join(name)


# ---------------------------------------------------------------- the latest link

def latest_target(folder, name, suffix=".cdxj"):
    """The file name NAME-latest.cdxj (or another suffix) points at, or None."""
    try:
        return os.readlink(latest_name(name, suffix), dir_fd=folder.fd)
    except OSError:
        return None


def check_latest(folder, ledger, name, suffix=".cdxj"):
    """UnsafeFile when NAME-latest (suffix) is there and not the link this config made."""
    link = latest_name(name, suffix)
    st = folder.lstat(link)
    if st is not None and not ledger.owns(link, st):
        raise UnsafeFile("%s is %s this nightly config did not write: it is never replaced; move it away (or "
                         "give the config another name)" % (folder.join(link), kind(st.st_mode)))
    return st


def point_latest(folder, ledger, staging, name, target, suffix=".cdxj"):
    """Make NAME-latest.cdxj (or another suffix) a link to target (a file name in folder),
    atomically: a new link made in staging, recorded, renamed over the old one (proved first)."""
    link = latest_name(name, suffix)
    old = check_latest(folder, ledger, name, suffix)
    for _ in range(100):
        tmp = ".%s.%s.tmp" % (link, secrets.token_hex(4))
        try:
            os.symlink(target, tmp, dir_fd=staging.fd)
            break
        except FileExistsError:
            continue
    else:
        raise UnsafeFile("cannot make a link in %s" % staging.path)
    try:
        if old is not None:
            try:
                os.chown(tmp, old.st_uid, old.st_gid, dir_fd=staging.fd, follow_symlinks=False)
            except PermissionError:
                pass
        st = staging.lstat(tmp)
        ledger.record({link: st}, also=True)        # the old link stays provable until the rename
        os.rename(tmp, link, src_dir_fd=staging.fd, dst_dir_fd=folder.fd)
    except BaseException:
        staging.discard(tmp)
        raise
    folder.fsync()
    ledger.record({link: st})


def remove_latest(folder, ledger, name, suffix):
    """Remove NAME-latest (suffix) when it is the link this config made (maps turned off)."""
    return ledger.remove([latest_name(name, suffix)])


# ---------------------------------------------------------------- pruning

def prune(ledger, name, keep):
    """Remove the versions (profile, map, reports) whose stamp is not in keep, of those the ledger
    proves this config wrote unchanged; forget the others. Returns the names removed."""
    old = [n for n in ledger.names() if version_stamp(name, n) is not None and version_stamp(name, n) not in keep]
    return ledger.remove(old)
