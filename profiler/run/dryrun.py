"""`profile --dry-run`: what a run would read and how it would cut it, and a rough estimate of the
profile's size and the run's time, from profiling a sample of the inputs (nothing is written).

The sample is lines of the largest index inputs (windows spread over a plain file, the start of a
compressed one) and the smallest archive file, whole: its captures per input byte scale to the
whole input; the profile's lines grow more slowly than the captures (keys repeat), so halves of
the sample are profiled too and the growth between them and the sample extrapolated (a range);
CPU seconds per capture come from the same runs.
"""

import bz2
import math
import os
import shutil
import time
import zlib

from profiler.errors import UserError
from profiler.files import outfiles
from profiler.formats import inputs as inputs_mod, registry

#: uncompressed bytes of index lines in the sample
SAMPLE_BYTES = 8 << 20
#: an archive (WARC/ARC/ACHE) file up to this size may be the sample
SAMPLE_ARCHIVE_BYTES = 64 << 20
_READ = 64 << 10


def plan(input_args, manifests, runner, split_size, cores):
    """(infos, duplicates, splits) of a run, as profiler.run.profile makes them (local inputs)."""
    from profiler.run import profile as pipeline
    from profiler.runtime import preflight, remote
    if cores is not None:
        preflight.check_cores(cores)
    files, duplicates = inputs_mod.resolve_unique(input_args, manifests)
    if any(remote.is_remote(f) for f in files):
        raise UserError("--dry-run reads local inputs only")
    infos = [inputs_mod.sniff(f) for f in files]
    workers = 1
    if runner == "local":
        workers = cores or os.cpu_count() or 1
        split_size = pipeline.balanced_split_size(infos, split_size, workers)
    splits = inputs_mod.plan_splits(infos, split_size, workers)
    return infos, duplicates, splits, split_size, workers


def sample_lines(path, compression, limit):
    """(whole lines from the start of an index file, up to about limit bytes; the file's bytes
    they took; whether they are the whole file)."""
    taken, size, raw_used = [], 0, 0
    if compression == "gzip":
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif compression == "bz2":
        d = bz2.BZ2Decompressor()
    else:
        d = None
    rest = b""
    whole = False
    with open(path, "rb") as f:
        while size < limit:
            raw = f.read(_READ)
            if not raw:
                whole = True
                break
            raw_used += len(raw)
            if d is None:
                data = raw
            else:
                try:
                    data = d.decompress(raw)
                except (OSError, EOFError, ValueError, zlib.error):
                    whole = True
                    break
                if getattr(d, "eof", False):
                    raw_used -= len(d.unused_data)
                    whole = True
            data = rest + data
            cut = data.rfind(b"\n") + 1
            taken.append(data[:cut])
            size += cut
            rest = data[cut:]
            if whole or len(rest) > limit:      # a line longer than the sample: not sampled
                whole = whole and len(rest) <= limit
                if len(rest) > limit:
                    rest = b""
                break
    if whole and rest:
        taken.append(rest + b"\n")
    return b"".join(taken), raw_used, whole


#: windows a plain index is sampled in, spread over the file (a sorted index's first lines are
#: one corner of its key space)
WINDOWS = 16


