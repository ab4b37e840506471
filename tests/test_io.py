"""codesign.io: atomic writes leave either the old file or the new one, never a part; a file
a user names that cannot be read is one UserError line naming it."""

import os
import re
import stat

import pytest

from codesign.errors import UserError
from codesign.io import parse_user_text, read_user_file, write_csv_atomic, write_text_atomic


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


@pytest.mark.parametrize("content, reason", [
    (None, r"cannot read \(No such file or directory\)"),
    ("folder", r"cannot read \(a folder\)"),
    (b'{"a": 1,\n "b": "\xff"}', r"not UTF-8 text \(line 2, byte 16\)"),
    (b'{"a": 1,\n "b": }', r"not valid JSON \(line 2, column 7: Expecting value\)"),
])
def test_a_user_file_that_cannot_be_read_is_one_line_naming_it(tmp_path, content, reason):
    path = tmp_path / "user.json"
    if content == "folder":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(UserError) as caught:
        read_user_file(path, "a test document", "json")
    assert re.fullmatch(rf"{re.escape(str(path))}: {reason}; expected a test document", str(caught.value))


def test_toml_errors_give_line_and_column_and_a_bom_is_dropped(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_bytes(b'name = "x"\n[problem\n')
    with pytest.raises(UserError, match=r"spec.toml: not valid TOML \(line 2, column 9: Expected ']' .*\); "
                                        r"expected a spec$"):
        read_user_file(path, "a spec", "toml")
    path.write_bytes(b'\xef\xbb\xbfname = "x"\n')
    assert read_user_file(path, "a spec", "toml") == {"name": "x"}
    with pytest.raises(ValueError, match="format 'yaml'"):
        parse_user_text("", "x", "a spec", "yaml")
