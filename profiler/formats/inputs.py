"""Input resolution: paths, directories, globs and manifests -> index files -> map splits."""

import fnmatch
import glob
import io
import itertools
import os
import re
import stat
import zlib

import orjson

from profiler.accel import fast
from profiler.errors import UserError
from profiler.formats import cdx, registry
from profiler.io import datafiles, pseudofs
from profiler.io.names import display_name
from profiler.io.readers import BOM, compression_of, iter_lines, unread_compression

DEFAULT_SPLIT_SIZE = 64 << 20
#: the smallest --split-size (and nightly split_size) a user may ask for: smaller splits only
#: multiply map tasks
MIN_SPLIT_SIZE = 1 << 20
#: lines (blank ones included) the sniffer reads at most
_SNIFF_MAX_LINES = 100000
SNIFF_LINES = 50


class InputError(UserError):
    """A user mistake in the input arguments (one-line message)."""


def resolve(args, manifests=()):
    """Expand files, directories, glob patterns and manifest files into a sorted list of files."""
    return resolve_unique(args, manifests)[0]


def resolve_unique(args, manifests=()):
    """(files, duplicates): the inputs, each physical file once (device and inode: hard links,
    symlinks and symlinked folders name it again), and the paths dropped as duplicates."""
    files = []
    for arg in args:
        if is_remote(arg):                # hdfs://, s3://, gs://: listed by the runner's fs
            files.append([arg])
        elif any(c in arg for c in "*?[") and not os.path.exists(arg):
            matches = sorted(glob_paths(arg))
            if not matches:
                raise InputError("no file matches %s" % arg)
            walked = set()
            for match in matches:
                if os.path.isdir(match):
                    folder = os.path.normpath(match)
                    if _inside(folder, walked):      # its files are listed already ('dir/**')
                        continue
                    walked.add(folder)
                files.append(_expand(match))
        elif os.path.isdir(arg):
            files.append(_expand(arg))
        elif os.path.isfile(arg):
            files.append(read_manifest(arg) if not _kernels(arg) and is_manifest(arg) else [arg])
        elif os.path.exists(arg):       # a FIFO, a device, a socket: listed, refused by sniff()
            files.append([arg])
        else:
            raise InputError("input not found: %s" % display_name(arg))
    for manifest in manifests:
        if not os.path.isfile(manifest):
            raise InputError("manifest not found: %s" % manifest)
        files.append(read_manifest(manifest))
    seen, inodes, out, duplicates = set(), {}, [], []
    for path in itertools.chain.from_iterable(files):
        path = path if is_remote(path) else named_file(os.path.abspath(path))
        if path in seen:
            continue
        seen.add(path)
        if not is_remote(path):
            try:
                st = os.stat(path)
            except OSError:
                st = None
            if st is not None:
                inode = (st.st_dev, st.st_ino)
                if inode in inodes:
                    duplicates.append({"path": path, "same_as": inodes[inode]})
                    continue
                inodes[inode] = path
        out.append(path)
    if not out:
        raise InputError("no input files in %s" % " ".join(display_name(a) for a in list(args) + list(manifests)))
    return out, duplicates


def named_file(path):
    """The file an open descriptor's name (/dev/stdin, /dev/fd/N, /proc/self/fd/N) names in this
    process, by its own path, when it is one: a task (another process) would open another file
    by that name. Any other path as it is."""
    if pseudofs.descriptor_link(path) is None:
        return path
    real = os.path.realpath(path)
    return real if os.path.isfile(real) and pseudofs.descriptor_link(real) is None else path


#: URI schemes of cluster filesystems: resolved by the runner's filesystem (profiler.runtime.remote)
REMOTE_SCHEMES = ("hdfs", "s3", "s3a", "s3n", "gs", "viewfs", "wasb", "wasbs", "abfs", "abfss")


