"""`codesign compare` (issue 34, item 5): two designs side by side -- each metric equals what
`codesign simulate` records for that design under the same settings (bit for bit), with
the registry's unit; each design's verdict printed; bad input one line, exit 2."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from codesign.cli import main

DESIGNS = Path(__file__).resolve().parents[1] / "docs" / "designs"


def test_compare_lists_both_designs_as_simulate_measures_them(tmp_path, capsys):
    a, b = str(DESIGNS / "codesign-walking.json"), str(DESIGNS / "human-thesis-walking.json")
    assert main(["compare", a, b, "--max-time", "0.4", "--sample", "0.05", "--out", str(tmp_path / "cmp")]) == 0
    printed = capsys.readouterr().out.splitlines()
    frame = pd.read_csv(tmp_path / "cmp" / "compare.csv")
    assert list(frame.columns) == ["metric", "unit", a, b]
    assert (tmp_path / "cmp" / "angles.png").is_file()
    units = dict(zip(frame["metric"], frame["unit"]))
    assert (units["speed"], units["power"], units["added_mass"]) == ("m/s", "W", "kg")
    for k, design in enumerate((a, b)):
        out = tmp_path / f"sim{k}"
        assert main(["simulate", design, "--max-time", "0.4", "--sample", "0.05", "--out", str(out),
                     "--no-animation"]) == 0
        record = json.loads((out / "record.json").read_text())
        assert printed[k] == f"{design}: {record['verdict']['text']}"
        column = dict(zip(frame["metric"], frame[design]))
        for name, value in record["metrics"].items():
            assert (value is None and math.isnan(column[name])) or column[name] == value, name
        assert all(math.isnan(column[n]) for n in column if n not in record["metrics"])


def test_compare_bad_input_is_one_line(tmp_path, capsys):
    design = str(DESIGNS / "human-thesis-walking.json")
    for args, text in (([design], "expected at least two"), ([design, "--run", "results/demo"], "RUN@best"),
                       ([design, design, "--sample", "0"], "--sample")):
        assert main(["compare", *args, "--out", str(tmp_path / "no")]) == 2
        err = capsys.readouterr().err.strip()
        assert text in err and len(err.splitlines()) == 1
    assert not (tmp_path / "no").exists()
