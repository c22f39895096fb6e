"""Where an output may be written, and writing it without ever destroying a file.

An output path is written only when it is missing or a regular file; a symlink to a regular
file is written through (its target is replaced atomically, the link stays); ``-`` is standard
output, refused when that is (redirected to) one of the inputs; a name of an open descriptor
(``/dev/stdout``, ``/proc/self/fd/N``) is refused: its file would be replaced. Anything else (a folder, a device, a FIFO, a socket, a dangling link, an empty name, a
name that starts with ``-`` or ends with ``/``), the very file of an input (same device and
inode, whatever the name), and a file or folder that is write-protected (no write bit, or not
writable by this process) are refused with a one-line error. Files are written to a
hidden temp file beside the target, fsynced and renamed; the new file keeps the permissions of
the one it replaces (without setuid, setgid and sticky bits), and its group and owner where the
system allows it; a new name gets the umask's mode. Temp files that a killed run of the same
output left are removed when they are provably this tool's (its name pattern, this host, a
process that is gone, owned by this user, no other name); so are the work files and folders
commands make beside their outputs or in $TMPDIR (owned_temp, work_folder), by the next run
that makes one there.
"""

import hashlib
import os
import re
import secrets
import stat
import sys

from profiler.errors import UserError
from profiler.io import pseudofs, signalmask

STDOUT = "-"


class OutputError(UserError):
    """An output path that must not be written (one line, exit status 2)."""


#: the endings of compressed files, which no profile or map is written as
COMPRESSED_ENDINGS = (".gz", ".bz2", ".xz", ".zst")


#: how a folder is opened to make, rename and remove files in it through its descriptor: O_PATH
#: needs no read right (a drop-box folder of mode 0333 is written); read-only where there is none
FOLDER_HANDLE = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY

def refuse_compressed_name(path):
    """OutputError for a profile or map output named as a compressed file ('p.cdxj.gz'): it is
    written uncompressed (it is searched in place), and the name would tell readers otherwise.
    A name that exists is left to target() (an input given as the output is refused as one)."""
    if isinstance(path, str) and not is_stdout(path) and path.lower().endswith(COMPRESSED_ENDINGS) \
            and not os.path.lexists(path):
        ending = next(e for e in COMPRESSED_ENDINGS if path.lower().endswith(e))
        raise OutputError("output %s: profiles and maps are written uncompressed (they are searched in place): "
                          "name it without %s" % (path, ending))


def is_stdout(path):
    return path == STDOUT


