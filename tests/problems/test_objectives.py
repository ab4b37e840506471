"""Lexicographic stages of Tables 5.3 / 4.2 / 4.5 on hand-made metric sets."""

import math

import pytest
from hypothesis import given, strategies as st

from codesign.errors import UserError
from codesign.objectives import lexicographic, score
from codesign.problems import objectives as ob
from codesign.walking import WalkSettings
from codesign.walking.metrics import measured_record


def fitness(metrics, objectives):
    """(stage, stage value) of hand-made metrics plus the problems' derived ones."""
    return lexicographic(ob.with_derived(metrics), objectives)

GOOD = dict(time=10.0, longest_segment=0.6, singularity=0.0, speed_match=0.97,
            assist_fraction=0.05, power=180.0)


@pytest.mark.parametrize("changes, expected", [
    (dict(time=4.2), (0, -4.2)),
    (dict(longest_segment=0.83), (1, 0.83)),
    (dict(singularity=3.0), (2, 3.0)),
    (dict(speed_match=0.90, assist_fraction=0.0), (3, -0.90)),           # speed short
    (dict(speed_match=0.97, assist_fraction=0.2), (3, -0.97 * 0.8)),     # too much assist
    (dict(assist_fraction=0.1), (3, -0.97 * 0.9)),                       # < 0.1 is strict
    ({}, (4, 180.0)),                                                    # minimizing power
])
def test_table_5_3_stages(changes, expected):
    stage, value = fitness({**GOOD, **changes}, ob.table_5_3(10.0))
    assert stage == expected[0] and value == pytest.approx(expected[1], abs=1e-12)


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
def test_speed_assist_score_threshold_is_both_conditions_and_keeps_product_order(s1, a1, s2, a2):
    done = s1 >= 0.95 and a1 < 0.1
    assert (ob.speed_assist_score(s1, a1) >= 1.0) == done
    if not done and not (s2 >= 0.95 and a2 < 0.1):
        p1, p2 = s1 * (1 - a1), s2 * (1 - a2)
        assert (ob.speed_assist_score(s1, a1) < ob.speed_assist_score(s2, a2)) == (p1 < p2)


def test_table_4_2_and_4_5():
    m = dict(time=10.0, speed_match=0.96, speed_std=0.05, assist_fraction=0.0,
             non_contact_time=0.0, torque_rms=41.0, speed=0.45, cost_of_transport=2.1)
    assert fitness(m, ob.table_4_2()) == (5, 41.0)
    assert fitness({**m, "non_contact_time": 0.3}, ob.table_4_2()) == (4, 0.3)
    assert fitness({**m, "speed_std": 0.2}, ob.table_4_2()) == (2, 0.2)
    assert fitness(m, ob.table_4_5()) == (3, 2.1)
    assert fitness({**m, "speed": 0.2}, ob.table_4_5()) == (1, -0.2)


def test_objectives_are_not_evaluation_settings():
    """Objectives are declared in one place (the spec's [[objectives]], else the problem's)."""
    with pytest.raises(UserError, match=r"evaluation.objectives: .*\[\[objectives\]\]"):
        WalkSettings.from_dict({"objectives": "table_4_2"})


def test_record_leaves_out_unmeasured_metrics():
    fell = dict(time=3.0, longest_segment=0.5, singularity=0.0, speed_match=math.nan,
                assist_fraction=math.nan, power=math.nan)
    rec = score(measured_record(ob.with_derived(fell)), ob.table_5_3())
    assert rec.ok and (rec.stage, rec.stage_value) == (0, -3.0)
    assert "power" not in rec.metrics and rec.metrics["time"] == 3.0
    rec = score(measured_record(ob.with_derived({**fell, "time": 10.0})), ob.table_5_3())
    assert not rec.ok and "speed_assist_score" in rec.message


# a design that walks, sound and wearable (issue 15 stages)
SOUND = dict(GOOD, time_fraction=1.0, foot_slip_fraction=0.01, non_contact_time=0.0,
             grf_peak_bw=1.4, knee_hyperextension_peak_deg=0.0, actuator_speed_ratio_peak=0.6,
             actuator_thermal_ratio=0.9, interaction_force_peak_bw=1.2, cuff_force_peak=300.0, torso_pitch_rms_deg=2.3,
             knee_flexion_stance_mean_deg=20.5)