def is_remote(path):
    """Whether path is a URI of a cluster filesystem (REMOTE_SCHEMES)."""
    scheme, sep, rest = path.partition("://")
    return bool(sep) and scheme in REMOTE_SCHEMES and not any(c.isspace() for c in rest)


def _expand(path):
    """The files under path, a folder walked to any depth without recursion (as os.walk does it
    without following links to folders: hidden entries left out, names sorted, a folder's files
    before its subfolders'); a folder that cannot be listed is given as it is (sniff refuses it
    with the reason). [path] when it is not a folder."""
    if not os.path.isdir(path):
        return [path]
    found, folders = [], [path]
    while folders:
        folder = folders.pop()
        entries = _listing(folder) if not _kernels(folder) else None   # /proc: refused by sniff
        if entries is None:
            found.append(folder)
            continue
        names, subfolders = [], []
        for entry in entries:
            if not entry.name.startswith("."):
                (subfolders if _is_dir(entry) else names).append(entry.name)
        found.extend(os.path.join(folder, n) for n in sorted(names))
        folders.extend(p for p in (os.path.join(folder, d) for d in sorted(subfolders, reverse=True))
                       if not os.path.islink(p))
    return found


def _inside(path, folders):
    """Whether one of path's parent folders is in folders."""
    parent = os.path.dirname(path)
    while parent and parent not in folders:
        above = os.path.dirname(parent)
        if above == parent:
            return False
        parent = above
    return bool(parent)


def _listing(folder):
    """The entries of a folder, or None when it cannot be listed."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return None


def _is_dir(entry):
    try:
        return entry.is_dir()
    except OSError:
        return False


def glob_paths(pattern):
    """The paths a glob pattern matches, as glob.glob(pattern, recursive=True) finds them ('**':
    any number of folders), walked without recursion: a tree of any depth, and links to folders
    that lead back to one already walked are not followed again."""
    if "**" not in pattern:
        return glob.glob(pattern)
    parts = pattern.split(os.sep)
    fixed = 0
    while fixed < len(parts) - 1 and not glob.has_magic(parts[fixed]):
        fixed += 1
    root = os.sep.join(parts[:fixed]) if fixed else ""
    if pattern.startswith(os.sep) and not root:
        root = os.sep
    rest = [p if p == "**" else re.compile(fnmatch.translate(p)) for p in parts[fixed:] if p]
    found, seen = [], set()
    start = _closure(rest, {0})
    folders = [(root, start)]
    while folders:
        folder, states = folders.pop()
        where = folder or os.curdir
        try:
            st = os.stat(where)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        entries = _listing(where)
        if entries is None:
            continue
        for entry in sorted(entries, key=lambda e: e.name, reverse=True):
            if entry.name.startswith("."):
                continue
            path = os.path.join(folder, entry.name) if folder else entry.name
            below = _step(rest, states, entry.name)
            if len(rest) in below:
                found.append(path)
            if _is_dir(entry) and any(i < len(rest) for i in below):
                folders.append((path, below))
    if len(rest) in start and root:
        found.append(os.path.join(root, ""))
    return found


def _closure(pattern, states):
    """States (positions in pattern, whose components are '**' or a compiled regex) with those
    a '**' may skip."""
    out = set()
    for i in states:
        out.add(i)
        while i < len(pattern) and pattern[i] == "**":
            i += 1
            out.add(i)
    return out


def _step(pattern, states, name):
    """The states after one more path component, name."""
    after = set()
    for i in states:
        if i < len(pattern):
            if pattern[i] == "**":
                after.add(i)
            elif pattern[i].match(name):
                after.add(i + 1)
    return _closure(pattern, after)


def is_manifest(path):
    """A manifest is a plain text file whose first non-empty line names an existing file."""
    try:
        with datafiles.open_data(path, "manifest", InputError) as f:
            head = f.read(4096)
    except (OSError, InputError):
        return False
    if compression_of(head) or b"\0" in head:
        return False
    if head.startswith(BOM):              # saved by an editor as UTF-8 with a byte order mark
        head = head[len(BOM):]
    for line in head.splitlines():
        line = line.strip()
        if line and not line.startswith(b"#"):
            name = line.decode("utf-8", "replace")
            return is_remote(name) or os.path.isfile(os.path.join(os.path.dirname(os.path.abspath(path)), name))
    return False


def read_manifest(path):
    """Paths or URIs listed one per line ('#' comments allowed), relative to the manifest's folder; a
    byte order mark before the first is no part of its name."""
    base = os.path.dirname(os.path.abspath(path))
    out = []
    with datafiles.open_data(path, "manifest", InputError) as raw, \
            io.TextIOWrapper(raw, encoding="utf-8-sig", errors="surrogateescape") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if is_remote(line):
                out.append(line)
                continue
            full = os.path.join(base, line)
            if not os.path.exists(full):
                raise InputError("%s:%d: input not found: %s" % (path, number, line))
            out.extend(_expand(full))
    return out


def _kernels(path):
    """Whether path is on one of the kernel's pseudo-filesystems (/proc, /sys: never read)."""
    try:
        return pseudofs.pseudo_filesystem(os.stat(path)) is not None
    except OSError:
        return False


