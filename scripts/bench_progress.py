"""What the progress bar costs: `profile` with stderr on a pseudo-terminal (bar drawn, tasks
reporting) against a pipe (no bar), alternated, wall and CPU seconds of each run.

    python scripts/bench_progress.py [--lines 2000000] [--runner local] [--repeat 5]
"""

import argparse
import os
import pty
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(args, terminal):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    if terminal:
        master, slave = pty.openpty()
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=slave, cwd=ROOT)
        os.close(slave)
        while True:
            try:
                if not os.read(master, 65536):
                    break
            except OSError:
                break
        os.close(master)
        status = proc.wait()
    else:
        status = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT).returncode
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if status:
        sys.exit("profile failed (%d)" % status)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2000000)
    ap.add_argument("--runner", default="local")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--input", help="an index to use instead of a generated one")
    opts = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-progress-")
    index = opts.input or os.path.join(folder, "i.cdx")
    if not opts.input:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_cdx.py"), "--lines", str(opts.lines),
                        "--no-stats", index], check=True, stdout=subprocess.DEVNULL)
    args = [sys.executable, "-m", "profiler.cli", "profile", index, "-o", os.path.join(folder, "p.cdxj"),
            "-r", opts.runner]
    results = {True: [], False: []}
    run(args, False)                    # warm the page cache
    for _ in range(opts.repeat):
        for terminal in (False, True):
            results[terminal].append(run(args, terminal))
    print("runner %s, %s, %d runs each (median)" % (opts.runner, os.path.basename(index), opts.repeat))
    for terminal in (False, True):
        walls = sorted(w for w, _ in results[terminal])
        cpus = sorted(c for _, c in results[terminal])
        print("  %-22s wall %.2f s  CPU %.2f s" % ("bar (terminal)" if terminal else "no bar (pipe)",
                                                  walls[len(walls) // 2], cpus[len(cpus) // 2]))
    for name in os.listdir(folder):
        if name != os.path.basename(index) or not opts.input:
            os.remove(os.path.join(folder, name))
    os.rmdir(folder)


if __name__ == "__main__":
    main()
