"""The compiled CDXJ map side (profiler/accel/cdxj.c, aggregate.c) against profiler.formats.cdxj:
the same records for any lines, cut into splits and buffers anywhere, with and without languages;
and whole profiles of Common Crawl-style indexes against pure Python and the oracle."""

import gzip
import io
import json
import os
import random

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from profiler.accel import fast
from profiler.formats import cdxj
from profiler.io import readers
from profiler.job import bigsums, lines as job_lines, mapside
from profiler.job.kernels import Kernels
from profiler.run.profile import run_profile
from profiler.model.policy import load as load_policy
from profiler.testing import synthetic_cc

from helpers.oracle import profile as oracle_profile, read_profile, resolve_revisits
from helpers.policies import by_period, lang_policy, write_lang_policy
from helpers.random_archives import index_lines, oracle_captures, random_captures, random_languages, random_policy

pytestmark = pytest.mark.skipif(fast.load() is None, reason="the C extension is not built (no compiler?)")


class Raw(str):
    """JSON text written as it is (numbers with exponents, escapes, broken JSON)."""


URLKEYS = [b"com,example)/", b"com,example)/a?b=1", b"org,x,y)/p/q.html", b"uk,co,z)/long/path/" + b"x" * 40,
           b"http://www.example.com/page", b"com,a)/caf\xc3\xa9", b"com,a)/\tx", b"!x)/", b"{x)/", b"-", b"",
           b"com,a)/%7E", b"com,a)/\x7f", b"dns:example.com", b"com,a)/\xff"]
TIMESTAMPS = [b"20100101000000", b"2010", b"201013", b"2010010124", b"abcd", b"", b"20200229235960",
              b"201001011200", b"2010010100000000"]
MIMES = ["text/html", "Text/HTML; charset=UTF-8", " text/html ", "text/html ;x", "text/html charset=x", "text/ html",
         "\ttext /html\r", "-", "", "unk", "none", "UNKNOWN",
         "no-type", "warc/revisit", "warc/request", "warc/metadata", "application/pdf", "t\xe9xt/html", "{x/y", "a b",
         "x\x7f", "text/\thtml", Raw('"text\\/html"'), None, 200, "x" * 300]
STATUSES = ["200", "404", "-", "", "30x", "2000", 200, None, Raw('"\\u0032\\u0030\\u0030"'), "2\xe90"]
DIGESTS = ["sha1:abc", "ABC", "-", "", "sha1:", "md5:Xyz", "q:r:s", "{x", "sha1:{x", 'd"q', "\xe9", None, 12,
           "sha1:" + "A" * 300]
LENGTHS = ["1043", "-", "", "x", "0", "123456789012345678", "18446744073709551615", "18446744073709551616", 1043,
           None, "-5", " 5", Raw("1e3")]
LANGUAGES = ["eng", "eng,fra", "deu,eng", "de-DE, en;q=0.5", "", " ", ",eng", " , fra ", ";q=1,spa", "und", "zxx",
             "ENG", "en", "zh-Hant", "x-klingon", "xyz", "English", "e" * 40, "a," * 150, ["eng"], [], 5, None,
             "fr\xe9", "'en'", '"en"', "eng\x00", "i-klingon", "en-", "iw", "fre", Raw('"e\\u006eg"')]
OTHER_KEYS = ["url", "original_uri", "original", "offset", "filename", "mime-detected", "charset", "redirect",
              "cl\xe9", "locator"]
OTHER_VALUES = ["http://example.com/x", "https://\xe9xample.com/\u00fc", "crawl-data/CC-MAIN-2025-21/1746990412231.65/x",
                "x" * 19 + "1234567890123456789", None, True, False, 0, -1, 1.5, 10 ** 25, {"a": [1, 2.5, {"b": None}]},
                [], {}, "\u2028", "\U0001f600", Raw("-0"), Raw("1e400"), Raw("1E+2"), Raw("01"), Raw("[1,2,]"),
                Raw('"\\ud800"'), Raw('"\\ud83d\\ude00"'), Raw("NaN"), Raw("[" * 70 + "]" * 70),
                Raw("[" * 1100 + "]" * 1100), Raw('"\\x"'), Raw('{"a":1,}'), Raw("tru"), Raw('"a\\/b\\n\\t"'),
                Raw("1."), Raw(".5"), Raw("-"), Raw('"\\u00e9"')]
NEEDED = {"mime": MIMES, "mime_type": MIMES, "mimetype": MIMES, "status": STATUSES, "status_code": STATUSES,
          "statuscode": STATUSES, "digest": DIGESTS, "payload_digest": DIGESTS, "length": LENGTHS,
          "languages": LANGUAGES, "lang": LANGUAGES}
