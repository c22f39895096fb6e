"""Lookup in a sorted profile or MementoMap (spec section 6): the most specific key wins.

A URI (or SURT) is canonicalised as the profile does it (a SURT is kept, anything else goes
through ``surt.surt``). Its candidate SURT keys, most specific first, are: the exact urlkey, the
path-directory wildcards deepest first (``com,cnn)/world/asia/*``, ``com,cnn)/world/*``), the
full host (``com,cnn)/*``), the host-label wildcards deepest first (``com,cnn,*``, ``com,*``),
then ``*``. Under one SURT key the datetime decides: in a CDXJ profile the lines
``SURT DAY - -``, ``SURT MONTH - -``, ``SURT YEAR - -``, ``SURT - - -`` in that order (every
other criterion of its ``!keys`` ``-``); in a UKVS map with a datetime key field the matching
line (``:``, a prefix or a range holding the datetime) of narrowest span; without a datetime
only the all-time line (``-`` or ``:``). The first candidate present in the file is the answer;
a zero URI-M count there is an explicit "not held" and stops the search. No candidate present:
no match.

Asked for a value of an optional criterion (a language, ``lang``; profiler.model.criteria), the
most specific key that tells that criterion's values answers for it: a profile's lines of the key
by that criterion (``SURT YEAR - - ara``), a map line's breakdown by it (``{"lang": {...}}``); a
key listing others of the value's level but not that one holds none in it (a key listing only
another level's, ``q/*`` where ``q/a`` is asked, does not tell). When no key tells its values, the lookup
without it answers, for any value ('-').

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
from profiler.files import coverage, layout as layouts
from profiler.files.datalines import Bad, DamagedFile, DataFile, Skipped, WithoutDamaged
from profiler.files.infiles import open_regular
from profiler.files.sortedfile import SortedLines, UnsortedFile, profile_key
from profiler.formats import cdx
from profiler.model import criteria, normalise
from profiler.model.criteria import ANY_FIELD, DATETIME, LANG, PREFIX
from profiler.model.policy import recorded as policy_recorded, with_field as policy_with_field
from profiler.model.keys import directories, exact_key, host_part, wildcard_level
from profiler.files.ukvs import ALL_TIME, Frequency, breakdowns, datetime_span, format_frequency, parse_frequency

HELD, NOT_HELD, NO_MATCH, INVALID = "held", "not-held", "no-match", "invalid"
#: with --skip-bad-lines: a line the answer needs (of its key or a more specific one) may be a skipped one
UNKNOWN = "unknown"

_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")
_DATETIME = re.compile(r"[0-9]+")
#: a W3C date (ISO 8601, UTC) a person may give for one: 2013-05, 2013-05-12T08:30:00Z
_W3C_DATE = re.compile(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]+)?)?Z?)?)?")

#: one answer: the canonical query, status, the matched key (bytes) and Frequency or None, and
#: for a datetime query how the date was answered: 'period' (a line for that month or year, or
#: a map's datetime range), 'range' (only the key's first/last: held somewhere in that range,
#: the date itself cannot be told), 'outside' (first/last rule the date out) or None
#: ``rollup``: the matched line stands for URIs rolled up into it (profiler.files.coverage)
#: ``value``: asked for a value of an optional criterion (a language), the one answered for ('-':
#: no key on the way tells that criterion's values)
#: ``breakdowns``: a map line's status and mime breakdowns ({"status": {"2xx": Frequency, ...}}), or None
Answer = collections.namedtuple("Answer", "urlkey status key frequency date rollup value breakdowns",
                                defaults=(None, False, None, None))
#: the breakdowns of a matched map line an answer carries (what a router needs: profiler.serve)
SHOWN_BREAKDOWNS = ("status", "mime")


def _shown(line):
    """A map line's SHOWN_BREAKDOWNS as {name: {field: Frequency}}, or None."""
    found = {}
    for name in SHOWN_BREAKDOWNS:
        entries = _breakdown(line, name) if (b'"%s"' % name.encode()) in line else None
        if entries:
            found[name] = dict(entries)
    return found or None


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
#: URIs of other schemes that archives index as they are (dns:host from crawlers, urn:, mailto:,
#: a browser's about:blank), and file: URIs (Scoop records its screenshots as file:///NAME)
_OPAQUE = re.compile(rb"((dns|urn|mailto|filedesc|warcinfo|whois|ftp|about|data|blob):[^\s/]|file:/+[^\s/])[^\s]*\Z",
                     re.I)


#: a URI whose path or query holds a literal space, as WARC-Target-URIs and CDX lines may (keyed %20)
_URI_WITH_SPACES = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]*://[^/\s?#]+[/?#][^\t\r\n]*\Z")


