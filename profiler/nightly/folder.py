"""A folder of nightly's (state, sets, output, work) and the files in it, reached without links.

nightly runs unattended, often as root, in folders other users may be able to write. A
``Folder`` is opened once, with O_NOFOLLOW, and checked (a folder, owned by the running user);
its files are then reached through its descriptor, opened with O_NOFOLLOW and O_NONBLOCK, and
checked with fstat before use: a regular file, owned by the running user, with one name when it
is written in place (the lock, the run log). A symbolic link, a FIFO, a folder or a device
under one of nightly's names is refused with a one-line UnsafeFile naming it; it is never
written through, read from or replaced. ``trust`` (the config's ``trust_folders``) accepts
folders and files that are links or another user's; links in the files' own names are still
refused.

A new file is made with O_CREAT|O_EXCL, never over another one; a replaced file is written to a
temp file in a scratch folder on the same filesystem, fsynced and renamed over it, keeping the
replaced file's mode and owner.
"""

import errno
import os
import secrets
import shutil
import stat

from profiler.errors import UserError
from profiler.io import pseudofs
from profiler.io.descriptors import write_all

#: the mode of the files nightly makes (state files, set files; published files: file_mode)
FILE_MODE = 0o644
_OPEN = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafeFile(UserError):
    """A file or folder nightly must not use as it is (one line naming it, exit status 2)."""


