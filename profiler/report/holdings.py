"""The holdings report: what a profile says about an archive, as tables and chart specifications.

``read_holdings(path)`` picks the lines a report needs out of a CDXJ profile (the whole archive
by year, MIME type, status class and, when its !keys have lang, language, and by each other
optional criterion its !keys have, a plugin's too; one line per TLD and per host);
``build_sections(holdings)``
turns them into sections of charts whose tables carry the exact numbers. Plotting is in
``profiler.report.charts``, the page in ``profiler/report/templates/report.html``.
"""

import collections
import dataclasses
import os
import re

from profiler import GENERATOR, jsonnum
from profiler import extras
from profiler.io import signalmask
from profiler.io.names import display_name
from profiler.errors import RunError, UserError
from profiler.files import layout as layouts, outfiles, pages
from profiler.files.profilefile import ratio
from profiler.files.output import write_atomic, write_bytes_atomic
from profiler.files.datalines import DataFile
from profiler.model import criteria

LANG = criteria.LANG.name
YEAR = re.compile(rb"^[0-9]{4}$")
STATUS_CLASS = re.compile(rb"^([1-5]xx|unk)$")
DEFAULT_TOP = 10
#: the column and row name of the average size
AVG = "average size (bytes after deduplication per unique URL)"


@dataclasses.dataclass
class Chart:
    """One chart and the table of its numbers. An empty ``missing`` means it can be drawn."""
    id: str
    title: str
    kind: str                       # "columns" (categories along x), "bars" (horizontal), "stacked"
    unit: str                       # "count" or "bytes": how the value axis is labelled
    labels: list = dataclasses.field(default_factory=list)
    series: list = dataclasses.field(default_factory=list)    # [(name, [number per label])]
    columns: list = dataclasses.field(default_factory=list)   # table header
    rows: list = dataclasses.field(default_factory=list)      # table rows: ints are numbers
    note: str = ""
    missing: str = ""


@dataclasses.dataclass
class Section:
    id: str
    title: str
    text: str = ""
    charts: list = dataclasses.field(default_factory=list)
    table: tuple = ()               # (columns, rows) of a table without a chart
    missing: str = ""               # why the section's table is empty


def surt_level(surt):
    """'*' -> 'root', 'com,*' -> 'tld', 'com,cnn,*' -> 'domain', 'com,cnn)/*' -> 'host', else None."""
    if surt == b"*":
        return "root"
    if surt.endswith(b")/*") and surt.find(b")") == len(surt) - 3:
        return "host"
    if surt.endswith(b",*") and b")" not in surt:
        return "domain" if b"," in surt[:-2] else "tld"
    return None


def host_name(surt):
    """'com,cnn)/*' -> 'cnn.com', 'org,example:8080)/*' -> 'example.org:8080'."""
    host = surt[:surt.find(")")]
    host, colon, port = host.partition(":")
    return ".".join(reversed(host.split(","))) + colon + port


def _wanted(level, key):
    """Which table of the holdings a data line (its layout's Key, bytes) belongs to, or None."""
    if level == "root":
        if LANG in key._fields and criteria.others_any(key, LANG) and getattr(key, LANG) != b"-":
            return "languages"
        if criteria.others_any(key, "datetime"):
            return "total" if key.datetime == b"-" else "years" if YEAR.match(key.datetime) else None
        if criteria.others_any(key, "mime"):
            if key.mime.decode("utf-8", "replace") in criteria.MIME_CLASSES:
                return None                      # a content class, not a media type (mime class level)
            return "mime_categories" if key.mime.endswith(b"/*") else "mimes"
        if criteria.others_any(key, "status") and STATUS_CLASS.match(key.status):
            return "statuses"
    elif level in ("tld", "host") and criteria.others_any(key):
        return level + "s"
    return None


def _other_criteria(layout):
    """The optional criteria of a profile's keys that have no section of their own (not lang)."""
    return tuple(c for c in layout.criteria if c.optional and c.name != LANG)


def _by_criterion(level, key, tables):
    """The optional criterion (of ``tables``, by name) a root line breaks the archive down by:
    its field is all that is not '-' (any), or None."""
    if level != "root":
        return None
    for name in tables:
        if getattr(key, name) != b"-" and criteria.others_any(key, name):
            return name
    return None