def _output_stat(stat_of, path, output):
    """stat_of(path) (os.stat or os.lstat), None when path does not exist; OutputError naming
    the output when it cannot be read."""
    try:
        return stat_of(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise OutputError("cannot use output %s: %s" % (output, e.strerror or e))


def target(path, inputs=()):
    """The regular file (or missing path) that writing ``path`` replaces; OutputError when it
    must not be written, or is one of ``inputs``."""
    if is_stdout(path):
        out = standard_stream_file(1)
        for name in inputs if out is not None else ():
            if _same_file(out, name):
                raise OutputError("standard output is the input %s (>> or 1<> it?): the output would be written into "
                                  "it; write the output elsewhere" % _input_name(name))
        return path
    if not isinstance(path, str) or not path:
        raise OutputError("an output needs a file name (or - for standard output)")
    if os.path.basename(path).startswith("-"):
        raise OutputError("output names must not start with '-': %s (write ./%s if you mean it)"
                          % (path, path))
    if path.endswith(os.sep):
        raise OutputError("output is a folder name (ends with %s): %s" % (os.sep, path))
    link = _output_stat(os.lstat, path, path)
    real = path
    descriptor = pseudofs.descriptor_link(path) if link is not None and stat.S_ISLNK(link.st_mode) else None
    if descriptor is not None:
        raise OutputError("output %s is a link of the kernel's to an open file (%s): writing it would replace that "
                          "file (what was written to it before lost); give - for standard output, or the file's name"
                          % (path, descriptor))
    if link is not None and stat.S_ISLNK(link.st_mode):
        real = os.path.realpath(path)
        if not os.path.lexists(real):
            raise OutputError("output %s is a link to %s, which does not exist" % (path, real))
    elif os.pardir in os.path.dirname(path).split(os.sep):
        # 'LINK/../NAME': the system takes '..' from the folder LINK points to, not lexically as
        # abspath() does: the temp file, the folder's checks and its fsync must be in that folder
        # (a temp file in another one failed the rename after all the work: EXDEV)
        real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    st = _output_stat(os.stat, real, path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OutputError("output %s is %s, not a regular file: refusing to replace it"
                          % (path, kind_of(st.st_mode)))
    folder = os.path.dirname(os.path.abspath(real))
    if not os.path.isdir(folder):
        raise OutputError("output folder does not exist: %s" % folder)
    if st is not None:
        for name in inputs:
            if _same_file(st, name):
                raise OutputError("output %s is the input %s: write the output elsewhere" % (path, _input_name(name)))
        if _write_protected(real, st.st_mode, os.W_OK) and pseudofs.mounted_read_only(real):
            raise OutputError("output %s is on a filesystem mounted read-only: nothing can be written there" % path)
        if _write_protected(real, st.st_mode, os.W_OK):
            raise OutputError("output %s is read-only (mode %04o): refusing to replace it (chmod u+w it if you "
                              "mean it)" % (path, stat.S_IMODE(st.st_mode)))
    folder_st = _output_stat(os.stat, folder, path)
    kernels = pseudofs.pseudo_filesystem(folder_st)
    if kernels:
        raise OutputError("output folder %s is on the kernel's %s filesystem: not a place for data"
                          % (folder, kernels))
    folder_mode = folder_st.st_mode
    if _write_protected(folder, folder_mode, os.W_OK | os.X_OK) and pseudofs.mounted_read_only(folder):
        raise OutputError("output folder %s is on a filesystem mounted read-only: cannot write %s there"
                          % (folder, os.path.basename(real)))
    if _write_protected(folder, folder_mode, os.W_OK | os.X_OK):
        raise OutputError("output folder %s is read-only (mode %04o): cannot write %s there"
                          % (folder, stat.S_IMODE(folder_mode), os.path.basename(real)))
    return real


def _write_protected(path, mode, wanted):
    """Whether a file or folder is write-protected: no write bit for anyone (as root too, who may
    write anything), or one this process may not write."""
    if not mode & 0o222:
        return True
    try:
        return not os.access(path, wanted, effective_ids=os.access in os.supports_effective_ids)
    except OSError:
        return True


def refuse_inputs(path, inputs):
    """OutputError when path is (the same file as) one of inputs."""
    target(path, inputs)


def _same_file(st, name):
    if not isinstance(name, str) or "://" in name:
        return False
    if name == STDOUT:                          # an input '-': standard input
        other = standard_stream_file(0)
        if other is None:
            return False
    else:
        try:
            other = os.stat(name)
        except OSError:
            return False
    return (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino)


def _input_name(name):
    return "given on standard input (-)" if name == STDOUT else name


def standard_stream_file(fd):
    """The stat of standard input (0) or output (1) when it is a regular file (redirected from or
    to one: ``< FILE``, ``>> FILE``, ``1<> FILE``), else None (a terminal, a pipe, closed)."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def kind_of(mode):
    """'a folder', 'a FIFO', ... for a file mode that is not a regular file's."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


# ---------------------------------------------------------------- temp files

def _this_host():
    """The host's name as temp names hold it (gethostname(), without socket), with the number of
    this process's pid namespace: a run in another container that shares the folder and the host
    name sees other pids, so its names are never judged by this process's view of the pids."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", os.uname().nodename)[:40] or "host"
    try:
        namespace = re.sub(r"[^0-9]", "", os.readlink("/proc/self/ns/pid"))
    except OSError:
        namespace = ""
    return "%s_%s" % (name, namespace) if namespace else name


_HOST = _this_host()


#: the longest file name the system takes, and what a temp name adds to the output's, at most
NAME_MAX = 255
_TEMP_ADDS = len(".%s.%d-%s.%s.tmp" % ("", 2 ** 32, _HOST, "0" * 8))


def temp_name(real):
    """A hidden temp file name beside real: .NAME.PID-HOST.RANDOM.tmp (NAME shortened when the
    whole would pass NAME_MAX bytes)."""
    folder, base = os.path.split(os.path.abspath(real))
    return os.path.join(folder, ".%s.%d-%s.%s.tmp" % (_temp_base(base), os.getpid(), _HOST, secrets.token_hex(4)))


def _temp_base(base):
    """The output's name in its temp names: itself, or when too long its start and a digest of
    it (two long names of one start keep apart)."""
    if len(os.fsencode(base)) + _TEMP_ADDS <= NAME_MAX:
        return base
    digest = hashlib.sha256(os.fsencode(base)).hexdigest()[:8]
    short = base
    while len(os.fsencode(short)) + 9 + _TEMP_ADDS > NAME_MAX:
        short = short[:-1]
    return "%s~%s" % (short, digest)


def _temp_pattern(base):
    return re.compile(r"^\.%s\.(\d+)-([A-Za-z0-9_-]+)\.[0-9a-f]{8}\.tmp$" % re.escape(_temp_base(base)))


def remove_stale_temps(real):
    """Remove the temp files of this output that a killed run of this tool on this host left
    (regular files of ours, with no other name, our name pattern, their process gone). Returns
    the names removed."""
    folder, base = os.path.split(os.path.abspath(real))
    removed = []
    for entry, path, st in _left_by_dead_runs(folder, _temp_pattern(base)):
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
            try:
                os.unlink(path)
                removed.append(entry)
            except OSError:
                pass
    return removed


def _left_by_dead_runs(folder, pattern):
    """(name, path, lstat) of the entries of folder whose name (pattern: groups pid, host) says a
    run of this host made them whose process is gone, and that we own."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        m = pattern.match(entry)
        if not m or m.group(2) != _HOST or _alive(int(m.group(1))):
            continue
        path = os.path.join(folder, entry)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if st.st_uid == os.geteuid():
            yield entry, path, st


def owned_temp(folder, prefix, suffix="", is_folder=False, record=None):
    """Make a work file or folder in folder named PREFIX PID-HOST.RANDOM SUFFIX (a folder mode
    0700, a file the umask's): its name says whose it is, so a run killed before it removed it
    leaves one the next run can prove is ours (remove_stale_owned). record(path), when given, is
    called with SIGINT, SIGTERM and SIGHUP held from before it is made: a signal cannot end the
    run between the two (a file no one removes until the same command runs there again); the
    caller's cleanup, from its record, removes it. Returns (path, fd: None for a folder)."""
    while True:
        path = os.path.join(folder, "%s%d-%s.%s%s" % (prefix, os.getpid(), _HOST, secrets.token_hex(4), suffix))
        try:
            with signalmask.held():
                if is_folder:
                    os.mkdir(path, 0o700)
                    made = path, None
                else:
                    made = path, os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
                if record is not None:
                    record(path)
            return made
        except FileExistsError:
            continue


def work_folder(prefix, folder=None, record=None):
    """A new work folder of this run in folder ($TMPDIR by default), made after removing those
    that killed runs left there (remove_stale_owned); record as for owned_temp."""
    if folder is None:
        import tempfile
        folder = tempfile.gettempdir()
    remove_stale_owned(folder, prefix)
    return owned_temp(folder, prefix, is_folder=True, record=record)[0]


def remove_stale_owned(folder, prefix, suffix=""):
    """Remove what owned_temp made in folder for runs killed before they removed it: names of its
    pattern, this host, a process that is gone; owned by us; a file of one name, or a folder (no
    link). Returns the names removed."""
    pattern = re.compile(r"^%s(\d+)-([A-Za-z0-9_-]+)\.[0-9a-f]{8}%s$" % (re.escape(prefix), re.escape(suffix)))
    removed = []
    for entry, path, st in _left_by_dead_runs(folder, pattern):
        try:
            if stat.S_ISDIR(st.st_mode):
                import shutil
                shutil.rmtree(path)
            elif stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                os.unlink(path)
            else:
                continue
            removed.append(entry)
        except OSError:
            pass
    return removed


def _alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ---------------------------------------------------------------- writing

def write(path, write_to, inputs=()):
    """Call write_to(binary file) to make path: standard output for '-', else atomically."""
    if is_stdout(path):
        out = _WholeWrites(sys.stdout.buffer)
        write_to(out)
        out.flush()
        return path
    real = target(path, inputs)
    remove_stale_temps(real)
    tmp = temp_name(real)
    # the temp file is made, renamed and on failure removed through its folder's descriptor: a
    # folder renamed meanwhile keeps no temp file of ours (by path it was left there, as big as
    # the output); the rename still goes to the path asked
    folder = os.open(os.path.dirname(tmp), FOLDER_HANDLE)
    name = os.path.basename(tmp)
    fd = None
    try:
        # a signal that ends the run (HungUp, Terminated) comes once fd says the file is ours: Python
        # runs its handler right after os.open returns, before fd is set
        with signalmask.held():
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666, dir_fd=folder)  # the umask's mode
        with os.fdopen(fd, "wb") as f:
            write_to(f)
            f.flush()
            keep_mode(f.fileno(), replaced(real))
            os.fsync(f.fileno())
        os.replace(name, real, src_dir_fd=folder)
    except BaseException:
        if fd is not None:
            try:
                os.unlink(name, dir_fd=folder)
            except OSError:
                pass
        raise
    finally:
        os.close(folder)
    fsync_dir(os.path.dirname(os.path.abspath(real)))
    return real


class _WholeWrites:
    """A binary stream whose write() writes all its bytes or raises: a buffered stream writes
    part of a large block to a pipe whose reader has gone, returns that count and says nothing of
    the broken pipe (which the next write would raise, when there is one)."""

    def __init__(self, out):
        self.out = out

    def write(self, data):
        view = memoryview(data)
        while view:
            n = self.out.write(view)
            if n is None or n >= len(view):
                break
            view = view[n:]
        return len(data)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        self.out.flush()


def replaced(real):
    """The stat of the regular file a write replaces, or None when there is none."""
    try:
        st = os.stat(real)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def keep_mode(fd, st):
    """Give the open file fd the permissions of the file it replaces (st; None: keep the umask's
    mode it was made with), and its group, and as root its owner, where the system lets us. The
    setuid, setgid and sticky bits are not kept: an output is data, never a program to run as
    its owner."""
    if st is None:
        return
    try:
        if os.geteuid() == 0:
            os.fchown(fd, st.st_uid, st.st_gid)
        elif st.st_gid != os.fstat(fd).st_gid:
            os.fchown(fd, -1, st.st_gid)
    except OSError:
        pass                                    # not a member of that group: ours stays
    os.fchmod(fd, stat.S_IMODE(st.st_mode) & 0o777)


def fsync_dir(folder):
    """Sync a folder's entries to disk (after a rename into it), where the filesystem can."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass                                    # not every filesystem syncs a folder
    finally:
        os.close(fd)