def is_query(raw):
    """A URI (scheme://host..., its path or query may hold spaces), a SURT (com,example)/a,
    com,*, *) or a bare host[/path]; not free text (what lookup answers 'invalid')."""
    if raw and b" " in raw and _URI_WITH_SPACES.match(raw):
        return True
    if not raw or any(c in raw for c in b" \t\r\n"):
        return False
    return bool(_SCHEME.match(raw) or _SURT.match(raw) or _BARE_HOST.match(raw) or _OPAQUE.match(raw))


#: the longest query line of a batch read (profiler.toolkit.lookup.query_lines): a longer one is
#: invalid, read through without being held
MAX_QUERY = 1 << 16
#: bytes of the query lines a batch holds at once, besides its count of queries
CHUNK_BYTES = 1 << 26


def canonical(uri):
    """URI or SURT (str or bytes) -> the urlkey a profile would hold it under, or None."""
    raw = uri.encode("utf-8", "surrogateescape") if isinstance(uri, str) else uri
    raw = raw.strip()
    if len(raw) > MAX_QUERY or not is_query(raw):
        return None
    if raw[:4] in (b"http", b"HTTP"):
        fast = _simple_surt(raw)
        if fast is not None:
            return fast
    return cdx.urlkey(raw, raw)


def query_lines(f, too_long, limit=MAX_QUERY):
    """The stripped, non-empty lines of the binary file f, each held at most limit + 1 bytes: a
    longer line is read through in pieces, its first limit + 1 bytes standing for it (a query
    canonical() calls invalid), and counted in the list too_long."""
    while True:
        line = f.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            too_long.append(1)
            while True:
                rest = f.readline(limit)
                if not rest or rest.endswith(b"\n"):
                    break
        line = line.strip()
        if line:
            yield line


@functools.lru_cache(maxsize=64)
def surt_candidates(urlkey):
    """SURT keys that can hold a urlkey, most specific first (exact, path dirs, host, labels, '*'):
    a tuple (a router asks many files about one URI; a few kept: a long URI's candidates are
    many long prefixes of it)."""
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
    """'2013', '201305', '20130512083000', or the W3C form of one ('2013-05-12T08:30:00Z') -> the
    digits (4 to 14, ASCII: str.isdigit() also takes other scripts' digits), a date of the
    calendar ('201313' names none); a UserError otherwise."""
    if text is None:
        return None
    text = text.strip()
    w3c = _W3C_DATE.fullmatch(text)
    digits = "".join(part for part in w3c.groups() if part) if w3c else text
    if not (_DATETIME.fullmatch(digits) and 4 <= len(digits) <= 14):
        raise UserError("not a datetime (4 to 14 digits, e.g. 2013 or 20130512): %r" % text)
    if normalise.timestamp(digits.encode("ascii")) is None:
        raise UserError("not a date of the calendar (a month, day, hour, minute or second out of range): %r" % text)
    return digits


def value_query(criterion, text):
    """A value of an optional criterion asked for -> its key field as the profile writes it
    (Criterion.query: a language 'ar', 'ar-EG', 'ara' -> 'ara'); None for None or '-' (any: not
    asked); a UserError for what names no value of it."""
    if text is None or text.strip() == ANY_FIELD:
        return None
    try:
        return criterion.query(text)
    except ValueError as e:
        raise UserError(str(e))


def language_query(text):
    """value_query of the language criterion: 'ar', 'ar-EG', 'ara', 'unk' -> ISO 639-3."""
    return value_query(LANG, text)


# ---------------------------------------------------------------- profile or map

def map_key(nkeys):
    """A UKVS line's key: its first nkeys fields."""
    def key(line):
        return b" ".join(line.split(None, nkeys)[:nkeys])
    return key


#: one probe of the file: the prefix of the lines it reads; for a map with a datetime key field
#: the datetime digits to pick a line by ('' all time), for a profile asked a value the datetime
#: field its line has (bytes: the prefix ends at the value's field, which !keys may put first);
#: the field of the value asked (bytes) or None
Probe = collections.namedtuple("Probe", "prefix dt value")
#: the line that answers a probe; ``frequency``: a breakdown entry's, instead of the line's;
#: ``none``: the line's key lists values without the one asked (no capture in it)
Pick = collections.namedtuple("Pick", "line frequency none", defaults=(None, False))
#: the frequency of a value a key lists others but not
NONE = Frequency(0, "", 0, "")