ESCAPED_KEYS = [Raw('"m\\u0069me"'), Raw('"languag\\u0065s"'), Raw('"st\\u0061tus"'), Raw('"o\\u0066fset"')]
MUTATIONS = [b"\\", b'"', b"\t", b"\x00", b"\xff", b"\xc3\xa9", b"\r", b"{", b"}", b",", b" ", b"\xed\xa0\x80", b"9" * 19]


def _json(value, rng):
    if isinstance(value, Raw):
        return str(value)
    return json.dumps(value, ensure_ascii=rng.random() < 0.5)


def _block(pairs, rng):
    """A JSON object of (key, value) pairs, duplicates kept, with Common Crawl's or other separators."""
    comma, colon = rng.choice([(", ", ": "), (",", ":"), (" ,\t", " :\r"), (",\r\n", ":")])
    body = comma.join(_json(k, rng) + colon + _json(v, rng) for k, v in pairs)
    return rng.choice(["{%s}", "{%s}", " {%s} ", "{ %s }\r", "{%s}x", "{%s", "[%s]"]) % body


def _hostile_line(rng):
    pairs = []
    for name in rng.sample(sorted(NEEDED), rng.randint(0, len(NEEDED))):
        pairs.append((name, rng.choice(NEEDED[name])))
    for _ in range(rng.randint(0, 4)):
        pairs.append((rng.choice(OTHER_KEYS), rng.choice(OTHER_VALUES)))
    if rng.random() < 0.1:
        pairs.append((rng.choice(ESCAPED_KEYS), rng.choice(MIMES + LANGUAGES)))
    if pairs and rng.random() < 0.1:
        pairs.append(rng.choice(pairs))                              # a key twice
    rng.shuffle(pairs)
    block = _block(pairs, rng).encode("utf-8", "surrogatepass")
    sep = rng.choice([b" "] * 8 + [b"  ", b"\t"])
    line = rng.choice(URLKEYS) + sep + rng.choice(TIMESTAMPS) + b" " + block
    if rng.random() < 0.1:
        at = rng.randrange(len(line) + 1)
        line = line[:at] + rng.choice(MUTATIONS) + line[at:]
    if rng.random() < 0.03:
        line = line[:rng.randrange(len(line) + 1)]
    return line + (b"\r" if rng.random() < 0.05 else b"")


def _pywb_line(rng):
    fields = {"url": "http://example.com/%d" % rng.randrange(9), "mime": rng.choice(["text/html", "image/png"]),
              "status": rng.choice(["200", "404"]), "digest": "sha1:" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in range(32)),
              "length": str(rng.randrange(10 ** 6)), "offset": str(rng.randrange(10 ** 9)), "filename": "a.warc.gz"}
    return b"com,example)/%d 2014%02d01000000 %s" % (rng.randrange(9), rng.randint(1, 12), json.dumps(fields).encode())


def _ipwb_line(rng):
    fields = {"locator": "urn:ipfs/Qm%d/Qm%d" % (rng.randrange(99), rng.randrange(99)),
              "original_uri": "http://example.com/", "mime_type": "text/html", "status_code": "200"}
    if rng.random() < 0.5:
        fields["lang"] = rng.choice(["en-US", "fr", "de-DE, en;q=0.5"])
    return b"com,example)/ 2016%02d01000000 %s" % (rng.randint(1, 12), json.dumps(fields, separators=(",", ":")).encode())


def _random_lines(rng):
    """Common Crawl lines in runs, mixed with pywb, ipwb, header and hostile lines."""
    out = []
    cc = [synthetic_cc.cc_line(*r).rstrip("\n").encode() for r in
          synthetic_cc.generate_records(rng.randint(1, 120), seed=rng.randrange(10 ** 6))]
    while cc:
        r = rng.random()
        if r < 0.6:
            n = rng.randint(1, 8)
            out.extend(cc[:n])
            cc = cc[n:]
        elif r < 0.7:
            out.append(rng.choice([_pywb_line, _ipwb_line])(rng))
        elif r < 0.73:
            out.append(rng.choice([b"", b"!meta x", b"@comment", b" CDX N b a m s k"]))
        else:
            out.append(_hostile_line(rng))
    return out