def sample_windows(path, size, limit, windows=WINDOWS):
    """Whole lines of a plain index in `windows` pieces spread over the file, up to about limit
    bytes in all, in file order (a sorted file's sample stays sorted), and its first line when it
    is a CDX legend. Returns (sample, dense half, spread half, the file's bytes the sample stands
    for): the dense half is every window halved (as spread, half as dense), the spread half every
    other window (as dense, half as spread)."""
    from profiler.formats import cdx
    if size <= limit:
        data = sample_lines(path, None, limit)[0]
        half = data[:data.rfind(b"\n", 0, len(data) // 2) + 1]
        return data, half, half, size
    piece = max(1, limit // windows)
    legend, pieces = b"", []
    with open(path, "rb") as f:
        first = f.readline(1 << 20)
        if cdx.is_legend(first.rstrip(b"\r\n")):
            legend = first if first.endswith(b"\n") else first + b"\n"
        for k in range(windows):
            f.seek(k * size // windows)
            if k:
                f.readline(1 << 20)             # to the start of the next line
            data = f.read(piece)
            pieces.append(data[:data.rfind(b"\n") + 1])
    data = legend + b"".join(pieces)
    dense = legend + b"".join(p[:p.rfind(b"\n", 0, len(p) // 2) + 1] for p in pieces)
    spread = legend + b"".join(pieces[::2])
    return data, dense, spread, len(data)


def _profile_seconds(paths, out, policy, resolve_revisits, warc_reader, detect_language=False):
    """Profile a sample inline (in this process: its CPU time is exact)."""
    import logging
    from profiler.run.profile import run_profile
    t = time.process_time()
    log = logging.getLogger("archive-profiler")
    level = log.level
    log.setLevel(logging.ERROR)                 # not the sample runs' own lines
    try:
        run_profile(paths, out, policy, "inline", resolve_revisits=resolve_revisits, warc_reader=warc_reader,
                    detect_language=detect_language)
    finally:
        log.setLevel(level)
    cpu = time.process_time() - t
    with open(out, "rb") as f:
        lines = sum(1 for line in f if not line.startswith(b"!"))
    from profiler.files.profilefile import read_header
    run = next((v for n, v in read_header(out) if n == "!meta" and isinstance(v, dict) and "captures" in v), {})
    return run.get("captures", 0), lines, os.path.getsize(out), cpu


def estimate(infos, policy, resolve_revisits=True, warc_reader="warcio", limit=SAMPLE_BYTES, detect_language=False):
    """A rough estimate of the run from a sample: a dict, or None when there is nothing to sample.

    The profile's lines: extrapolated with the growth of the lines from half the sample to all
    of it, the half taken as dense (each window halved) and as spread (every other window);
    bounded below by the sample's own lines and above by linear growth."""
    usable = [i for i in infos if i["format"]]
    line_formats = registry.line_formats()
    index = sorted((i for i in usable if i["format"] in line_formats), key=lambda i: -i["size"])[:3]
    archives = sorted((i for i in usable if i["format"] not in line_formats
                       and i["size"] <= SAMPLE_ARCHIVE_BYTES), key=lambda i: i["size"])[:1]
    if not index and not archives:
        return None
    samples = {"full": [], "dense": [], "spread": [], "archive": []}
    per_byte, sample_lines_n = {}, 0           # (format, compression) -> [index lines, file bytes]
    made = []                                  # the work folder, once made
    try:
        folder = outfiles.work_folder("archive-profiler-dryrun-", record=made.append)
        raw = 0
        for n, info in enumerate(index):
            if info["compression"]:
                data, used, _ = sample_lines(info["path"], info["compression"], limit // len(index))
                dense = spread = data[:data.rfind(b"\n", 0, len(data) // 2) + 1]
            else:
                data, dense, spread, used = sample_windows(info["path"], info["size"], limit // len(index))
            raw += used
            n_lines = data.count(b"\n") - data.startswith(b" CDX")
            sample_lines_n += n_lines
            group = per_byte.setdefault((info["format"], info["compression"]), [0, 0])
            group[0] += n_lines
            group[1] += used
            for name, part in (("full", data), ("dense", dense), ("spread", spread)):
                if not part.strip(b"\n") or part.count(b"\n") <= part.startswith(b" CDX"):
                    continue                    # no whole line in the sample (one longer than it)
                path = os.path.join(folder, "%s-%d.%s" % (name, n, info["format"]))
                with open(path, "wb") as f:
                    f.write(part)
                samples[name].append(path)
        for info in archives:
            samples["full"].append(info["path"])
            samples["archive"].append(info["path"])
            raw += info["size"]
        runs = {}
        for name in ("full", "dense", "spread", "archive"):
            if samples[name]:
                try:
                    runs[name] = _profile_seconds(samples[name], os.path.join(folder, name + ".cdxj"), policy,
                                                  resolve_revisits, warc_reader, detect_language)
                except UserError:       # nothing usable in that sample
                    pass
        if "full" not in runs:
            return None
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)
    c2, l2, s2, t2 = runs["full"]
    if not c2 or not raw:
        return {"sample_captures": c2, "sample_bytes": raw, "captures": 0}
    # captures: index lines per file byte by format and compression, times the share of lines
    # that were captures; an archive's captures per byte from its own run
    c_archive = runs.get("archive", (0,))[0]
    captures = 0.0
    all_lines = sum(g[0] for g in per_byte.values())
    all_bytes = sum(g[1] for g in per_byte.values())
    share = (c2 - c_archive) / sample_lines_n if sample_lines_n else 0
    archive_bytes = sum(i["size"] for i in archives)
    for info in usable:
        if info["format"] in line_formats:
            g = per_byte.get((info["format"], info["compression"])) or (all_lines, all_bytes)
            captures += info["size"] * g[0] / max(g[1], 1) * share
        elif archive_bytes:
            captures += info["size"] * c_archive / archive_bytes
    growths = []
    for name in ("dense", "spread"):
        c1, l1, _, _ = runs.get(name, (0, 0, 0, 0))
        if c1 and l1 and c2 > c1:
            growths.append(min(1.0, max(0.0, math.log(max(l2, l1) / l1) / math.log(c2 / c1))))
    scale = max(1.0, captures / c2)
    point = sorted(l2 * scale ** g for g in growths) or [l2 * scale]
    # a sample's lines are a subset of the whole's; keys repeat, so lines per capture only fall
    lines = (l2, point[len(point) // 2], l2 * scale)
    c1, _, _, t1 = runs.get("dense", (0, 0, 0, 0))
    per_capture = (t2 - t1) / (c2 - c1) if c1 and c2 > c1 and t2 > t1 else t2 / c2
    per_line = s2 / max(l2, 1)
    return {"sample_captures": c2, "sample_bytes": raw, "sample_seconds": t2, "captures": captures,
            "lines": lines, "size": tuple(n * per_line for n in lines),
            "cpu_seconds": per_capture * captures}


def report(input_args, manifests, runner, split_size, cores, policy, resolve_revisits=True, warc_reader="warcio",
           out=None, detect_language=False):
    """Print the dry run: the inputs and their formats, the splits, the estimate."""
    import sys
    out = out or sys.stdout
    from profiler.io.names import display_name
    infos, duplicates, splits, size, workers = plan(input_args, manifests, runner, split_size, cores)
    usable = [i for i in infos if i["format"]]
    per_file = {}
    for s in splits:
        per_file[s["path"]] = per_file.get(s["path"], 0) + 1
    print("inputs: %d file(s), %s" % (len(usable), _mb(sum(i["size"] for i in usable))), file=out)
    for i in usable:
        kind = i["format"] + ("+" + i["compression"] if i["compression"] and i["format"] != "ache" else "")
        if i.get("whole_gzip"):
            kind += " (one gzip stream: read whole)"
        print("  %s  %s  %s  %d split(s)" % (display_name(i["path"]), kind, _mb(i["size"]),
                                            per_file.get(i["path"], 0)), file=out)
    for i in infos:
        if not i["format"]:
            print("  refused %s: %s" % (display_name(i["path"]), i["reason"]), file=out)
    for d in duplicates:
        print("  not read twice: %s (the same file as %s)" % (display_name(d["path"]), display_name(d["same_as"])),
              file=out)
    print("splits: %d (split size %s, the %s runner%s)" % (
        len(splits), _mb(size), runner, " on %d core(s)" % workers if runner == "local" else ""), file=out)
    if not splits:
        raise UserError("none of the %d input file(s) is %s" % (len(infos), registry.listing()))
    if detect_language:
        from profiler.formats.registry import require_detection
        require_detection()
    e = estimate(infos, policy, resolve_revisits, warc_reader, detect_language=detect_language)
    if not e or not e["captures"]:
        print("estimate: none (no captures in a sample of the inputs)", file=out)
        return 0
    print("estimate (rough, from a sample of %s captures in %s of the inputs):"
          % ("{:,}".format(e["sample_captures"]), _mb(e["sample_bytes"])), file=out)
    print("  captures  about %s" % _round(e["captures"]), file=out)
    low, mid, high = e["lines"]
    print("  profile   about %s lines, %s (at least %s lines, at most %s)" % (
        _about_within(mid, low, high), _mb(e["size"][1]), "{:,}".format(int(low)), _round(max(high, low), up=True)),
        file=out)
    cpu = e["cpu_seconds"]
    on = ", which the local runner spreads over %d cores" % workers if workers > 1 else ""
    print("  time      about %s of CPU as the sample ran (inline runner)%s, besides the runner's start"
          % (_duration(cpu), on), file=out)
    return 0


def _mb(n):
    return "%.1f MB" % (n / 1e6)


def _round(x, up=False):
    """Two significant digits, with thousands separators; up: rounded up (an upper bound)."""
    if x < 100:
        return "%d" % (math.ceil(x) if up else round(x))
    digits = int(math.floor(math.log10(x))) - 1
    if up:
        step = 10 ** digits
        return "{:,}".format(int(math.ceil(x / step) * step))
    return "{:,}".format(int(round(x, -digits)))


def _about_within(mid, low, high):
    """mid as _round shows it, but never below the lower bound shown beside it (int(low)) nor above the
    upper one: two digits of 140.6 are 140, beside "at least 141 lines"."""
    shown = _round(mid)
    value = int(shown.replace(",", ""))
    if value < int(low):
        return "{:,}".format(int(low))
    upper = int(_round(max(high, low), up=True).replace(",", ""))
    return "{:,}".format(upper) if value > upper else shown


def _duration(seconds):
    if seconds < 90:
        return "%.0f s" % max(seconds, 1)
    if seconds < 5400:
        return "%.0f min" % (seconds / 60)
    return "%.1f h" % (seconds / 3600)