def not_regular(path):
    """Why path is not an input that can be read (a FIFO, a device, /proc/kmsg...), or None;
    never opens it."""
    try:
        st = os.stat(path)
    except OSError as e:
        return "unreadable: %s" % (e.strerror or e)
    mode = st.st_mode
    fstype = pseudofs.pseudo_filesystem(st)
    if fstype is not None:
        return "on the kernel's %s filesystem, not a file of data" % fstype
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode) and _listing(path) is None:
        try:
            os.scandir(path).close()
        except OSError as e:
            return "a folder that cannot be listed: %s" % (e.strerror or e)
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return "not a regular file (%s)" % name
    return "not a regular file"


def sniff(path):
    """Describe an input file: {'path', 'size', 'compression', 'format', 'fields'|'reason'}."""
    problem = not_regular(path)
    if problem:
        return {"path": path, "size": 0, "compression": None, "format": None, "reason": problem}
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            st = os.fstat(f.fileno())
    except OSError as e:
        return {"path": path, "size": 0, "compression": None, "format": None,
                "reason": "unreadable: %s" % (e.strerror or e)}
    info = {"path": path, "size": st.st_size, "compression": compression_of(head),
            "file": identity(st)}

    def first_lines():
        """The first SNIFF_LINES lines that are not blank (a bomb of blank lines is not read to its end)."""
        found = 0
        for seen, line in enumerate(iter_lines(path, compression=info["compression"]), 1):
            if found >= SNIFF_LINES or seen > _SNIFF_MAX_LINES:
                return
            if line.strip():
                found += 1
                yield line

    sample = registry.Sample(head=head, path=path, compression=info["compression"], read_lines=first_lines)
    found = registry.format_of(sample)
    if found["format"] is None and not sample.lines and sample.error is not None and info["compression"] == "gzip":
        damaged = _damaged_archive_start(path)      # a gzip WARC/ARC damaged in its first chunk
        if damaged:
            found = registry.format_of(registry.Sample(damaged, head=head, path=path, compression="gzip"))
    other = unread_compression(head) if found["format"] is None else None
    if other:
        found["reason"] = ("%s-compressed: not read (plain and gzip files are, and bz2 indexes and crawl "
                           "logs); decompress it first (%s -d)" % (other, other))
    elif info["compression"] == "bz2" and found["format"] and not registry.FORMATS[found["format"]].lines:
        # a file read whole frames its own records (plain or gzip members): its bz2 bytes are no record
        found = {"format": None, "reason": "bz2-compressed %s: not read (only indexes and crawl logs are "
                 "read as bz2); decompress it first (bzip2 -d)" % registry.FORMATS[found["format"]].title}
    info.update(found)
    return info


