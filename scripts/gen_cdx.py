#!/usr/bin/env python
"""Write a synthetic, sorted 11-field CDX index (gzip when OUT ends .gz).

    python scripts/gen_cdx.py OUT.cdx[.gz] --lines 1000000 --seed 1
"""

import argparse
import gzip
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from profiler.testing import synthetic  # noqa: E402


def count_index(paths):
    """(captures, distinct urlkeys, distinct SURT hosts) over CDX or CDXJ files (URI-Rs may span
    files), in one pass: the lines that are not blank, a legend or a header are captures."""
    captures, urlkeys, hosts = 0, set(), set()
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            for line in f:
                if not line.strip() or line.startswith((b" CDX", b"CDX ", b"!", b"#")):
                    continue
                captures += 1
                urlkey = line.split(b" ", 1)[0]
                urlkeys.add(urlkey)
                hosts.add(urlkey.split(b")", 1)[0])
    return captures, len(urlkeys), len(hosts)


def count_urirs_and_hosts(paths):
    """(distinct urlkeys, distinct SURT hosts) over CDX files (URI-Rs may span files)."""
    return count_index(paths)[1:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="output path (.gz for gzip)")
    parser.add_argument("--lines", type=int, default=1000000, help="capture lines (default 1000000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hosts", type=int, help="override the number of hosts")
    parser.add_argument("--urirs", type=int, help="override the number of URI-Rs")
    parser.add_argument("--parts", type=int, default=1,
                        help="split over N files OUT.0, OUT.1, ... (URI-Rs may straddle files)")
    parser.add_argument("--shuffle", action="store_true", help="shuffle lines within each file")
    parser.add_argument("--no-stats", action="store_true", help="skip re-reading the output for counts")
    args = parser.parse_args(argv)

    started = time.time()
    if args.parts > 1 or args.shuffle:
        if args.parts > 1:
            stem, gz = (args.out[:-3], ".gz") if args.out.endswith(".gz") else (args.out, "")
            paths = ["%s.%d%s" % (stem, i, gz) for i in range(args.parts)]
        else:
            paths = [args.out]
        written = sum(synthetic.write_cdx_parts(paths, args.lines, args.seed, shuffle=args.shuffle,
                                                hosts=args.hosts, urirs=args.urirs))
    else:
        paths = [args.out]
        written = synthetic.write_cdx(args.out, args.lines, args.seed,
                                      hosts=args.hosts, urirs=args.urirs)
    elapsed = time.time() - started
    size = sum(os.path.getsize(p) for p in paths)
    print("wrote      %s" % ", ".join(paths))
    print("lines      %d" % written)
    print("bytes      %d (%.1f MB)" % (size, size / 1e6))
    print("seconds    %.1f" % elapsed)
    if not args.no_stats:
        urirs, hosts = count_urirs_and_hosts(paths)
        print("URI-Rs     %d" % urirs)
        print("hosts      %d" % hosts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
