"""Routing quality of MementoMaps: a generated archive (and the shared corpus's indexes) split
into archives with overlapping holdings, each archive's map built in full and compacted to 1/10
and 1/100 of its lines, and URIs routed with the service's rule (an archive is asked unless its
map answers not-held or no-match) against the ground truth (which archives hold each URI-R).

    python scripts/eval_routing.py [--captures 100000] [--archives 5] [--queries 4000] [--png FILE]

Prints per map size: lines, precision and recall of the routed archives, and the share of
requests an aggregator saves against asking every archive; --png draws the same.
"""

import argparse
import os
import random
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from profiler.formats import inputs as inputs_mod  # noqa: E402
from profiler.testing import synthetic
from profiler.errors import UserError  # noqa: E402
from profiler.toolkit.compact import compact_file  # noqa: E402
from profiler.files.coverage import listed  # noqa: E402
from profiler.toolkit.lookup import HELD, Lookup  # noqa: E402
from profiler.formats.registry import captures as iter_parsed  # noqa: E402
from profiler.run.profile import run_profile  # noqa: E402
from profiler.files.ukvs import profile_to_map  # noqa: E402

SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data")


def urlkeys_of(path):
    """The urlkeys of a file's captures, read by the profiler's own parsers."""
    keys = set()
    info = inputs_mod.sniff(path)
    if not info["format"]:
        return keys
    for split in inputs_mod.plan_splits([info]):
        for parsed in iter_parsed(split):
            if not isinstance(parsed, str):
                keys.add(parsed[0])
    return keys


def split_generated(folder, captures, archives, rng):
    """Generated captures cut into archives: each host held by one to three archives, each of its
    URI-Rs by a random non-empty subset of those."""
    lines = [line.rstrip("\n") for line in synthetic.cdx_lines(captures, seed=7)]
    host_archives, urir_archives, parts = {}, {}, [[] for _ in range(archives)]
    for line in lines:
        urlkey = line.split(" ", 1)[0]
        host = urlkey.split(")", 1)[0]
        if host not in host_archives:
            host_archives[host] = rng.sample(range(archives), rng.randint(1, min(3, archives)))
        if urlkey not in urir_archives:
            held = host_archives[host]
            urir_archives[urlkey] = [a for a in held if rng.random() < 0.6] or [rng.choice(held)]
        for a in urir_archives[urlkey]:
            parts[a].append(line)
    paths = []
    for i, part in enumerate(parts):
        path = os.path.join(folder, "gen-%d.cdx" % i)
        with open(path, "w") as f:
            f.write(synthetic.LEGEND + "\n" + "\n".join(part) + "\n")
        paths.append([path])
    return paths


def split_corpus(archives, rng):
    """The shared corpus's usable indexes, each given to one or two archives."""
    files = []
    for folder, _, names in os.walk(SHARED):
        for name in sorted(names):
            if name.endswith((".cdx", ".cdxj", ".cdx.gz")):
                path = os.path.join(folder, name)
                if inputs_mod.sniff(path)["format"]:
                    files.append(path)
    parts = [[] for _ in range(archives)]
    for path in sorted(files):
        for a in rng.sample(range(archives), rng.randint(1, 2)):
            parts[a].append(path)
    return [p for p in parts if p]