#: the features the report shows (another producer's profile may count only some)
REPORTED = ("urim", "urir", "bytes", "dedup_bytes")


def _padded(layout):
    """Key -> a Key with every field the report reads: one another producer's profile lacks
    (its !keys may name only a SURT and a year) is '-' (any)."""
    names = [n for n in ("datetime", "mime", "status") if n not in layout.fields]
    if not names:
        return lambda key: key
    padded = collections.namedtuple("Key", list(layout.fields) + names)
    return lambda key: padded(*key, *([b"-"] * len(names)))


#: the TLDs or hosts a report with a top held at once, at least (then those no ranking can show
#: are dropped): a profile's hosts are not held
RANKED_HELD = 10000


def read_holdings(path, skipped=None, top=None):
    """The lines of a profile the report uses, as dicts of parsed values, plus its header. Every
    line is checked (profiler.files.datalines); ``skipped``: damaged lines are counted there and
    left out, else they are refused. ``top``: of the TLDs and hosts only those of the top ``top``
    by a ranking metric are kept (``counts`` says how many there are), else all."""
    found = DataFile(path, "cdxj")
    header = found.headers
    pages.require_whole(path, header, "report")
    layout = found.layout
    h = {"path": path, "header": header, "lines": 0, "total": None, "years": {}, "mimes": {},
         "mime_categories": {}, "statuses": {}, "tlds": {}, "hosts": {}, "languages": {},
         "layout": layout, "has_languages": layouts.has(layout, LANG), "counts": {"tlds": 0, "hosts": 0},
         "criteria": {c.name: {} for c in _other_criteria(layout)}}
    padded = _padded(layout)
    held = None if top is None else max(RANKED_HELD, 4 * top)
    for record in found.records(skipped):
        h["lines"] += 1
        k = padded(criteria.split_key(record.key, layout))
        surt, mime = k.surt, k.mime
        level = surt_level(surt)
        by = _by_criterion(level, k, h["criteria"])
        table = _wanted(level, k) if by is None else "criteria"
        if table is None:
            continue
        v = record.value
        lacking = [f for f in REPORTED if f not in v]
        if lacking:
            raise UserError("%s: the line %r has no %s: the report shows every feature of a profile (another "
                            "producer's profile may count fewer; 'archive-profiler query' reads it)"
                            % (path, record.key.decode("utf-8", "replace")[:80], ", ".join(lacking)))
        if table == "total":
            h["total"] = v
            continue
        if table == "criteria":
            h["criteria"][by][getattr(k, by).decode("utf-8", "replace")] = v
            continue
        name = {"years": k.datetime, "mimes": mime, "mime_categories": mime, "statuses": k.status,
                "tlds": surt[:-2], "hosts": surt, "languages": getattr(k, LANG, None)}[table]
        h[table][name.decode("utf-8", "replace")] = v
        if table in h["counts"]:
            h["counts"][table] += 1
            if held is not None and len(h[table]) > held:
                h[table] = _ranked_only(h[table], top)
        if table == "mimes" and b"/" not in mime:      # 'unk' is a type and a category
            h["mime_categories"][mime.decode("utf-8", "replace")] = v
    if h["lines"] == 0:
        if meta(h).get("type") == "ArchiveProfile":     # every record skipped, an empty crawl
            raise UserError("%s: a profile of no capture: there is nothing to report (its !meta says why no "
                            "record counted)" % path)
        raise UserError("%s: no profile lines (is it a CDXJ archive profile?)" % path)
    return h


def meta(holdings):
    """The profile's '!meta' objects merged into one dict (later lines win on a shared name)."""
    out = {}
    for name, value in holdings["header"]:
        if name == "!meta" and isinstance(value, dict):
            out.update(value)
    return out


def policy_name(holdings):
    policy = meta(holdings).get("policy")
    return policy.get("name", "unnamed") if isinstance(policy, dict) else "unknown"


def share(part, whole):
    return "%.1f %%" % (100.0 * part / whole) if whole else "-"


