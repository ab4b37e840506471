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


def _suggestions(message: str) -> list[list[str]]:
    """The option sets an error suggests after 'expected' / 'e.g.', split on ' or ', each
    as argv (a trailing parenthesis of explanation dropped)."""
    import re

    tail = re.split(r"expected |e\.g\. ", message)[-1]
    tail = re.sub(r" \(.*\)$", "", tail.strip())
    return [part.split() for part in tail.split(" or ")]


@pytest.mark.parametrize(
    "args, expected",
    [
        # the walkthrough's cases: once "--mobility -4 or --added-joints 3" / "--mobility 0 ..."
        (["--wr-links", "2"], [["--added-joints", "3"], ["--wr-links", "4"]]),
        (["--added-joints", "7"], [["--added-joints", "6"]]),
        (["--mobility", "0"], [["--mobility", "2"]]),
        (["--mobility", "-3"], [["--mobility", "2"]]),
        (["--mobility", "3"], [["--mobility", "2"]]),   # 4 WR links give even mobility only
        (["--wr-links", "5", "--added-joints", "7"], [["--mobility", "3"]]),
        (["--wr-links", "3", "--added-joints", "6"], [["--wr-links", "4"]]),
        (["--wr-links", "3", "--added-joints", "4", "--mobility", "1"], [["--mobility", "3"], ["--added-joints", "5"]]),
        (["--added-joints", "2"], [["--added-joints", "6"]]),
        # no single option fits: both to change
        (["--wr-links", "2", "--added-joints", "7", "--mobility", "1"], [["--added-joints", "3", "--mobility", "2"]]),
        (["--added-joints", "2", "--mobility", "3"], [["--added-joints", "3", "--mobility", "8"]]),
        (["--wr-links", "2", "--mobility", "0"], [["--added-joints", "3", "--mobility", "2"]]),
    ],
)
def test_inconsistent_settings_suggest_settings_that_are_accepted(tmp_path, capsys, args, expected):
    from codesign.cli import main

    assert main(["topologies", "--out", str(tmp_path / "bad"), "--no-figure", *args]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "expected" in lines[0]
    assert not (tmp_path / "bad").exists()
    suggested = _suggestions(lines[0])
    assert suggested == expected, lines[0]
    for k, options in enumerate(suggested):   # running the suggestion is accepted
        out = tmp_path / f"ok{k}"
        assert main(["topologies", "--out", str(out), "--no-figure", *args, *options]) == 0, capsys.readouterr().err
        assert (out / "catalog.json").exists()


def test_wr_links_range_holds_only_accepted_values(tmp_path, capsys):
    from codesign.cli import main
    from codesign.topology.enumerate import MAX_WR_LINKS, accepted_settings

    # 1 WR link has no accepted joint count (Kutzbach 2 + 3 w - 2 n < 1 for n >= 3), so the
    # range starts at 2, and every value in it has some accepted settings
    assert accepted_settings(1) == [] and all(accepted_settings(w) for w in range(2, MAX_WR_LINKS + 1))
    assert main(["topologies", "--out", str(tmp_path / "bad"), "--no-figure", "--wr-links", "1"]) == 2
    assert capsys.readouterr().err.strip().endswith(f"--wr-links: got 1; expected 2..{MAX_WR_LINKS}")


def test_committed_readme_is_generated_and_points_at_the_rules():
    from codesign.commands.topologies import readme_text

    text = readme_text(load_catalog(REPO / "topologies" / "catalog.json"))
    assert (REPO / "topologies" / "README.md").read_text() == text   # regenerated, not edited
    assert "The rules are in `docs/topologies.md`" in text
    assert "Mobility, two independent ways" in (REPO / "docs" / "topologies.md").read_text()
