"""The profile file: byte-ordered merge of job parts, header lines, atomic write."""

import orjson
import pytest

from profiler.files.output import header_lines, write_profile


def _headers(meta):
    return header_lines("https://a.example/", {"name": "p"}, ["in.cdx"], meta, [], True, created="T")


def _part(*keys):
    return lambda: [k + b"\t{}\n" for k in keys]


def test_sorted_parts_merge_in_byte_order(tmp_path):
    out = tmp_path / "p.cdxj"
    meta = b'!meta\t{"captures":3,"skipped":{"bad_json":1}}\n'
    parts = [lambda: [meta] + [b"* - - -\t{}\n", b"com,z)/* - - -\t{}\n"], _part(b"com,* - - -", b"org,* - - -")]
    n = write_profile(str(out), parts, _headers)
    lines = out.read_bytes().splitlines()
    assert n == len(lines) == 9
    assert lines == sorted(lines)
    assert lines[5:] == [b"* - - - {}", b"com,* - - - {}", b"com,z)/* - - - {}", b"org,* - - - {}"]
    run_meta = orjson.loads(next(l for l in lines if l.startswith(b'!meta {"inputs"'))[6:])
    assert run_meta == {"inputs": ["in.cdx"], "captures": 3, "skipped": {"bad_json": 1}}


def test_unsorted_part_is_sorted_not_trusted(tmp_path):
    """Hadoop/Spark parts are sorted only by their own partitioner: never trust order blindly."""
    out = tmp_path / "p.cdxj"
    write_profile(str(out), [_part(b"org,* - - -", b"com,* - - -"), _part(b"* - - -")], _headers)
    data = [l for l in out.read_bytes().splitlines() if not l.startswith(b"!")]
    assert data == [b"* - - - {}", b"com,* - - - {}", b"org,* - - - {}"]


def test_byte_order_not_locale_order(tmp_path):
    out = tmp_path / "p.cdxj"
    keys = [b"com,b)/* - - -", b"com,B)/* - - -", b"com,a-b)/* - - -", b"com,a)/* - - -", "com,\u00e9)/* - - -".encode()]
    write_profile(str(out), [_part(*sorted(keys))], _headers)
    data = [l[:-3] for l in out.read_bytes().splitlines() if not l.startswith(b"!")]
    assert data == sorted(keys)


def test_duplicate_keys_across_parts_are_an_error(tmp_path):
    out = tmp_path / "p.cdxj"
    out.write_bytes(b"old\n")
    with pytest.raises(ValueError, match="duplicate key"):
        write_profile(str(out), [_part(b"* - - -"), _part(b"* - - -")], _headers)
    assert out.read_bytes() == b"old\n"


def test_header_lines_are_sorted_and_complete():
    lines = header_lines(None, {"name": "p"}, ["a"], {"captures": 1, "skipped": {}},
                         [{"path": "x", "reason": "r"}], False, created="T")
    assert lines == sorted(lines)
    assert [l.split(b" ", 1)[0] for l in lines] == [b"!context", b"!id", b"!keys", b"!meta", b"!meta"]
    run_meta = orjson.loads(lines[3][6:])
    assert run_meta["skipped"] == {"unusable_file": 1} and run_meta["skipped_files"][0]["path"] == "x"
    about = orjson.loads(lines[4][6:])
    assert about["type"] == "ArchiveProfile" and about["revisits"] == "unresolved" and about["created"] == "T"


def _write_parts(tmp_path, parts, newline_at_end=True):
    paths = []
    for i, lines in enumerate(parts):
        path = tmp_path / ("part-%05d" % i)
        data = b"".join(line + b"\n" for line in lines)
        path.write_bytes(data if newline_at_end or not data else data[:-1])
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("pure", [False, True])
@pytest.mark.parametrize("seed", range(40))
def test_local_parts_fast_path_writes_the_merge_bytes(tmp_path, monkeypatch, seed, pure):
    """Local parts (ordered ranges, overlapping, unsorted, duplicates, meta, no final newline,
    tiny blocks): the file is the merge path's, or the same error; the blocks checked and
    written by the compiled ordered_lines() or in Python."""
    import random
    from profiler.accel import fast
    from profiler.files import output
    if pure:
        monkeypatch.setenv(fast.PURE_ENV, "1")
    rng = random.Random(seed)
    keys = sorted({("%s,%s)/%d - - -" % (rng.choice("abc"), rng.choice("xyz"), rng.randrange(50))).encode()
                   for _ in range(rng.randint(0, 60))})
    lines = [k + b"\t{\"n\":%d}" % i for i, k in enumerate(keys)]
    if rng.random() < 0.7:
        lines.insert(0, b'!meta\t{"captures":%d,"skipped":{}}' % len(keys))
    cuts = sorted(rng.sample(range(len(lines) + 1), min(len(lines) + 1, rng.randint(0, 3))))
    parts = [lines[a:b] for a, b in zip([0] + cuts, cuts + [len(lines)])]
    kind = rng.choice(["ordered", "ordered", "shuffled parts", "overlap", "unsorted", "duplicate"])
    if kind == "shuffled parts":
        rng.shuffle(parts)
    elif kind == "overlap" and len(parts) > 1 and parts[0] and parts[1]:
        parts[0], parts[1] = sorted(parts[0] + parts[1])[::2], sorted(parts[0] + parts[1])[1::2]
    elif kind == "unsorted" and parts and len(parts[0]) > 2:
        parts[0] = parts[0][::-1]
    elif kind == "duplicate" and parts and parts[-1]:
        parts[-1] = parts[-1] + [parts[-1][-1]]
    paths = _write_parts(tmp_path, parts, rng.random() < 0.8)
    readers = [lambda p=p: open(p, "rb").read().splitlines(keepends=True) for p in paths]

    def run(out, local):
        try:
            if local:
                return output.write_profile(str(out), readers, _headers, paths), out.read_bytes()
            return output.write_profile(str(out), readers, _headers), out.read_bytes()
        except ValueError as e:
            return "error", str(e)
    old = run(tmp_path / "merge.cdxj", False)
    new = run(tmp_path / "fast.cdxj", True)
    assert new == old
    if old[0] != "error":      # any block size: the same file, or no answer (overlap, unsorted part)
        try:
            n = output.write_ordered_parts(str(tmp_path / "x.cdxj"), paths, _headers, block=rng.randint(1, 40))
        except output.UnsortedPart:
            n = None
        assert n is None or (n, (tmp_path / "x.cdxj").read_bytes()) == old