class Lookup:
    """Most-specific-key lookups in one CDXJ profile or UKVS map (open until close())."""

    def __init__(self, path, mapped=False, verify=False, tolerant=False, opener=None):
        """path: a profile or map, one of the pages `split` wrote (its pages are found by their
        links) or the folder of the pages. ``verify``: read every file whole first, checked
        (profiler.files.datalines: cut, malformed or unsorted, it is refused; remembered per
        version of the file), so that no answer rests on a damaged line the search does not
        read; ``tolerant`` (with verify): damaged lines are skipped instead, counted in
        ``skipped``. Without verify every line an answer reads is checked. ``opener``: path ->
        the reader its lines are read with (profiler.files.sortedfile.SortedLines), instead of
        opening the file."""
        from profiler.files.pages import PagedLines, find_pages
        pages = find_pages(path)                # (a file: a regular one holding a profile or map)
        files = [DataFile(p[0]) for p in pages] if pages else [DataFile(path)]
        found = files[0]
        self.path = found.path
        self.headers = found.headers
        self.kind, self.nkeys = found.kind, found.nkeys
        if self.kind == "ukvs" and (self.nkeys not in (1, 2) or found.names not in (None, MAP_FIELDS[self.nkeys])):
            raise UserError("%s: lookup needs a map keyed by surt or surt,datetime, not %s" % (
                self.path, " ".join(found.names) if found.names else "%d key fields" % self.nkeys))
        for other in files[1:]:
            if (other.kind, other.nkeys, other.names) != (found.kind, found.nkeys, found.names):
                raise UserError("%s and %s are pages of files of other key fields" % (self.path, other.path))
        self.checker = found.checker
        #: a profile's key layout (its !keys); a map's optional criteria its lines break down by
        self.layout = found.layout
        self.breakdowns = breakdowns(self.headers) if self.kind == "ukvs" else []
        if self.layout is not None:
            # another producer's profile may have no datetime field: its all-time lines answer
            self._dt_at = layouts.index(self.layout, DATETIME.name) if layouts.has(self.layout, DATETIME.name) \
                else None
        self._asking(LANG.name)         # the optional criterion a lookup asks a value of
        self.coverage = coverage.of_headers(self.headers, self.kind)
        self.skipped = []
        ends = [None] * len(files)
        if verify:
            self.skipped = [Skipped(f.path) if tolerant else None for f in files]
            for f, skipped in zip(files, self.skipped):
                f.check(skipped, searched=True)
            ends = [f.end for f in files]
            if pages:
                _check_pages(files, [p[3] for p in pages])
                for skipped, after in zip(self.skipped, files[1:]):
                    if skipped is not None and after.first_key is not None:
                        skipped.gaps = [(low, after.first_key + b" " if high is None else high, cut)
                                        for low, high, cut in skipped.gaps]
        else:
            for f in files:
                _require_whole(f)
        key = profile_key if self.kind == "cdxj" else map_key(self.nkeys)
        self.lines = PagedLines(pages, key, mapped, ends, opener, [f.identity for f in files]) if pages else \
            SortedLines(self.path, found.data_offset, key=key, mapped=mapped, end=ends[0],
                        reader=opener(self.path) if opener else None, identity=found.identity)
        if any(s is not None and s.count for s in self.skipped):
            self.lines = WithoutDamaged(self.lines, self.checker)
        self._freqs = {}
        self._unanswerable = {}

    def close(self):
        self.lines.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def has(self, by):
        """Whether the file can answer a value of the optional criterion named by: a profile with
        that key field, or a map whose lines break down by it."""
        return layouts.has(self.layout, by) if self.kind == "cdxj" else by in self.breakdowns

    @property
    def has_languages(self):
        """Whether the file can answer a language (has(LANG.name))."""
        return self.has(LANG.name)

    def check(self, by):
        """A UserError when the file cannot answer a value of the criterion named by (one line)."""
        if self.has(by):
            return
        if self.kind == "cdxj":
            raise UserError("%s has no %s key field (its keys: %s): %s to look its values up"
                            % (self.path, by, layouts.describe(self.layout), policy_with_field(by)))
        raise UserError("%s breaks no line down by %s (its !meta has no \"breakdown\":[\"%s\"]): "
                        "make it with 'ukvs' from a profile whose keys have %s" % (self.path, by, by, by))

    def check_language(self):
        """check(LANG.name): a UserError when the file cannot answer --lang."""
        self.check(LANG.name)

    def _asking(self, by):
        """Lookups from here ask values of the optional criterion named by."""
        self._by = by
        self._by_at = layouts.index(self.layout, by) if self.kind == "cdxj" and layouts.has(self.layout, by) else None
        self._by_criterion = criteria.BY_NAME.get(by)

    def unanswerable(self, dt=None):
        """Why this profile cannot answer lookups (of the date dt's digits), or None: its policy
        (!meta) gives no SURT level a line of all time, or of a period those digits fill, with
        every other criterion any (a policy by month alone): no line found would read as
        no-match while the profile holds the URI."""
        if self.kind != "cdxj" or self._dt_at is None:
            return None
        if dt not in self._unanswerable:
            policy = policy_recorded(self.headers, self.path)
            filled = tuple(lv.name for lv in DATETIME.coarse_to_fine if lv.kind == PREFIX and lv.n <= len(dt or ""))
            reason = None
            if policy is not None and DATETIME.name in policy.names \
                    and not policy.writes_plain_lines((criteria.ANY,) + filled):
                reason = ("%s cannot answer a lookup%s: its policy (%s) writes no line %s for any URI (its "
                          "lines are by %s): ask with a date at one of those levels"
                          % (self.path, " of %s" % dt if dt else "", policy.name,
                             "of all time or of " + " or ".join(filled) if filled else "of all time",
                             " or ".join(policy.datetime_levels()) or "nothing"))
            self._unanswerable[dt] = reason
        return self._unanswerable[dt]

    def _require_answerable(self, dt):
        reason = self.unanswerable(dt)
        if reason:
            raise UserError(reason)

    def _tells(self, fields, value):
        """Whether a key's fields of the criterion asked (bytes or str, not '-'), when the value
        asked has no line among them, say it has no capture of that value: a level the value is at
        is certainly among them (a field that can be at no other level is of it). Of a criterion
        of several levels, fields of other levels ('q/*' where 'q/a' is asked), or fields that
        fit several ('none'), do not tell the value's count."""
        if not fields:
            return False
        c = self._by_criterion
        if c is None or len(c.levels) < 2:
            return True

        def levels(x):
            return set(c.field_levels(x.decode("utf-8", "surrogateescape") if isinstance(x, bytes) else x))
        certain = set()
        for field in fields:
            found = levels(field)
            if len(found) == 1:
                certain |= found
        return bool(certain & levels(value))

    # ------------------------------------------------------------ probes

    def _key(self, surt, **values):
        return layouts.key(self.layout, surt, **values)

    def surt_probes(self, s, dt=None, value=None):
        """The probes of one SURT key (bytes), most specific first. A profile: the key of each
        datetime level the query's digits fill (finest first: day, month, year), then the
        all-time key, every other criterion '-'; with ``value`` (of the criterion asked), the
        lines of those keys with any value of it (their value picks). A map: the SURT's lines."""
        if self.kind == "cdxj":
            periods = (_periods(dt) if self._dt_at is not None else []) + [ANY_FIELD.encode()]
            if value is None:
                return [Probe(self._key(s, datetime=p) + b" ", None, None) for p in periods]
            cut = self._by_at          # the lines of the fields before the value's (the datetime may follow)
            return [Probe(b" ".join(self._key(s, datetime=p).split(b" ")[:cut]) + b" ", p, value) for p in periods]
        return [Probe(s + b" ", (dt or "") if self.nkeys == 2 else None, value)]

    def probes(self, urlkey, dt=None, value=None):
        """The probes of one query, most specific first."""
        out = []
        for s in surt_candidates(urlkey):
            out += self.surt_probes(s.encode("utf-8", "surrogateescape"), dt, value)
        return out

    # ------------------------------------------------------------ answers

    def _pick(self, probe, lines):
        """The Pick answering a probe among its lines, or None."""
        if not lines:
            return None
        if probe.value is not None:
            return self._pick_value(probe, lines)
        line = self._pick_line(probe, lines)
        return None if line is None else Pick(line)

    def _pick_line(self, probe, lines):
        """The line answering a probe without a value asked."""
        dt = probe.dt
        if dt is None:
            return lines[0]
        best = None
        for line in lines:
            field = line[len(probe.prefix):].split(None, 1)[0]
            span = datetime_span(field)
            if span is None:
                raise self._damaged(line, Bad("key", "datetime field %r" % field[:40]))
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

    def _pick_value(self, probe, lines):
        """A probe's Pick for a value asked: the line of that value; the key's lines (a profile)
        or complete breakdown (a map) listing values without it: none (not held in it);
        otherwise None (the key does not tell the criterion's values: the next candidate answers)."""
        if self.kind == "cdxj":
            first_any, listed = None, []
            for line in lines:
                fields = line[:line.find(b" {")].split(b" ")
                if len(fields) != len(self.layout.fields):
                    raise self._damaged(line, Bad("key", "%d key fields" % len(fields)))
                if not layouts.is_any(fields, self.layout, (DATETIME.name, self._by)) or \
                        (self._dt_at is not None and fields[self._dt_at] != probe.dt):
                    continue
                field = fields[self._by_at]
                if field == probe.value:
                    return Pick(line)
                if field == ANY_FIELD.encode():
                    first_any = first_any or line
                else:
                    listed.append(field)
            return Pick(first_any or lines[0], None, True) if self._tells(listed, probe.value) else None
        line = self._pick_line(probe, lines)
        if line is None:
            return None
        entries = _breakdown(line, self._by)
        if not entries:
            return None
        code = probe.value.decode("utf-8", "replace")
        for field, freq in entries:
            if field == code:
                return Pick(line, freq)
        _, freq = self.parse(line)
        if self._tells([field for field, _ in entries], code) and _complete(entries, freq):
            return Pick(line, None, True)
        return None

    def answer(self, urlkey, probes, found, partial=False):
        """Answer from the probes of one query and a mapping prefix -> lines (with partial: None
        when none of these probes answers)."""
        for n, probe in enumerate(probes):
            pick = self._pick(probe, found.get(probe.prefix))
            if pick is not None:
                # the line of the key itself (a profile's, or one of the value asked): no other line is it
                exact = self.kind == "cdxj" and not pick.none or probe.value is None and probe.dt is None
                if self._lost([p.prefix for p in probes[:n if exact else n + 1]]):
                    return Answer(urlkey, UNKNOWN, None, None)
                return self._answer_pick(urlkey, probe, pick)
        if partial:
            return None
        return Answer(urlkey, UNKNOWN if self._lost([p.prefix for p in probes]) else NO_MATCH, None, None)

    def _lost(self, prefixes):
        """Whether a line starting with one of the prefixes (bytes) may be one --skip-bad-lines
        left out: a damaged line the searches met, or one whose key could not be read (or lost
        in a cut) between keys around the prefix. An answer from a coarser line, or none,
        would then stand for the finer line that was lost."""
        if not any(s is not None and s.count for s in self.skipped):
            return False
        met = getattr(self.lines, "met_damaged", None)
        for prefix in prefixes:
            if any(s is not None and s.may_hold(prefix) for s in self.skipped):
                return True
            if met is not None and met(prefix) != []:
                return True
        return False

    def _answer_pick(self, urlkey, probe, pick):
        key, freq = self.parse(pick.line)
        value = None
        if probe.value is not None:
            value = probe.value.decode("utf-8", "replace")
            # the value's own frequency: its breakdown entry, or none at a key listing others
            freq = NONE if pick.none else pick.frequency or freq
        status = HELD if is_held(freq) else NOT_HELD
        answer = Answer(urlkey, status, key, freq, None, _rolled_up(pick.line), value,
                        _shown(pick.line) if self.kind == "ukvs" else None)
        return self._dated(answer, pick, probe)

    def _dated(self, answer, pick, probe):
        """A profile's answer to a datetime query: from a day, month or year line as it stands;
        from an all-time line, not-held when its first/last rule the date out or the file lists
        the SURT by year without that year, else held with date 'range' (the file cannot tell
        the date itself). A map's: see _by_breakdown."""
        query_dt = getattr(self, "_query_dt", None)
        if not query_dt:
            return answer
        line = pick.line
        if self.kind != "cdxj":
            if self.nkeys == 2:
                # the all-time line answered (no line of a period holding the date): held at
                # some time, the map cannot tell when
                all_time = answer.key.rsplit(b" ", 1)[-1] == ALL_TIME.encode()
                return answer._replace(date="unknown" if all_time else "period")
            if pick.frequency is None and not pick.none:
                return self._by_breakdown(answer, line, query_dt)
            # a value's answer keeps its frequency; the datetime breakdown tells only the date
            dated = self._by_breakdown(answer._replace(frequency=self.parse(line)[1]), line, query_dt)
            return answer._replace(date=dated.date, status=NOT_HELD if dated.status == NOT_HELD else answer.status)
        fields = answer.key.split(b" ")
        if self._dt_at is None:
            return answer._replace(date="range" if answer.status == HELD else None)
        if fields[self._dt_at] != ANY_FIELD.encode():
            return answer._replace(date="period")
        if pick.none:
            return answer        # no capture of that value at all: whatever the date
        try:
            value = self.checker(line.rstrip(b"\r"))[2]
        except Bad as e:
            raise self._damaged(line, e)
        first, last = value.get("first"), value.get("last")
        low, high = query_dt.ljust(14, "0"), query_dt.ljust(14, "9")
        if isinstance(first, str) and isinstance(last, str) and (high < first or low > last):
            return answer._replace(status=NOT_HELD, date="outside")
        if answer.status == HELD and self._has_period_lines(fields[0], query_dt, probe.value):
            return answer._replace(status=NOT_HELD, date="period")
        return answer._replace(date="range" if answer.status == HELD else None)

    def _by_breakdown(self, answer, line, dt):
        """A surt-keyed map's answer to a datetime query: from the line's datetime breakdown
        block ({"datetime": {"2014": "20~/10", ...}}, the MementoMap way): the narrowest entry
        holding the date answers (date 'period'); none, when the entries add up to the line's
        exact count, means none then (not-held, 'period'); otherwise, or without a breakdown,
        the file cannot tell (date 'unknown')."""
        breakdown = _breakdown(line, "datetime")
        if not breakdown or answer.frequency is None:
            return answer._replace(date="unknown")
        low, high = dt.ljust(14, "0"), dt.ljust(14, "9")
        best = None
        for field, freq in breakdown:
            span = datetime_span(field)
            if span is not None and span[0] <= low and high <= span[1]:
                width = int(span[1]) - int(span[0])
                if best is None or width < best[0]:
                    best = (width, freq)
        if best is not None:
            freq = best[1]
            return answer._replace(status=HELD if is_held(freq) else NOT_HELD, frequency=freq, date="period")
        if _complete(breakdown, answer.frequency):
            return answer._replace(status=NOT_HELD, date="period")
        return answer._replace(date="unknown")

    def _has_period_lines(self, surt, dt, by_value=None):
        """True when the profile lists this SURT by year and so tells that the query's year (which
        has no line of its own that answered) holds none: a line of the SURT with a year and
        every other criterion '-' (the policy then writes every year with captures). Asked for a
        value: a year line of any value (every year's values are written, and that year's is
        missing), or a year line of all values while the query's year has none. by_value: the value
        asked (bytes), or None."""
        has_year, year_values, this_year = False, [], False
        year = dt[:4].encode("ascii")
        for line in self.lines.group(surt + b" "):
            fields = line[:line.find(b" {")].split(b" ")
            if len(fields) != len(self.layout.fields):
                raise self._damaged(line, Bad("key", "%d key fields" % len(fields)))
            field = fields[self._dt_at]
            if len(field) != 4 or not field.isdigit() or not layouts.is_any(
                    fields, self.layout, (DATETIME.name, self._by)):
                continue
            if self._by_at is not None and fields[self._by_at] != ANY_FIELD.encode():
                year_values.append(fields[self._by_at])
            else:
                has_year = True
                this_year = this_year or field == year
        if by_value is None:
            return has_year
        return self._tells(year_values, by_value) or (has_year and not this_year)

    def parse(self, line):
        """A data line -> (key bytes, Frequency), the line checked (profiler.files.datalines):
        a damaged one is a DamagedFile."""
        body = line[:-1] if line[-1:] == b"\r" else line
        if self.kind == "cdxj":
            try:
                key, _, value = self.checker(body)
            except Bad as e:
                raise self._damaged(body, e)
            # a merged profile's "bounds": its urir is then the sum over the inputs, an upper bound,
            # unless it is the low (an input's share unknown: profiler.toolkit.merge.with_unknown)
            bounds = value.get("bounds") or {}
            urim = value["urim"]["total"]
            urir_mark = _mark(bounds.get("urir"), value.get("urir"))
            # another producer's value may lack urir (profiler.files.datalines.foreign_value)
            return key, Frequency(urim, _mark(bounds.get("urim.total"), urim), value.get("urir"), urir_mark)
        i = body.find(b" {")
        if i < 0 and b"  " not in body and b"\t" not in body:
            key, _, freq = body.rpartition(b" ")
            found = self._freqs.get(freq)
            if found is not None and key.count(b" ") == self.nkeys - 1 and not _CONTROL.search(key):
                return key, found
        try:
            key, _, found = self.checker(body)
        except Bad as e:
            raise self._damaged(body, e)
        freq = body[:i].split()[-1] if i >= 0 else body.split()[-1]
        if len(self._freqs) > 10000:
            self._freqs.clear()
        self._freqs[freq] = found
        return key, found

    def _damaged(self, line, bad):
        return DamagedFile("%s: a damaged line (%s): %r; run 'archive-profiler validate %s' for its line number"
                           % (self.path, bad, line[:80].decode("utf-8", "replace"), self.path))

    # ------------------------------------------------------------ lookups

    def lookup(self, uri, dt=None, value=None, by=LANG.name):
        """One lookup: URI or SURT, optional datetime digits and the key field of a value of the
        optional criterion named by (a language code) -> Answer."""
        urlkey = canonical(uri)
        if urlkey is None:
            return Answer(None, INVALID, None, None)
        return self.lookup_urlkey(urlkey, dt, value, by)

    def lookup_urlkey(self, urlkey, dt=None, value=None, by=LANG.name):
        """lookup() of a urlkey already canonical (profiler.toolkit.lookup.canonical). With
        ``value`` (a key field of the optional criterion named by: an ISO 639-3 code), the most
        specific key that tells that criterion's values answers for that value; when none does,
        the lookup without it answers (its value '-')."""
        self._require_answerable(dt)
        self._query_dt = dt
        if value is not None:
            self.check(by)
            self._asking(by)
            code = value.encode("utf-8", "surrogateescape")
            found = {}
            probes = self.probes(urlkey, dt, code)
            for probe in probes:
                lines = found[probe.prefix] = found.get(probe.prefix) or self.lines.group(probe.prefix)
                if self._pick(probe, lines) is not None:
                    return self.answer(urlkey, probes, found)
            if self._lost([p.prefix for p in probes]):        # a skipped line may have told the value
                return Answer(urlkey, UNKNOWN, None, None, value=value)
            return self.lookup_urlkey(urlkey, dt)._replace(value=ANY_FIELD)
        probes = self.probes(urlkey, dt)
        found = {}
        for probe in probes:
            lines = self.lines.group(probe.prefix)
            found[probe.prefix] = lines
            if self._pick(probe, lines) is not None:
                break
        return self.answer(urlkey, probes, found)

    def batch(self, uris, dt=None, chunk=200000, value=None, by=LANG.name):
        """(uri, Answer) for an iterable of URIs, in input order; probes are sorted and resolved in
        one forward walk per chunk of ``chunk`` URIs or CHUNK_BYTES of them (memory is bounded by
        the chunk)."""
        self._require_answerable(dt)
        self._query_dt = dt
        if value is not None:
            self.check(by)
            self._asking(by)
        buf, held = [], 0
        for uri in uris:
            buf.append(uri)
            held += len(uri)
            if len(buf) >= chunk or held >= CHUNK_BYTES:
                yield from zip(buf, self._batch(buf, dt, value))
                buf, held = [], 0
        if buf:
            yield from zip(buf, self._batch(buf, dt, value))

    def _batch(self, uris, dt, value=None):
        """The answers to a chunk of URIs: with a value asked, one walk over those probes of
        every query, then the queries no key answered for it as without it."""
        urlkeys = [canonical(u) for u in uris]
        if value is None:
            return self._batch_keys(urlkeys, dt)
        code = value.encode("utf-8", "surrogateescape")
        answers = [None] * len(urlkeys)
        probes = {}
        for n, urlkey in enumerate(urlkeys):
            if urlkey is None:
                answers[n] = Answer(None, INVALID, None, None)
            else:
                probes[n] = self.probes(urlkey, dt, code)
        found = self._walk({p.prefix for ps in probes.values() for p in ps})
        rest = []
        for n, ps in probes.items():
            answers[n] = self.answer(urlkeys[n], ps, found, partial=True)
            if answers[n] is None and self._lost([p.prefix for p in ps]):
                answers[n] = Answer(urlkeys[n], UNKNOWN, None, None, value=value)
            if answers[n] is None:
                rest.append(n)
        for n, a in zip(rest, self._batch_keys([urlkeys[n] for n in rest], dt)):
            answers[n] = a._replace(value=ANY_FIELD)
        return answers

    def _batch_keys(self, urlkeys, dt):
        """Two passes: the exact keys of all queries (one sorted walk), then the wildcard
        candidates of the queries still unanswered (another walk, shared hosts probed once)."""
        if dt is None and (self.kind == "cdxj" or self.nkeys == 1):
            return self._batch_all_time(urlkeys)
        answers = [None] * len(urlkeys)
        exact = []
        for n, urlkey in enumerate(urlkeys):
            if urlkey is None:
                answers[n] = Answer(None, INVALID, None, None)
            else:
                exact.append((n, self.surt_probes(exact_key(urlkey).encode("utf-8", "surrogateescape"), dt)))
        found = self._walk({p.prefix for _, probes in exact for p in probes})
        rest = []
        for n, probes in exact:
            a = self.answer(urlkeys[n], probes, found, partial=True)
            if a is None:
                rest.append((n, self.probes(urlkeys[n], dt)))
            else:
                answers[n] = a
        if rest:
            found.update(self._walk({p.prefix for _, probes in rest for p in probes} - set(found)))
            for n, probes in rest:
                answers[n] = self.answer(urlkeys[n], probes, found)
        return answers

    def _batch_all_time(self, urlkeys):
        """_batch_keys for one probe per SURT key (a surt map, or a profile without datetime): the
        same two passes with less bookkeeping per query."""
        suffix = layouts.any_suffix(self.layout) + b" " if self.kind == "cdxj" else b" "
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
            for i, probe in enumerate(lists[n]):
                lines = found.get(probe)
                if lines is not None:
                    answers[n] = self._answer_line(urlkeys[n], lines[0]) \
                        if not self._lost([probes[n]] + lists[n][:i]) else Answer(urlkeys[n], UNKNOWN, None, None)
                    break
            else:
                answers[n] = Answer(urlkeys[n], UNKNOWN if self._lost([probes[n]] + lists[n]) else NO_MATCH,
                                    None, None)
        return answers

    def _answer_line(self, urlkey, line):
        key, freq = self.parse(line)
        return Answer(urlkey, HELD if is_held(freq) else NOT_HELD, key, freq, None, _rolled_up(line), None,
                      _shown(line) if self.kind == "ukvs" else None)

    def _walk(self, prefixes):
        """prefix -> lines for every prefix with lines, in one forward walk over the file."""
        found = {}
        self.lines.forget_block()
        group = self.lines.group
        for prefix in sorted(prefixes):
            lines = group(prefix, forward=True)
            if lines:
                found[prefix] = lines
        self.lines.forget_block()
        return found