#: the first lines of an index read for the archive files it names (indexed_archives)
INDEXED_LINES = 20


def indexed_archives(infos):
    """[(index path, archive path)]: the local CDX (with a g field) and CDXJ (with filename)
    inputs whose first lines name a WARC or ARC input by its file name. Both given, that
    archive's captures are counted twice (an archive's WARC files often lie beside their index)."""
    archives = {}
    for i in infos:
        if i.get("format") in ("warc", "arc"):
            archives.setdefault(os.path.basename(i["path"]), i["path"])
    found = []
    for i in infos if archives else ():
        if i.get("format") not in ("cdx", "cdxj") or is_remote(i["path"]):
            continue
        fields = (i.get("fields") or "").split()
        at = fields.index("g") if "g" in fields else None
        if i["format"] == "cdx" and at is None:
            continue
        try:
            for line in itertools.islice(iter_lines(i["path"], compression=i["compression"]), INDEXED_LINES):
                name = _filename_of(line, at, last=at == len(fields) - 1)
                if name and os.path.basename(name) in archives:
                    found.append((i["path"], archives[os.path.basename(name)]))
                    break
        except (OSError, EOFError, ValueError, zlib.error):
            continue
    return found


def _filename_of(line, at, last=False):
    """The archive file name a CDX line's field ``at`` or a CDXJ line's "filename" gives, or None;
    last: the field is the line's last, and holds the rest of the line (a name with spaces,
    profiler.formats.cdx.file_name_with_spaces)."""
    parts = line.rstrip(b"\r\n").split(b" ", 2 if at is None else -1)
    if at is None:
        if len(parts) < 3 or not parts[2].startswith(b"{"):
            return None
        try:
            name = orjson.loads(parts[2]).get("filename")
        except (orjson.JSONDecodeError, AttributeError):
            return None
        return name if isinstance(name, str) else None
    if len(parts) <= at:
        return None
    return os.fsdecode(b" ".join(parts[at:]) if last else parts[at])


def last_line_unended(info):
    """Whether an uncompressed index (a line format) ends without a line end: its last line may be
    cut (a file copied or written only in part), and is read as it is, so the run says so. A
    compressed one cut short fails to inflate instead."""
    if info.get("compression") or not info.get("format") or info.get("size", 0) <= 0 \
            or not registry.FORMATS[info["format"]].lines:
        return False
    try:
        with open(info["path"], "rb") as f:
            f.seek(info["size"] - 1)
            return f.read(1) not in (b"\n", b"")
    except OSError:
        return False


def shrunk(infos):
    """'PATH was cut short while the run read it ...' for the first local input (sniff()'s infos)
    that is now shorter than when the run planned its splits (truncated or rewritten in place:
    the splits read before and after hold two versions, or none of the bytes planned), else None.
    A file grown since (a crawl log still written) is not: the bytes planned are as they were,
    and its last split reads on to its end."""
    for info in infos:
        planned = info.get("file")
        if not info.get("format") or not planned or planned[0] != HOST:
            continue
        try:
            st = os.stat(info["path"])
        except OSError:
            continue
        if [st.st_dev, st.st_ino] == list(planned[1:]) and st.st_size < info["size"]:
            return ("%s was cut short while the run read it (%s bytes, %s when the run began): the profile would "
                    "mix its versions; run again when it is written" % (
                        display_name(info["path"]), "{:,}".format(st.st_size), "{:,}".format(info["size"])))
    return None


def identity(st):
    """What names one file on this host, whatever its name: a task that opens its split's path
    and finds another file (the input replaced by a rename since the run planned it) reads
    nothing from it (profiler.job.mapside.checked_opener)."""
    return [HOST, st.st_dev, st.st_ino]


#: this host's name, as the tasks that check an input's identity compare it
HOST = os.uname().nodename


