"""An archive profile of oduwsdl's archive_profiler (one JSON document per archive) converted,
on the way into ``merge``, to a profile of another producer's layout: keys ``surt datetime mime``.

Its ``stats`` count captures by criteria taken apart: ``suburi`` keys are host prefixes of 1 to
host_depth SURT labels (each counting that host and all its subdomains) and string prefixes of
the path; ``time`` is the capture month, ``mediatype`` the raw CDX media type, each over the
whole archive. Only the keys whose meaning is exactly one of this format's are converted, their
values copied as they are:

- a one-label suburi key ``com)/`` is ``com,* - -`` (every SURT starting with ``com,``);
- a time key ``YYYYMM`` (a month) is ``* YYYYMM -``;
- a mediatype key already in this tool's normal form (profiler.model.normalise.mime) and the only
  one of its normal form is ``* - MIME``, unless the archive holds revisits (a ``warc/revisit``
  type), which this format counts under their original's type.

archive_profiler counts HTTP(S) captures only, so the converted lines do too (CAPTURES, in the
merged !meta): a profile of ours of the same archive also counts its dns: records under ``*``.
Every other key is skipped and counted by kind (SKIPPED), never given a made-up number. Merged
with a profile of more key fields, the document's marginals bound the keys it lacks (marginals):
its total (each section's values add up to it), whether its months and media types cover it. The
document is parsed whole, so one larger than MAX_BYTES is refused; a document that is not such a
profile, or a value that is not ``{"urim": {"total", "min", "max"}, "urir"}`` of whole numbers
>= 0, is a one-line error (a damaged value is skipped and counted when the caller tolerates bad
lines). The converted file is temporary, made in the given folder and removed on exit.
"""

import os
import re
import tempfile

from profiler import jsonnum
from profiler.files import outfiles
from profiler.files.datalines import DamagedFile, _is_count
from profiler.files.infiles import open_regular
from profiler.files.output import CONTEXT
from profiler.io.names import display_name
from profiler.model import criteria, normalise

#: the largest document read (it is parsed whole)
MAX_BYTES = 256 << 20
PREFIX = ".archive-profiler-convert-"
#: the key fields of a converted profile
KEYS = ["surt", "datetime", "mime"]
FORMAT = "oduwsdl archive_profiler JSON"
#: what the converted lines count: archive_profiler leaves out captures of other schemes
#: (cdx_profiler.py), which a profile of ours counts under '*'
CAPTURES = "HTTP(S) captures only: archive_profiler leaves out other schemes (dns:, ftp:)"

#: the kinds of keys skipped, and why
SKIPPED = {
    "host_with_subdomains": "suburi keys of 2 or more host labels (a host with its subdomains: no key of "
                            "this format counts them alone)",
    "path_prefix": "suburi keys of a path prefix (a string prefix, not at folder boundaries)",
    "suburi_malformed": "suburi keys not of the form HOST)/PATH",
    "bad_month": "time keys that are not a month YYYYMM",
    "mime_not_normal": "mediatype keys not in this format's normal form (or sharing it with another)",
    "mime_revisits": "mediatype keys of an archive with revisits (counted here under their original's type)",
    "language": "language keys (not counted by this format's keys)",
    "damaged": "damaged values (--skip-bad-lines)",
}

_MONTH = re.compile(r"\A[0-9]{4}(?:0[1-9]|1[0-2])\Z")
_LABEL = re.compile(r"\A[a-z0-9][a-z0-9_-]*\Z")


class OduProfileError(DamagedFile):
    """A document that is not a readable archive profile of archive_profiler (exit status 2)."""


