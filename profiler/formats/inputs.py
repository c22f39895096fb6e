"""Input resolution: paths, directories, globs and manifests -> index files -> map splits."""

import glob
import itertools
import os
import stat
import zlib

from profiler.accel import fast
from profiler.errors import UserError
from profiler.formats import cdx, registry
from profiler.io.names import display_name
from profiler.io.readers import compression_of, iter_lines

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
            matches = sorted(glob.glob(arg, recursive=True))
            if not matches:
                raise InputError("no file matches %s" % arg)
            files.extend(_expand(m) for m in matches)
        elif os.path.isdir(arg):
            files.append(_expand(arg))
        elif os.path.isfile(arg):
            files.append(read_manifest(arg) if is_manifest(arg) else [arg])
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
        path = path if is_remote(path) else os.path.abspath(path)
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


#: URI schemes of cluster filesystems: resolved by the runner's filesystem (profiler.runtime.remote)
REMOTE_SCHEMES = ("hdfs", "s3", "s3a", "s3n", "gs", "viewfs", "wasb", "wasbs", "abfs", "abfss")


def is_remote(path):
    """Whether path is a URI of a cluster filesystem (REMOTE_SCHEMES)."""
    scheme, sep, rest = path.partition("://")
    return bool(sep) and scheme in REMOTE_SCHEMES and not any(c.isspace() for c in rest)


def _expand(path):
    if not os.path.isdir(path):
        return [path]
    found = []
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(os.path.join(root, n) for n in sorted(names) if not n.startswith("."))
    return found


def is_manifest(path):
    """A manifest is a plain text file whose first non-empty line names an existing file."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if compression_of(head) or b"\0" in head:
        return False
    for line in head.splitlines():
        line = line.strip()
        if line and not line.startswith(b"#"):
            name = line.decode("utf-8", "replace")
            return is_remote(name) or os.path.isfile(os.path.join(os.path.dirname(os.path.abspath(path)), name))
    return False


def read_manifest(path):
    """Paths or URIs listed one per line ('#' comments allowed), relative to the manifest's folder."""
    base = os.path.dirname(os.path.abspath(path))
    out = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
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


def not_regular(path):
    """Why path is not an input that can be read (a FIFO, a device...), or None; never opens it."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        return "unreadable: %s" % (e.strerror or e)
    if stat.S_ISREG(mode):
        return None
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
    except OSError as e:
        return {"path": path, "size": 0, "compression": None, "format": None,
                "reason": "unreadable: %s" % (e.strerror or e)}
    from profiler.formats import ache, warc     # not at import: tasks import this module (profiler.runtime.remote)
    info = {"path": path, "size": os.path.getsize(path), "compression": compression_of(head)}
    if info["compression"] is None and ache.is_zlib(head) and ache.sniff(path):
        info.update(format="ache", compression="deflate")
        return info
    sample = []
    seen = 0
    try:
        for line in iter_lines(path, compression=info["compression"]):
            seen += 1
            if len(sample) >= SNIFF_LINES or seen > _SNIFF_MAX_LINES:
                break                       # (a bomb of blank lines is not read to its end)
            if line.strip():
                sample.append(line)
    except (OSError, EOFError, ValueError, zlib.error) as e:
        if not sample:
            info.update(format=None, reason="unreadable: %s" % e)
            return info
    info.update(registry.format_of(sample))
    if info["format"] == "warc" and info["compression"] == "gzip" and warc.gzip_problem(path):
        info["whole_gzip"] = True       # one gzip stream: read sequentially (profiler.job.mapside)
    return info


def plan_splits(infos, split_size=DEFAULT_SPLIT_SIZE, workers=1):
    """Cut uncompressed files into byte ranges of about split_size; compressed files stay whole.
    ``workers``: threads for the legend scan of a CDX file (the run's cores)."""
    splits = []
    for info in infos:
        if info["format"] is None:
            continue
        base = {k: info[k] for k in ("path", "compression", "format", "whole_gzip") if info.get(k) is not None}
        if "fields" in info:
            base["fields"] = info["fields"]
        size = info["size"]
        if info["compression"] or size <= split_size or registry.FORMATS[base["format"]].whole_file:
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
    """found(base + offset) for each "CDX " in data[:end] that starts a line, or starts one
    after a space (one pass: one per form of the line start took twice as long)."""
    i = data.find(b"CDX ", 0, end)
    while i >= 0:
        start = i if i >= 1 and data[i - 1] == 10 else \
            i - 1 if i >= 2 and data[i - 2:i] == b"\n " else -1
        if start > 0:
            found(base + start)
        i = data.find(b"CDX ", i + 1, end)