@pytest.mark.parametrize("changes, expected", [
    ({}, (14, 180.0)),                                              # minimizing power
    (dict(foot_slip_fraction=0.62), (3, 0.62)),                     # the feet slide: stuck at 3
    (dict(non_contact_time=0.44), (4, 0.44)),
    (dict(grf_peak_bw=3.3), (5, 3.3)),
    (dict(knee_hyperextension_peak_deg=14.8), (6, 14.8)),
    (dict(actuator_speed_ratio_peak=1.5), (7, 1.5)),
    (dict(actuator_thermal_ratio=1.12), (8, 1.12)),                 # overheats (issue 30)
    (dict(interaction_force_peak_bw=84.0), (9, 84.0)),              # the thesis-rule design
    (dict(cuff_force_peak=2054.0), (10, 2054.0)),                   # 2.5 BW, but at one cuff
    (dict(torso_pitch_rms_deg=9.2), (11, 9.2)),                      # leaning on the assist
    (dict(knee_flexion_stance_mean_deg=59.4), (12, 59.4)),           # crouched
    (dict(speed_match=0.90, assist_fraction=0.0), (13, -0.90)),
])
def test_codesign_stages_reject_unphysical_gaits_before_speed_and_power(changes, expected):
    stage, value = fitness({**SOUND, **changes}, ob.codesign_stages())
    assert stage == expected[0] and value == pytest.approx(expected[1], abs=1e-12)


def test_the_baseline_has_no_actuator_stage_and_the_human_keeps_table_4_2s_order():
    metrics = [o.metric for o in ob.codesign_stages(motors=False)]
    assert not {"actuator_speed_ratio_peak", "actuator_thermal_ratio", "cuff_force_peak"} & set(metrics)
    assert metrics[-1] == "power"
    human = [o.metric for o in ob.human_stages()]
    assert human[:5] == ["time_fraction", "speed_match", "speed_std", "assist_fraction", "non_contact_time"]
    assert human[-1] == "torque_rms" and "grf_peak_bw" in human
    # issue 31: the human-like gait's stages, after the credibility ones, before the torque
    assert human[-7:-1] == ["stride_r_hip", "stride_r_knee", "stride_r_ankle", "ankle_plantarflexion_peak_deg",
                            "grf_peak_bw", "grf_peak_bw_start"]


def test_the_human_like_stages_rank_the_human_walking_designs_numbers():
    # human-thesis-walking.json's measured metrics (codesign simulate, issue 31) pass every
    # credibility stage and stop at the hip's stride correlation; a gait meeting the
    # issue's bounds reaches the torque stage
    stages = ob.human_stages()
    walking = dict(time_fraction=1.0, speed_match=0.998, speed_std=0.05, assist_fraction=0.0,
                   non_contact_time=0.0, foot_slip_fraction=0.006, grf_peak_bw=2.90,
                   knee_hyperextension_peak_deg=0.0, torso_pitch_rms_deg=2.3,
                   knee_flexion_stance_mean_deg=20.5, stride_r_hip=0.936, stride_r_knee=0.671,
                   stride_r_ankle=0.111, ankle_plantarflexion_peak_deg=7.6, grf_peak_bw_start=5.95,
                   torque_rms=95.9)
    first = [o.metric for o in stages].index("stride_r_hip")
    assert fitness(walking, stages) == (first, pytest.approx(-0.936, abs=1e-12))
    human = {**walking, "stride_r_hip": 0.97, "stride_r_knee": 0.92, "stride_r_ankle": 0.75,
             "ankle_plantarflexion_peak_deg": 14.0, "grf_peak_bw": 1.3, "grf_peak_bw_start": 1.4}
    assert fitness(human, stages) == (len(stages) - 1, pytest.approx(95.9, abs=1e-12))
    assert all(o.until == ob.LIMITS[o.metric] for o in ob.codesign_stages() if o.metric in ob.LIMITS)