def read_document(path, max_bytes=None):
    """The parsed document of path: a dict with a ``stats`` object; an OduProfileError otherwise
    (also for a document of more than max_bytes, MAX_BYTES unless given)."""
    max_bytes = MAX_BYTES if max_bytes is None else max_bytes
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        data = f.read(max_bytes + 1) if size <= max_bytes else b""
    if size > max_bytes or len(data) > max_bytes:
        bound = "%d MiB" % (max_bytes >> 20) if max_bytes >= 1 << 20 else "%d bytes" % max_bytes
        raise OduProfileError("%s: a JSON archive profile larger than %s is not read (it is parsed whole)"
                              % (path, bound))
    try:
        doc = jsonnum.loads(data)
    except (ValueError, RecursionError) as e:
        raise OduProfileError("%s: not a whole JSON document (%s)" % (path, str(e).splitlines()[0][:80]))
    if type(doc) is not dict or type(doc.get("stats")) is not dict:
        raise OduProfileError("%s: a JSON document without a stats object: not an archive profile of "
                              "archive_profiler" % path)
    for name in ("suburi", "time", "mediatype", "language"):
        if type(doc["stats"].get(name, {})) is not dict:
            raise OduProfileError("%s: stats.%s is not an object {key: counts}" % (path, name))
    return doc


def value_problem(value):
    """Why a value is not {"urim": {"total", "min", "max"}, "urir"} of whole numbers >= 0 that
    agree (min <= max <= total, urir <= total), or None."""
    if type(value) is not dict or type(value.get("urim")) is not dict:
        return "not {\"urim\": {\"total\", \"min\", \"max\"}, \"urir\"}"
    urim = value["urim"]
    for name in ("total", "min", "max"):
        if not _is_count(urim.get(name)):
            return "urim.%s is %s, not a whole number >= 0" % (name, _show(urim.get(name)))
    if not _is_count(value.get("urir")):
        return "urir is %s, not a whole number >= 0" % _show(value.get("urir"))
    if not urim["min"] <= urim["max"] <= urim["total"] or value["urir"] > urim["total"]:
        return "counts that disagree (urim.min <= urim.max <= urim.total and urir <= urim.total)"
    return None


def _show(x):
    return jsonnum.dumps(x)[:40].decode("utf-8", "replace") if isinstance(x, (int, str, list, dict)) else repr(x)


def _suburi(key):
    """(kind skipped or None, the key's SURT field when converted)."""
    host, sep, path = key.partition(")/")
    if not sep or not host or ")" in host:
        return "suburi_malformed", None
    if path:
        return "path_prefix", None
    if "," in host:
        return "host_with_subdomains", None
    if not _LABEL.match(host):
        return "suburi_malformed", None     # an IP address or a port: not a TLD
    return None, host + ",*"


def _utf8(text):
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:          # a lone surrogate
        return text.encode("utf-8", "surrogatepass")


def _mimes(keys):
    """{key: kind skipped or None} of the mediatype keys."""
    normal = {k: normalise.mime(_utf8(k)) for k in keys}
    if normalise.REVISIT_MIME in normal.values():
        return {k: "mime_revisits" for k in keys}
    pattern = criteria.FIELD_PATTERNS["mime"]
    shared = {}
    for n in normal.values():
        shared[n] = shared.get(n, 0) + 1
    return {k: None if normal[k] == k and shared[k] == 1 and pattern.fullmatch(_utf8(k)) else "mime_not_normal"
            for k in keys}


def convert(doc, path, skip_bad=False):
    """(sorted data lines, {kind: keys skipped}) of a parsed document. A damaged value is an
    OduProfileError, or with ``skip_bad`` skipped and counted ("damaged")."""
    stats = doc["stats"]
    skipped, lines = {}, []

    def skip(kind):
        skipped[kind] = skipped.get(kind, 0) + 1

    def take(section, key, fields):
        value = stats[section][key]
        problem = value_problem(value)
        if problem:
            if not skip_bad:
                raise OduProfileError("%s: stats.%s[%s]: %s" % (path, section, _show(key), problem))
            skip("damaged")
            return
        urim = value["urim"]
        out = {"urim": {"total": urim["total"], "min": urim["min"], "max": urim["max"]}, "urir": value["urir"]}
        lines.append(_utf8(" ".join(fields)) + b" " + jsonnum.dumps(out))

    for key in stats.get("suburi", {}):
        kind, surt = _suburi(key)
        if kind:
            skip(kind)
        else:
            take("suburi", key, [surt, "-", "-"])
    for key in stats.get("time", {}):
        if _MONTH.match(key):
            take("time", key, ["*", key, "-"])
        else:
            skip("bad_month")
    for key, kind in _mimes(list(stats.get("mediatype", {}))).items():
        if kind:
            skip(kind)
        else:
            take("mediatype", key, ["*", "-", key])
    for _ in stats.get("language", {}):
        skip("language")
    lines.sort(key=lambda line: line[:line.find(b" {")])
    return lines, dict(sorted(skipped.items()))


