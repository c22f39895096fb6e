"""Lookup in a sorted profile or MementoMap (spec section 6): the most specific key wins.

A URI (or SURT) is canonicalised as the profile does it (a SURT is kept, anything else goes
through ``surt.surt``). Its candidate SURT keys, most specific first, are: the exact urlkey, the
path-directory wildcards deepest first (``com,cnn)/world/asia/*``, ``com,cnn)/world/*``), the
full host (``com,cnn)/*``), the host-label wildcards deepest first (``com,cnn,*``, ``com,*``),
then ``*``. Under one SURT key the datetime decides: in a CDXJ profile the lines
``SURT MONTH - -``, ``SURT YEAR - -``, ``SURT - - -`` in that order (mime and status ``-``);
in a UKVS map with a datetime key field the matching line (``:``, a prefix or a range holding
the datetime) of narrowest span; without a datetime only the all-time line (``-`` or ``:``).
The first candidate present in the file is the answer; a zero URI-M count there is an explicit
"not held" and stops the search. No candidate present: no match.

The file is never loaded whole: single lookups bisect over byte offsets with seek (realigning
to line starts, caching the top bisection levels), batches sort their probes and walk the file
forward block by block.
"""

import collections
import functools
import os
import re

from profiler import jsonnum
from profiler.errors import UserError
from profiler.files import coverage
from profiler.files.sortedfile import SortedLines, profile_key
from profiler.formats import cdx
from profiler.model.keys import directories, exact_key, host_part
from profiler.files.ukvs import (Frequency, datetime_span, format_frequency, key_count, parse_frequency,
                           read_headers)

HELD, NOT_HELD, NO_MATCH, INVALID = "held", "not-held", "no-match", "invalid"

#: one answer: the canonical query, status, the matched key (bytes) and Frequency or None, and
#: for a datetime query how the date was answered: 'period' (a line for that month or year, or
#: a map's datetime range), 'range' (only the key's first/last: held somewhere in that range,
#: the date itself cannot be told), 'outside' (first/last rule the date out) or None
#: ``rollup``: the matched line stands for URIs rolled up into it (profiler.files.coverage)
Answer = collections.namedtuple("Answer", "urlkey status key frequency date rollup", defaults=(None, False))


def _rolled_up(line):
    return b'"rollup":true' in line


# ---------------------------------------------------------------- queries

_SIMPLE_URL = re.compile(rb"(https?)://([A-Za-z0-9.-]+)(?::([1-9][0-9]{0,4}))?(/[A-Za-z0-9_.~/-]*)?\Z")
_WWW = re.compile(rb"www[0-9]*\.")
_DEFAULT_PORT = {b"http": 80, b"https": 443}


def _simple_surt(raw):
    """surt.surt() of a plain http(s) URL without query, escapes, dot segments or empty segments,
    computed directly (surt's canonicalisers leave such a URL's characters alone); None for
    anything else. tests/toolkit/test_lookup.py checks it equals surt.surt()."""
    m = _SIMPLE_URL.match(raw)
    if m is None:
        return None
    scheme, host, port, path = m.groups()
    host = host.lower()
    if b".." in host or host[:1] == b"." or host[-1:] == b"." or not host.strip(b"0123456789."):
        return None
    segments = (path or b"/").split(b"/")[1:]
    for seg in segments[:-1]:
        if seg in (b"", b".", b".."):
            return None
    if segments[-1] in (b".", b".."):
        return None
    w = _WWW.match(host)
    if w:
        host = host[w.end():]
        if not host:
            return None
    key = b",".join(reversed(host.split(b".")))
    if port is not None and int(port) != _DEFAULT_PORT[scheme.lower()]:
        if int(port) > 65535:
            return None
        key += b":" + port
    path = (path or b"/").lower()
    if len(path) > 1 and path.endswith(b"/"):
        path = path[:-1]
    return (key + b")" + path).decode("ascii")


_SCHEME = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]*://[^/\s?#]")
_SURT = re.compile(rb"(\*|[a-z0-9_-]+(,[a-z0-9_*-]+)*,?(:[0-9]+)?\)[^\s]*|[a-z0-9_-]+(,[a-z0-9_-]+)*,\*)\Z")
_BARE_HOST = re.compile(rb"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+(:[0-9]+)?(/[^\s]*)?\Z")
#: URIs of other schemes that archives index as they are (dns:host from crawlers, urn:, mailto:)
_OPAQUE = re.compile(rb"(dns|urn|mailto|filedesc|warcinfo|whois|ftp):[^\s/][^\s]*\Z", re.I)


