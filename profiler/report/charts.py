"""Charts of the holdings report with matplotlib: SVG to inline in the page, PNG for files.

Figures are made with ``matplotlib.figure.Figure`` (no pyplot, no global backend, no display).
SVG text stays text (``svg.fonttype: none``), so the page needs no font file and no network.
"""

import io
import re

from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

COLOURS = ["#2f6690", "#d1813a", "#7a9e4f", "#9d5c9d"]
RC = {"svg.fonttype": "none", "svg.hashsalt": "archive-profiler", "font.size": 9, "text.parse_math": False,
      "font.family": "sans-serif", "axes.spines.top": False, "axes.spines.right": False}
UNITS = [(1e21, "ZB"), (1e18, "EB"), (1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")]


def _byte_formatter(largest):
    """Axis labels in one decimal unit chosen by the largest value: 1.5e6 -> '1.5 MB'."""
    scale, unit = next(((s, u) for s, u in UNITS if largest >= s), (1, "B"))
    return FuncFormatter(lambda x, _pos: "%g %s" % (round(x / scale, 3), unit))


def _count_formatter():
    return FuncFormatter(lambda x, _pos: "{:,.0f}".format(x))


def figure(chart):
    """A matplotlib Figure for a report.Chart that has data."""
    n = len(chart.labels)
    # drawn as floats: matplotlib takes no integer past 64 bits (the report's tables are exact)
    series = [(name, [float(v) for v in values]) for name, values in chart.series]
    largest = max((v for _, values in series for v in values), default=0)
    if chart.kind == "stacked":
        largest = max((sum(vs) for vs in zip(*(values for _, values in series))), default=0)
    fmt = _byte_formatter(largest) if chart.unit == "bytes" else _count_formatter()
    if chart.kind == "bars":
        fig = Figure(figsize=(7.5, 0.9 + 0.28 * n), layout="constrained")
        ax = fig.add_subplot()
        ys = range(n)
        ax.barh(ys, series[0][1], color=COLOURS[0], label=series[0][0])
        ax.set_yticks(ys, chart.labels)
        ax.invert_yaxis()
        ax.xaxis.set_major_formatter(fmt)
        ax.xaxis.set_major_locator(MaxNLocator(6))
        ax.set_xlabel(series[0][0])
    else:
        fig = Figure(figsize=(8.5, 3.4), layout="constrained")
        ax = fig.add_subplot()
        xs = list(range(n))
        if chart.kind == "stacked":
            bottom = [0] * n
            for i, (name, values) in enumerate(series):
                ax.bar(xs, values, bottom=bottom, color=COLOURS[i % len(COLOURS)], label=name)
                bottom = [b + v for b, v in zip(bottom, values)]
        else:
            width = 0.8 / len(series)
            for i, (name, values) in enumerate(series):
                offset = (i - (len(series) - 1) / 2) * width
                ax.bar([x + offset for x in xs], values, width, color=COLOURS[i % len(COLOURS)], label=name)
        ax.set_xticks(xs, chart.labels, rotation=90 if n > 12 else 0)
        ax.yaxis.set_major_formatter(fmt)
        ax.yaxis.set_major_locator(MaxNLocator(6))
        ax.legend(frameon=False, loc="upper left")
    ax.grid(axis="x" if chart.kind == "bars" else "y", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    return fig


def _save(fig, fmt, **kwargs):
    buf = io.BytesIO()
    with rc_context(RC):
        fig.savefig(buf, format=fmt, **kwargs)
    return buf.getvalue()


def inline_svg(data, prefix):
    """SVG bytes -> an <svg> element for HTML, its ids prefixed so charts in one page never share one."""
    text = data.decode("utf-8")
    text = text[text.index("<svg"):]
    text = re.sub(r'\bid="([^"]+)"', lambda m: 'id="%s%s"' % (prefix, m.group(1)), text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: "url(#%s%s)" % (prefix, m.group(1)), text)
    text = re.sub(r'href="#([^"]+)"', lambda m: 'href="#%s%s"' % (prefix, m.group(1)), text)
    return text.replace("<svg ", '<svg role="img" aria-labelledby="%stitle" ' % prefix, 1)


def render(chart, with_png=False, dpi=110):
    """(inline SVG text, PNG bytes or None) of a chart that has data; the PNG has a title."""
    with rc_context(RC):
        fig = figure(chart)
    text = inline_svg(_save(fig, "svg", metadata={"Date": None}), chart.id + "-")
    if not with_png:
        return text, None
    fig.axes[0].set_title(chart.title, loc="left")   # the page has a caption; a PNG stands alone
    return text, _save(fig, "png", dpi=dpi, metadata={"Software": None})
