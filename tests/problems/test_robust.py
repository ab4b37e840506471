"""Robustness priced inside the search (``evaluation.robust_checks``): the score says what
the walking verdict says under each check, and a stored study design scores what the
study's own verification recorded for it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from codesign.errors import UserError
from codesign.problems import get_problem
from codesign.problems.robust import (CONTACT_CHECKS, ROBUST_METRIC, ROBUST_WORST, WALKS_UNDER_EVERY_CHECK,
                                      check_score, with_robust_score)
from codesign.problems.verdict import walking_verdict
from codesign.types import EvalRecord
from codesign.walking import WalkSettings

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = "exo_codesign_wearer_drive"


def record(time: float, speed_match: float, assist: float, max_time: float = 10.0) -> EvalRecord:
    from codesign.problems.objectives import speed_assist_score

    metrics = {"time": time, "time_fraction": time / max_time, "speed": 1.3 * speed_match,
               "speed_match": speed_match, "assist_fraction": assist,
               "speed_assist_score": speed_assist_score(speed_match, assist)}
    return EvalRecord(status="ok", metrics=metrics)


@pytest.mark.parametrize("time, match, assist, expected", [
    (5.06, 0.0, 0.0, 0.506),                        # falls at 5.06 s of 10 s: the fraction survived
    (10.0, 0.80, 0.0, 1.80),                        # the whole 10 s, too slow: 1 + 0.80 x 1
    (10.0, 1.0, 0.24, 1.76),                        # at speed on the pitch assist 24 %: 1 + 1 x 0.76
    (10.0, 0.96, 0.05, 1 + 1 + 0.96 * 0.95),        # walks: 2 + the thesis's product
])
def test_a_check_scores_what_the_walking_verdict_says(time, match, assist, expected):
    rec = record(time, match, assist)
    score = check_score(rec)
    assert score == pytest.approx(expected, abs=1e-12)
    assert (score >= WALKS_UNDER_EVERY_CHECK) == walking_verdict(rec.metrics, 10.0).walks
    assert check_score(EvalRecord.failed("singular")) == 0.0


def test_the_score_is_the_least_check_and_only_a_walker_is_replayed():
    replays = {0.5e-3: record(10.0, 0.97, 0.0), 0.25e-3: record(3.3, 0.0, 0.0)}
    asked = []

    def replay(settings):
        asked.append((settings.rollout.h, settings.rollout.contact_model))
        return replays[settings.rollout.h]

    from codesign.walking import WalkSettings

    walk = WalkSettings.from_dict({"h": 1e-3})
    scored = with_robust_score(record(10.0, 0.99, 0.0), ("half_step", "soft"), lambda change: replay(change(walk)))
    assert scored.metrics[ROBUST_METRIC] == pytest.approx(0.33, abs=1e-12)
    assert asked == [(0.5e-3, "hard"), (0.25e-3, "soft_step")]
    asked.clear()
    slow = with_robust_score(record(10.0, 0.90, 0.0), ("half_step", "soft"), lambda change: replay(change(walk)))
    assert slow.metrics[ROBUST_METRIC] == 0.0 and asked == []       # not a walker: not replayed
    assert with_robust_score(record(10.0, 0.99, 0.0), (), lambda change: replay(change(walk))).metrics.get(ROBUST_METRIC) is None


def test_the_worst_under_the_checks_is_the_least_reduction_and_the_largest_ground_reaction():
    """``effort_reduction_robust`` the smallest reduction, ``grf_peak_bw_robust`` the largest
    steady ground-reaction peak, of the walk and its check replays; each absent when one
    replay measured none (it fell before the measure) or no record measures it (a walk
    without a device has no reduction)."""
    def walked(grf: float, reduction: float | None = None, time: float = 10.0) -> EvalRecord:
        rec = record(time, 0.99, 0.0)
        extra = {} if reduction is None else {"effort_reduction": reduction}
        return EvalRecord(status="ok", metrics={**rec.metrics, "grf_peak_bw": grf, **extra})

    effort, grf = "effort_reduction_robust", "grf_peak_bw_robust"
    assert {effort, grf} <= set(ROBUST_WORST)
    walk = WalkSettings.from_dict({"h": 1e-3})
    replays = {0.9: walked(1.30, 0.21), 1.1: walked(1.95, 0.134)}

    def replay(change):
        return replays[round(change(walk).wearer_mass_scale, 6)]

    scored = with_robust_score(walked(1.32, 0.182), ("mass_0.9", "mass_1.1"), replay)
    assert scored.metrics[effort] == 0.134 and scored.metrics[grf] == 1.95
    assert "speed_change_abs_robust" not in scored.metrics      # measured by no record here
    assert scored.metrics[ROBUST_METRIC] == pytest.approx(2.0 + 0.99)
    replays[1.1] = EvalRecord(status="ok", metrics={**record(3.58, 0.0, 0.0).metrics})   # fell: measured none
    fell = with_robust_score(walked(1.32, 0.182), ("mass_0.9", "mass_1.1"), replay).metrics
    assert effort not in fell and grf not in fell and fell[ROBUST_METRIC] == pytest.approx(0.358)
    plain = with_robust_score(walked(1.2), ("mass_0.9",), lambda change: walked(1.4)).metrics
    assert effort not in plain and plain[grf] == 1.4

    def adapted(reduction: float, share: float) -> EvalRecord:         # a wearer adapting with the device
        rec = walked(1.3, reduction)
        return EvalRecord(status="ok", metrics={**rec.metrics, "effort_reduction_device": share})

    shares = with_robust_score(adapted(0.18, 0.17), ("mass_0.9",), lambda change: adapted(0.16, 0.02)).metrics
    assert shares[effort] == 0.16 and shares["effort_reduction_device_robust"] == 0.02
    assert "effort_reduction_device_robust" not in scored.metrics       # no adapting wearer there


def test_the_worst_start_landing_and_knee_yield_under_the_checks():
    """A gait-lab stage met at the run's step can fail at half of it (a muscle walk at 1.3 BW
    landed at 1.6 BW from the start at h/2): ``grf_peak_bw_start_robust`` is the largest start
    landing and ``knee_flexion_stance_peak_min_deg_robust`` the least knee yield of the walk
    and its replays; the yield is absent where a replay measured none."""
    def walked(start: float, yield_deg: float | None) -> EvalRecord:
        knee = {} if yield_deg is None else {"knee_flexion_stance_peak_min_deg": yield_deg}
        return EvalRecord(status="ok", metrics={**record(10.0, 0.99, 0.0).metrics, "grf_peak_bw": 1.25,
                                                "grf_peak_bw_start": start, **knee})

    replays = {"half_step": walked(1.58, 9.8), "soft": walked(1.27, 10.6)}
    walk = WalkSettings.from_dict({"h": 1e-3})

    def replay(change):
        model = change(walk).rollout
        return replays["half_step" if model.contact_model == "hard" else "soft"]

    scored = with_robust_score(walked(1.26, 10.9), ("half_step", "soft"), replay).metrics
    assert scored["grf_peak_bw_start_robust"] == 1.58
    assert scored["knee_flexion_stance_peak_min_deg_robust"] == 9.8
    assert scored["grf_peak_bw_robust"] == 1.25
    replays["soft"] = walked(1.27, None)
    assert "knee_flexion_stance_peak_min_deg_robust" not in with_robust_score(
        walked(1.26, 10.9), ("half_step", "soft"), replay).metrics


def test_simulate_states_the_worst_under_the_checks():
    from codesign.commands.simulate import effort_lines

    metrics = {"effort_reduction": 0.182, "wearer_metabolic": 4.0, "wearer_metabolic_unassisted": 5.0,
               "speed_change": -0.029, "effort_reduction_robust": 0.134, "speed_change_abs_robust": 0.0487,
               "grf_peak_bw_robust": 1.9486}
    assert effort_lines(metrics)[-1] == ("under its robust checks (each against the wearer alone under the same "
                                         "check): at worst 13.4 % less, speed change at most 4.9 %, ground "
                                         "reaction at most 1.95 BW")
    assert len(effort_lines({k: v for k, v in metrics.items() if not k.endswith("_robust")})) == 2
    shared = effort_lines({**metrics, "effort_reduction_device_robust": 0.0016})[-1]
    assert "at worst 13.4 % less (the device's share 0.2 % less), speed change" in shared


@pytest.mark.parametrize("value", [["sof"], "soft", ["soft", "soft"], [1], ["mujoco"], ["arm_2kg"],
                                   ["foot_0kg"], ["foot_2 kg"], ["torso_41kg"], ["foot_2kg", "foot_2kg"],
                                   ["mass_2"], ["mass_0.4"], ["mass_-1.1"], ["mass"], ["mass_1.1+mass_1.1"],
                                   ["mass_1.1+"], ["mass_1.1+sof"], ["half_step+mass_2"]])
def test_robust_checks_it_cannot_replay_are_one_line(value):
    with pytest.raises(UserError) as caught:
        get_problem(PROBLEM).parse_settings({"robust_checks": value})
    text = str(caught.value)
    assert "\n" not in text and text.startswith("evaluation.robust_checks: got ")
    assert text.endswith('expected a list of distinct checks among "half_step", "soft", loads '
                         '"<segment>_<kg>kg" (segment torso, thigh, shank, foot; 0 < kg <= 40) and masses '
                         '"mass_<factor>" (0.5 <= factor <= 1.5), or distinct ones joined by "+" (e.g. "mass_1.1+half_step")')


def test_joined_checks_apply_together_left_to_right():
    """``"mass_1.1+half_step"`` is the heavier wearer at half the step: the model built
    from its settings weighs 1.1x the wearer's, stepped at h/2; ``"half_step+soft"`` is the
    soft law at a quarter of the halved step; a list of joined checks parses as given."""
    from codesign.problems.robust import check_change
    from codesign.walking import load_design
    from codesign.walking.setup import build_setup

    walk = WalkSettings.from_dict({"h": 0.001, "max_time": 0.01})
    heavier = check_change("mass_1.1+half_step")(walk)
    assert heavier.rollout.h == 0.0005 and heavier.wearer_mass_scale == pytest.approx(1.1)
    design = load_design(ROOT / "docs/designs/human-walking.json")
    masses = [build_setup(design, w)[0].model.total_mass() for w in (walk, heavier)]
    assert masses[1] == pytest.approx(1.1 * masses[0], rel=1e-12)
    softer = check_change("half_step+soft")(walk)
    assert softer.rollout.contact_model == "soft_step" and softer.rollout.h == pytest.approx(0.000125)
    checks = ["mass_0.9+half_step", "mass_1.1+half_step", "mass_1.1"]
    assert get_problem("exo_assist_ideal").parse_settings({"robust_checks": checks}).robust_checks == tuple(checks)


def test_a_load_check_replays_the_walk_carrying_that_load_too():
    """A load check's replay carries the run's own loads and the check's, at the segment's
    centre of mass (on each leg for a leg segment: the model's mass grows by twice the
    check's mass, measured on the set-up built from those settings)."""
    from codesign.model.wearer_body import Load
    from codesign.walking import WalkSettings, load_design
    from codesign.walking.setup import build_setup

    walk = WalkSettings.from_dict({"loads": [{"segment": "torso", "mass_kg": 1.0}], "max_time": 0.01})
    asked = []

    def replay(changed):
        asked.append(changed)
        return record(10.0, 0.99, 0.0)

    scored = with_robust_score(record(10.0, 0.99, 0.0), ("foot_2kg", "torso_4.5kg"), lambda change: replay(change(walk)))
    assert scored.metrics[ROBUST_METRIC] == pytest.approx(2.0 + 0.99)
    assert [w.loads for w in asked] == [(Load("torso", 1.0), Load("foot", 2.0)),
                                        (Load("torso", 1.0), Load("torso", 4.5))]
    design = load_design(ROOT / "docs/designs/human-walking.json")
    masses = [build_setup(design, w)[0].model.total_mass() for w in (walk, *asked)]
    assert masses[1] - masses[0] == pytest.approx(4.0, abs=1e-12)
    assert masses[2] - masses[0] == pytest.approx(4.5, abs=1e-12)


def test_the_codesign_the_human_gait_and_an_assisting_device_take_robust_checks():
    for name in (PROBLEM, "human_gait", "exo_assist", "exo_assist_ideal"):
        assert get_problem(name).parse_settings({"robust_checks": ["soft", "mass_0.9"]}).robust_checks == (
            "soft", "mass_0.9")
        assert ROBUST_METRIC in get_problem(name).metrics


def test_a_mass_check_scales_the_wearer_and_an_assisted_walk_scores_its_replay(monkeypatch):
    """``mass_<factor>`` multiplies ``wearer_mass_scale``; an assisting device's walk is
    replayed under it as a person's would be (the device's loads carried): a check of factor
    1 replays the same walk (the score 1 + its own speed_assist_score), and under "mass_1.1"
    the hip-loads-all-3 design (3.2 kg on the loads wearer) falls at 3.58 s, the score the
    fraction of a 4-s walk it survives."""
    from codesign.problems.robust import check_change
    from tests.runtools import chosen

    assert check_change("mass_1.1")(WalkSettings(wearer_mass_scale=0.5)).wearer_mass_scale == pytest.approx(0.55)
    monkeypatch.chdir(ROOT)
    picked = chosen(ROOT / "studies/assist-muscles/hip-loads-all-3-best.json", "--max-time", "4",
                    "--settings", json.dumps({"robust_checks": ["mass_1", "mass_1.1"]}))
    m = picked.problem.walking.replay(picked.design, picked.settings).record.metrics
    assert m["time"] == 4.0 and m["speed_assist_score"] >= 1.0
    heavier = chosen(ROOT / "studies/assist-muscles/hip-loads-all-3-best.json", "--max-time", "4",
                     "--settings", json.dumps({"wearer_mass_scale": 1.1}))
    fell = heavier.problem.walking.replay(heavier.design, heavier.settings).record.metrics["time"]
    assert 3.0 < fell < 4.0
    assert m[ROBUST_METRIC] == pytest.approx(fell / 4.0, abs=1e-12)
    same = chosen(ROOT / "studies/assist-muscles/hip-loads-all-3-best.json", "--max-time", "4",
                  "--settings", json.dumps({"robust_checks": ["mass_1"]}))
    m1 = same.problem.walking.replay(same.design, same.settings).record.metrics
    assert m1[ROBUST_METRIC] == 1.0 + m1["speed_assist_score"]


def test_a_check_replay_does_not_replay_the_checks_again():
    from codesign.report.robustness import check_settings

    problem = get_problem(PROBLEM)
    table = {"robust_checks": ["half_step", "soft"]}
    settings = problem.parse_settings(table)
    assert settings.robust_checks == ("half_step", "soft")
    for check in ("half_step", "soft", "wearer_light"):
        variant = check_settings(problem, table, settings, check)
        assert variant.robust_checks == ()
    assert check_settings(problem, table, settings, "soft").walk == CONTACT_CHECKS["soft"](settings.walk)


@pytest.mark.integration
def test_a_stored_design_scores_what_the_study_s_verification_recorded():
    """Topology 5's study best (its ninth round, searched with robust_checks) walks at half
    the step and on soft contacts by the study's own verification
    (studies/codesign-study/verify/focus-t05-9.json, replayed by the report's check path):
    its score is the least of those replays' terms, exactly, and says it walks under both."""
    from codesign.problems.walking import replay_design
    from codesign.walking.design import load_design

    verified = json.loads((ROOT / "studies/codesign-study/verify/focus-t05-9.json").read_text())
    checks = {c["name"]: c for c in verified["checks"]}
    expected = min(check_score(EvalRecord(status="ok", metrics=checks[name]["metrics"]))
                   for name in ("half_step", "soft"))
    assert checks["half_step"]["walks"] and checks["soft"]["walks"] and expected >= WALKS_UNDER_EVERY_CHECK
    design = load_design(ROOT / "docs/designs/study-t05.json")
    assert design.evaluation["robust_checks"] == ["half_step", "soft"]
    problem = get_problem(PROBLEM)
    scored = replay_design(design, problem.parse_settings(design.evaluation)).record.metrics
    assert scored[ROBUST_METRIC] == pytest.approx(expected, abs=1e-12)
    assert math.isfinite(scored["power"])


@pytest.mark.slow
def test_the_muscle_walk_searched_with_robustness_walks_under_both_checks():
    """studies/muscle-wearer/human-muscles-robust.json (its README's numbers): walks 10 s at
    1.34 m/s, and the report's check path (a plain walk per check) agrees with its score:
    it walks at half the step and on the soft law, each by the walking verdict."""
    from codesign.problems.options import parse_options, problem_key
    from codesign.problems.walking import replay_design
    from codesign.report.robustness import check_settings
    from codesign.walking.design import load_design

    design = load_design(ROOT / "studies/muscle-wearer/human-muscles-robust.json")
    problem = get_problem(problem_key(parse_options(design.problem)[1]))    # its "problem": the muscles
    settings = problem.parse_settings(design.evaluation)
    metrics = replay_design(design, settings).record.metrics
    assert metrics["time"] == 10.0 and metrics["speed"] == pytest.approx(1.34, abs=0.005)
    assert metrics["metabolic_cost"] == pytest.approx(2.75, abs=0.005)
    assert metrics[ROBUST_METRIC] >= WALKS_UNDER_EVERY_CHECK
    for check in ("half_step", "soft"):
        variant = check_settings(problem, design.evaluation, settings, check)
        replayed = replay_design(design, variant).record
        assert walking_verdict(replayed.metrics, 10.0).walks, check
        assert ROBUST_METRIC not in replayed.metrics