def test_describe_fitness_names_the_objective_being_optimized_with_its_own_value():
    """The words match what lexicographic() computed from hand-made metrics: the metric of
    the stage reached, its value as measured (a maximized one's sign restored), and the
    count of conditions met."""
    from codesign.objectives import Objective, describe_fitness, lexicographic

    objectives = (Objective("speed", "maximize", 1.0), Objective("slip", "minimize", 0.05),
                  Objective("power"))
    metrics = {"speed": 0.8, "slip": 0.5, "power": 300.0}
    assert describe_fitness(*lexicographic(metrics, objectives), objectives) == \
        "stage 1 of 3: speed 0.8 (wanted >= 1; 0 of 2 conditions met)"
    metrics["speed"] = 1.3
    assert describe_fitness(*lexicographic(metrics, objectives), objectives) == \
        "stage 2 of 3: slip 0.5 (wanted <= 0.05; 1 of 2 conditions met)"
    metrics["slip"] = 0.01
    assert describe_fitness(*lexicographic(metrics, objectives), objectives) == \
        "stage 3 of 3: power 300 (minimizing, 2 of 2 conditions met)"
    # with the units a problem declares; a ratio ("-") shows none
    units = {"speed": "m/s", "slip": "-", "power": "W"}.get
    assert describe_fitness(*lexicographic(metrics, objectives), objectives, units) == \
        "stage 3 of 3: power 300 W (minimizing, 2 of 2 conditions met)"
    metrics["slip"] = 0.5
    assert describe_fitness(*lexicographic(metrics, objectives), objectives, units).startswith(
        "stage 2 of 3: slip 0.5 (")
    assert describe_fitness(1, 0.25, ()) == "stage 1, value 0.25"
    metrics["speed"] = 0.0                      # a maximized 0 is stored as -0.0: shown as 0
    assert describe_fitness(*lexicographic(metrics, objectives), objectives, units).startswith(
        "stage 1 of 3: speed 0 m/s (")


def test_one_stage_numbering_for_a_design_and_for_the_milestones():
    """stage_label counts objectives from 1: a design with k conditions met optimizes
    objective k + 1 (the progress table's "stage k + 1 met" once it holds), and a design
    with every condition met is at the last stage, never beyond it."""
    from codesign.objectives import Objective, lexicographic, stage_label

    objectives = (Objective("time_fraction", "maximize", 1.0), Objective("slip", "minimize", 0.05),
                  Objective("power"))
    met_none = lexicographic({"time_fraction": 0.5, "slip": 0.0, "power": 1.0}, objectives)[0]
    met_all = lexicographic({"time_fraction": 1.0, "slip": 0.0, "power": 1.0}, objectives)[0]
    assert stage_label(met_none, objectives) == "stage 1 of 3: time_fraction"
    assert stage_label(met_all, objectives) == "stage 3 of 3: power"
    assert stage_label(met_all + 5, objectives) == "stage 3 of 3: power"


def test_unmet_conditions_lists_every_failed_condition_not_only_the_first():
    from codesign.objectives import Objective, lexicographic, unmet_conditions

    stages = (Objective("time_fraction", "maximize", 1.0), Objective("force_bw", "minimize", 3.0),
              Objective("slip", "minimize", 0.05), Objective("power"))
    # stopped at the first stage, yet its force (146 BW) must show too; slip is met
    metrics = {"time_fraction": 0.5, "force_bw": 146.0, "slip": 0.01, "power": 300.0}
    assert lexicographic(metrics, stages)[0] == 0
    assert unmet_conditions(metrics, stages) == ("time_fraction 0.5 (wanted >= 1)", "force_bw 146 (wanted <= 3)")
    assert unmet_conditions(metrics, stages, {"force_bw": "BW", "time_fraction": "-"}.get) == \
        ("time_fraction 0.5 (wanted >= 1)", "force_bw 146 BW (wanted <= 3)")
    # the bounds are inclusive (as lexicographic's), the last objective is no condition
    assert unmet_conditions({"time_fraction": 1.0, "force_bw": 3.0, "slip": 0.05, "power": 1e9}, stages) == ()
    assert unmet_conditions({"time_fraction": 1.0, "force_bw": 2.0}, stages) == ("slip not measured (wanted <= 0.05)",)