def is_query(raw):
    """A URI (scheme://host...), a SURT (com,example)/a, com,*, *) or a bare host[/path]; not
    free text (what lookup answers 'invalid')."""
    if not raw or any(c in raw for c in b" \t\r\n"):
        return False
    return bool(_SCHEME.match(raw) or _SURT.match(raw) or _BARE_HOST.match(raw) or _OPAQUE.match(raw))


def canonical(uri):
    """URI or SURT (str or bytes) -> the urlkey a profile would hold it under, or None."""
    raw = uri.encode("utf-8", "surrogateescape") if isinstance(uri, str) else uri
    raw = raw.strip()
    if not is_query(raw):
        return None
    if raw[:4] in (b"http", b"HTTP"):
        fast = _simple_surt(raw)
        if fast is not None:
            return fast
    return cdx.urlkey(raw, raw)


@functools.lru_cache(maxsize=4096)
def surt_candidates(urlkey):
    """SURT keys that can hold a urlkey, most specific first (exact, path dirs, host, labels, '*'):
    a tuple (a router asks many files about one URI)."""
    out = [exact_key(urlkey)]
    host = host_part(urlkey)
    if host is not None:
        segments = directories(urlkey, host)
        for k in range(len(segments), 0, -1):
            out.append(host + ")/" + "/".join(segments[:k]) + "/*")
        out.append(host + ")/*")
        labels = host.split(",")
        for k in range(len(labels) - 1, 0, -1):
            out.append(",".join(labels[:k]) + ",*")
    out.append("*")
    return tuple(dict.fromkeys(out))


def datetime_query(text):
    """'2013', '201305', '20130512083000' -> the digits (4 to 14); a UserError otherwise."""
    if text is None:
        return None
    text = text.strip()
    if not (text.isdigit() and 4 <= len(text) <= 14):
        raise UserError("not a datetime (4 to 14 digits, e.g. 2013 or 20130512): %r" % text)
    return text


# ---------------------------------------------------------------- profile or map

def map_key(nkeys):
    """A UKVS line's key: its first nkeys fields."""
    def key(line):
        return b" ".join(line.split(None, nkeys)[:nkeys])
    return key


