"""A merge of profiles whose revisits were resolved each on its own bounds a key with a mime or
status by a line that holds all its captures whatever they resolve to: never a line of one size
class, collection or depth (those are the capture's own, not its original's), and, where the
policy writes no line with mime and status '-', the sum of the lines that part the same captures.
Checked against the profile of the union (a revisit here, its original in the other input)."""

import json

import pytest

from profiler.run.profile import run_profile
from profiler.toolkit.merge import merge
from profiler.toolkit.query import query

from helpers.oracle import read_profile

ORIGINAL = "com,a)/ 20120101000000 http://a.com/ text/html 200 XXXX - - 100 0 a.warc.gz"
REVISIT = "com,a)/ 20130101000000 http://a.com/ warc/revisit - XXXX - - 5000 0 b.warc.gz"
#: size classes at the root (the envelope it took was '* - - - 1k-10k', the revisit's own size)
SIZES = {"host_depth": 3, "path_depth": 0, "exact_urls": False,
         "levels": {"datetime": ["year"], "mime": ["type"], "status": ["code"], "size": ["class"]},
         "emit": {"root": "all", "tld": "none", "domain": "none", "host": "none", "path": "none"}}
#: types at the root only: no line with mime and status '-' (the line was left exact, and wrong)
TYPES_ONLY = {"host_depth": 3, "path_depth": 0, "exact_urls": False,
              "levels": {"datetime": ["year"], "mime": ["type"], "status": ["code"]},
              "emit": {"root": {"mime": ["type"]}, "tld": "none", "domain": "none", "host": "none", "path": "none"}}


def _profile(tmp_path, name, lines, policy):
    cdx = tmp_path / (name + ".cdx")
    cdx.write_text(" CDX N b a m s k r M S V g\n" + "".join(line + "\n" for line in lines))
    policy_path = tmp_path / "policy.yaml"
    policy_path.write_text(json.dumps(policy))
    out = str(tmp_path / (name + ".cdxj"))
    run_profile([str(cdx)], out, policy=str(policy_path), runner="inline")
    return out


def _within(flat, true):
    """Whether every feature of a query's flat value (with its bounds) holds the true tuple."""
    names = ["urim.total", "urim.min", "urim.max", "urir", "bytes", "digests", "dedup_bytes", "first", "last"]
    for name, value in zip(names, true):
        low, high = flat.get("bounds", {}).get(name, (flat.get(name), flat.get(name)))
        if not low <= value <= high:
            return False
    return True


@pytest.mark.parametrize("policy", [SIZES, TYPES_ONLY], ids=["sizes", "types_only"])
def test_a_revisit_resolved_in_the_other_input_stays_within_bounds(tmp_path, policy):
    a = _profile(tmp_path, "a", [ORIGINAL], policy)
    b = _profile(tmp_path, "b", [REVISIT], policy)
    union = read_profile(_profile(tmp_path, "union", [ORIGINAL, REVISIT], policy))
    merged = str(tmp_path / "merged.cdxj")
    merge([a, b], merged)
    fields = ["surt", "datetime", "mime", "status"] + (["size"] if "size" in policy["levels"] else [])
    asked = set(union) | set(read_profile(merged))
    assert any(" text/html " in k for k in asked)
    for key in sorted(asked):
        found, note, _ = query(merged, dict(zip(fields, key.split(" "))))
        true = union.get(key, (0,) * 7)        # no capture: no first or last to hold
        if key not in union and not found:
            continue                        # no capture, none claimed
        assert found, (key, note)
        assert _within(found[0][1], true), (key, true, found[0][1])


def test_a_key_only_revisits_give_is_never_said_to_hold_none(tmp_path):
    """A key no input has (its one capture a revisit whose original is in the other input), under a
    policy with no line holding all its captures: bounds from the lines that part them (the revisit's
    own), never 'none are held'."""
    policy = dict(TYPES_ONLY, levels=dict(TYPES_ONLY["levels"]),
                  emit=dict(TYPES_ONLY["emit"], root={"datetime": ["year"], "mime": ["type"]}))
    a = _profile(tmp_path, "a", [ORIGINAL], policy)
    b = _profile(tmp_path, "b", [REVISIT], policy)
    union = read_profile(_profile(tmp_path, "union", [ORIGINAL, REVISIT], policy))
    assert union["* 2013 text/html -"][0] == 1
    merged = str(tmp_path / "merged.cdxj")
    merge([a, b], merged)
    assert "* 2013 text/html -" not in read_profile(merged)
    found, note, _ = query(merged, {"datetime": "2013", "mime": "text/html"})
    assert "none are held" not in note
    assert found and _within(found[0][1], union["* 2013 text/html -"]), (note, found)


def test_a_grouping_says_keys_only_revisits_give_are_not_listed(tmp_path, capsys):
    """A grouping by mime of such a merge lists the lines it has, which are bounded, and says on
    stderr that keys only revisits resolved in another input give (here 2013 text/html) are not
    listed, exit 0; a grouping over '-' mimes and statuses (every capture counted whatever it
    resolves to) has no such note."""
    from profiler.cli.main import main
    policy = dict(TYPES_ONLY, emit=dict(TYPES_ONLY["emit"], root={"datetime": ["any", "year"], "mime": ["any", "type"]}))
    a = _profile(tmp_path, "a", [ORIGINAL], policy)
    b = _profile(tmp_path, "b", [REVISIT], policy)
    merged = str(tmp_path / "merged.cdxj")
    merge([a, b], merged)
    capsys.readouterr()
    assert main(["query", merged, "--datetime", "2013", "--group", "mime"]) in (0, None)
    out, err = capsys.readouterr()
    assert out.startswith("* 2013 warc/revisit - ") and "text/html" not in out
    assert "not listed" in err and "absent_keys" in err
    assert main(["query", merged, "--group", "datetime"]) in (0, None)
    out, err = capsys.readouterr()
    assert "* 2012 - - " in out and "* 2013 - - " in out and "not listed" not in err
