"""FacetRedux's criteria and levels (spec section 2): the hour level, the mime class level and the
size field, profiled from generated CDX by the inline and local runners, compiled and in pure
Python, equal the brute-force oracle's numbers."""

import random

import pytest

from profiler.model import criteria
from profiler.model.policy import load as load_policy
from profiler.run.profile import run_profile

from helpers.cliruns import run
from helpers.exactness import assert_same_profile, pure_python, varied_lines, write_files
from helpers.oracle import content_class, profile as oracle_profile, read_captures, read_profile, \
    resolve_revisits, size_class
from helpers.policies import write_policy

#: one media type of every row of the spec's class table, and some of none
TYPES = ["text/html", "application/xhtml+xml", "image/gif", "image/svg+xml", "audio/mpeg", "video/mp4",
         "application/x-shockwave-flash", "application/vnd.apple.mpegurl", "application/dash+xml",
         "application/pdf", "application/msword", "application/rtf", "application/epub+zip",
         "application/vnd.ms-excel", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
         "application/vnd.oasis.opendocument.text", "text/plain", "text/csv", "text/css", "text/javascript",
         "application/javascript", "application/x-javascript", "application/json", "application/ld+json",
         "text/xml", "application/xml", "application/rss+xml", "application/atom+xml", "application/wasm",
         "font/woff2", "application/font-woff", "application/octet-stream", "text/x-unknown", "unk",
         "warc/revisit", "image", "imagex/png"]
LENGTHS = [0, 999, 1000, 9999, 10000, 99999, 100000, 999999, 10 ** 6, 10 ** 7 - 1, 10 ** 7, 10 ** 8, 10 ** 9 - 1,
           10 ** 9, 5 * 10 ** 9]

POLICY = {
    "name": "facetredux-levels",
    "host_depth": 2,
    "levels": {"datetime": ["year", "month", "hour"], "mime": ["type", "category", "class"],
               "status": ["class"], "size": ["class"]},
    "emit": {
        "root": "all",
        "tld": [{"datetime": ["any", "hour"], "mime": ["any", "class"], "size": ["any", "class"]},
                {"mime": ["type", "category", "class"]}],
        "domain": {"datetime": ["any"], "mime": ["class"], "status": ["any"]},
        "host": "none",
    },
}


def test_the_class_and_size_tables_are_the_spec_s():
    for mime in TYPES:
        assert criteria.mime_class(mime) == content_class(mime), mime
    assert {content_class(m) for m in TYPES} == {"html", "image", "media", "document", "code", "other", "unk"}
    from profiler.model import normalise
    for length in LENGTHS:
        assert normalise.size_class(length) == size_class(length), length


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("facetredux")
    rng = random.Random(7)

    def type_and_length(f):
        if f[3] != "warc/revisit" and rng.random() < 0.5:
            f[3] = rng.choice(TYPES)
        if rng.random() < 0.3:
            f[8] = str(rng.choice(LENGTHS))
    lines = sorted(varied_lines(11, 300, type_and_length))
    paths = write_files(str(folder), lines, n_files=3, seed=5)
    return paths, write_policy(folder / "levels.yaml", POLICY), folder


@pytest.mark.parametrize("runner, pure", [("inline", False), ("inline", True), ("local", False)])
def test_the_levels_and_size_equal_the_oracle(made, runner, pure):
    paths, policy, folder = made
    out = str(folder / ("out-%s-%s.cdxj" % (runner, pure)))
    if pure:
        with pure_python():
            run_profile(paths, out, policy=policy, runner=runner, cores=2)
    else:
        run_profile(paths, out, policy=policy, runner=runner, cores=2, split_size=20000)
    got = read_profile(out)
    expected = oracle_profile(resolve_revisits(read_captures(paths)), load_policy(policy))
    assert_same_profile(got, expected)
    fields = {k.split()[1] for k in got} | {k.split()[2] for k in got} | {k.split()[4] for k in got}
    assert {"html", "image", "media", "document", "code", "other", "1g+", "0-1k"} <= fields
    assert any(len(k.split()[1]) == 10 for k in got)


def test_the_facetredux_policy_runs_compiled_and_equals_the_oracle(tmp_path):
    """The bundled facetredux policy: every criterion found by the compiled map side, and a profile
    of generated CDX with a collection pattern equal to the oracle's."""
    import re
    from profiler.accel import fast
    from profiler.job.kernels import finds_values, supports
    policy = load_policy("facetredux")
    assert policy.names == ("datetime", "mime", "status", "size", "collection", "depth")
    module = fast.load()
    if module is not None:
        assert supports(module, policy) and finds_values(module, policy)
    status = policy.names.index("status")
    assert all(combo[status] == "any" or set(combo) - {combo[status]} == {"any"}
               for combos in policy.emit.values() for combo in combos)
    rng = random.Random(2)

    def name_file(f):
        f[10] = "crawl-%s-%05d.warc.gz" % (f[1][:4], rng.randrange(1000))
    lines = varied_lines(13, 250, name_file)
    path = tmp_path / "g.cdx"
    path.write_text(" CDX N b a m s k r M S V g\n" + "\n".join(sorted(lines)) + "\n")
    out = str(tmp_path / "g.cdxj")
    pattern = r"^crawl-\d{4}-\d{4}(\d)"
    run_profile([str(path)], out, policy="facetredux", runner="local", cores=2,
                collections={"pattern": pattern})
    caps = read_captures([str(path)])
    for cap, line in zip(caps, sorted(lines)):
        cap.append({"collection": re.search(pattern, line.split()[10]).group(1)})
    assert_same_profile(read_profile(out), oracle_profile(resolve_revisits(caps), policy))