def _ranked_only(table, top):
    """The entries of a table in the top of some ranking (METRICS): what ranking_charts can show."""
    keep = set()
    for _, _, metric, _ in METRICS:
        keep.update(name for name, _ in _ranked(table, metric, top))
    return {name: v for name, v in table.items() if name in keep}


def _ranked(table, metric, top):
    """The top (name, value) pairs of a table by a metric; ties by name, so the order is stable."""
    return sorted(table.items(), key=lambda kv: (-metric(kv[1]), kv[0]))[:top]


def _urim(v):
    return v["urim"]["total"]


def _urir(v):
    return v["urir"]


def _bytes(v):
    return v["bytes"]


def _dedup(v):
    return v["dedup_bytes"]


def avg_size(v):
    """FacetRedux's sixth feature, the average document size: bytes after deduplication per
    unique URL (spec section 3), as query and the explorer derive it; '-' without a URL."""
    return ratio(v["dedup_bytes"], v["urir"], 2) if v["urir"] else "-"


def _lines(holdings, surt, **values):
    """The quoted pattern of the lines a chart reads, in the profile's key layout: '* YYYY - -'."""
    return "'%s'" % layouts.key(holdings["layout"], surt, **values)


def _missing(what, holdings, thing="this chart is not drawn"):
    return "This profile has no %s lines (policy %s), so %s." % (what, policy_name(holdings), thing)


def year_chart(h):
    c = Chart("captures-per-year", "Captures and unique URLs per year", "columns", "count",
              columns=["year", "captures (URI-Ms)", "unique URLs (URI-Rs)", "bytes", AVG])
    if not h["years"]:
        c.missing = _missing(_lines(h, "*", datetime="YYYY"), h)
        return c
    years = sorted(h["years"])
    c.labels = years
    c.series = [("captures (URI-Ms)", [_urim(h["years"][y]) for y in years]),
                ("unique URLs (URI-Rs)", [_urir(h["years"][y]) for y in years])]
    c.rows = [[y, _urim(h["years"][y]), _urir(h["years"][y]), _bytes(h["years"][y]), avg_size(h["years"][y])]
              for y in years]
    c.note = ("A URL captured in several years counts once in each of them, so the yearly unique "
              "URLs add up to more than the archive's total.")
    return c


def mime_chart(h, metric, top):
    """MIME types by captures or bytes: the top ones, the rest summed into 'other'."""
    by = "captures" if metric is _urim else "bytes"
    has_types = any("/" in m for m in h["mimes"])         # 'unk' alone is also a category
    table, level = (h["mimes"], "type") if has_types or not h["mime_categories"] \
        else (h["mime_categories"], "category")
    c = Chart("mime-by-" + by, "MIME %s by %s" % ("types" if level == "type" else "categories", by),
              "bars", "count" if by == "captures" else "bytes",
              columns=["MIME " + level, by, "share"])
    if not table:
        c.missing = _missing(_lines(h, "*", mime="MIME"), h)
        return c
    whole = sum(metric(v) for v in table.values())
    ranked = _ranked(table, metric, top)
    pairs = [(name, metric(v)) for name, v in ranked]
    rest = len(table) - len(ranked)
    if rest:
        pairs.append(("other (%d %s)" % (rest, "types" if level == "type" else "categories"),
                      whole - sum(n for _, n in pairs)))
    c.labels = [name for name, _ in pairs]
    c.series = [(by, [n for _, n in pairs])]
    c.rows = [[name, n, share(n, whole)] for name, n in pairs] + [["all", whole, share(whole, whole)]]
    if level == "category":
        c.note = "This profile has no MIME type lines for the whole archive; its categories are shown."
    return c


def status_chart(h):
    c = Chart("status-classes", "HTTP status classes by captures", "bars", "count",
              columns=["status class", "captures", "share", "bytes"])
    if not h["statuses"]:
        c.missing = _missing(_lines(h, "*", status="Nxx"), h)
        return c
    whole = sum(_urim(v) for v in h["statuses"].values())
    names = sorted(h["statuses"])
    c.labels = names
    c.series = [("captures", [_urim(h["statuses"][n]) for n in names])]
    c.rows = [[n, _urim(h["statuses"][n]), share(_urim(h["statuses"][n]), whole), _bytes(h["statuses"][n])]
              for n in names]
    c.note = "'unk': the index gave no HTTP status (e.g. revisits without an original, DNS records)."
    return c