def marginals(doc, skipped):
    """What the document says of keys it does not hold: ``total``, its archive's captures (the
    largest sum of a section's values: each of time, mediatype and the one-label suburi keys
    counts every capture once), None when a value was damaged; ``months``, ``mimes`` and ``tlds``:
    whether the converted months (media types, TLDs) add up to that total, so that a month (media
    type, TLD) the document lacks has no capture there."""
    stats = doc["stats"]
    sums = {}
    for section in ("time", "mediatype", "suburi"):
        total = 0
        for key, value in stats.get(section, {}).items():
            if section == "suburi" and _suburi(key)[0] is not None:
                continue
            if value_problem(value):
                return {"total": None, "months": False, "mimes": False, "tlds": False}
            total += value["urim"]["total"]
        sums[section] = total
    total = max(sums.values())
    months = not any(k in skipped for k in ("bad_month", "damaged")) and sums["time"] == total
    mimes = not any(k in skipped for k in ("mime_not_normal", "mime_revisits", "damaged")) \
        and sums["mediatype"] == total
    tlds = "damaged" not in skipped and sums["suburi"] == total
    return {"total": total, "months": months, "mimes": mimes, "tlds": tlds}


class ConvertedCopy:
    """A converted copy of an archive_profiler document (``path``: the copy; ``keys``: its data
    lines; ``skipped``: {kind: count}; ``marginals``: see marginals()), made in ``folder`` and
    removed on exit."""

    def __init__(self, source, folder=None, skip_bad=False):
        self.source = source
        self.folder = folder or tempfile.gettempdir()
        self.skip_bad = skip_bad
        self.path = None
        self.keys = 0
        self.skipped = {}
        self.marginals = None

    def meta(self):
        """What a merged !meta records of the conversion."""
        return {"format": FORMAT, "captures": CAPTURES, "keys": self.keys, "skipped": self.skipped}

    def __enter__(self):
        doc = read_document(self.source)
        lines, self.skipped = convert(doc, self.source, self.skip_bad)
        self.keys = len(lines)
        self.marginals = marginals(doc, self.skipped)
        uri = doc.get("@id") if isinstance(doc.get("@id"), str) else None
        headers = [b"!context " + jsonnum.dumps(CONTEXT), b"!id " + jsonnum.dumps({"uri": uri}),
                   b"!keys " + jsonnum.dumps(KEYS),
                   b"!meta " + jsonnum.dumps({"converted": dict(self.meta(), source=display_name(os.path.abspath(self.source)))})]
        outfiles.remove_stale_owned(self.folder, PREFIX, ".cdxj")      # a killed merge's conversions
        try:
            fd = outfiles.owned_temp(self.folder, PREFIX, ".cdxj", record=lambda path: setattr(self, "path", path))[1]
            with os.fdopen(fd, "wb") as out:
                out.writelines(x + b"\n" for x in sorted(headers) + lines)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        if self.path:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            self.path = None


def describe_skipped(path, skipped):
    """One line per kind of key skipped, for stderr."""
    return ["%s: %d %s skipped" % (path, n, SKIPPED.get(kind, kind)) for kind, n in skipped.items()]

