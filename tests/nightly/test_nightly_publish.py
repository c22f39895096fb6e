import datetime
import os

from profiler.nightly import publish

NOW = datetime.datetime(2026, 11, 22, 3, 0, 0, tzinfo=datetime.timezone.utc)


def test_stamps_are_unique_and_sort_in_time_order():
    taken = set()
    stamps = []
    for _ in range(12):
        s = publish.stamp(NOW, taken)
        taken.add(s)
        stamps.append(s)
    assert stamps[0] == "20261122T030000Z" and stamps[1] == "20261122T030000Z_02"
    names = [os.path.basename(publish.version_path("/x", "archive", s)) for s in stamps]
    later = publish.version_path("/x", "archive", publish.stamp(NOW + datetime.timedelta(seconds=1)))
    assert sorted(names + [os.path.basename(later)]) == names + [os.path.basename(later)]


def test_latest_link_is_replaced_atomically_and_versions_pruned(tmp_path):
    folder = str(tmp_path)
    for s in ("20261120T030000Z", "20261121T030000Z", "20261122T030000Z"):
        for suffix in publish.SUFFIXES:
            open(publish.version_path(folder, "archive", s, suffix), "w").write(s)
    publish.point_latest(folder, "archive", publish.version_path(folder, "archive", "20261121T030000Z"))
    publish.point_latest(folder, "archive", publish.version_path(folder, "archive", "20261122T030000Z"))
    assert publish.latest_target(folder, "archive") == "archive-20261122T030000Z.cdxj"
    assert open(publish.latest_path(folder, "archive")).read() == "20261122T030000Z"
    removed = publish.prune(folder, "archive", {"20261121T030000Z", "20261122T030000Z"})
    assert [os.path.basename(p) for p in removed] == sorted(
        "archive-20261120T030000Z" + s for s in publish.SUFFIXES)
    open(os.path.join(folder, ".archive-20261123T030000Z.cdxj.abc.tmp"), "w").close()
    open(os.path.join(folder, "other-20261120T030000Z.cdxj"), "w").close()
    assert publish.remove_temp_files(folder, "archive") == [".archive-20261123T030000Z.cdxj.abc.tmp"]
    assert publish.prune(folder, "archive", set()) and os.path.exists(os.path.join(folder, "other-20261120T030000Z.cdxj"))


def test_place_copies_atomically_across_filesystems(tmp_path, monkeypatch):
    """A rename across filesystems fails (EXDEV): the file is copied beside dst through a temp
    file and renamed; the source is removed; an old dst stays until the copy is complete."""
    import errno
    src, dst = tmp_path / "work.cdxj", tmp_path / "out" / "archive.cdxj"
    dst.parent.mkdir()
    src.write_bytes(b"new profile\n")
    dst.write_bytes(b"old profile\n")
    real = os.replace

    def replace(a, b):
        if str(a) == str(src):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real(a, b)
    monkeypatch.setattr(os, "replace", replace)
    publish.place(str(src), str(dst))
    assert dst.read_bytes() == b"new profile\n" and not src.exists()
    assert os.listdir(dst.parent) == ["archive.cdxj"]