def language_chart(h, top):
    """Languages by captures (the '* - - - CODE' lines): the top ones, the rest summed as 'other'."""
    c = Chart("languages-by-captures", "Languages by captures", "bars", "count",
              columns=["language", "code", "captures", "share", "unique URLs (URI-Rs)", "bytes"])
    table = h["languages"]
    if not table:
        c.missing = _missing(_lines(h, "*", lang="LANG"), h)
        return c
    whole = sum(_urim(v) for v in table.values())
    ranked = _ranked(table, _urim, top)
    names = language_names()
    rows = [[names.get(code, code), code, _urim(v), share(_urim(v), whole), _urir(v), _bytes(v)]
            for code, v in ranked]
    rest = [v for code, v in table.items() if code not in dict(ranked)]
    if rest:
        n = sum(_urim(v) for v in rest)
        rows.append(["other (%d languages)" % len(rest), "", n, share(n, whole), "", sum(_bytes(v) for v in rest)])
    c.labels = ["%s (%s)" % (r[0], r[1]) if r[1] else r[0] for r in rows]
    c.series = [("captures", [r[2] for r in rows])]
    c.rows = rows + [["all", "", whole, share(whole, whole), "", sum(_bytes(v) for v in table.values())]]
    c.note = ("Each capture counts under its primary language only. 'unk': no language was declared "
              "or detected (non-HTML content, pages without a language). " + _shown_note(
                  len(ranked), len(table), "languages", "a URL in several languages"))
    return c


def _shown_note(shown, total, what, several):
    """How many of a ranking's entries the chart shows, and what its 'other' row (when it has one)
    and its URI-Rs mean."""
    if shown == total:
        return "All %d %s shown (%s counts in each, so URI-Rs are not summed)." % (total, what, several)
    return ("%d of %d %s shown; the 'other' row sums the rest (%s counts in each, so URI-Rs are not "
            "summed)." % (shown, total, what, several))


_NAMES = {}


def criterion_charts(h, name, top):
    """The archive by an optional criterion (the '* - - - VALUE' lines), one chart per level of it
    the profile has (coarsest first; a field that fits several levels, 'unk', in each, but no
    level of only such fields: a level the policy does not write): the top values, the rest summed
    as 'other'."""
    criterion = criteria.BY_NAME[name]
    table = h["criteria"][name]
    columns = [name, "captures", "share", "unique URLs (URI-Rs)", "bytes"]
    several = len(criterion.levels) > 1
    certain = {at[0] for at in map(criterion.field_levels, table) if len(at) == 1}
    charts = []
    for level in criterion.coarse_to_fine:
        fields = {f: v for f, v in table.items() if level.name in criterion.field_levels(f)}
        if several and (not fields or (certain and level.name not in certain)):
            continue            # no line of it, or only fields that fit other levels too ('unk')
        c = Chart("by-%s-%s" % (name, level.name), "Captures by %s%s" % (name, " (%s)" % level.name if several else ""),
                  "bars", "count", columns=list(columns))
        whole = sum(_urim(v) for v in fields.values())
        ranked = _ranked(fields, _urim, top)
        rows = [[f, _urim(v), share(_urim(v), whole), _urir(v), _bytes(v)] for f, v in ranked]
        rest = [v for f, v in fields.items() if f not in dict(ranked)]
        if rest:
            n = sum(_urim(v) for v in rest)
            rows.append(["other (%d values)" % len(rest), n, share(n, whole), "", sum(_bytes(v) for v in rest)])
        c.labels = [r[0] for r in rows]
        c.series = [("captures", [r[1] for r in rows])]
        c.rows = rows + [["all", whole, share(whole, whole), "", sum(_bytes(v) for v in fields.values())]]
        c.note = _shown_note(len(ranked), len(fields), "values", "a URL of several values")
        charts.append(c)
    if not charts:
        c = Chart("by-%s" % name, "Captures by %s" % name, "bars", "count", columns=columns)
        c.missing = _missing(_lines(h, "*", **{name: name.upper()}), h)
        charts.append(c)
    return charts