class Lookup:
    """Most-specific-key lookups in one CDXJ profile or UKVS map (open until close())."""

    def __init__(self, path, mapped=False):
        """path: a profile or map, one of the pages `split` wrote (its pages are found by their
        links) or the folder of the pages."""
        from profiler.files.pages import PagedLines, find_pages
        if not os.path.isfile(path) and not os.path.isdir(path):
            raise UserError("no such file: %s" % path)
        pages = find_pages(path)
        if pages:
            path, headers, start, _ = pages[0]
        else:
            headers, start = read_headers(path)
        self.path = path
        self.headers = headers
        self.kind, self.nkeys = file_kind(path, headers, start)
        self.coverage = coverage.of_headers(headers, self.kind)
        key = profile_key if self.kind == "cdxj" else map_key(self.nkeys)
        self.lines = PagedLines(pages, key, mapped) if pages else SortedLines(path, start, key=key, mapped=mapped)
        self._freqs = {}

    def close(self):
        self.lines.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # probes: (prefix bytes, datetime digits or None); the file answers each with its lines
    def surt_probes(self, s, dt=None):
        """The (prefix, dt) probes of one SURT key (bytes), most specific first."""
        if self.kind == "cdxj":
            out = []
            if dt and len(dt) >= 6:
                out.append((s + b" " + dt[:6].encode() + b" - - ", None))
            if dt:
                out.append((s + b" " + dt[:4].encode() + b" - - ", None))
            out.append((s + b" - - - ", None))
            return out
        if self.nkeys == 2:
            return [(s + b" ", dt or "")]
        return [(s + b" ", None)]

    def probes(self, urlkey, dt=None):
        """The (prefix, dt) probes of one query, most specific first."""
        out = []
        for s in surt_candidates(urlkey):
            out += self.surt_probes(s.encode("utf-8", "surrogateescape"), dt)
        return out

    def _pick(self, prefix, dt, lines):
        """The answering line among a probe's lines, or None."""
        if not lines:
            return None
        if dt is None:
            return lines[0]
        best = None
        for line in lines:
            field = line[len(prefix):].split(None, 1)[0]
            span = datetime_span(field)
            if span is None:
                continue
            if dt == "":
                if span[0] != "00000000000000" or span[1] != "99999999999999":
                    continue
                return line
            q_low, q_high = dt.ljust(14, "0"), dt.ljust(14, "9")
            if span[0] <= q_low and q_high <= span[1]:
                width = int(span[1]) - int(span[0])
                if best is None or width < best[0]:
                    best = (width, line)
        return best[1] if best else None

    def answer(self, urlkey, probes, found, partial=False):
        """Answer from the probes of one query and a mapping prefix -> lines (with partial: None
        when none of these probes answers)."""
        for prefix, dt in probes:
            line = self._pick(prefix, dt, found.get(prefix))
            if line is not None:
                key, freq = self.parse(line)
                status = HELD if is_held(freq) else NOT_HELD
                return self._dated(Answer(urlkey, status, key, freq, None, _rolled_up(line)), line, prefix, dt)
        return None if partial else Answer(urlkey, NO_MATCH, None, None)

    def _dated(self, answer, line, prefix, dt):
        """A profile's answer to a datetime query: from a month or year line as it stands; from
        the all-time line, not-held when its first/last rule the date out, else held with
        date 'range' (the file cannot tell the date itself)."""
        query_dt = getattr(self, "_query_dt", None)
        if not query_dt:
            return answer
        if self.kind != "cdxj":
            if self.nkeys == 2:
                return answer._replace(date="period")
            return self._by_breakdown(answer, line, query_dt)
        if not prefix.endswith(b" - - - "):
            return answer._replace(date="period")
        value = jsonnum.loads(line[line.find(b" {") + 1:])
        first, last = value.get("first"), value.get("last")
        low, high = query_dt.ljust(14, "0"), query_dt.ljust(14, "9")
        if isinstance(first, str) and isinstance(last, str) and (high < first or low > last):
            return answer._replace(status=NOT_HELD, date="outside")
        if answer.status == HELD and self._has_period_lines(prefix, query_dt):
            return answer._replace(status=NOT_HELD, date="period")
        return answer._replace(date="range" if answer.status == HELD else None)

    def _by_breakdown(self, answer, line, dt):
        """A surt-keyed map's answer to a datetime query: from the line's datetime breakdown
        block ({"datetime": {"2014": "20~/10", ...}}, the MementoMap way): the narrowest entry
        holding the date answers (date 'period'); none, when the entries add up to the line's
        exact count, means none then (not-held, 'period'); otherwise, or without a breakdown,
        the file cannot tell (date 'unknown')."""
        breakdown = _breakdown(line)
        if not breakdown or answer.frequency is None:
            return answer._replace(date="unknown")
        low, high = dt.ljust(14, "0"), dt.ljust(14, "9")
        best, total, exact = None, 0, True
        for field, freq in breakdown:
            exact = exact and freq.urim is not None and not freq.urim_mark
            total += freq.urim or 0
            span = datetime_span(field)
            if span is not None and span[0] <= low and high <= span[1]:
                width = int(span[1]) - int(span[0])
                if best is None or width < best[0]:
                    best = (width, freq)
        if best is not None:
            freq = best[1]
            return answer._replace(status=HELD if is_held(freq) else NOT_HELD, frequency=freq, date="period")
        line_freq = answer.frequency
        if exact and line_freq.urim is not None and not line_freq.urim_mark and total == line_freq.urim:
            return answer._replace(status=NOT_HELD, date="period")
        return answer._replace(date="unknown")

    def _has_period_lines(self, prefix, dt):
        """True when the file lists this SURT by year (so a year without a line has no capture)."""
        surt = prefix[:-len(b" - - - ")]
        for line in self.lines.group(surt + b" "):
            fields = line.split(b" ", 2)
            if len(fields) > 1 and len(fields[1]) == 4 and fields[1].isdigit():
                return len(dt) >= 4
        return False

    def parse(self, line):
        """A data line -> (key bytes, Frequency)."""
        line = line.rstrip(b"\r")
        i = line.find(b" {")
        if self.kind == "cdxj":
            value = jsonnum.loads(line[i + 1:])
            urim = value.get("urim")
            urim = urim.get("total") if isinstance(urim, dict) else urim
            # a merged profile's "bounds": its urir is then the sum over the inputs, an upper bound
            urir_mark = "-" if "urir" in (value.get("bounds") or {}) else ""
            return line[:i], Frequency(urim, "", value.get("urir"), urir_mark)
        if i < 0 and b"  " not in line and b"\t" not in line:
            key, _, freq = line.rpartition(b" ")
        else:
            fields = (line[:i] if i >= 0 else line).split()
            key, freq = b" ".join(fields[:-1]), fields[-1]
        found = self._freqs.get(freq)
        if found is None:
            found = parse_frequency(freq)
            if len(self._freqs) > 10000:
                self._freqs.clear()
            self._freqs[freq] = found
        return key, found

    def lookup(self, uri, dt=None):
        """One lookup: URI or SURT, optional datetime digits -> Answer."""
        urlkey = canonical(uri)
        if urlkey is None:
            return Answer(None, INVALID, None, None)
        return self.lookup_urlkey(urlkey, dt)

    def lookup_urlkey(self, urlkey, dt=None):
        """lookup() of a urlkey already canonical (profiler.toolkit.lookup.canonical)."""
        self._query_dt = dt
        probes = self.probes(urlkey, dt)
        found = {}
        for prefix, pdt in probes:
            lines = self.lines.group(prefix)
            found[prefix] = lines
            if self._pick(prefix, pdt, lines) is not None:
                break
        return self.answer(urlkey, probes, found)

    def batch(self, uris, dt=None, chunk=200000):
        """(uri, Answer) for an iterable of URIs, in input order; probes are sorted and resolved in
        one forward walk per chunk of ``chunk`` URIs (memory is bounded by the chunk)."""
        self._query_dt = dt
        buf = []
        for uri in uris:
            buf.append(uri)
            if len(buf) >= chunk:
                yield from zip(buf, self._batch(buf, dt))
                buf = []
        if buf:
            yield from zip(buf, self._batch(buf, dt))

    def _batch(self, uris, dt):
        """Two passes: the exact keys of all queries (one sorted walk), then the wildcard
        candidates of the queries still unanswered (another walk, shared hosts probed once)."""
        if dt is None and (self.kind == "cdxj" or self.nkeys == 1):
            return self._batch_all_time(uris)
        urlkeys = [canonical(u) for u in uris]
        answers = [None] * len(urlkeys)
        exact = []
        for n, urlkey in enumerate(urlkeys):
            if urlkey is None:
                answers[n] = Answer(None, INVALID, None, None)
            else:
                exact.append((n, self.surt_probes(exact_key(urlkey).encode("utf-8", "surrogateescape"), dt)))
        found = self._walk({p for _, probes in exact for p, _ in probes})
        rest = []
        for n, probes in exact:
            a = self.answer(urlkeys[n], probes, found, partial=True)
            if a is None:
                rest.append((n, self.probes(urlkeys[n], dt)))
            else:
                answers[n] = a
        if rest:
            found.update(self._walk({p for _, probes in rest for p, _ in probes} - set(found)))
            for n, probes in rest:
                answers[n] = self.answer(urlkeys[n], probes, found)
        return answers

    def _batch_all_time(self, uris):
        """_batch for one probe per SURT key (a surt map, or a profile without datetime): the
        same two passes with less bookkeeping per query."""
        suffix = b" - - - " if self.kind == "cdxj" else b" "
        urlkeys = [canonical(u) for u in uris]
        probes = [None if k is None else
                  (k if k[-1:] != "*" else exact_key(k)).encode("utf-8", "surrogateescape") + suffix
                  for k in urlkeys]
        found = self._walk({p for p in probes if p is not None})
        answers = [None] * len(urlkeys)
        rest = []
        for n, probe in enumerate(probes):
            if probe is None:
                answers[n] = Answer(None, INVALID, None, None)
                continue
            lines = found.get(probe)
            if lines is None:
                rest.append(n)
            else:
                answers[n] = self._answer_line(urlkeys[n], lines[0])
        if not rest:
            return answers
        lists = {}
        for n in rest:
            lists[n] = [c.encode("utf-8", "surrogateescape") + suffix for c in surt_candidates(urlkeys[n])[1:]]
        found = self._walk({p for n in rest for p in lists[n]})
        for n in rest:
            for probe in lists[n]:
                lines = found.get(probe)
                if lines is not None:
                    answers[n] = self._answer_line(urlkeys[n], lines[0])
                    break
            else:
                answers[n] = Answer(urlkeys[n], NO_MATCH, None, None)
        return answers

    def _answer_line(self, urlkey, line):
        key, freq = self.parse(line)
        return Answer(urlkey, HELD if is_held(freq) else NOT_HELD, key, freq, None, _rolled_up(line))

    def _walk(self, prefixes):
        """prefix -> lines for every prefix with lines, in one forward walk over the file."""
        found = {}
        self.lines._block = None
        group = self.lines.group
        for prefix in sorted(prefixes):
            lines = group(prefix, forward=True)
            if lines:
                found[prefix] = lines
        self.lines._block = None
        return found