def kind(mode):
    """'a symbolic link', 'a folder', ... for a file's st_mode."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a file"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device")):
        if test(mode):
            return name
    return "not a regular file"


def _strerror(e):
    return e.strerror or str(e)


class Folder:
    """An open folder: ``Folder.open(path)``, ``folder.sub(name)``; close() when done."""

    def __init__(self, path, fd, trust=False):
        self.path = path
        self.fd = fd
        self.trust = trust

    # ------------------------------------------------------------ opening folders

    @classmethod
    def open(cls, path, trust=False, make=False):
        """The folder at path (made with its parents when make), checked; UnsafeFile otherwise."""
        if make:
            try:
                os.makedirs(path, exist_ok=True)
            except OSError as e:
                raise UnsafeFile("cannot make the folder %s: %s" % (path, _strerror(e)))
        return cls._opened(path, lambda flags: os.open(path, flags), lambda: _lstat(path), trust)

    def sub(self, name, make=True, mode=0o755):
        """The folder name inside this one (made when missing and make), checked like this one."""
        if make:
            try:
                os.mkdir(name, mode, dir_fd=self.fd)
            except FileExistsError:
                pass
            except OSError as e:
                raise UnsafeFile("cannot make the folder %s: %s" % (self.join(name), _strerror(e)))
        return self._opened(self.join(name), lambda flags: os.open(name, flags, dir_fd=self.fd),
                            lambda: self.lstat(name), self.trust)

    @classmethod
    def _opened(cls, path, do_open, do_lstat, trust):
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | (0 if trust else os.O_NOFOLLOW)
        try:
            fd = do_open(flags)
        except OSError as e:
            st = do_lstat()
            if st is not None and stat.S_ISLNK(st.st_mode) and not trust:
                raise UnsafeFile("%s is a symbolic link: nightly uses only real folders (move it away, or set "
                                 "trust_folders: true in the config if the link is yours)" % path)
            if st is not None and not stat.S_ISDIR(st.st_mode):
                raise UnsafeFile("%s is %s, not a folder: move it away" % (path, kind(st.st_mode)))
            raise UnsafeFile("cannot open the folder %s: %s" % (path, _strerror(e)))
        st = os.fstat(fd)
        if not trust and st.st_uid != os.geteuid():
            os.close(fd)
            raise UnsafeFile("the folder %s belongs to uid %d, not to this user (uid %d): nightly uses only its "
                             "own folders (set trust_folders: true in the config if nobody you do not trust can "
                             "write in it)" % (path, st.st_uid, os.geteuid()))
        return cls(path, fd, trust)

    def refuse_read_only(self):
        """UnsafeFile when the folder is write-protected: no write bit for anyone (root writes in
        it all the same), or not writable by this user. Someone froze it; nothing is written."""
        mode = stat.S_IMODE(os.fstat(self.fd).st_mode)
        try:
            writable = os.access(self.path, os.W_OK | os.X_OK)
        except OSError:
            writable = False
        if (not mode & 0o222 or not writable) and pseudofs.mounted_read_only(self.fd):
            raise UnsafeFile("the folder %s is on a filesystem mounted read-only: nightly writes nothing there "
                             "(mount it read-write to publish again)" % self.path)
        if not mode & 0o222 or not writable:
            raise UnsafeFile("the folder %s is read-only (mode %04o): nightly writes nothing there (chmod u+w it "
                             "to publish again)" % (self.path, mode))

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ names

    def join(self, name):
        return os.path.join(self.path, name)

    def lstat(self, name):
        """The entry's own stat (links not followed), or None when there is none."""
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def names(self):
        return os.listdir(self.fd)

    def device(self):
        """(device, mount id): link(2) and rename(2) work between folders only when both are equal
        (two mounts of one filesystem give EXDEV too). The mount id is Linux's (/proc), else None."""
        mount = None
        try:
            with open("/proc/self/fdinfo/%d" % self.fd, "rb") as f:
                for line in f:
                    if line.startswith(b"mnt_id:"):
                        mount = int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass
        return os.fstat(self.fd).st_dev, mount

    def check(self, name, st, in_place=False):
        """UnsafeFile unless st (of name) is a regular file nightly may use (written in place:
        also a single name, so that no other file is reached through a hard link)."""
        path = self.join(name)
        if stat.S_ISLNK(st.st_mode):
            raise UnsafeFile("%s is a symbolic link: nightly never follows links in its folders (move it away)"
                             % path)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile("%s is %s, not a regular file: move it away" % (path, kind(st.st_mode)))
        if not self.trust and st.st_uid != os.geteuid():
            raise UnsafeFile("%s belongs to uid %d, not to this user (uid %d): move it away (or set "
                             "trust_folders: true in the config)" % (path, st.st_uid, os.geteuid()))
        if in_place and st.st_nlink != 1:
            raise UnsafeFile("%s has %d names (a hard link): nightly writes in place only a file of one name "
                             "(move it away)" % (path, st.st_nlink))

    def checked(self, name):
        """The stat of name when it is a usable regular file, None when missing; UnsafeFile otherwise."""
        st = self.lstat(name)
        if st is not None:
            self.check(name, st)
        return st

    # ------------------------------------------------------------ reading

    def open_read(self, name):
        """A descriptor of the regular file name, checked (None when missing)."""
        if self.checked(name) is None:
            return None
        try:
            fd = os.open(name, os.O_RDONLY | _OPEN, dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise self._open_error(name, e)
        try:
            self.check(name, os.fstat(fd))
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read(self, name, limit=None):
        """The bytes of the regular file name (None when missing); UnsafeFile past limit bytes."""
        fd = self.open_read(name)
        if fd is None:
            return None
        try:
            chunks, size = [], 0
            while True:
                block = os.read(fd, 1 << 20)
                if not block:
                    break
                size += len(block)
                if limit is not None and size > limit:
                    raise UnsafeFile("%s is larger than %d bytes: not a file nightly wrote (move it away)"
                                     % (self.join(name), limit))
                chunks.append(block)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def _open_error(self, name, e):
        if e.errno == errno.ELOOP:
            return UnsafeFile("%s is a symbolic link: nightly never follows links in its folders (move it away)"
                              % self.join(name))
        return UnsafeFile("cannot open %s: %s" % (self.join(name), _strerror(e)))

    # ------------------------------------------------------------ writing

    def open_in_place(self, name, flags, mode=FILE_MODE):
        """(descriptor, created) of name opened for writing in place (the lock, the run log): made
        with mode when missing; an existing one must be a regular file of one name."""
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_EXCL | _OPEN, mode, dir_fd=self.fd)
            created = True
        except FileExistsError:
            st = self.lstat(name)
            if st is not None:
                self.check(name, st, in_place=True)
            try:
                fd = os.open(name, flags | _OPEN, dir_fd=self.fd)
            except OSError as e:
                raise self._open_error(name, e)
            created = False
        except OSError as e:
            raise self._open_error(name, e)
        try:
            self.check(name, os.fstat(fd), in_place=True)
            if created:
                os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            raise
        return fd, created

    def append(self, name, data, mode=FILE_MODE):
        """Append a line (bytes ending in a newline) to name (a log) through an O_APPEND
        descriptor; after a last line cut short (a full disk, a run killed as it wrote), on a
        line of its own (it was glued to the cut one: both unreadable)."""
        fd, _ = self.open_in_place(name, os.O_RDWR | os.O_APPEND, mode)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data
            write_all(fd, data)
        finally:
            os.close(fd)

    def create(self, name, data, mode=FILE_MODE):
        """Make the new file name holding data, fsynced (FileExistsError when the name is taken);
        removed when it cannot be written whole (a full disk)."""
        fd = self._new_file(name, mode)
        try:
            try:
                os.fchmod(fd, mode)
                write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except BaseException:
            self.discard(name)
            raise

    def _new_file(self, name, mode):
        """A descriptor of the new file name here, opened for writing without following a link
        (FileExistsError when the name is taken, UnsafeFile on any other failure)."""
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN, mode, dir_fd=self.fd)
        except FileExistsError:
            raise
        except OSError as e:
            raise self._open_error(name, e)

    def new_temp(self, stem, mode=FILE_MODE):
        """(name, descriptor) of a new, empty hidden file here named after stem."""
        for _ in range(100):
            name = ".%s.%s.tmp" % (stem[:100], secrets.token_hex(4))
            try:
                fd = self._new_file(name, mode)
            except FileExistsError:
                continue
            os.fchmod(fd, mode)
            return name, fd
        raise UnsafeFile("cannot make a temp file in %s" % self.path)

    def write(self, name, data, scratch=None, mode=FILE_MODE, sync_folder=True):
        """Replace name with data atomically: a temp file in scratch (a folder on this one's
        filesystem; None: this folder), fsynced and renamed over it, then (sync_folder) the folder
        fsynced. A replaced file keeps its mode and owner; a new one gets mode."""
        old = self.checked(name)
        scratch = scratch or self
        tmp, fd = scratch.new_temp(name, mode)
        try:
            try:
                write_all(fd, data)
                if old is not None:
                    keep_owner(fd, old)
                    os.fchmod(fd, stat.S_IMODE(old.st_mode))
                os.fsync(fd)
            finally:
                os.close(fd)
            if self.checked(name) is not None and old is None:
                raise UnsafeFile("%s appeared while nightly was writing it: move it away" % self.join(name))
            os.rename(tmp, name, src_dir_fd=scratch.fd, dst_dir_fd=self.fd)
        except BaseException:
            scratch.discard(tmp)
            raise
        if sync_folder:
            self.fsync()

    def link_from(self, source, src_name, name):
        """Give the file src_name of the folder source (same filesystem) the new name ``name``
        here; never over an existing name (FileExistsError)."""
        os.link(src_name, name, src_dir_fd=source.fd, dst_dir_fd=self.fd, follow_symlinks=False)

    def discard(self, name):
        """Remove the file name this run has just made (no error when it is gone)."""
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            pass

    def remove(self, name, st):
        """Remove the entry name (a file, link or folder) whose stat was st, after a check that it
        is still that entry."""
        now = self.lstat(name)
        if now is None or (now.st_ino, stat.S_IFMT(now.st_mode)) != (st.st_ino, stat.S_IFMT(st.st_mode)):
            return False
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(name, dir_fd=self.fd)
        else:
            os.unlink(name, dir_fd=self.fd)
        return True

    def fsync(self):
        try:
            os.fsync(self.fd)
        except OSError:
            pass                                    # not every filesystem syncs a folder


def _lstat(path):
    try:
        return os.lstat(path)
    except OSError:
        return None


def keep_owner(fd, old):
    """Give the open file fd the owner and group of old (a stat) where this user may."""
    st = os.fstat(fd)
    if (st.st_uid, st.st_gid) != (old.st_uid, old.st_gid):
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except PermissionError:
            pass