def language_names():
    """{ISO 639-3 code: English name} from the IANA language subtag registry langcodes ships
    (a code without a registry name shows as the code)."""
    if not _NAMES:
        try:
            import io
            from importlib.resources import files
            from langcodes import Language
            from langcodes.registry_parser import parse_file
            text = files("langcodes").joinpath("data", "language-subtag-registry.txt").read_text("utf-8")
            for entry in parse_file(io.StringIO(text)):
                subtag, names = entry.get("Subtag", ""), entry.get("Description") or []
                if entry.get("Type") != "language" or not names:
                    continue
                try:
                    code = Language.get(subtag).to_alpha3() if len(subtag) == 2 else subtag
                except (LookupError, ValueError):
                    continue
                _NAMES.setdefault(code, names[0])
        except (ImportError, OSError):
            pass
        _NAMES["unk"] = "unknown"        # the profile's unknown (the registry's unk is Enawené-Nawé)
    return _NAMES


METRICS = [("urim", "URI-Ms (captures)", _urim, "count"), ("urir", "URI-Rs (unique URLs)", _urir, "count"),
           ("bytes", "bytes", _bytes, "bytes")]


def ranking_charts(h, table_name, top):
    """Top TLDs or hosts by URI-Ms, URI-Rs and bytes: one chart each, every table with all three."""
    table = h[table_name]
    what = "TLDs" if table_name == "tlds" else "hosts"
    charts = []
    for metric_id, metric_name, metric, unit in METRICS:
        c = Chart("%s-by-%s" % (table_name, metric_id), "Top %s by %s" % (what, metric_name), "bars", unit)
        if table_name == "tlds":
            c.columns = ["TLD", "captures (URI-Ms)", "unique URLs (URI-Rs)", "bytes", AVG]
        else:
            c.columns = ["host", "SURT key", "captures (URI-Ms)", "unique URLs (URI-Rs)", "bytes", AVG]
        if not table:
            c.missing = _missing(_lines(h, "TLD,*" if table_name == "tlds" else "HOST)/*"), h)
            charts.append(c)
            continue
        ranked = _ranked(table, metric, top)
        names = [name if table_name == "tlds" else host_name(name) for name, _ in ranked]
        c.labels = names
        c.series = [(metric_name, [metric(v) for _, v in ranked])]
        c.rows = [[label] + ([] if table_name == "tlds" else [name]) + [_urim(v), _urir(v), _bytes(v), avg_size(v)]
                  for label, (name, v) in zip(names, ranked)]
        c.note = "%d of %d %s." % (len(ranked), h["counts"][table_name], what)
        charts.append(c)
    return charts


def dedup_chart(h):
    c = Chart("dedup-per-year", "Bytes before and after deduplication, per year", "stacked", "bytes",
              columns=["year", "bytes", "after deduplication", "saved", "share saved"])
    if not h["years"]:
        c.missing = _missing(_lines(h, "*", datetime="YYYY"), h)
        return c
    years = sorted(h["years"])
    vs = [h["years"][y] for y in years]
    c.labels = years
    c.series = [("after deduplication", [_dedup(v) for v in vs]),
                ("duplicate bytes (saved)", [_bytes(v) - _dedup(v) for v in vs])]
    c.rows = [[y, _bytes(v), _dedup(v), _bytes(v) - _dedup(v), share(_bytes(v) - _dedup(v), _bytes(v))]
              for y, v in zip(years, vs)]
    c.note = ("Within a year, each distinct payload is counted once at its largest length; content "
              "repeated across years counts once per year, so the archive-wide saving above is larger "
              "than the sum of the yearly ones.")
    return c


def summary_rows(h):
    """The whole archive at a glance, from the all-'-' root line ('* - - -')."""
    t = h["total"]
    if t is None:
        return []
    return [["captures (URI-Ms)", _urim(t)], ["unique URLs (URI-Rs)", _urir(t)], ["bytes", _bytes(t)],
            ["distinct payload digests", t["digests"]], ["bytes after deduplication", _dedup(t)],
            [AVG, avg_size(t)],
            ["first capture", _datetime(t["first"])], ["last capture", _datetime(t["last"])],
            ["captures of one URL, fewest", t["urim"]["min"]], ["captures of one URL, most", t["urim"]["max"]],
            ["TLDs", h["counts"]["tlds"]], ["hosts with a host line", h["counts"]["hosts"]]] + (
        [["languages", len(h["languages"])]] if h["has_languages"] else []) + [["profile lines", h["lines"]]]


