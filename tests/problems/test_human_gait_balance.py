"""The human-gait law with SIMBICON's stance-hip balance term (problem
``human_gait_balance``, issue 31): its space, and that the term reaches the walk.

Independent truths: the layout's count (Table 4.3's 45 plus the 6 of one torso term);
with zero torso gains the law is the thesis's, so the walk equals the plain design's bit
for bit; the recorded hip torque of a walk with the term on equals the law written out by
hand from the recorded state (tau = K (ref - q) - D qd - Kt (pitch - upright) - Dt
pitch_rate on the term's arc)."""

import json
from pathlib import Path

import numpy as np
import pytest

from codesign.control import impedance as imp
from codesign.errors import UserError
from codesign.problems import get_problem
from codesign.walking import Design, WalkSettings
from codesign.walking.evaluation import evaluate_detailed
from codesign.walking.setup import check_design, human_control_layout

ROOT = Path(__file__).resolve().parents[2]
TORSO = ("hip.torso.step.t1", "hip.torso.step.dt", "hip.torso.K.v1", "hip.torso.K.v2",
         "hip.torso.D.v1", "hip.torso.D.v2")


def _plain() -> dict[str, float]:
    return dict(json.loads((ROOT / "docs/designs/human-thesis-walking.json").read_text())["params"])


def test_space_is_the_chapter_4_law_and_one_torso_term_at_the_hip():
    plain = [p.name for p in get_problem("human_gait").parameters]
    balance = [p.name for p in get_problem("human_gait_balance").parameters]
    assert len(plain) == 45 and len(balance) == 51
    assert set(balance) - set(plain) == set(TORSO)
    bounds = {p.name: (p.low, p.high) for p in get_problem("human_gait_balance").parameters}
    assert bounds["hip.torso.K.v1"][0] < 0 < bounds["hip.torso.K.v1"][1]      # signed


def test_a_design_names_the_whole_term_or_none_of_it():
    settings = WalkSettings()
    params = _plain()
    check_design(Design(params), settings)
    check_design(Design({**params, **{n: 0.0 for n in TORSO}}), settings)
    with pytest.raises(UserError, match="hip.torso"):
        check_design(Design({**params, "hip.torso.K.v1": 0.0}), settings)


def test_zero_torso_gains_walk_as_the_plain_law_to_the_bit():
    settings = WalkSettings().with_rollout(max_time=1.0)
    params = _plain()
    zero = {**params, "hip.torso.step.t1": 0.1, "hip.torso.step.dt": 0.5,
            **{n: 0.0 for n in TORSO[2:]}}
    a = evaluate_detailed(Design(params), settings, record_times=np.arange(0.0, 1.0, 0.01))
    b = evaluate_detailed(Design(zero), settings, record_times=np.arange(0.0, 1.0, 0.01))
    assert a[0].metrics == b[0].metrics
    assert np.array_equal(a[2].records, b[2].records)


def test_the_hip_torque_is_the_law_written_out_by_hand():
    # the set-up's compiled law at recorded states of a walk against the decoded signals
    settings = WalkSettings().with_rollout(max_time=0.6)
    params = {**_plain(), "hip.torso.step.t1": 0.0, "hip.torso.step.dt": 0.6,
              "hip.torso.K.v1": -400.0, "hip.torso.K.v2": 0.0,
              "hip.torso.D.v1": -40.0, "hip.torso.D.v2": 0.0}
    times = np.arange(0.05, 0.6, 0.05)
    record, _t, rollout, setup = evaluate_detailed(Design(params), settings, record_times=times)
    assert record.ok
    hip = human_control_layout(settings, hip_torso_feedback=True).decode(params).active[0]
    n = setup.model.n
    row = imp.tree_joint_row(n, setup.model.body_id("thigh_r"))
    ip = int(setup.ctrl.pitch_index[0])
    upright = float(setup.ctrl.assist_params[3])
    frequency, phase0 = setup.ctrl.timing
    na = setup.ctrl.act_rows.shape[0]
    on = 0
    for t, x in zip(times, rollout.records):
        q, v = x[:n], x[n:]
        phase = (frequency * t + phase0) % 1.0
        expected = (hip.stiffness(phase) * (hip.reference(phase) - row @ q) - hip.damping(phase) * (row @ v)
                    - hip.torso_stiffness(phase) * (q[ip] - upright) - hip.torso_damping(phase) * v[ip])
        joint_tau = np.zeros(na)
        imp.control_torques(t, q, v, setup.ctrl, np.zeros(n), joint_tau, np.zeros(na), np.zeros((na, 2)),
                            np.zeros(na))
        assert joint_tau[0] == pytest.approx(float(expected), rel=1e-9, abs=1e-9)
        on += hip.torso_stiffness(phase) != 0.0
    assert on >= 3
