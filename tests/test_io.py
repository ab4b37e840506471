"""codesign.io: atomic writes leave either the old file or the new one, never a part."""

import os
import stat

import pytest

from codesign.io import write_csv_atomic, write_text_atomic


def test_write_replaces_whole_and_uses_umask_permissions(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    mask = os.umask(0o027)
    try:
        write_text_atomic(path, "new")
    finally:
        os.umask(mask)
    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_failed_write_keeps_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("old")
    with pytest.raises(TypeError):
        write_text_atomic(path, 12345)  # neither str nor bytes
    with pytest.raises(ValueError):
        write_csv_atomic(path, [{"a": 1}, {"b": 2}])  # a row with an unknown column
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_csv_header_from_the_first_row(tmp_path):
    path = tmp_path / "t.csv"
    write_csv_atomic(path, [{"n": 1, "x": 0.5}, {"n": 2, "x": 1.5}])
    assert path.read_text().splitlines() == ["n,x", "1,0.5", "2,1.5"]
