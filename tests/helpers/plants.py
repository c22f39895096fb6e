"""Objects an attacker (or an accident) leaves under the names a tool uses: regular files,
symbolic links to a victim file, dangling links, folders, FIFOs and hard links to the victim.

``plant`` makes one, ``snapshot`` records what it is, and ``unchanged`` says whether it is
still exactly that (type, bytes, link target, inode), so that a test can check a run neither
removed, replaced nor wrote through anything it did not make.
"""

import os
import stat

KINDS = ("file", "symlink", "dangling", "folder", "fifo", "hardlink")
CONTENT = b"not this tool's: must survive\n"


def victim(folder, name="victim.txt"):
    """A file outside the tool's folders that a link may point at (mode 0600, known bytes)."""
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(b"the victim's precious bytes\n" * 4)
    os.chmod(path, 0o600)
    return path


def plant(path, kind, victim_path):
    """Make an object of kind at path (its folder made as needed)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if kind == "file":
        with open(path, "wb") as f:
            f.write(CONTENT)
    elif kind == "symlink":
        os.symlink(victim_path, path)
    elif kind == "dangling":
        os.symlink(os.path.join(os.path.dirname(victim_path), "nowhere", "x"), path)
    elif kind == "folder":
        os.mkdir(path)
        with open(os.path.join(path, "inside.txt"), "wb") as f:
            f.write(CONTENT)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "hardlink":
        os.link(victim_path, path)
    else:
        raise ValueError(kind)
    return snapshot(path)


def snapshot(path):
    """What is at path now: (type, inode, bytes or link target or folder listing), or None."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return ("link", st.st_ino, os.readlink(path))
    if stat.S_ISDIR(st.st_mode):
        return ("folder", st.st_ino, tuple(sorted(os.listdir(path))))
    if stat.S_ISFIFO(st.st_mode):
        return ("fifo", st.st_ino, None)
    with open(path, "rb") as f:
        return ("file", st.st_ino, f.read(), stat.S_IMODE(st.st_mode))


def unchanged(path, before):
    return snapshot(path) == before