def _records(data, policy, cuts, pure, lines=False, gz=False):
    """map_split's records over data (a CDXJ file's bytes) cut into splits at cuts (a gzip file: one
    split): [(key, cells)], captures, skipped."""
    blob = gzip.compress(data) if gz else data

    def opener(path, mode="rb"):
        return io.BytesIO(blob)
    bounds = [0] + ([] if gz else sorted(cuts)) + [None]
    out, captures, skipped = [], 0, {}
    kernels = Kernels(policy, pure=pure)
    for start, end in zip(bounds, bounds[1:]):
        split = {"path": "index.cdxj", "format": "cdxj", "start": start, "end": end,
                 "compression": "gzip" if gz else None}
        for key, value in mapside.map_split(orjson.dumps(split), policy, kernels, opener=opener, lines=lines):
            if key is None:
                out.extend((k, orjson.loads(v)) for k, v in (line.split(b"\t") for line in job_lines.split_lines(value)))
            elif key == b"!meta":
                captures += value["captures"]
                for reason, n in value["skipped"].items():
                    skipped[reason] = skipped.get(reason, 0) + n
            else:
                out.append((key, orjson.loads(value if isinstance(value, bytes) else orjson.dumps(value))))
    return out, captures, skipped


def _policy(rng):
    r = rng.random()
    return lang_policy() if r < 0.3 else random_policy(rng, optional={"lang"}, compiled=fast.load()) if r < 0.6 else \
        random_policy(rng, optional=(), compiled=fast.load()) if r < 0.8 else by_period(rng.choice([4, 6]))


def _check_same(data, policy, rng, monkeypatch):
    """The compiled map side's records equal the Python path's, whatever the splits, the buffers
    (readers' chunk size), the table of language entries and the records' form."""
    cuts = [rng.randrange(len(data) + 1) for _ in range(rng.choice([0, 0, 1, 3]))]
    gz = rng.random() < 0.15
    monkeypatch.setattr(readers, "_CHUNK", rng.choice([7, 64, 4096, 1 << 20]))
    monkeypatch.setattr(readers, "_OUT", rng.choice([5, 333, 1 << 20]))
    monkeypatch.setattr(mapside, "TABLE_LIMIT", rng.choice([1, 3, 50, 2000]))
    monkeypatch.setattr(mapside, "LANGUAGE_TABLE", rng.choice([0, 1, 2, 4096]))
    expected = _records(data, policy, cuts, pure=True, gz=gz)
    try:
        assert _records(data, policy, cuts, pure=False, gz=gz) == expected
    except bigsums.SumsPastBudget:          # the run goes again in Python (profiler.job.bigsums)
        k = len(policy.names)
        assert sum(cell[k + 3] for _, cells in expected[0] for cell in cells) > bigsums.MAX_TOTAL
        return expected
    assert _records(data, policy, cuts, pure=False, lines=True, gz=gz) == expected
    return expected


@pytest.mark.parametrize("seed", range(200))
def test_compiled_cdxj_map_side_equals_python(seed, monkeypatch):
    rng = random.Random(seed)
    lines = _random_lines(rng)
    data = b"\n".join(lines) + (b"\n" if rng.random() < 0.8 else b"")
    _check_same(data, _policy(rng), rng, monkeypatch)


def _text(chars):
    return st.text(alphabet=st.sampled_from(chars), max_size=24)


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 20, 10 ** 20),
                     st.floats(allow_nan=False, allow_infinity=False),
                     _text("aenE-_,;= /:\\\"\xe9\x00\x7f\u2028\U0001f600019{}"),
                     st.sampled_from(LANGUAGES[:19] + MIMES[:15] + DIGESTS[:11] + LENGTHS[:8]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(_text("ab\xe9"), inner, max_size=3)),
                       max_leaves=6)
_KEYS = st.sampled_from(sorted(NEEDED) + OTHER_KEYS)


@st.composite
def _cdxj_lines(draw):
    out = []
    for _ in range(draw(st.integers(1, 12))):
        pairs = draw(st.lists(st.tuples(_KEYS, _VALUES), max_size=8))
        block = "{" + draw(st.sampled_from([", ", ","])).join(
            json.dumps(k) + ":" + json.dumps(v, ensure_ascii=draw(st.booleans())) for k, v in pairs) + "}"
        line = draw(st.sampled_from(URLKEYS[:5])) + b" " + draw(st.sampled_from(TIMESTAMPS[:4])) + b" " + \
            block.encode("utf-8", "surrogatepass")
        if draw(st.integers(0, 9)) == 0:
            at = draw(st.integers(0, len(line)))
            line = line[:at] + draw(st.binary(max_size=3)) + line[at:]
        out.append(line)
    return out


