"""`codesign transfer` in process: where it finds the catalog (--catalog, or the default
from any working directory), and how it treats --out (checked before the work, never
overwritten without --force, no temporary file names in its errors)."""

import json
import shutil
from pathlib import Path

import pytest

from codesign.cli import main

REPO = Path(__file__).resolve().parents[1]
HUMAN = REPO / "docs" / "designs" / "human-capped-thesis-walking.json"


def one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def test_from_another_folder_with_the_default_catalog_and_force(tmp_path, monkeypatch, capsys):
    # outside the repository there is no topologies/catalog.json: the repository's copy is used
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "codesign.json"
    out.write_text("keep me\n")
    assert main(["transfer", str(HUMAN), "--out", "codesign.json"]) == 2
    assert one_error_line(capsys).endswith(
        "--out codesign.json: already exists; expected a new file path (or --force)")
    assert out.read_text() == "keep me\n"   # refused before any work, untouched
    assert main(["transfer", str(HUMAN), "--out", "codesign.json", "--force"]) == 0
    assert "wrote codesign.json (topology 1, actuators 1-3)" in capsys.readouterr().out
    design = json.loads(out.read_text())
    assert design["topology"] == 1 and design["actuators"] == [1, 3]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["codesign.json"]   # no temporary files


def test_catalog_option_is_read_from_another_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    catalog = tmp_path / "my-catalog.json"
    shutil.copy(REPO / "topologies" / "catalog.json", catalog)
    assert main(["transfer", str(HUMAN), "--out", "a.json", "--catalog", "my-catalog.json"]) == 0
    assert json.loads((tmp_path / "a.json").read_text())["topology"] == 1
    capsys.readouterr()
    # the option is what is read: a broken or missing catalog is one line naming it (another
    # name: catalogs are cached by path within a process)
    (tmp_path / "broken.json").write_text("{not json")
    assert main(["transfer", str(HUMAN), "--out", "b.json", "--catalog", "broken.json"]) == 2
    assert one_error_line(capsys).startswith("codesign transfer: error: broken.json: not valid JSON")
    assert main(["transfer", str(HUMAN), "--out", "b.json", "--catalog", "missing.json"]) == 2
    assert "missing.json: no topology catalog" in one_error_line(capsys)
    assert not (tmp_path / "b.json").exists()


@pytest.mark.parametrize("where", ["nodir/x.json", "afile/x.json"])
def test_out_in_a_folder_that_cannot_be_written_names_the_out_path(tmp_path, capsys, where):
    (tmp_path / "afile").write_text("x")
    out = tmp_path / where
    # --catalog missing too: the --out check comes first, before any work
    assert main(["transfer", str(HUMAN), "--out", str(out), "--catalog", str(tmp_path / "none.json")]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"codesign transfer: error: --out {out}: cannot write there")
    assert line.endswith("expected a writable folder")
    assert ".tmp" not in line and "probe" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]   # nothing made


def test_out_that_is_a_folder_is_refused(tmp_path, capsys):
    assert main(["transfer", str(HUMAN), "--out", str(tmp_path), "--force"]) == 2
    assert one_error_line(capsys).endswith(f"--out {tmp_path}: is a folder; expected a JSON file path")