def _breakdown(line):
    """[(datetime field, Frequency), ...] of a map line's datetime breakdown block, or None."""
    i = line.find(b" {")
    if i < 0 or b"datetime" not in line[i:]:
        return None
    raw = line[i + 1:]
    try:
        block = jsonnum.loads(raw)
    except jsonnum.JSONDecodeError:
        from profiler.files.ukvs import relaxed_json_loads
        try:
            block = relaxed_json_loads(raw.decode("utf-8", "replace"))
        except ValueError:
            return None
    entries = block.get("datetime") if isinstance(block, dict) else None
    if not isinstance(entries, dict):
        return None
    out = []
    for field, value in entries.items():
        text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
        if not isinstance(text, str):
            return None
        try:
            out.append((field, parse_frequency(text.encode("ascii", "replace"))))
        except ValueError:
            return None
    return out


def is_held(freq):
    """A positive answer: a URI-M count that is not zero (an unknown one counts when URI-Rs are)."""
    if freq.urim is None:
        return freq.urir is None or freq.urir > 0
    return freq.urim > 0


def file_kind(path, headers, start):
    """('cdxj', 4) for a profile, ('ukvs', number of key fields) for a map."""
    names = [n for n, _ in headers]
    n = key_count(headers)
    if n is not None:
        if n not in (1, 2):
            raise UserError("%s: lookup needs a map keyed by surt or surt,datetime, not %d key fields" % (path, n))
        return "ukvs", n
    with open(path, "rb") as f:
        f.seek(start)
        first = f.readline().rstrip(b"\r\n")
    if "!keys" in names or "@keys" in names or (b" {" in first and len(first[:first.find(b" {")].split()) == 4):
        return "cdxj", 4
    if not first:
        return "ukvs", 1
    i = first.find(b" {")
    fields = (first[:i] if i >= 0 else first).split()
    if len(fields) not in (2, 3):
        raise UserError("%s: neither a CDXJ profile nor a UKVS map (first line %r)" % (path, first[:80]))
    return "ukvs", len(fields) - 1


#: what a matched key's SURT covers, most specific first
MATCH_LEVELS = ("exact", "path", "host", "domain", "tld", "root")


def match_level(key):
    """The level of a matched key (bytes, its SURT first): exact (the URI itself), path
    (host)/dir/*), host (host)/*), domain (com,example,*), tld (com,*) or root (*)."""
    surt = key.split(b" ", 1)[0]
    if surt == b"*":
        return "root"
    if not surt.endswith(b"*"):
        return "exact"
    if b")" in surt:
        return "host" if surt.endswith(b")/*") else "path"
    return "tld" if surt.count(b",") == 1 else "domain"


def format_answer(query, a):
    """One output line: QUERY, status, matched key, frequency, the key's level and how the
    datetime was answered (tab-separated; '-' when none)."""
    freq = "-" if a.frequency is None else format_frequency(a.frequency)
    key = a.key.decode("utf-8", "replace") if a.key is not None else "-"
    level = match_level(a.key) if a.key is not None else "-"
    return "%s\t%s\t%s\t%s\t%s\t%s" % (query, a.status, key, freq, level, a.date or "-")
