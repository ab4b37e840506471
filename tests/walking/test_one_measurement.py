"""One measurement for every rollout (issue 42, item 3): the four rollouts of one stored
design -- time stepping, event-driven hard contact, soft contact, MuJoCo -- feed the same
compiled observation step (accumulators.observe_sample) and are named by the same function
(measure.named_metrics), so they give the same metric names, and MuJoCo's values of the
metrics it shares with the engine agree with the engine's within the cross-check's stated
tolerances (walking/crosscheck.py: AGREEMENT, MIN_CORRELATION).

Design: the balanced human walking design (docs/designs/human-walking.json), as an
active wearer, so that the wearer's own effort is measured too (before this, MuJoCo's
rollout measured neither the wearer nor the gait samples nor the start's ground-reaction
peak). The engine and MuJoCo walk 4 s (a 2-s window, two strides; MuJoCo's steps of 0.1
ms run in Python: ~15-35 s), the event-driven and soft peers, whose metrics are only
named and checked for what they measure, 1 s (their cost). Measured (4 s): speed +1.1 %,
ground-reaction peak +0.2 %, power -0.1 %, torque RMS +0.0 %, cost of transport -1.2 %,
step length +1.1 %, the wearer's metabolic proxy -4.8 %; joint r >= 0.99."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from codesign.walking import METRICS, WalkSettings, evaluate_detailed, load_design, metrics_of
from codesign.walking.crosscheck import AGREEMENT, MIN_CORRELATION, crosscheck, disagreements

DESIGN = Path(__file__).resolve().parents[2] / "docs" / "designs" / "human-walking.json"
SECONDS = 4.0           # s: the engine's and MuJoCo's walk
PEER_SECONDS = 1.0      # s: the event-driven and soft peers'
SAMPLE_S = 0.01         # s: the joint-angle samples of the correlation


def _settings(contact_model: str, seconds: float) -> WalkSettings:
    design = load_design(DESIGN)
    return WalkSettings.from_dict({**design.evaluation, "wearer": "active", "contact_model": contact_model,
                                   "max_time": seconds})


@pytest.fixture(scope="module")
def walks():
    """{rollout: named metrics} of the four rollouts, and the cross-check of the engine's
    walk against MuJoCo's."""
    design = load_design(DESIGN)
    out = {}
    for contact_model, seconds in (("hard_event", PEER_SECONDS), ("soft", PEER_SECONDS)):
        _, _, rollout, setup = evaluate_detailed(design, _settings(contact_model, seconds))
        assert rollout.status == "ok", (contact_model, rollout.message)
        out[contact_model] = metrics_of(rollout, setup)
    settings = _settings("hard", SECONDS)
    times = np.arange(0.0, SECONDS + 0.5 * SAMPLE_S, SAMPLE_S)
    _, timings, rollout, setup = evaluate_detailed(design, settings, times)
    out["hard"] = metrics_of(rollout, setup)
    check, mj = crosscheck(setup, settings, rollout, out["hard"], timings["rollout_s"], times)
    out["mujoco"] = mj.metrics
    return out, check


@pytest.mark.peers
def test_the_four_rollouts_give_the_same_metric_names(walks):
    out, _ = walks
    for rollout, metrics in out.items():
        assert list(metrics) and sorted(metrics) == sorted(METRICS), rollout


def test_each_rollout_measures_what_it_can_and_leaves_the_rest_nan(walks):
    """NaN exactly where a rollout does not measure: the contact solver's health outside
    time stepping, the device's metrics on a human without one (the event-driven hard
    contact's ground reaction is measured since its impacts count by their impulse); everything else is measured by
    the engine and by MuJoCo (the muscles' metabolic metrics NaN: an impedance wearer) -- MuJoCo's wearer effort, stride agreement and start peak
    included. The peers' 0.5-s window may hold no whole stride and no step (nor a stance
    after a whole stride, for the loading-response knee)."""
    out, _ = walks
    solver = {"contact_unsolved_fraction", "contact_energy_error_steps"}
    device = {"power_electrical", "actuator_torque_ratio_peak", "actuator_speed_ratio_peak",
              "actuator_demand_ratio", "actuator_thermal_ratio", "transmission_peak", "cuff_force_peak",
              "actuator_mass", "assist_phase_error"}
    short = {"stride_r_hip", "stride_r_knee", "stride_r_ankle", "step_length", "scuffs_per_step",
             "knee_flexion_stance_peak_deg", "knee_flexion_stance_peak_min_deg"}
    muscles = {"metabolic_power", "metabolic_cost"}     # an impedance wearer has no muscles
    for rollout, metrics in out.items():
        nan = {name for name, value in metrics.items() if not math.isfinite(value)}
        expected = device | muscles | (solver if rollout != "hard" else set())
        if rollout in ("hard", "mujoco"):
            assert nan == expected, rollout
        else:
            assert expected <= nan <= expected | short, rollout
        for name in ("speed", "power", "torque_rms", "wearer_metabolic", "knee_flexion_stance_mean_deg"):
            assert math.isfinite(metrics[name]), (rollout, name)
    for name in ("wearer_metabolic", "wearer_hip_torque_rms", "stride_r_knee", "grf_peak_bw_start"):
        assert out["mujoco"][name] != 0.0, name
    assert out["hard_event"]["grf_peak_bw_start"] >= 1.0      # the landing, impacts counted


def test_mujoco_agrees_with_the_engine_within_the_crosschecks_tolerances(walks):
    out, check = walks
    assert check.engine.walked_s == check.mujoco.walked_s == SECONDS
    assert disagreements(out["hard"], out["mujoco"]) == []
    assert {a.metric for a in AGREEMENT} <= set(METRICS)
    assert min(check.correlation) >= MIN_CORRELATION