def dedup_rows(h):
    t = h["total"]
    if t is None:
        return []
    saved = _bytes(t) - _dedup(t)
    return [["bytes", _bytes(t)], ["bytes after deduplication", _dedup(t)], ["saved by deduplication", saved],
            ["share saved", share(saved, _bytes(t))], ["captures", _urim(t)],
            ["distinct payload digests", t["digests"]]]


def _datetime(ts):
    """'20130101052211' -> '2013-01-01 05:22:11'."""
    if not isinstance(ts, str) or len(ts) != 14:
        return str(ts)
    return "%s-%s-%s %s:%s:%s" % (ts[:4], ts[4:6], ts[6:8], ts[8:10], ts[10:12], ts[12:])


def header_rows(h):
    """The header lines as (name, value) rows: one row per field of a JSON object."""
    rows = []
    for name, value in h["header"]:
        if isinstance(value, dict):
            rows += [["%s %s" % (name, k), v] for k, v in value.items()]
        else:
            rows.append([name, value])
    return rows


def hosts_note(pol):
    """Which hosts have a host line under the profile's policy (its !meta object), so which the
    hosts charts can list."""
    text = "Hosts are the profile's full-host lines ('cnn.com' is 'com,cnn)/*')"
    if not isinstance(pol, dict):
        return text + "."
    depth = pol.get("host_depth") if isinstance(pol.get("host_depth"), int) else None
    if pol.get("registered_domains"):
        return text + (": the policy writes one for every host under a registered domain (by the Public Suffix "
                       "List), whatever its number of labels%s." % (
                           ", and for other hosts (IP addresses, unknown TLDs) of at most %d labels; those "
                           "deeper are counted in their TLD but not listed here" % depth if depth else ""))
    if depth:
        return text + (": the policy writes them for hosts of at most %d labels, so deeper hosts are counted in "
                       "their domain and TLD but not listed here." % depth)
    return text + "."


def build_sections(h, top=DEFAULT_TOP):
    """The report's sections, in page order."""
    host_text = hosts_note(meta(h).get("policy"))
    total_missing = "" if h["total"] else _missing(_lines(h, "*"), h, "the whole-archive figures are not shown")
    return [
        Section("summary", "At a glance", table=(["", "value"], summary_rows(h)), missing=total_missing),
        Section("years", "Captures per year", charts=[year_chart(h)]),
        Section("mime", "MIME types", charts=[mime_chart(h, _urim, top), mime_chart(h, _bytes, top)]),
        Section("status", "HTTP status", charts=[status_chart(h)]),
    ] + ([Section("languages", "Languages", "The primary language of each capture, as an ISO 639-3 code "
                  "(from Common Crawl's languages field, the page's declared language or detection).",
                  charts=[language_chart(h, top)])] if h["has_languages"] else []) + [
        Section("by-" + name, "By " + name, "Captures by the profile's criterion %s: %s." % (
            name, criteria.BY_NAME[name].example or criteria.BY_NAME[name].describe),
            charts=criterion_charts(h, name, top)) for name in h["criteria"]] + [
        Section("tlds", "Top-level domains", charts=ranking_charts(h, "tlds", top)),
        Section("hosts", "Hosts", host_text, charts=ranking_charts(h, "hosts", top)),
        Section("dedup", "Deduplication", "Bytes are the stored record lengths; after deduplication "
                "each distinct payload digest counts once, at its largest length.",
                charts=[dedup_chart(h)], table=(["", "value"], dedup_rows(h)), missing=total_missing),
        Section("metadata", "Profile metadata", "The profile's header lines.",
                table=(["header", "value"], header_rows(h))),
    ]


def charts_of(sections):
    return [c for s in sections for c in s.charts]


