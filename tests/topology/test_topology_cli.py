"""`codesign topologies` end to end in a subprocess: outputs, determinism, bad input."""

import json
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import pytest

from codesign.topology.catalog import load_catalog

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "codesign.cli", "topologies", *args], capture_output=True, text=True, timeout=300
    )


def test_writes_catalog_table_and_figure(tmp_path):
    out = tmp_path / "cat"
    result = run_cli("--out", str(out))
    assert result.returncode == 0, result.stderr
    catalog = load_catalog(out / "catalog.json")
    assert len(catalog.subspaces()) == 126
    doc = json.loads((out / "catalog.json").read_text())
    assert doc["settings"] == {"wr_links": 4, "added_joints": 6, "mobility": 2}
    assert [s["id"] for s in doc["subspaces"]] == list(range(1, 127))
    table = (out / "README.md").read_text()
    rows = [line.split("|")[1:-1] for line in table.splitlines() if line.startswith("| ")]
    body = [r for r in rows if r[0].strip().isdigit()]
    assert [int(r[0]) for r in body] == list(range(1, 11))
    assert sum(int(r[2]) for r in body) == 126  # the N column, as in Table 5.1
    assert all(r[3].count("(") == int(r[2]) for r in body)
    assert "**126**" in table
    image = matplotlib.image.imread(out / "topologies.png")
    assert image.shape[0] > 400 and image.shape[1] > 1000
    assert not list(out.glob(".*.tmp"))  # no temporary files left behind
    # same bytes on a second run
    again = tmp_path / "again"
    assert run_cli("--out", str(again), "--no-figure").returncode == 0
    assert (again / "catalog.json").read_bytes() == (out / "catalog.json").read_bytes()


@pytest.mark.parametrize(
    "args, key",
    [
        (["--wr-links", "0"], "--wr-links"),
        (["--wr-links", "7"], "--wr-links"),
        (["--added-joints", "2"], "--added-joints"),
        (["--mobility", "0"], "--mobility"),
        (["--wr-links", "5", "--added-joints", "7"], "--mobility"),
        (["--wr-links", "four"], "--wr-links"),
    ],
)
def test_bad_settings_one_line_exit_2(tmp_path, args, key):
    out = tmp_path / "cat"
    result = run_cli("--out", str(out), "--no-figure", *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and key in lines[0]
    assert "expected" in lines[0] or "invalid int value" in lines[0]
    assert not (out / "catalog.json").exists()


def test_out_is_a_file(tmp_path):
    target = tmp_path / "file.txt"
    target.write_text("x")
    result = run_cli("--out", str(target), "--no-figure")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "--out" in result.stderr


def test_bad_catalog_file_is_a_user_error(tmp_path):
    from codesign.errors import UserError

    bad = tmp_path / "catalog.json"
    bad.write_text('{"settings": {"wr_links": 4}}')
    with pytest.raises(UserError, match="added_joints"):
        load_catalog(bad)
    bad.write_text("{not json")
    with pytest.raises(UserError, match="not valid JSON"):
        load_catalog(bad)
    with pytest.raises(UserError, match="cannot read"):
        load_catalog(tmp_path / "missing.json")
    # a loop-closure flag cleared: two tree joints reach wr1 (joints 1 and 5 of topology 1)
    doc = json.loads((REPO / "topologies" / "catalog.json").read_text())
    doc["topologies"][0]["joints"][4]["loop_closure"] = False
    del doc["topologies"][0]["tree_joints"], doc["topologies"][0]["loop_closure_joints"]
    bad.write_text(json.dumps(doc))
    with pytest.raises(UserError, match=r"topologies\[0\]\.joints: .*spanning tree"):
        load_catalog(bad)
