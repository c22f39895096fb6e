"""The kernel's pseudo-filesystems (/proc, /sys, ...): their files are regular files to stat but
are not data. A read may wait forever (/proc/kmsg) or never end (/proc/self/pagemap), so a
reader refuses them by the filesystem they are on, found in /proc/self/mountinfo by device.
A filesystem mounted read-only is told apart too: a file's mode does not say why it cannot be
written there."""

import os
import stat

#: filesystem types whose files are the kernel's, not data (not autofs: a mount point not yet
#: mounted is autofs until a data filesystem is mounted on it)
PSEUDO = frozenset(("proc", "sysfs", "debugfs", "tracefs", "securityfs", "cgroup", "cgroup2",
                    "configfs", "bpf", "pstore", "efivarfs", "fusectl", "mqueue", "devpts",
                    "binfmt_misc", "rpc_pipefs", "nsfs", "selinuxfs"))

MOUNTINFO = "/proc/self/mountinfo"

_types = None
_unknown = set()


def _mount_types():
    """{(major, minor): filesystem type} of this process's mounts ({} where there is no mountinfo)."""
    types = {}
    try:
        with open(MOUNTINFO, "rb") as f:
            lines = f.read(1 << 22).splitlines()
    except OSError:
        return types
    for line in lines:
        fields = line.split(b" ")
        try:
            major, minor = fields[2].split(b":")
            fstype = fields[fields.index(b"-", 6) + 1]
            types[int(major), int(minor)] = fstype.decode("ascii", "replace")
        except (IndexError, ValueError):
            continue
    return types


def pseudo_filesystem(st):
    """The type of the kernel's pseudo-filesystem that the file of stat st is on ('proc',
    'sysfs', ...), or None for a filesystem of data."""
    global _types
    dev = os.major(st.st_dev), os.minor(st.st_dev)
    if dev[0] != 0:                                 # a block device's filesystem
        return None
    if _types is None or (dev not in _types and dev not in _unknown):
        _types = _mount_types()                     # a mount made since is looked up again
        if dev not in _types:
            _unknown.add(dev)                       # a btrfs subvolume's: not in mountinfo
    fstype = _types.get(dev)
    return fstype if fstype in PSEUDO else None


def why_not_data(path, st):
    """'PATH is on the kernel's TYPE filesystem, not a file of data', or None."""
    fstype = pseudo_filesystem(st)
    if fstype is None:
        return None
    return "%s is on the kernel's %s filesystem, not a file of data" % (path, fstype)


def descriptor_link(path):
    """The link of the kernel's proc filesystem that path is or reaches through links, or None:
    an open descriptor (/proc/PID/fd/N: /dev/stdout, /dev/fd/1) names another file in every
    process, and the file it names is not the link's to replace (/proc/self/exe too)."""
    for _ in range(40):
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if not stat.S_ISLNK(st.st_mode):
            return None
        if pseudo_filesystem(st) == "proc":
            return path
        try:
            path = os.path.join(os.path.dirname(path), os.readlink(path))
        except OSError:
            return None
    return None


def mounted_read_only(path):
    """Whether path (a name, or an open descriptor) is on a filesystem mounted read-only."""
    try:
        flags = (os.fstatvfs(path) if isinstance(path, int) else os.statvfs(path)).f_flag
    except (OSError, ValueError):
        return False
    return bool(flags & getattr(os, "ST_RDONLY", 1))