def _periods(dt):
    """The datetime key fields a query's digits fill, finest level first (bytes):
    '20130512' -> [b'20130512', b'201305', b'2013']."""
    if not dt:
        return []
    levels = [lv for lv in reversed(DATETIME.coarse_to_fine) if lv.kind == PREFIX and lv.n <= len(dt)]
    return [dt[:lv.n].encode("ascii") for lv in levels]


def _complete(entries, freq):
    """Whether a breakdown's entries add up exactly to the line's exact URI-M count (so a value
    without an entry has no capture)."""
    if freq is None or freq.urim is None or freq.urim_mark:
        return False
    if not all(f.urim is not None and not f.urim_mark for _, f in entries):
        return False
    return sum(f.urim for _, f in entries) == freq.urim


def _breakdown(line, name="datetime"):
    """[(field, Frequency), ...] of a map line's breakdown block by datetime or by an optional
    criterion ({"lang": {"ara": "12/3"}}), or None."""
    i = line.find(b" {")
    if i < 0 or name.encode("ascii") not in line[i:]:
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
    entries = block.get(name) if isinstance(block, dict) else None
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
    """A positive answer: a URI-M count that is not zero (an unknown one counts when URI-Rs are).
    Only a zero that is exact or an upper bound (``0``, ``0-``) is none: ``0+`` (at least none)
    and ``0~`` are counts not known, as a merge writes when a map knows no URI-M count there."""
    if freq.urim is not None and (freq.urim > 0 or freq.urim_mark in ("", "-")):
        return freq.urim > 0
    return freq.urir is None or freq.urir > 0 or freq.urir_mark not in ("", "-")


