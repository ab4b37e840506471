"""What carrying a device costs it (issue 46 item 5, `codesign carry`): the placement of a
device's mass (conserved, by hand), the break-even of a falling line (exact), bad input in
one line, and a real process sweeping the ideal hip device's mass."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from codesign.errors import UserError
from codesign.model.wearer_body import Load, carried_mass
from codesign.report.carry import HIP_EXO_PLACEMENT, Share, device_loads, parse_placement
from codesign.report.mass_buys import break_even
from tests.runtools import codesign, listing, one_line

ROOT = Path(__file__).resolve().parents[2]
IDEAL = ROOT / "studies/assist-muscles/ideal-start.json"


def test_the_placement_conserves_the_mass_and_halves_a_leg_share():
    assert device_loads(4.0, HIP_EXO_PLACEMENT) == (Load("torso", 3.6, 0.0), Load("thigh", 0.2, 0.3))
    for mass in (0.0, 1.0, 4.5):
        assert carried_mass(device_loads(mass, HIP_EXO_PLACEMENT)) == pytest.approx(mass, abs=1e-12)
    three = parse_placement([{"segment": "torso", "share": 0.5}, {"segment": "shank", "share": 0.3, "position": 0.2},
                             {"segment": "foot", "share": 0.2}])
    assert three[1] == Share("shank", 0.3, 0.2)
    assert carried_mass(device_loads(2.0, three)) == pytest.approx(2.0, abs=1e-12)


@pytest.mark.parametrize("value, message", [
    ([], r"--placement: got \[\]; expected a non-empty list .*"),
    ([{"segment": "arm", "share": 1.0}], r"--placement\[0\]\.segment: got \"arm\"; expected one of torso, .*"),
    ([{"segment": "torso", "share": 0.0}], r"--placement\[0\]\.share: got 0\.0; expected a fraction .*"),
    ([{"segment": "torso", "share": 0.5}], r"--placement: shares sum to 0\.5; expected 1 .*"),
    ([{"segment": "torso", "share": 1.0, "position": 2}], r"--placement\[0\]\.position: got 2; expected .*"),
    ([{"segment": "torso", "mass": 1.0}], r"--placement\[0\]: got .*; expected a table with segment and share .*"),
])
def test_a_bad_placement_is_one_line(value, message):
    with pytest.raises(UserError, match="^" + message + "$"):
        parse_placement(value)


def test_a_falling_line_breaks_even_where_it_crosses_zero():
    # r = 0.06 - 0.015 m: zero at 4 kg, exact
    m = np.array([0.0, 1.0, 2.0, 3.0])
    fit = break_even(m, 0.06 - 0.015 * m, rising=False)
    assert fit.mass_kg == pytest.approx(4.0, abs=1e-12) and fit.extrapolated
    assert fit.mass_se_kg == pytest.approx(0.0, abs=1e-9)
    # a rising line is no carried device's: no break-even (and a falling one is no front's)
    assert math.isnan(break_even(m, 0.06 + 0.015 * m, rising=False).mass_kg)
    assert math.isnan(break_even(m, 0.06 - 0.015 * m).mass_kg)


def test_carry_refuses_a_design_that_is_not_assisting_and_bad_masses_writing_nothing(tmp_path):
    out = tmp_path / "out"
    one_line(codesign("carry", ROOT / "docs/designs/human-muscles.json", "--out", out), 2,
             r"codesign carry: error: design: its problem does not compare an assisted wearer with the wearer alone; .*")
    one_line(codesign("carry", IDEAL, "--masses", "1", "--out", out), 2,
             r"codesign carry: error: --masses: '1'; expected at least two distinct finite masses >= 0 kg")
    one_line(codesign("carry", IDEAL, "--placement", "[{\"segment\": \"torso\", \"share\": 2}]", "--out", out), 2,
             r"codesign carry: error: --placement: shares sum to 2; expected 1 .*")
    assert listing(tmp_path) == {}


def test_carry_walks_each_mass_and_the_heavier_device_saves_less(tmp_path):
    """The ideal hip device of studies/assist-muscles at 0 and 3 kg (3-s walks): both rows
    written, the reduction at 0 kg the design's own, and 3 kg at the waist costs it."""
    done = codesign("carry", IDEAL, "--masses", "0,3", "--max-time", "3", "--out", tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    table = pd.read_csv(tmp_path / "carry.csv")
    assert table["device mass [kg]"].tolist() == [0.0, 3.0]
    assert table["reduction [%]"][1] < table["reduction [%]"][0]
    assert (tmp_path / "carry.png").stat().st_size > 10_000
    assert "break-even mass" in done.stdout or "no break-even mass" in done.stdout
