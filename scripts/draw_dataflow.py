#!/usr/bin/env python
"""Draw docs/dataflow.png: the profile job's data flow, package by package.

    python scripts/draw_dataflow.py [OUT.png]
"""

import os
import sys

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (x, y, width, height, title, lines, colour)
BOXES = [
    (0.2, 4.6, 2.6, 1.3, "inputs", ["CDX, CDXJ, WARC, ARC, ACHE", "files, folders, globs, manifests"], "#f2f2f2"),
    (3.3, 4.6, 3.0, 1.3, "client: plan", ["formats/ sniff, split", "run/profile manifest", "runtime/ ship profiler.zip + C"], "#dbe9f6"),
    (0.2, 2.4, 2.6, 1.6, "map", ["formats/ parse lines, records", "model/ normalise fields", "job/mapside: cells per URI-R",
                                 "(accel: C parser, aggregator)"], "#e3f1df"),
    (3.3, 2.4, 3.0, 1.6, "step 1: reduce by URI-R", ["job/expand: resolve revisits,", "roll up SURT levels x policy",
                                                      "key records + digest records", "(accel: C Expander)"], "#e3f1df"),
    (6.8, 2.4, 2.6, 1.6, "step 2: key or digest", ["job/digests: correct digests", "shared by URI-Rs",
                                                    "sum key records", "(accel: skim)"], "#e3f1df"),
    (6.8, 0.2, 2.6, 1.6, "step 3: reduce by key", ["model/stats: sum features", "key<TAB>{json}", "(accel: profile_lines)"],
     "#e3f1df"),
    (3.3, 0.2, 3.0, 1.6, "client: write", ["files/output: merge sorted parts", "headers, atomic write",
                                            "profile.cdxj or MementoMap"], "#dbe9f6"),
    (0.2, 0.2, 2.6, 1.6, "tools", ["toolkit/ query merge split diff", "files/ validate ukvs", "report/ serve/ nightly/"],
     "#fbe5d6"),
]
ARROWS = [((2.8, 5.25), (3.3, 5.25)), ((4.8, 4.6), (1.5, 4.0)), ((2.8, 3.2), (3.3, 3.2)), ((6.3, 3.2), (6.8, 3.2)),
          ((8.1, 2.4), (8.1, 1.8)), ((6.8, 1.0), (6.3, 1.0)), ((3.3, 1.0), (2.8, 1.0))]
LABELS = [((3.05, 3.5), "shuffle:"), ((3.05, 3.33), "URI-R"), ((6.55, 3.5), "shuffle:"), ((6.55, 3.33), "key"),
          ((8.45, 2.1), "shuffle: key"), ((6.55, 1.15), "parts"), ((3.05, 1.15), "files")]


def draw(out):
    fig = Figure(figsize=(9.6, 6.3), dpi=110)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, 9.6)
    ax.set_ylim(0, 6.2)
    ax.axis("off")
    for x, y, w, h, title, lines, colour in BOXES:
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08", fc=colour,
                                    ec="#555555", lw=0.8))
        ax.text(x + 0.1, y + h - 0.12, title, weight="bold", va="top", fontsize=9.5)
        for i, line in enumerate(lines):
            ax.text(x + 0.1, y + h - 0.45 - 0.26 * i, line, va="top", fontsize=8.3, family="monospace")
    for (x0, y0), (x1, y1) in ARROWS:
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0), arrowprops=dict(arrowstyle="-|>", color="#333333", lw=1.1))
    for (x, y), label in LABELS:
        ax.text(x, y, label, fontsize=7.5, ha="center", color="#444444", style="italic")
    ax.text(0.2, 6.1, "archive-profiler: the profile job (runtime/ runs it: inline, local, Spark, Hadoop)",
            fontsize=10.5, weight="bold", va="top")
    fig.savefig(out)


if __name__ == "__main__":
    draw(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "dataflow.png"))
