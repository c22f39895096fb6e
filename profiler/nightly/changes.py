"""What changed between two profiles of one archive: the nightly change report.

One streaming pass over both sorted files (profiler.toolkit.diff.join) collects what an archivist
asks the morning after: the archive-wide totals, hosts that are new (and hosts that vanished),
growth by TLD and by each criterion of the policy at each of its levels (``by_criterion``, from
the criteria registry: a plugin's criterion too; ``by_year`` and ``by_mime`` are two of them, kept
under their names), and how many keys appeared, changed or vanished.
Written as JSON (for scripts) and Markdown (for people), beside the profile.
"""

import os

import orjson

from profiler import jsonnum
from profiler.files import layout as layouts
from profiler.files.output import write_bytes_atomic
from profiler.model import criteria
from profiler.nightly.fold import run_meta
from profiler.toolkit.diff import join, records
from profiler.toolkit.query import surt_level

GROWTH_FEATURES = ("urim.total", "urir", "bytes", "dedup_bytes")
TOP = 20
BAR = {"width": 640, "row": 18, "label": 150, "colour": "#2f6690", "minus": "#d1813a"}


def _row(name, old, new):
    row = {"key": name}
    for f in GROWTH_FEATURES:
        a, b = (old or {}).get(f, 0) or 0, (new or {}).get(f, 0) or 0
        row[f] = [a, b, b - a]
    return row


def compare(old_path, new_path, top=TOP, note=None):
    """The change report (a dict) from the profile at old_path (None: first night) to new_path.
    Profiles of different key layouts (one with lang, one without) are a LayoutError."""
    new_recs = records(new_path)[1]
    old_recs = records(old_path)[1] if old_path else iter(())     # a missing file: a DiffError
    layout = layouts.of_file(new_path)
    if old_path:
        layouts.require_same("compare", [old_path, new_path], [layouts.of_file(old_path), layout])
    report = {"old": _about(old_path), "new": _about(new_path), "totals": None,
              "keys": {"appeared": 0, "vanished": 0, "changed": 0, "same": 0},
              "new_hosts": {"count": 0, "top": []}, "vanished_hosts": {"count": 0, "top": []},
              "by_tld": [], "by_year": [], "by_mime": [],
              "by_criterion": {c.name: {l.name: [] for l in c.levels} for c in layout.criteria}, "vanished_keys": []}
    if note:
        report["note"] = note
    new_hosts, gone_hosts = [], []
    for key, old, new in join(old_recs, new_recs):
        kind = "appeared" if old is None else "vanished" if new is None else \
            "same" if old == new else "changed"
        report["keys"][kind] += 1
        if kind == "vanished" and len(report["vanished_keys"]) < top:
            report["vanished_keys"].append(key.decode("utf-8", "replace"))
        k = criteria.split_key(key.decode("utf-8", "replace"), layout)
        if k is None:
            continue
        surt = k.surt
        level = surt_level(surt)
        if criteria.others_any(k):
            if level == "root":
                report["totals"] = _row("*", old, new)
            elif level == "tld":
                report["by_tld"].append(_row(surt, old, new))
            elif level == "host" and kind == "appeared":
                new_hosts.append(_row(surt, old, new))
            elif level == "host" and kind == "vanished":
                gone_hosts.append(_row(surt, old, new))
        elif level == "root":
            _by_criterion(report, layout, k, old, new)
    for name, hosts in (("new_hosts", new_hosts), ("vanished_hosts", gone_hosts)):
        hosts.sort(key=lambda r: (-abs(r["urim.total"][2]), r["key"]))
        report[name] = {"count": len(hosts), "top": hosts[:top]}
    for name in ("by_tld", "by_mime"):
        report[name].sort(key=lambda r: (-r["urim.total"][2], r["key"]))
    for name, levels in report["by_criterion"].items():
        for rows in levels.values():
            rows.sort(key=(lambda r: r["key"]) if name == criteria.DATETIME.name else
                      (lambda r: (-r["urim.total"][2], r["key"])))
    return report


def _by_criterion(report, layout, k, old, new):
    """A root key with one criterion's field given (the others '-'): a row of that criterion's
    growth at each level its field is a line of (status ``unk``: class and code; a plugin's
    ``unk`` of two levels), so each level's table covers every capture, as its lines do."""
    given = [(c, field) for c, field in zip(layout.criteria, k[1:]) if field != "-"]
    if len(given) != 1:
        return
    c, field = given[0]
    row = _row(field, old, new)
    for level in c.levels_of(field) or ("other",):
        report["by_criterion"][c.name].setdefault(level, []).append(row)
    if c is criteria.DATETIME and len(field) == 4:
        report["by_year"].append(row)
    elif c is criteria.MIME:
        report["by_mime"].append(row)


def _about(path):
    if not path:
        return None
    run, about = run_meta(path)
    return {"profile": path, "created": about.get("created"), "captures": run.get("captures"),
            "inputs": len(run.get("inputs", []))}


def _n(v):
    return "{:,}".format(v)


def _signed(v):
    return ("+" if v > 0 else "") + "{:,}".format(v)