@settings(max_examples=int(os.environ.get("PROPERTY_EXAMPLES", "150")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(_cdxj_lines(), st.integers(0, 2 ** 32))
def test_hypothesis_cdxj_lines_equal_python(monkeypatch, lines, seed):
    rng = random.Random(seed)
    data = b"\n".join(lines) + b"\n"
    _check_same(data, _policy(rng), rng, monkeypatch)


def _python_lines(data, policy):
    """The lines the compiled map side hands to profiler.formats.cdxj."""
    calls = []
    real = cdxj.parse

    def counting(line):
        calls.append(line)
        return real(line)
    split = {"path": "index.cdxj", "format": "cdxj", "start": 0, "end": None, "compression": None}
    mp = pytest.MonkeyPatch()
    mp.setattr(cdxj, "parse", counting)
    try:
        list(mapside.map_split(orjson.dumps(split), policy, Kernels(policy), opener=lambda p, m="rb": io.BytesIO(data)))
    finally:
        mp.undo()
    return calls


def test_the_cdx_server_s_field_names_are_read_by_the_compiled_map_side():
    """A CDXJ line whose media type and status are named as the Wayback CDX server names them
    (``mimetype``, ``statuscode``) gives them to the compiled map side as to profiler.formats.cdxj,
    after ``mime`` and ``mime_type`` (``status``, ``status_code``) when a line has several."""
    data = b"".join(b"com,example)/%d 20140101000000 %s\n" % (i, json.dumps(fields).encode()) for i, fields in enumerate([
        {"url": "http://example.com/0", "mimetype": "text/html", "statuscode": "404", "length": "10"},
        {"mimetype": "image/png", "mime_type": "text/css", "statuscode": "200", "status_code": "301"},
        {"mimetype": "image/png", "mime": "text/css", "statuscode": "200", "status": "301"},
        {"mimetype": "image/png", "mime": None, "statuscode": "200", "status_code": None},
    ]))
    policy = load_policy("full")
    expected = _records(data, policy, [], pure=True)
    assert _records(data, policy, [], pure=False) == expected
    cells = {key: cells for key, cells in expected[0]}
    assert [cells[b"com,example)/%d" % i][0][1:3] for i in range(4)] == [
        ["text/html", "404"], ["text/css", "301"], ["text/css", "301"], ["image/png", "200"]]


def test_common_crawl_lines_stay_compiled():
    """Common Crawl's, pywb's and ipwb's lines are parsed in C (the language entries aside, each
    learnt once without a line going to Python)."""
    rng = random.Random(3)
    lines = [synthetic_cc.cc_line(*r).encode() for r in synthetic_cc.generate_records(3000, seed=5)]
    lines += [_pywb_line(rng) + b"\n" for _ in range(50)] + [_ipwb_line(rng) + b"\r\n" for _ in range(50)]
    data = b"".join(lines)
    assert _python_lines(data, lang_policy()) == []
    assert _python_lines(data, load_policy("default")) == []


@pytest.mark.parametrize("value, code", [
    ("eng", "eng"), ("eng,fra", "eng"), ("deu,eng", "deu"), ("de-DE, en;q=0.5", "deu"), ("", "unk"),
    (" , ", "unk"), (",fra", "fra"), (" ;q=1, spa", "spa"), ("und", "unk"), ("zxx", "unk"), ("ENG", "eng"),
    ("zh-Hant", "zho"), ("iw", "heb"), ("xyz", "unk"), ("'en'", "eng"), ("e" * 33, "unk"), ("a," * 130, "unk")])
@pytest.mark.parametrize("table", [0, 4096])
def test_language_entries(value, code, table, monkeypatch):
    """primary_language of languages (then lang): in the table or not, Python's code."""
    monkeypatch.setattr(mapside, "LANGUAGE_TABLE", table)
    policy = lang_policy()
    lines = [b'com,a)/ 20100101000000 {"mime": "text/html", "status": "200", "languages": %s}' % json.dumps(value).encode(),
             b'com,a)/ 20110101000000 {"languages": null, "lang": %s, "status": "200"}' % json.dumps(value).encode(),
             b'com,a)/ 20120101000000 {"lang": "fra", "languages": %s}' % json.dumps(value).encode(),
             b'com,a)/ 20130101000000 {"languages": "ara", "lang": %s}' % json.dumps(value).encode()]
    data = b"\n".join(lines * 2)
    records, captures, _ = _records(data, policy, [], pure=False)
    assert (records, captures) == _records(data, policy, [], pure=True)[:2]
    langs = sorted({cell[3] for _, cells in records for cell in cells})
    assert langs == sorted({code, "ara"})
    entry = next((e.split(";")[0].strip() for e in value.split(",") if e.split(";")[0].strip()), "")
    in_c = len(value) <= 256 and (not entry or len(entry) <= 32 and table > 0)    # no entry, or one learnt
    python = _python_lines(data, policy)
    arabic = [line for line in python if b'"ara"' in line]
    assert len(arabic) == (0 if table else 2)
    assert (len(python) == len(arabic)) == in_c


def test_the_language_table_learns_each_entry_once():
    module = fast.load()
    policy = lang_policy()
    agg = fast.compiled_aggregator(module, policy, True, 100, None)
    line = b'com,a)/ 20100101000000 {"languages": " eng , fra"}\n'
    assert agg.feed(line, 0) == (3, 0, len(line) - 1)
    assert agg.pending_language() == b"eng"
    assert agg.add_language(b"eng", "eng") is True
    assert agg.feed(line * 2, 0) == (0, 2 * len(line), 2 * len(line))
    assert agg.captures == 2
    long_entry = b'com,a)/ 20100101000000 {"languages": "%s"}' % (b"e" * 33)
    assert agg.feed(long_entry, 0)[0] == 1                     # never learnt: the line is Python's
    agg.set_language_limit(1)
    assert agg.feed(line.replace(b"eng", b"deu"), 0)[0] == 1  # the table is full
    assert agg.add_language(b"deu", "deu") is False
    with pytest.raises(ValueError):
        agg.add_language(b"x", "")


def test_languages_are_not_read_without_the_lang_criterion():
    """Without lang in the policy, language values are only checked as JSON: no entry to learn."""
    agg = fast.compiled_aggregator(fast.load(), load_policy("default"), True, 100, None)
    line = b'com,a)/ 20100101000000 {"languages": ["x", 1], "lang": 5}\n'
    assert agg.feed(line, 0) == (0, len(line), len(line))


def _oracle_of_cc(records):
    caps = [(u, t, f.get("mime", "-"), f.get("status", "-"), f.get("digest", "-"), int(f.get("length", 0)))
            for u, t, f in records]
    return oracle_captures(caps, [f.get("languages") for _, _, f in records])


def _task_kinds(summary):
    return {name for step in summary["counters"] for name in step.get("tasks", {})}


def _body(path):
    with open(path, "rb") as f:
        return [line for line in f if b'"created"' not in line]


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_common_crawl_profile_compiled_equals_python_and_oracle(runner, tmp_path, monkeypatch):
    """`profile --policy lang` of a Common Crawl-style index: compiled and pure Python write the
    same bytes, and every line is the oracle's."""
    records = list(synthetic_cc.generate_records(3000, seed=23))
    path = tmp_path / "cdx-00000.cdxj"
    path.write_text("".join(synthetic_cc.cc_line(*r) for r in records))
    policy_path = write_lang_policy(tmp_path / "lang.yaml")
    outs = {}
    for pure in ("", "1"):
        monkeypatch.setenv(fast.PURE_ENV, pure)
        out = str(tmp_path / ("p%s.cdxj" % pure))
        summary = run_profile([str(path)], out, policy=policy_path, runner=runner, split_size=1 << 20, cores=2)
        assert _task_kinds(summary) == {"step-1 reducers (%s)" % ("pure Python" if pure else "compiled")}
        outs[pure] = out
    assert _body(outs[""]) == _body(outs["1"])
    expected = oracle_profile(resolve_revisits(_oracle_of_cc(records)), lang_policy())
    assert read_profile(outs[""]) == expected


@pytest.mark.parametrize("seed", range(6))
def test_random_archives_profile_compiled_equals_python_and_oracle(seed, tmp_path, monkeypatch):
    """The random archives' CDXJ (languages as tags to normalise, revisits, digests shared):
    compiled and pure-Python profiles are the same bytes and the oracle's."""
    rng = random.Random(seed)
    policy = random_policy(rng, optional={"lang"}, compiled=fast.load()) if seed % 2 else lang_policy()
    caps = random_captures(rng)
    langs = random_languages(rng, caps)
    path = tmp_path / "index.cdxj"
    path.write_bytes(b"".join(line + b"\n" for line in sorted(index_lines(caps, langs))))
    policy_path = str(tmp_path / "policy.yaml")
    with open(policy_path, "w") as f:
        json.dump(policy.to_dict(), f)
    outs = {}
    for pure in ("", "1"):
        monkeypatch.setenv(fast.PURE_ENV, pure)
        outs[pure] = str(tmp_path / ("p%s.cdxj" % pure))
        run_profile([str(path)], outs[pure], policy=policy_path, runner="inline", split_size=1 << 20)
    assert _body(outs[""]) == _body(outs["1"])
    assert read_profile(outs[""]) == oracle_profile(resolve_revisits(oracle_captures(caps, langs)), policy)