def _damaged_archive_start(path):
    """The first lines of a gzip WARC/ARC whose first chunk does not inflate whole (a damaged
    gzip stream: its records before the damage are read, profiler.formats.warc), as a sample,
    up to the first one the damage cut, past the blank lines and byte order mark the readers pass
    over (members.record_start); [] when the inflated start is not a WARC or ARC file's."""
    from profiler.formats import members
    try:
        with open(path, "rb") as f:
            start = members.record_start(members.inflated_start(f.read(1 << 16)))
    except OSError:
        return []
    if not (members.starts_warc_record(start) or start.startswith(b"filedesc:")):
        return []
    lines = []
    for line in start.split(b"\n", SAMPLED_START_LINES)[:SAMPLED_START_LINES]:
        line = line.rstrip(b"\r")
        text = _TEXT_START.match(line).group()   # up to the damage: inflated garbage is no field of it
        lines.append(text)
        if len(text) < len(line):
            break
    return lines


#: lines of a damaged archive's inflated start sampled (an ARC's filedesc record: its header line,
#: version line and line of field names)
SAMPLED_START_LINES = 3


#: the start of a line up to its first byte that is neither printable ASCII nor a tab (a WARC or
#: ARC file's first line is ASCII text; the bytes a damaged stream inflates to after its damage
#: could read as more fields, an index's line)
_TEXT_START = re.compile(rb"[\t\x20-\x7e]*")


def plan_splits(infos, split_size=DEFAULT_SPLIT_SIZE, workers=1):
    """Cut uncompressed files into byte ranges of about split_size; compressed files stay whole.
    ``workers``: threads for the legend scan of a CDX file (the run's cores)."""
    splits = []
    for info in infos:
        if info["format"] is None:
            continue
        base = {k: info[k] for k in ("path", "compression", "format", "whole_gzip", "file") if info.get(k) is not None}
        if "fields" in info:
            base["fields"] = info["fields"]
        size = info["size"]
        if info["compression"] or size <= split_size or not registry.FORMATS[base["format"]].lines:
            splits.append(dict(base, start=0, end=None))
            continue
        segments = legend_segments(info["path"], size, base.get("fields"), workers=workers) \
            if base["format"] == "cdx" \
            else [(0, size, None)]
        for seg_start, seg_end, fields in segments:
            bounds = list(range(seg_start, seg_end, split_size)) + [seg_end]
            if split_size >= MIN_SPLIT_SIZE:
                bounds = _between_urirs(info["path"], bounds)
            for start, end in zip(bounds, bounds[1:]):
                split = dict(base, start=start, end=end)
                if fields:
                    split["fields"] = fields
                splits.append(split)
    return splits


#: bytes past a split's nominal end searched for the start of the next URI-R's lines
URIR_WINDOW = 1 << 20


def _between_urirs(path, bounds, window=URIR_WINDOW):
    """Split bounds of a sorted index moved on to the next line whose first field (its URI-R's
    key) differs from the line's before it, within window bytes (else left at the line they are
    in): a URI-R's lines then stay in one split, and step 1 finds every record of a URI-R in one
    map task's output (a Spark local master reduces each split's own records then:
    profiler.runtime.sparksteps). Any bounds give the same profile; empty splits are left out."""
    out = [bounds[0]]
    with open(path, "rb") as f:
        for nominal in bounds[1:-1]:
            moved = _next_urir(f, nominal, window)
            if out[-1] < moved < bounds[-1]:
                out.append(moved)
    out.append(bounds[-1])
    return out


