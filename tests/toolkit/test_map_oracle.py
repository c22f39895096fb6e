"""MementoMaps against the brute-force oracle: the map made from a profile (ukvs), lookups in it,
in its compacted copy and in its split pages. Every count a map line or an answer gives is the
oracle's count of the captures its key covers, or carries a mark (+ - ~) or is unknown whose
bound holds that count; a URI with captures is never answered not-held."""

import os
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.files.output import header_lines, write_atomic
from profiler.files.ukvs import MapFormatError, datetime_span, profile_to_map, read_map
from profiler.model import stats
from profiler.toolkit.compact import compact_file
from profiler.files.coverage import listed
from profiler.toolkit.lookup import HELD, NO_MATCH, NOT_HELD, UNKNOWN, Lookup
from profiler.toolkit.merge import merge
from profiler.toolkit.split import split

from helpers.oracle import content_class, profile as oracle_profile, resolve_revisits, surt_keys
from helpers.random_archives import (HOSTS, PATHS, oracle_captures, random_captures, random_languages,
                                     random_policy)

CREATED = "2026-01-01T00:00:00Z"
LANGS = ["eng", "ara", "unk", "zho"]
DATES = [None, "2010", "201103", "20120615", "2011061512", "20100101000000", "2013"]


def _write(path, rows, policy):
    """The oracle's profile of rows, as a profile file."""
    table = oracle_profile(rows, policy)
    heads = header_lines(None, policy.to_dict(), [os.path.basename(path)], {"captures": len(rows)}, [], True,
                         CREATED)
    lines = [(k.encode(), stats.to_json(list(v))) for k, v in table.items()]
    write_atomic(path, heads + [k + b" " + v for k, v in sorted(lines)])
    return path


def _covered(rows, policy, key):
    """The captures a map key (bytes: 'SURT' or 'SURT DATETIME') covers: a wildcard's, those whose
    urlkey starts with it without its '*' (string-prefix semantics, spec section 2), whether or not
    the policy writes that level (compact creates wildcards the policy does not); an exact URL's,
    those whose urlkey is it (the oracle's key of it)."""
    fields = key.decode().split(" ")
    span = datetime_span(fields[1]) if len(fields) > 1 else ("0" * 14, "9" * 14)
    surt = fields[0]
    if surt.endswith("*"):
        return [c for c in rows if span[0] <= c[1] <= span[1] and c[0].startswith(surt[:-1])]
    return [c for c in rows if span[0] <= c[1] <= span[1] and surt in {k for _, k in surt_keys(c[0], policy)}]


def _holds(count, mark, truth):
    """Whether a written count with its mark holds the true one."""
    if count is None or mark == "~":
        return True
    return {"": count == truth, "+": count <= truth, "-": count >= truth}[mark]


def _check_frequency(key, freq, rows, policy, what):
    caps = _covered(rows, policy, key)
    urim, urir = len(caps), len({c[0] for c in caps})
    assert _holds(freq.urim, freq.urim_mark, urim), (what, key, freq, urim)
    assert _holds(freq.urir, freq.urir_mark, urir), (what, key, freq, urir)


def _probe_urlkeys(rows, rng):
    held = sorted({c[0] for c in rows})
    others = [h + p for h in HOSTS for p in PATHS] + ["com,zz)/", "org,x)/d/zz", "dns:q.example"]
    return held + rng.sample(others, 8)


def _answers(path, urlkeys, dts, langs=()):
    """(urlkey, datetime, language or None, Answer, listed) of every query, as lookup and serve
    answer it (serve's "listed": profiler.files.coverage.listed)."""
    out = []
    with Lookup(path) as index:
        for u in urlkeys:
            for dt in dts:
                a = index.lookup_urlkey(u, dt)
                out.append((u, dt, None, a, listed(index.coverage, u, a.key, a.rollup)))
                for lang in langs if index.has("lang") else ():
                    a = index.lookup_urlkey(u, dt, lang)
                    out.append((u, dt, lang, a, True))
    return out