def _cell(value):
    """A table cell as text: numbers with thousands separators, JSON for lists and objects."""
    if isinstance(value, bool) or value is None:
        return jsonnum.dumps(value).decode()
    if isinstance(value, int):
        return "{:,}".format(value)
    if isinstance(value, float):
        return "{:,.2f}".format(value)
    if isinstance(value, (dict, list)):
        return jsonnum.dumps(value).decode()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def render_page(holdings, sections, svgs, title=None):
    """The report as one self-contained HTML page (text)."""
    import jinja2
    env = jinja2.Environment(loader=jinja2.PackageLoader("profiler.report", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["cell"] = _cell
    env.filters["num"] = _cell
    uri = dict(holdings["header"]).get("!id")
    uri = uri.get("uri") if isinstance(uri, dict) else None
    return env.get_template("report.html").render(
        title=title or "Holdings of %s" % (uri or display_name(os.path.basename(holdings["path"]))),
        profile_name=display_name(os.path.basename(holdings["path"])), lines=holdings["lines"], generator=GENERATOR,
        sections=sections, svgs=svgs)


def _needs_report_extra():
    """The report's libraries imported: a UserError naming the extra when one is not installed, a
    RunError when one is but cannot be loaded (its shared libraries not mapped: a limit of address
    space, RLIMIT_AS, too small)."""
    with signalmask.held():                 # a Ctrl-C in numpy's or PIL's initialisation crashed
        try:
            import jinja2  # noqa: F401
            import matplotlib  # noqa: F401
        except ModuleNotFoundError as e:
            raise extras.missing("the report command", "report", "Jinja2, matplotlib: %s" % e)
        except (ImportError, SystemError, MemoryError) as e:
            raise _unloadable(e)
        try:
            from profiler.report import charts  # noqa: F401       (matplotlib's figures, PIL)
        except (ImportError, SystemError, MemoryError) as e:
            raise _unloadable(e)


def _unloadable(error):
    return RunError("the report's libraries (matplotlib) could not be loaded: %s (out of memory? see ulimit -v)"
                    % (str(error).splitlines()[0] if str(error) else type(error).__name__))


def write_report(profile, out_path, png_dir=None, top=DEFAULT_TOP, title=None, skipped=None):
    """Read a profile and write the HTML report (atomically) and, with png_dir, one PNG per chart.
    ``skipped`` (a profiler.files.datalines.Skipped): damaged lines are left out and counted.

    Returns a summary dict: charts drawn, charts missing, PNG paths.
    """
    _needs_report_extra()
    from profiler.report import charts as charts_mod
    out_dir = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(out_dir):
        raise UserError("output folder does not exist: %s" % out_dir)
    if not outfiles.is_stdout(out_path):
        outfiles.target(out_path, [profile])
    if png_dir is not None and os.path.lexists(png_dir) and not os.path.isdir(png_dir):
        raise UserError("--png: not a folder: %s" % png_dir)
    holdings = read_holdings(profile, skipped, top)
    try:
        sections = build_sections(holdings, top)
    except OverflowError:                       # shares and charts are floating-point numbers
        raise UserError("%s holds counts past 10^308: the report's shares and charts cannot show them (query "
                        "and export give them exactly)" % display_name(profile))
    svgs, pngs = {}, []
    drawn = [c for c in charts_of(sections) if not c.missing]
    if png_dir is not None and os.path.isdir(png_dir):
        for chart in drawn:                     # every output checked before any is written
            outfiles.target(os.path.join(png_dir, chart.id + ".png"), [profile])
    if png_dir is not None:
        os.makedirs(png_dir, exist_ok=True)
    for chart in drawn:
        with signalmask.held():                 # a Ctrl-C inside Agg's drawing came out as another error
            svgs[chart.id], png = charts_mod.render(chart, with_png=png_dir is not None)
        if png is not None:
            path = os.path.join(png_dir, chart.id + ".png")
            write_bytes_atomic(path, png)
            pngs.append(path)
    page = render_page(holdings, sections, svgs, title)
    write_atomic(out_path, [page.encode("utf-8")])
    return {"output": out_path, "charts": [c.id for c in drawn],
            "missing": [c.id for c in charts_of(sections) if c.missing], "pngs": pngs}