def _next_urir(f, offset, window):
    """The offset of the first line starting at or after offset whose first field differs from
    the line's before it, or offset when there is none within window bytes."""
    f.seek(max(0, offset - 1))
    data = f.read(window + 1)
    if offset == 0 or not data:
        return offset
    # data[0] is byte offset - 1: the lines starting at or after offset follow its first newline
    # at or after it; the line before them is the one holding byte offset - 1
    nl = data.find(b"\n")
    if nl < 0:
        return offset
    f.seek(max(0, offset - 1 - window))
    before = f.read(min(offset - 1, window) + nl + 1)
    line_start = before.rfind(b"\n", 0, len(before) - 1) + 1
    key = before[line_start:].split(b" ", 1)[0].rstrip(b"\r\n")
    pos = nl + 1
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:
            break
        if data[pos:end].split(b" ", 1)[0].rstrip(b"\r") != key:
            return offset - 1 + pos
        pos = end + 1
    return offset


#: bytes of a CDX file read at a time by the legend scan
CHUNK = 8 << 20


def legend_segments(path, size, fields, chunk=CHUNK, workers=1):
    """(start, end, fields) of the parts of a CDX file between legend lines.

    Concatenated CDX files may declare a new layout mid-file; a split that starts after
    such a legend must not parse with the first one. One pass finds them, read a chunk at a
    time into one reused buffer, behind the last 5 bytes of the chunk before. The compiled
    scan (16 bytes a step, without the GIL) lets ``workers`` threads scan parts of the file at
    once.
    """
    ranges = _ranges(size, max(1, workers) if fast.load() is not None else 1)
    if len(ranges) == 1:
        found = _legend_offsets(path, 0, size, chunk)
    else:
        import concurrent.futures
        with concurrent.futures.ThreadPoolExecutor(len(ranges)) as pool:
            found = [o for part in pool.map(lambda r: _legend_offsets(path, r[0], r[1], chunk), ranges)
                     for o in part]
    bounds = [(0, fields)]
    with open(path, "rb") as lines:
        for offset in sorted(set(found)):
            lines.seek(offset)
            try:
                bounds.append((offset, cdx.legend_letters(lines.readline().rstrip(b"\r\n"))))
            except ValueError:
                pass
    bounds = sorted(set(bounds))
    ends = [b[0] for b in bounds[1:]] + [size]
    return [(start, end, letters) for (start, letters), end in zip(bounds, ends) if end > start]


def _ranges(size, n):
    step = -(-size // n) if size else 1
    return [(start, min(size, start + step)) for start in range(0, size, step)] or [(0, 0)]


def _legend_offsets(path, start, end, chunk, overlap=5):
    """Offsets of the legend lines whose "CDX " ends in [start, end) of the file: read from
    `overlap` bytes before start, to see the rest of it and the line start before it."""
    module = fast.load()
    found = []
    if module is not None:
        def scan(buf, base, n):
            found.extend(module.legend_starts(buf, n, base))
    else:
        def scan(buf, base, n):
            _legend_starts(buf, base, found.append, n)
    begin = max(0, start - overlap)
    with open(path, "rb", buffering=0) as f:
        f.seek(begin)
        buf = bytearray(overlap + chunk)
        with memoryview(buf) as view:
            keep, offset = 0, begin     # buf[:keep]: the end of the chunk before, which ends at file offset `offset`
            while offset < end:
                n = f.readinto(view[keep:keep + min(chunk, end - offset)])
                if not n:
                    break
                stop = keep + n
                scan(buf, offset - keep, stop)
                tail = max(0, stop - overlap)
                buf[:stop - tail] = buf[tail:stop]
                keep, offset = stop - tail, offset + n
    return found


def _legend_starts(data, base, found, end):
    """found(base + offset) for each "CDX" followed by a space or tab in data[:end] that starts a
    line, or starts one after a space or tab (profiler.formats.cdx.LEGEND_STARTS; one pass: one per
    form of the line start took twice as long)."""
    i = data.find(b"CDX", 0, end)
    while i >= 0:
        if i + 3 < end and data[i + 3] in (32, 9):
            start = i if i >= 1 and data[i - 1] == 10 else \
                i - 1 if i >= 2 and data[i - 2] == 10 and data[i - 1] in (32, 9) else -1
            if start > 0:
                found(base + start)
        i = data.find(b"CDX", i + 1, end)