def _profile_of_mimes(tmp_path, mimes, mime_levels, pure):
    """The profile lines (read_profile) of a CDX of one capture per MIME field (10, 20, 40, ...
    bytes), under a policy of years, these mime levels and status classes."""
    index = tmp_path / "c.cdx"
    index.write_text("".join("com,example)/%d 20130101000000 http://example.com/%d %s 200 D%d - - %d 0 f.warc.gz\n"
                             % (i, i, mime, i, 10 << i) for i, mime in enumerate(mimes)))
    policy = write_policy(tmp_path / "p.yaml", {"name": "pm", "levels": {"datetime": ["year"], "mime": mime_levels,
                                                                          "status": ["class"]}})
    out = tmp_path / "o.cdxj"
    if pure:
        with pure_python():
            run_profile([str(index)], str(out), policy=policy)
    else:
        run_profile([str(index)], str(out), policy=policy)
    return read_profile(str(out))


@pytest.mark.parametrize("pure", [False, True])
def test_a_bare_class_name_as_a_mime_type_never_shares_the_class_s_key(tmp_path, pure):
    """A mime field 'code' (no media type) is 'unk': the class 'code' of text/css keeps its own
    captures, whatever the kernels."""
    got = _profile_of_mimes(tmp_path, ["code", "text/css", "Document"], ["type", "class"], pure)
    assert got["* - code -"][0] == 1 and got["* - unk -"][0] == 2 and "* - document -" not in got


@pytest.mark.parametrize("pure", [False, True])
def test_a_mime_field_spelt_as_a_category_or_without_a_type_never_shares_another_level_s_key(tmp_path, pure):
    """A mime field 'text/*' wrote the type line '* 2013 text/*' that the category's line of every
    text type is (2 captures for the type's 1); '/' was a category that validate read as a type.
    Both are 'unk', whatever the kernels."""
    got = _profile_of_mimes(tmp_path, ["text/*", "text/html", "/"], ["type", "category"], pure)
    assert got["* - text/* -"][0] == 1 and got["* - text/html -"][0] == 1 and got["* - unk -"][0] == 2
    assert "* - / -" not in got


@pytest.mark.parametrize("pure", [False, True])
def test_a_collection_named_unk_never_shares_the_key_of_captures_of_no_collection(tmp_path, capsys, pure):
    """A WARC file name whose collection is 'unk' (CDX g 'unk-1.warc.gz') wrote the field 'unk' of the
    captures no pattern names (a 2 for the collection's 1); it is '%75nk', as '-' is '%2D', whatever
    the kernels, and query tells the two apart."""
    index = tmp_path / "c.cdx"
    index.write_text(" CDX N b a m s k r M S V g\n"
                     "com,example)/a 20130101000000 http://example.com/a text/html 200 AAA - - 10 0 unk-1.warc.gz\n"
                     "com,example)/b 20130101000000 http://example.com/b text/html 200 BBB - - 20 0 -\n"
                     "com,example)/c 20130101000000 http://example.com/c text/html 200 CCC - - 40 0 --1.warc.gz\n"
                     "com,example)/d 20130101000000 http://example.com/d text/html 200 DDD - - 80 0 web-1.warc.gz\n")
    policy = write_policy(tmp_path / "p.yaml", {"name": "pc", "levels": {"datetime": ["year"], "mime": ["type"],
                                                                          "status": ["class"], "collection": ["id"]}})
    out = tmp_path / "o.cdxj"
    collections = {"pattern": r"^([^.]+)-1\.", "label": None, "input_labels": []}
    if pure:
        with pure_python():
            run_profile([str(index)], str(out), policy=policy, collections=collections)
    else:
        run_profile([str(index)], str(out), policy=policy, collections=collections)
    got = read_profile(str(out))
    assert {k: v[0] for k, v in got.items() if k.startswith("* - - - ")} == {
        "* - - - -": 4, "* - - - unk": 1, "* - - - %75nk": 1, "* - - - %2D": 1, "* - - - web": 1}
    for asked, total in (("unk", 1), ("%75nk", 1), ("-", 4)):
        capsys.readouterr()
        assert run("query", out, "--collection", asked, "--feature", "urim") == 0
        assert capsys.readouterr().out.endswith(' {"urim.total":%d}\n' % total), asked