def markdown(report, top=TOP):
    """The report as Markdown text."""
    out = ["# What changed", ""]
    old, new = report["old"], report["new"]
    if old:
        out.append("From `%s` (%s, %s captures) to `%s` (%s, %s captures)." % (
            old["profile"], old["created"], _n(old["captures"] or 0),
            new["profile"], new["created"], _n(new["captures"] or 0)))
    else:
        out.append("First profile: `%s` (%s, %s captures)." % (new["profile"], new["created"],
                                                             _n(new["captures"] or 0)))
    if report.get("note"):
        out += ["", "Note: " + report["note"] + "."]
    k = report["keys"]
    out += ["", "Keys: %s appeared, %s changed, %s vanished, %s unchanged." % (
        _n(k["appeared"]), _n(k["changed"]), _n(k["vanished"]), _n(k["same"])), ""]

    def table(title, rows, first="key"):
        out.extend(["## " + title, ""])
        if not rows:
            out.extend(["(none)", ""])
            return
        out.append("| %s | captures | change | URI-Rs | change | bytes | change |" % first)
        out.append("|---|---:|---:|---:|---:|---:|---:|")
        for r in rows[:top]:
            out.append("| `%s` | %s | %s | %s | %s | %s | %s |" % (
                r["key"], _n(r["urim.total"][1]), _signed(r["urim.total"][2]), _n(r["urir"][1]),
                _signed(r["urir"][2]), _n(r["bytes"][1]), _signed(r["bytes"][2])))
        if len(rows) > top:
            out.append("| ... %d more | | | | | | |" % (len(rows) - top))
        out.append("")

    table("Whole archive", [report["totals"]] if report["totals"] else [])
    table("New hosts (%s)" % _n(report["new_hosts"]["count"]), report["new_hosts"]["top"], "host")
    table("Vanished hosts (%s)" % _n(report["vanished_hosts"]["count"]), report["vanished_hosts"]["top"], "host")
    table("Growth by TLD", [r for r in report["by_tld"] if r["urim.total"][2] or r["urir"][2]], "TLD")
    for name, levels in report.get("by_criterion", {}).items():
        for level, rows in levels.items():
            if rows:
                table("Growth by %s (%s)" % (name, level),
                      [r for r in rows if r["urim.total"][2] or r["urir"][2]], name)
    out.extend(["## Vanished keys (%s)" % _n(k["vanished"]), ""])
    out.extend(["- `%s`" % key for key in report["vanished_keys"]] or ["(none)"])
    return "\n".join(out) + "\n"


def _escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg(report, top=12):
    """Bar charts of the captures added by year and by TLD (the growth at a glance), as SVG text."""
    panels = [("Captures added by year", sorted((r for r in report["by_year"] if r["urim.total"][2]),
                                                key=lambda r: r["key"])[-top:]),
              ("Captures added by TLD", [r for r in report["by_tld"] if r["urim.total"][2]][:top])]
    w, row, label = BAR["width"], BAR["row"], BAR["label"]
    parts, y = [], 0
    for title, rows in panels:
        parts.append('<text x="0" y="%d" font-weight="bold">%s</text>' % (y + 14, _escape(title)))
        y += 24
        if not rows:
            parts.append('<text x="0" y="%d" fill="#666">no change</text>' % (y + 12))
            y += row + 8
            continue
        largest = max(abs(r["urim.total"][2]) for r in rows) or 1
        for r in rows:
            delta = r["urim.total"][2]
            length = max(1, round((w - label - 90) * abs(delta) / largest))
            parts.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (label - 6, y + 13, _escape(r["key"])))
            parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s: %s</title></rect>' % (
                label, y + 2, length, row - 4, BAR["colour"] if delta > 0 else BAR["minus"], _escape(r["key"]),
                _signed(delta)))
            parts.append('<text x="%d" y="%d">%s</text>' % (label + length + 4, y + 13, _signed(delta)))
            y += row
        y += 12
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
            'font-size="12">\n%s\n</svg>\n' % (w, y, "\n".join(parts)))


def documents(old_path, new_path, svg_name, top=TOP, note=None):
    """(report, {suffix: bytes}) of the change report from old_path to new_path: its JSON
    (.changes.json), its chart (.changes.svg) and its Markdown (.changes.md), which shows the
    chart by the file name svg_name."""
    report = compare(old_path, new_path, top, note)
    text = markdown(report, top).replace("\n", "\n\n![growth by year and TLD](%s)\n" % svg_name, 1)
    return report, {".changes.json": jsonnum.dumps(report, option=orjson.OPT_INDENT_2) + b"\n",
                    ".changes.svg": svg(report).encode("utf-8"),
                    ".changes.md": text.encode("utf-8")}


def write(old_path, new_path, json_path, md_path, top=TOP, note=None):
    """Write the report beside the profile (JSON, Markdown and, named like the Markdown with .svg,
    its chart; each atomically). Returns the report."""
    svg_path = md_path[:-3] + ".svg" if md_path.endswith(".md") else md_path + ".svg"
    report, data = documents(old_path, new_path, os.path.basename(svg_path), top, note)
    for path, suffix in ((json_path, ".changes.json"), (svg_path, ".changes.svg"), (md_path, ".changes.md")):
        write_bytes_atomic(path, data[suffix])
    return report
