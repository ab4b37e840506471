"""The index of the stored designs (docs/designs/README.md) is what `codesign designs index`
writes now from the design files and docs/designs/index.toml; the README's table of
recommended designs is the index's; a design with no entry, an entry with no design, or a
bad entry is one line and exit 2 with nothing written.

Truths: the design files as JSON (read here with the json module, not the index's
reader), the folder listing, and the committed texts."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codesign.report.design_index import index_markdown, parse_index

ROOT = Path(__file__).resolve().parents[2]
DESIGNS = ROOT / "docs" / "designs"


def codesign(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "codesign.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def test_the_committed_index_is_what_the_command_writes_now():
    assert (DESIGNS / "README.md").read_text() == index_markdown(DESIGNS, ROOT), \
        "docs/designs/README.md is not current: run `codesign designs index`"


def test_every_design_file_is_indexed_once_with_what_its_file_says():
    files = sorted(p.name for p in DESIGNS.glob("*.json"))
    entries = parse_index(DESIGNS / "index.toml")
    assert sorted(e.file for e in entries) == files
    text = (DESIGNS / "README.md").read_text()
    for name in files:
        doc = json.loads((DESIGNS / name).read_text())
        row = next(line for line in text.splitlines() if line.startswith(f"| [`{name}`]"))
        device = ("the human alone" if doc["topology"] is None else
                  f"topology {doc['topology']}, actuators {'-'.join(map(str, doc['actuators']))}")
        assert f"| {device} | {len(doc['params'])} parameters" in row, row
        if "problem" not in doc:
            assert "| not recorded in the file |" in row, row


def test_superseded_and_failed_designs_live_with_their_study():
    moved = {"codesign-demo.json": "physical-stages", "codesign-posture-study.json": "physical-stages",
             "effort-first-t02.json": "active-wearer", "wearer-t01.json": "wearer-space",
             "wearer-t02.json": "wearer-space", "wearer-t05.json": "wearer-space"}
    for name, study in moved.items():
        assert not (DESIGNS / name).exists() and (ROOT / "studies" / study / name).is_file(), name
    for entry in parse_index(DESIGNS / "index.toml"):
        assert (ROOT / "studies" / entry.study / "README.md").is_file(), entry.study


def test_the_readme_recommends_what_the_index_recommends():
    lines = (ROOT / "README.md").read_text().splitlines()
    start = lines.index("| design | what it is | verdict | key numbers |")
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    expected = [f"| [`{e.file}`](docs/designs/{e.file}) | {e.what} | {e.verdict} | {e.numbers} |"
                for e in parse_index(DESIGNS / "index.toml") if e.status == "recommended"]
    assert rows == expected


def _copy(tmp_path: Path) -> Path:
    """A repository-like folder: docs/designs and the studies the index names."""
    folder = tmp_path / "docs" / "designs"
    shutil.copytree(DESIGNS, folder)
    shutil.copytree(ROOT / "studies", tmp_path / "studies")
    shutil.copytree(ROOT / "pipelines", tmp_path / "pipelines")
    for entry in parse_index(DESIGNS / "index.toml"):          # the tests the index names
        if entry.checked_by:
            (tmp_path / entry.checked_by).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / entry.checked_by, tmp_path / entry.checked_by)
    return folder


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_the_command_writes_the_index_and_checks_it(tmp_path):
    folder = _copy(tmp_path)
    (folder / "README.md").unlink()
    done = codesign("designs", "index", "--check", cwd=tmp_path)
    assert done.returncode == 1 and "not current" in done.stdout
    done = codesign("designs", "index", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (folder / "README.md").read_text() == (DESIGNS / "README.md").read_text()
    assert codesign("designs", "index", "--check", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("change, message", [
    (lambda f: (f / "extra.json").write_text((f / "wearer-demo.json").read_text()),
     r".*index\.toml: no entry for extra\.json; expected one \[\[design\]\] per design file in .*"),
    (lambda f: (f / "wearer-demo.json").unlink(),
     r".*index\.toml: design\[\d+\]\.file: 'wearer-demo\.json': not in .*; expected a design file there .*"),
    (lambda f: (f / "index.toml").write_text((f / "index.toml").read_text().replace(
        'status = "recommended"', 'status = "best"', 1)),
     r".*index\.toml: design\[0\]\.status: 'best'; expected one of recommended, reproduces"),
    (lambda f: (f / "index.toml").write_text((f / "index.toml").read_text().replace(
        'study = "active-wearer"', 'studdy = "active-wearer"', 1)),
     r".*index\.toml: design\[0\]: unknown key 'studdy'; expected file, status, .*"),
])
def test_a_bad_index_is_one_line_and_writes_nothing(tmp_path, change, message):
    folder = _copy(tmp_path)
    change(folder)
    before = _listing(folder)
    done = codesign("designs", "index", cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert re.fullmatch(r"codesign designs: error: " + message, lines[0]), lines[0]
    assert _listing(folder) == before