def _in_span(c, dt):
    return dt is None or c[1].startswith(dt)


def _check_answers(answers, rows, policy, what):
    """Every answer's count (and its status and mime breakdowns) holds the oracle's under its
    key; a URI with captures (at the date asked, in the language asked) is never not-held, nor
    held but not listed."""
    for u, dt, lang, a, is_listed in answers:
        assert a.status in (HELD, NOT_HELD, NO_MATCH, UNKNOWN), (what, a)
        has = [c for c in rows if c[0] == u and _in_span(c, dt) and (lang is None or c[7] == lang)]
        if has and a.value != "-":
            assert a.status != NOT_HELD, ("a false negative", what, dt, lang, a)
            assert a.status != HELD or is_listed, ("held, not listed", what, dt, a)
        if a.key is None or a.frequency is None:
            continue
        dated = len(a.key.split(b" ")) > 1
        if dt is not None and not dated:
            continue            # the all-time line of a surt-keyed map: its count is of all time
        line_caps = _covered(rows, policy, a.key)
        caps = [c for c in line_caps if lang is None or a.value == "-" or c[7] == lang]
        urim, urir = len(caps), len({c[0] for c in caps})
        assert _holds(a.frequency.urim, a.frequency.urim_mark, urim), (what, dt, lang, a, urim)
        assert _holds(a.frequency.urir, a.frequency.urir_mark, urir), (what, dt, lang, a, urir)
        for name, entries in (a.breakdowns or {}).items():
            for field, freq in entries.items():
                part = [c for c in line_caps if field in _fields(name, c)]     # the line's, not the value's
                assert _holds(freq.urim, freq.urim_mark, len(part)), (what, a.key, name, field, freq, len(part))


def _fields(name, c):
    """The key fields of a capture's status or mime, at every level (a breakdown keeps one)."""
    if name == "status":
        return {c[3], c[3][0] + "xx" if c[3] != "unk" and c[3][0] in "12345" else "unk"}
    return {c[2], c[2].split("/")[0] + "/*" if "/" in c[2] else c[2], content_class(c[2])}


def _map_of(tmp, rows, policy, keys, rng):
    """A map of rows' profile (or of a merge of profiles of parts of them), or None when the
    policy writes no plain lines."""
    parts = rng.randint(1, 3)
    where = [rng.randrange(parts) for _ in rows]
    paths = [_write(str(tmp / ("p%d.cdxj" % i)), resolve_revisits([list(c[:8]) for c, w in zip(rows, where) if w == i]),
                    policy) for i in range(parts) if i in where]
    profile = paths[0]
    if len(paths) > 1:
        profile = str(tmp / "m.cdxj")
        merge(paths, profile, created=CREATED)
    out = str(tmp / "map.ukvs")
    try:
        profile_to_map(profile, out, keys=keys, created=CREATED)
    except MapFormatError as e:
        assert "writes no line of all time" in str(e)
        return None
    return out


def _rows(rng):
    policy = random_policy(rng, optional=rng.choice([(), ("lang",)]))
    caps = random_captures(rng)
    caps = oracle_captures(caps, random_languages(rng, caps) if "lang" in policy.names else None)
    rows = resolve_revisits([list(c) for c in caps])
    return policy, rows


SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(seed=st.integers(0, 2 ** 32), dated=st.booleans())
def test_property_map_lines_and_lookups_equal_the_oracle(tmp_path_factory, seed, dated):
    """Random policies and captures, profiled whole or in 2-3 parts merged: every map line's
    frequency and every lookup answer (of held and absent URIs, with and without a date) holds
    the oracle's count of the captures its key covers."""
    _check_map(tmp_path_factory.mktemp("mo"), seed, dated)


