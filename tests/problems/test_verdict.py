"""The walking verdict (issue 34, item 1): a design walks when it survives the whole
evaluation at the target speed without leaning on the pitch assist -- the default stages'
bounds. Truths: those bounds stated by hand, and real 10-s rollouts of two stored designs
(docs/designs/ and studies/physical-stages/): the walking co-design walks; the thesis-law
demo's best stands with the assist on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesign.problems import get_problem
from codesign.problems.verdict import walking_verdict
from codesign.walking import load_design

DESIGNS = Path(__file__).resolve().parents[2] / "docs" / "designs"


def test_each_failed_condition_is_named_with_its_number():
    walking = {"time": 10.0, "time_fraction": 1.0, "speed": 1.28, "speed_match": 0.985, "assist_fraction": 0.02}
    verdict = walking_verdict(walking, 10.0)
    assert verdict.walks and verdict.reasons == ()
    assert verdict.text == "walks: 1.28 m/s for the whole 10 s, pitch assist on 2 % of the time"
    # each bound on its own side: 1.0 of the time, 0.95 of the speed (inclusive), 10 % assist (strict)
    for change, reason in (({"time": 4.5, "time_fraction": 0.45}, "stops at 4.50 s of 10 s"),
                           ({"speed": 1.2, "speed_match": 0.9231}, "speed 1.20 m/s, not within 5 % of the 1.3-m/s target"),
                           ({"assist_fraction": 0.1}, "pitch assist on 10 % of the time (walking: under 10 %)")):
        verdict = walking_verdict({**walking, **change}, 10.0)
        assert not verdict.walks and verdict.reasons == (reason,)
        assert verdict.text == "does not walk: " + reason
    assert walking_verdict({**walking, "speed_match": 0.95}, 10.0).walks
    assert walking_verdict({"time": 0.0, "time_fraction": 0.0}, 10.0).reasons == (
        "stops at 0.00 s of 10 s", "no speed measured", "no assist fraction measured")


def test_an_assisted_wearer_keeps_its_own_speed_not_the_targets():
    """An active wearer's assisted walk (its record carries speed_change, issue 32) is
    judged against the same wearer's unassisted speed: 5 % either way, inclusive."""
    walk = {"time": 10.0, "time_fraction": 1.0, "speed": 1.21, "speed_match": 0.931, "assist_fraction": 0.0,
            "speed_unassisted": 1.25, "speed_change": 1.21 / 1.25 - 1.0}
    assert walking_verdict(walk, 10.0).walks             # -3.2 %: outside 5 % of 1.3 m/s, inside of 1.25
    slow = {**walk, "speed": 1.18, "speed_change": 1.18 / 1.25 - 1.0}
    assert walking_verdict(slow, 10.0).reasons == ("speed 1.18 m/s, not within 5 % of the unassisted walk's 1.25 m/s",)
    assert walking_verdict({**walk, "speed_change": -0.05}, 10.0).walks
    assert not walking_verdict({**walk, "speed_change": 0.0501}, 10.0).walks


@pytest.mark.slow
@pytest.mark.parametrize("design, walks, reasons", [
    ("docs/designs/codesign-walking.json", True, ()),
    ("studies/physical-stages/codesign-demo.json", False, ("speed 0.06 m/s, not within 5 % of the 1.3-m/s target",
                                   "pitch assist on 100 % of the time (walking: under 10 %)")),
])
def test_the_stored_designs_verdicts(design, walks, reasons):
    problem = get_problem("exo_codesign")
    settings = problem.parse_settings({"max_time": 10.0})
    record = problem.walking.replay(load_design(DESIGNS.parents[1] / design), settings).record
    verdict = walking_verdict(record.metrics, 10.0)
    assert (verdict.walks, verdict.reasons) == (walks, reasons), verdict.text


def test_simulate_says_the_verdict_first_and_records_units(tmp_path, capsys):
    from codesign.cli import main

    out = tmp_path / "sim"
    assert main(["simulate", str(DESIGNS / "human-thesis-walking.json"), "--max-time", "0.6", "--out", str(out),
                 "--sample", "0.05"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    record = json.loads((out / "record.json").read_text())
    assert first == record["verdict"]["text"] and first.startswith(("walks: ", "does not walk: "))
    assert record["verdict"]["walks"] is False      # 0.6 s from the standing start: not yet at speed
    units = record["units"]
    assert set(units) == set(record["metrics"]) and "?" not in units.values()
    assert (units["speed"], units["power"], units["time_fraction"], units["hip_r_force_peak"]) == ("m/s", "W", "-", "N")