def build_maps(folder, name, parts):
    """Per archive: (truth urlkeys, {size: map path}) with the full map and compactions."""
    out = []
    for i, files in enumerate(parts):
        profile = os.path.join(folder, "%s-%d.cdxj" % (name, i))
        run_profile(files, profile, policy="urls", archive_uri="https://%s%d.example.org/" % (name, i))
        full = os.path.join(folder, "%s-%d.ukvs" % (name, i))
        profile_to_map(profile, full, ("surt",))
        n = sum(1 for line in open(full, "rb") if not line.startswith(b"!"))
        maps = {"full": full}
        for label, share in (("1/10", 10), ("1/100", 100)):
            path = os.path.join(folder, "%s-%d-%s.ukvs" % (name, i, share))
            try:
                compact_file(full, path, max_lines=max(8, n // share + 4))
            except UserError:               # a small map: as small as it gets
                compact_file(full, path, max_lines=_smallest(full))
            maps[label] = path
        truth = set()
        for f in files:
            truth |= urlkeys_of(f)
        out.append((truth, maps))
    return out


def _smallest(path):
    import re
    try:
        compact_file(path, os.devnull + ".x", max_lines=1)
    except UserError as e:
        return int(re.search(r"has (\d+)", str(e)).group(1))
    return 1


def queries(archive_maps, n, rng):
    """URIs that exist somewhere (their urlkeys) and some that exist nowhere."""
    held = sorted(set().union(*[t for t, _ in archive_maps]))
    chosen = rng.sample(held, min(len(held), n // 2))
    made_up = []
    for k in rng.sample(held, min(len(held), n // 4)):
        made_up.append(k.split(")", 1)[0] + ")/never/%d" % rng.randrange(10 ** 6))
    for _ in range(n // 4):
        made_up.append("com,nowhere%d)/x" % rng.randrange(10 ** 6))
    return chosen, [k for k in made_up if all(k not in t for t, _ in archive_maps)]


def evaluate(archive_maps, existing, missing, spec_rule=False):
    """{size: (lines, precision, recall, saved share, asked per query)} over the queries."""
    results = {}
    sizes = list(archive_maps[0][1])
    total = len(existing) + len(missing)
    for size in sizes:
        routed_true = routed = truth_total = lines = 0
        asked = {q: set() for q in existing + missing}
        for a, (truth, maps) in enumerate(archive_maps):
            lines += sum(1 for line in open(maps[size], "rb") if not line.startswith(b"!"))
            with Lookup(maps[size]) as lk:
                for q, answer in lk.batch(existing + missing):
                    if answer.status == HELD and (spec_rule or listed(lk.coverage, answer.urlkey, answer.key,
                                                                      answer.rollup)):
                        asked[q].add(a)
        for q in existing:
            truth = {a for a, (t, _) in enumerate(archive_maps) if q in t}
            truth_total += len(truth)
            routed_true += len(asked[q] & truth)
            routed += len(asked[q])
        for q in missing:
            routed += len(asked[q])
        all_asked = sum(len(v) for v in asked.values())
        results[size] = (lines, routed_true / routed if routed else 1.0, routed_true / truth_total,
                         1 - all_asked / (total * len(archive_maps)), all_asked / total)
    return results


def report(name, results, n_archives, n_existing, n_missing):
    print("%s: %d archives, %d URIs held somewhere, %d held nowhere" % (name, n_archives, n_existing, n_missing))
    print("  %-6s %9s %10s %8s %14s %14s" % ("map", "lines", "precision", "recall", "requests saved",
                                             "asked/query"))
    for size, (lines, precision, recall, saved, asked) in results.items():
        print("  %-6s %9d %9.1f%% %7.1f%% %13.1f%% %14.2f" % (size, lines, 100 * precision, 100 * recall,
                                                           100 * saved, asked))


def draw(png, tables):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(tables), figsize=(5.5 * len(tables), 4.2), squeeze=False)
    for ax, (name, results) in zip(axes[0], tables):
        sizes = list(results)
        x = range(len(sizes))
        for i, (label, color) in enumerate((("precision", "#1f77b4"), ("recall", "#2ca02c"),
                                             ("requests saved", "#ff7f0e"))):
            values = [100 * results[s][i + 1] for s in sizes]
            ax.bar([v + (i - 1) * 0.27 for v in x], values, 0.27, label=label, color=color)
        ax.set_xticks(list(x))
        ax.set_xticklabels(["%s\n%d lines" % (s, results[s][0]) for s in sizes])
        ax.set_ylim(0, 105)
        ax.set_ylabel("%")
        ax.set_title(name)
    axes[0][0].figure.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=9)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(png, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--captures", type=int, default=100000)
    ap.add_argument("--archives", type=int, default=5)
    ap.add_argument("--queries", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--png", default=None, help="draw the table into this PNG")
    opts = ap.parse_args()
    import logging
    logging.getLogger("mrjob").setLevel(logging.ERROR)
    folder = tempfile.mkdtemp(prefix="eval-routing-")
    tables = []
    try:
        rng = random.Random(opts.seed)
        sets = [("generated archive (%d captures)" % opts.captures,
                 "gen", split_generated(folder, opts.captures, opts.archives, rng))]
        if os.path.isdir(SHARED):
            sets.append(("shared corpus indexes", "corpus", split_corpus(opts.archives, rng)))
        else:
            print("(no ../shared/data: the corpus part is left out)")
        for title, name, parts in sets:
            maps = build_maps(folder, name, parts)
            existing, missing = queries(maps, opts.queries, rng)
            results = evaluate(maps, existing, missing)
            report(title, results, len(parts), len(existing), len(missing))
            tables.append((title, results))
            spec = evaluate(maps, existing, missing, spec_rule=True)
            report(title + ", asking every archive whose lookup answers held (no coverage)", spec, len(parts),
                   len(existing), len(missing))
        if opts.png:
            draw(opts.png, tables)
            print("drawn: %s" % opts.png)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
