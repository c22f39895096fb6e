import orjson

from profiler.nightly import fold
from profiler.files.profilefile import FEATURES


def test_run_meta_of_several_profiles_counts_each_skip_once():
    runs = [{"inputs": ["/a", "/b"], "captures": 5, "skipped": {"bad_line": 1, "unusable_file": 1},
             "skipped_files": [{"path": "/z", "reason": "r"}]},
            {"inputs": ["/c"], "captures": 2, "skipped": {"bad_line": 2, "truncated_file": 1}},
            {"skipped_files": [{"path": "/y", "reason": "q"}]}]
    inputs, meta, skipped_files = fold.combined_run_meta(runs)
    assert inputs == ["/a", "/b", "/c"]
    assert meta == {"captures": 7, "skipped": {"bad_line": 3, "truncated_file": 1}}
    assert [f["path"] for f in skipped_files] == ["/y", "/z"]
    lines = fold.headers(runs, {}, "https://a.example/", {"name": "p"}, True, list(FEATURES), "2026-11-22T00:00:00Z")
    run = [orjson.loads(l[6:]) for l in lines if l.startswith(b"!meta") and b'"inputs"' in l][0]
    assert run["skipped"] == {"bad_line": 3, "truncated_file": 1, "unusable_file": 2}
    assert lines == sorted(lines)


def test_exact_features_after_a_fold():
    assert fold.exact_after({}, frozenset(), frozenset()) == list(FEATURES)
    assert fold.exact_after({}, {b"k"}, frozenset()) == ["urim.total", "bytes", "digests", "dedup_bytes",
                                                         "first", "last"]
    carried = {"merge": {"exact": ["urim.total", "bytes", "first", "last", "urir", "urim.min", "urim.max"]}}
    assert fold.exact_after(carried, frozenset(), frozenset()) == ["urim.total", "urim.min", "urim.max",
                                                                  "urir", "bytes", "first", "last"]
    lines = fold.headers([{}], carried, None, {}, True, fold.exact_after(carried, frozenset(), {b"k"}))
    about = [orjson.loads(l[6:]) for l in lines if b'"policy"' in l][0]
    assert about["merge"]["bounds"] == ["digests", "dedup_bytes"]


def test_fold_adds_disjoint_keys_and_bounds_the_named_ones(tmp_path):
    def profile(name, lines):
        path = tmp_path / name
        path.write_bytes(b'!keys ["surt","datetime","mime","status"]\n' + b"".join(
            k + b" " + orjson.dumps(v) + b"\n" for k, v in lines))
        return str(path)

    def v(total, urir, mn, mx):
        return {"urim": {"total": total, "min": mn, "max": mx}, "urir": urir, "bytes": total * 10, "digests": total,
                "dedup_bytes": total * 10, "first": "20200101000000", "last": "20210101000000"}
    old = profile("old", [(b"* - - -", v(5, 3, 1, 3)), (b"com,* - - -", v(5, 3, 1, 3))])
    new = profile("new", [(b"* - - -", v(2, 1, 2, 2)), (b"org,* - - -", v(2, 1, 2, 2))])
    out = str(tmp_path / "out")
    counts = fold.fold(old, new, out, [b"!keys x"], keys_urir={b"* - - -"})
    lines = open(out, "rb").read().splitlines()
    assert counts == {"lines": 3, "merged": 1, "bounded": 1}
    star = orjson.loads(lines[1].split(b" ", 4)[4])
    assert star["urim"] == {"total": 7, "min": 1, "max": 3} and star["urir"] == 4
    assert star["bounds"]["urir"] == [3, 4]
    fold.fold(old, None, out, [b"!keys x"])
    assert open(out, "rb").read().splitlines()[1:] == open(old, "rb").read().splitlines()[1:]