def _check_map(tmp, seed, dated):
    rng = random.Random(seed)
    policy, rows = _rows(rng)
    keys = ("surt", "datetime") if dated else ("surt",)
    path = _map_of(tmp, rows, policy, keys, rng)
    if path is None:
        return
    for key, freq in read_map(path)[1]:
        _check_frequency(key, freq, rows, policy, "map line")
    urlkeys = _probe_urlkeys(rows, rng)
    _check_answers(_answers(path, urlkeys, DATES if dated else [None], LANGS), rows, policy, "lookup")


@SETTINGS
@given(seed=st.integers(0, 2 ** 32), dated=st.booleans(), share=st.floats(0.1, 0.9))
def test_property_compacted_maps_hold_the_truth(tmp_path_factory, seed, dated, share):
    """A map compacted to a share of its lines: each surviving line's frequency holds the
    oracle's count under its key (a line created from an incomplete map's lines is a lower
    bound), and no URI with captures is answered not-held."""
    _check_compacted(tmp_path_factory.mktemp("mc"), seed, dated, share)


@pytest.mark.parametrize("seed, dated, share", [
    (56709, True, 0.5),         # 'uk,*' created from the lines of a map that lists not every host: 6/5 of 8
])
def test_compacted_maps_hold_the_truth(tmp_path, seed, dated, share):
    """The examples test_property_compacted_maps_hold_the_truth found."""
    _check_compacted(tmp_path, seed, dated, share)


def _check_compacted(tmp, seed, dated, share):
    rng = random.Random(seed)
    policy, rows = _rows(rng)
    keys = ("surt", "datetime") if dated else ("surt",)
    path = _map_of(tmp, rows, policy, keys, rng)
    if path is None:
        return
    n = sum(1 for _ in open(path, "rb"))
    out = str(tmp / "c.ukvs")
    try:
        compact_file(path, out, max_lines=max(int(n * share), 8))
    except Exception as e:
        assert "cannot" in str(e) or "quota" in str(e), e
        return
    for key, freq in read_map(out)[1]:
        _check_frequency(key, freq, rows, policy, "compacted line")
    urlkeys = _probe_urlkeys(rows, rng)
    _check_answers(_answers(out, urlkeys, DATES if dated else [None], LANGS), rows, policy, "compacted lookup")


@SETTINGS
@given(seed=st.integers(0, 2 ** 32), dated=st.booleans(), size=st.integers(1, 30))
def test_property_pages_answer_as_the_oracle(tmp_path_factory, seed, dated, size):
    """A map split into pages of random size: lookups through the pages give the whole file's
    answers, which hold the oracle's counts."""
    tmp = tmp_path_factory.mktemp("mp")
    rng = random.Random(seed)
    policy, rows = _rows(rng)
    keys = ("surt", "datetime") if dated else ("surt",)
    path = _map_of(tmp, rows, policy, keys, rng)
    if path is None:
        return
    os.mkdir(str(tmp / "pages"))
    pages = split(path, size, prefix=str(tmp / "pages") + os.sep)
    urlkeys = _probe_urlkeys(rows, rng)
    dts = DATES if dated else [None]
    whole = _answers(path, urlkeys, dts)
    for page in (pages[0], pages[-1], str(tmp / "pages")):
        assert _answers(page, urlkeys, dts) == whole
    _check_answers(whole, rows, policy, "pages")


@pytest.mark.parametrize("seed, dated", [
    (0, False),         # '* 85/59-' of a merge: its status 2xx entry '31/28-' of bounds [0, 85] held 32
    (129, False),       # by registered domains, '1,0,0,127)/' (no registered domain) answered by '1,*': not listed
    (1360, False),      # host_depth 1 and no TLD line: a map said complete answered '1,0,0,127)/d/' by '*'
])
def test_map_lines_and_lookups_equal_the_oracle(tmp_path, seed, dated):
    """The examples test_property_map_lines_and_lookups_equal_the_oracle found."""
    _check_map(tmp_path, seed, dated)