#: the key fields of a map lookup reads, by their number
MAP_FIELDS = {1: ("surt",), 2: ("surt", "datetime")}


def _require_whole(found):
    """A DamagedFile when a file's last line has no newline (a file cut short: the lines a
    search would not read are gone). One byte read, for files not checked whole."""
    with open_regular(found.path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > found.data_offset:
            f.seek(size - 1)
            if f.read(1) != b"\n":
                raise DamagedFile("%s was cut short: its last line has no newline (a copy interrupted, a "
                                  "full disk?); make it again, or check it with --skip-bad-lines" % found.path)


def _check_pages(files, metas):
    """Pages checked whole: each one's first and last keys are those its !meta says (the search
    skips pages by them), and they follow each other in byte order."""
    before = None
    for found, meta in zip(files, metas):
        keys = meta.get("keys") or []
        if found.first_key is None:
            continue
        said = [k for k in keys] if isinstance(keys, list) else None
        have = [found.first_key.decode("utf-8", "replace"), found.last_key.decode("utf-8", "replace")]
        if said != have:
            raise DamagedFile("%s: its !meta says its keys run %s, its lines run %s" % (
                found.path, " .. ".join(map(repr, said or [])) or "(nothing)", " .. ".join(map(repr, have))))
        if before is not None and not before < found.first_key:
            raise UnsortedFile("%s: its first key does not sort after the page before's last" % found.path)
        before = found.last_key


#: what a matched key's SURT covers, most specific first
MATCH_LEVELS = ("exact", "path", "host", "subdomain", "domain", "suffix", "tld", "root")


def match_level(key):
    """The level of a matched key (bytes, its SURT first): exact (the URI itself), path
    (host)/dir/*), host (host)/*), a host-label wildcard (com,example,*) named by the Public
    Suffix List: subdomain, domain (a registered domain's), suffix (inside a public suffix,
    uk,co,*), tld (com,*); or root (*)."""
    surt = key.split(b" ", 1)[0]
    if surt == b"*":
        return "root"
    if not surt.endswith(b"*"):
        return "exact"
    if b")" in surt:
        return "host" if surt.endswith(b")/*") else "path"
    return wildcard_level(surt[:-2].decode("utf-8", "replace"), True)


def format_answer(query, a, value=False, breakdowns=False):
    """One output line: QUERY, status, matched key, frequency, the key's level and how the
    datetime was answered, and with ``value`` the value answered for (a language; tab-separated;
    '-' when none); with ``breakdowns`` last the matched map line's status and mime breakdowns
    (JSON, '-' when it has none)."""
    freq = "-" if a.frequency is None else format_frequency(a.frequency)
    key = a.key.decode("utf-8", "replace") if a.key is not None else "-"
    level = match_level(a.key) if a.key is not None else "-"
    line = "%s\t%s\t%s\t%s\t%s\t%s" % (query, a.status, key, freq, level, a.date or "-")
    if value:
        line += "\t" + (a.value or "-")
    if breakdowns:
        line += "\t" + (jsonnum.dumps(breakdown_texts(a.breakdowns)).decode() if a.breakdowns else "-")
    return line


def breakdown_texts(breakdowns):
    """{name: {field: frequency text}} of an answer's breakdowns."""
    return {name: {f: format_frequency(freq) for f, freq in entries.items()} for name, entries in breakdowns.items()}


def _mark(bound, written):
    """The mark of a count with these bounds: '' exact, '+' when written is the low (the true count
    is at least it), '-' when it is the high, else '~'."""
    if not bound or bound[0] == bound[1]:
        return ""
    return "+" if written == bound[0] else "-" if written == bound[1] else "~"
