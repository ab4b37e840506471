"""Impedance law, assist torque and parameter layout against hand-computed values."""

import math

import numpy as np
import pytest

from codesign.control import bounds as bd
from codesign.control import impedance as imp
from codesign.control import signals as sg
from codesign.control.parameters import ActiveLayout, ControlLayout, codesign_layout, human_layout
from codesign.dynamics.model import PRISMATIC_X, PRISMATIC_Z, REVOLUTE


def _run(ctrl, t, q, v):
    na = ctrl.act_rows.shape[0]
    tau, jt, jr = np.zeros(len(q)), np.zeros(na), np.zeros(na)
    ta, active = imp.control_torques(t, q, v, ctrl, tau, jt, jr, np.zeros((na, 2)), np.zeros(na))
    return tau, jt, jr, ta, active


def test_step_impedance_torque_both_legs_half_period_apart():
    n = 6
    ref = sg.constant(0.3)
    K = sg.step(0.0, 0.25, 1000.0, 200.0)      # 1000 on [0, 0.25), 200 elsewhere
    D = sg.step(0.5, 0.5, 10.0, 2.0)           # 10 on [0.5, 1), 2 elsewhere
    c = imp.Controller(active=(imp.ActiveJoint("knee", ref, K, D),), frequency=0.9,
                       assist=imp.Assist(enabled=False))
    rows = {"knee": (imp.tree_joint_row(n, 3), imp.tree_joint_row(n, 5))}
    arr = imp.compile_controller(c, n, rows, {}, pitch_index=2, phase0=0.1)
    q = np.array([0, 0, 0, 0.1, 0, -0.2])
    v = np.array([0, 0, 0, 1.5, 0, -0.5])
    t = 0.05                                    # right phase 0.9*0.05 + 0.1 = 0.145, left 0.645
    tau, jt, jr, ta, active = _run(arr, t, q, v)
    right = 1000.0 * (0.3 - 0.1) - 2.0 * 1.5
    left = 200.0 * (0.3 + 0.2) - 10.0 * (-0.5)
    assert jt[0] == pytest.approx(right, abs=1e-12) and jt[1] == pytest.approx(left, abs=1e-12)
    assert np.allclose(tau, [0, 0, 0, right, 0, left], atol=1e-12)
    assert list(jr) == [1.5, -0.5] and ta == 0.0 and not active
    # one gait period later the torques repeat
    assert np.allclose(_run(arr, t + 1 / 0.9, q, v)[0], tau, atol=1e-9)


def test_loop_joint_row_is_relative_absolute_angle_and_virtual_work():
    # floating base (x, z, pitch) -> thigh -> shank; WR link on the pitch body; loop wr-shank
    parent = np.array([-1, 0, 1, 2, 3, 2])
    jtype = np.array([PRISMATIC_X, PRISMATIC_Z, REVOLUTE, REVOLUTE, REVOLUTE, REVOLUTE])
    row = imp.loop_joint_row(parent, jtype, body_a=5, body_b=4)   # theta_shank - theta_wr
    assert list(row) == [0, 0, 0, 1, 1, -1]
    q = np.array([0.3, 0.9, 0.05, 0.4, -0.7, 0.2])
    theta_b = q[2] + q[3] + q[4]
    theta_a = q[2] + q[5]
    assert row @ q == pytest.approx(theta_b - theta_a)
    assert list(imp.loop_joint_row(parent, jtype, -1, 4)) == [0, 0, 1, 1, 1, 0]  # world end


def test_passive_spring_damper_eq_5_12():
    n = 3
    c = imp.Controller(passive=(imp.PassiveJoint("wr2", 50.0, 0.4, 3.0),),
                       assist=imp.Assist(enabled=False))
    arr = imp.compile_controller(c, n, {}, {"wr2": (np.array([0, 1.0, -1.0]),)}, pitch_index=0)
    q = np.array([0.0, 0.5, 0.2])
    v = np.array([0.0, 0.1, 0.4])
    tau = _run(arr, 0.3, q, v)[0]
    torque = 50.0 * (0.4 - 0.3) - 3.0 * (0.1 - 0.4)
    assert np.allclose(tau, [0, torque, -torque], atol=1e-12)


def _knee_and_wr_controller():
    """A step impedance on the knee and a passive WR spring/damper, assist on."""
    return imp.Controller(
        active=(imp.ActiveJoint("knee", sg.constant(0.3), sg.step(0.1, 0.4, 900.0, 150.0),
                                sg.step(0.5, 0.3, 12.0, 4.0)),),
        passive=(imp.PassiveJoint("wr", 80.0, 0.1, 2.5),), frequency=0.9)


def test_control_gains_are_minus_the_torque_jacobians():
    # truth: central differences of control_torques, which is affine in (q, qd) at fixed t
    # (exact to round-off) -- active step impedance on a tree joint and on a loop joint
    # row, a passive spring/damper, the assist outside its neutral zone
    parent = np.array([-1, 0, 1, 2, 3, 2])
    jtype = np.array([PRISMATIC_X, PRISMATIC_Z, REVOLUTE, REVOLUTE, REVOLUTE, REVOLUTE])
    n = 6
    c = _knee_and_wr_controller()
    rows = {"knee": (imp.tree_joint_row(n, 4), imp.loop_joint_row(parent, jtype, 5, 4))}
    arr = imp.compile_controller(c, n, rows, {"wr": (imp.tree_joint_row(n, 5),)}, pitch_index=2,
                                 phase0=0.2)
    q = np.array([0.1, 0.9, 0.3, 0.4, -0.6, 0.2])        # pitch 0.3 rad: assist active
    v = np.array([0.5, 0.0, -0.4, 1.0, -2.0, 0.7])
    t, na = 0.37, 2
    gain = np.zeros((na, 2))
    _, active = imp.control_torques(t, q, v, arr, np.zeros(n), np.zeros(na), np.zeros(na), gain, np.zeros(na))
    assert active
    K, D = np.zeros((n, n)), np.zeros((n, n))
    imp.control_gains(arr, gain, active, K, D)

    def tau_at(qq, vv):
        out = np.zeros(n)
        imp.control_torques(t, qq, vv, arr, out, np.zeros(na), np.zeros(na), np.zeros((na, 2)), np.zeros(na))
        return out

    eps = 1e-6
    for j in range(n):
        e = np.zeros(n)
        e[j] = eps
        np.testing.assert_allclose(-(tau_at(q + e, v) - tau_at(q - e, v)) / (2 * eps), K[:, j], atol=1e-5)
        np.testing.assert_allclose(-(tau_at(q, v + e) - tau_at(q, v - e)) / (2 * eps), D[:, j], atol=1e-6)
    assert np.allclose(K, K.T) and np.linalg.eigvalsh(K).min() > -1e-9


def _track_the_dense_sum(arr, gains, K, D, passive_kd, compare, **tolerance):
    """Call ``gains`` (control_gains or update_gains) on the reused K, D at four times and
    pitches of a 7-coordinate model (gains changing with the phase, the assist switching
    off) and compare each result with numpy's dense sum in control_gains' order: the
    active rows' K_j r r^T, the passive rows' (passive_kd: their (K, D) in order), the
    assist's 3000 / 20 on the pitch. Returns the last (gains, assist active)."""
    n = 7
    gain = np.zeros((2, 2))
    for t, pitch in ((0.0, 0.3), (0.3, 0.3), (0.6, -0.2), (0.9, 0.0)):
        q = np.array([0, 0.9, pitch, 0.4, -0.6, 0.2, 0.1])
        _, active = imp.control_torques(t, q, np.zeros(n), arr, np.zeros(n), np.zeros(2),
                                        np.zeros(2), gain, np.zeros(2))
        gains(arr, gain, active, K, D)
        K_true, D_true = np.zeros((n, n)), np.zeros((n, n))
        for j in range(2):
            K_true += gain[j, 0] * np.outer(arr.act_rows[j], arr.act_rows[j])
            D_true += gain[j, 1] * np.outer(arr.act_rows[j], arr.act_rows[j])
        for j, (k, d) in enumerate(passive_kd):
            K_true += k * np.outer(arr.pas_rows[j], arr.pas_rows[j])
            D_true += d * np.outer(arr.pas_rows[j], arr.pas_rows[j])
        K_true[2, 2] += 3000.0 if active else 0.0
        D_true[2, 2] += 20.0 if active else 0.0
        compare(K, K_true, **tolerance)
        compare(D, D_true, **tolerance)
    return gain, active


def test_control_gains_reused_matrices_equal_the_dense_sum_every_call():
    """control_gains writes only the rows' outer-product entries and the pitch diagonal
    (issue 16); reused across calls, as the rollout does, the matrices must still equal
    sum_j K_j r_j r_j^T (+ the assist) built densely with numpy at every call: gains that
    change with the phase, rows with several nonzeros, the assist switching off."""
    parent = np.array([-1, 0, 1, 2, 3, 2, 5])
    jtype = np.array([PRISMATIC_X, PRISMATIC_Z, REVOLUTE, REVOLUTE, REVOLUTE, REVOLUTE, REVOLUTE])
    n = 7
    c = _knee_and_wr_controller()
    rows = {"knee": (imp.tree_joint_row(n, 4), imp.loop_joint_row(parent, jtype, 6, 4))}
    passive = {"wr": (imp.loop_joint_row(parent, jtype, 3, 6),)}
    arr = imp.compile_controller(c, n, rows, passive, pitch_index=2)
    assert [list(arr.act_cols[j, :arr.act_ncols[j]]) for j in range(2)] == \
        [[4], list(np.flatnonzero(rows["knee"][1]))]
    K, D = np.zeros((n, n)), np.zeros((n, n))
    gain, active = _track_the_dense_sum(arr, imp.control_gains, K, D, ((80.0, 2.5),),
                                        np.testing.assert_allclose, rtol=1e-15, atol=0)
    assert not active and {gain[0, 0], gain[1, 0]} == {900.0, 150.0}


def test_update_gains_after_the_passive_rows_equals_the_sum_in_order_to_the_bit():
    """The rollout fills the passive rows' (constant) entries once and then updates only
    the entries the active rows and the pitch reach (issue 16). Truth: numpy's sum of the
    outer products in control_gains' order (active rows, passive rows, assist), compared
    exactly, on an entry that an active row and two passive rows share (as the co-design's
    WR joints do) and with gains and the assist changing between calls."""
    parent = np.array([-1, 0, 1, 2, 3, 2, 5])
    jtype = np.array([PRISMATIC_X, PRISMATIC_Z, REVOLUTE, REVOLUTE, REVOLUTE, REVOLUTE, REVOLUTE])
    n = 7
    c = imp.Controller(
        active=(imp.ActiveJoint("knee", sg.constant(0.3), sg.step(0.1, 0.4, 913.7, 151.3),
                                sg.step(0.5, 0.3, 12.1, 4.3)),),
        passive=(imp.PassiveJoint("wr", 0.1, 0.1, 0.7), imp.PassiveJoint("wr2", 0.2, 0.0, 0.1)),
        frequency=0.9)
    rows = {"knee": (imp.tree_joint_row(n, 4), imp.loop_joint_row(parent, jtype, 6, 4))}
    passive = {"wr": (imp.loop_joint_row(parent, jtype, 3, 6),),
               "wr2": (imp.loop_joint_row(parent, jtype, 5, 4),)}
    arr = imp.compile_controller(c, n, rows, passive, pitch_index=2)
    shared = [e for e in map(tuple, arr.gain_entries)
              if sum(abs(r[e[0]] * r[e[1]]) > 0 for r in arr.pas_rows) == 2]
    assert shared, "the case must have an entry of an active row and two passive rows"
    K, D = np.zeros((n, n)), np.zeros((n, n))
    imp.passive_row_gains(arr, K, D)
    # (a + p1) + p2 != a + (p1 + p2) for these passive gains: the order is what is tested
    _track_the_dense_sum(arr, imp.update_gains, K, D, ((0.1, 0.7), (0.2, 0.1)),
                         np.testing.assert_array_equal)


@pytest.mark.parametrize("pitch, rate, expect_active", [(0.05, 3.0, False), (-0.087, -1.0, False),
                                                         (0.12, 0.5, True), (-0.2, 0.3, True)])
def test_assist_torque_neutral_zone(pitch, rate, expect_active):
    c = imp.Controller()
    arr = imp.compile_controller(c, 4, {}, {}, pitch_index=2)
    q = np.array([0, 0, pitch, 0.0])
    v = np.array([0, 0, rate, 0.0])
    tau, _, _, ta, active = _run(arr, 0.0, q, v)
    zone = math.radians(5)
    if expect_active:
        expected = 3000.0 * (math.copysign(zone, pitch) - pitch) - 20.0 * rate
    else:
        expected = 0.0
    assert active == expect_active
    assert ta == pytest.approx(expected, abs=1e-9) and tau[2] == pytest.approx(expected, abs=1e-9)
    assert tau[0] == tau[1] == tau[3] == 0.0


def test_parameter_counts_match_thesis_tables():
    # Table 5.2: 6 dx + 5 y + (2 + 2) stiffness + (2 + 2) damping per active joint
    lay = codesign_layout(("wr_a", "wr_b"), ("wr_c",))
    assert len(lay.parameter_names()) == 3 * 19 + 3
    # Table 4.3: const 33, step 45, ppoly 81
    assert [len(human_layout(k).parameter_names()) for k in (sg.CONSTANT, sg.STEP, sg.PPOLY)] \
        == [33, 45, 81]
    b = human_layout(sg.STEP).bounds()
    assert b["knee.ref.y0"] == (-1.5, 0.1) and b["hip.K.v1"] == bd.STIFFNESS
    assert b["ankle.step.t1"] == (0.0, 1.0) and b["knee.D.v2"] == (0.0, 60.0)


def test_decode_roundtrip_and_missing_key():
    lay = ControlLayout(active=(ActiveLayout("ankle"),), passive=("wr3",), optimize_frequency=True)
    bounds = lay.bounds()
    params = {name: 0.5 * (lo + hi) + 0.1 * i for i, (name, (lo, hi)) in enumerate(bounds.items())}
    ctrl = lay.decode(params)
    j = ctrl.active[0]
    assert j.stiffness(params["ankle.K.t1"] + 1e-9) == params["ankle.K.v1"]
    assert np.allclose(j.reference(j.reference.x), [params[f"ankle.ref.y{i}"] for i in range(5)])
    assert ctrl.passive[0].stiffness == params["wr3.k"] and ctrl.frequency == params["gait.frequency"]
    del params["wr3.rest"]
    with pytest.raises(KeyError, match="wr3.rest"):
        lay.decode(params)


def test_torso_feedback_servos_the_pitch_on_its_arc_only():
    # hand-computed: tau = K (ref - q) - D qd - Kt (pitch - upright) - Dt pitch_rate, the
    # torso term on the arc [0, 0.5) of each leg's phase; the right leg at 0.145 (on), the
    # left at 0.645 (off); the assist's neutral zone (5 deg) holds the 0.06-rad pitch error
    n = 6
    joint = imp.ActiveJoint("wr", sg.constant(0.3), sg.constant(500.0), sg.constant(4.0),
                            torso_stiffness=sg.step(0.0, 0.5, 800.0, 0.0),
                            torso_damping=sg.step(0.0, 0.5, -60.0, 0.0))
    c = imp.Controller(active=(joint,), frequency=0.9, assist=imp.Assist(upright=0.02))
    rows = {"wr": (imp.tree_joint_row(n, 3), imp.tree_joint_row(n, 5))}
    arr = imp.compile_controller(c, n, rows, {}, pitch_index=2, phase0=0.1)
    q = np.array([0, 0, 0.08, 0.1, 0, -0.2])
    v = np.array([0, 0, -0.3, 1.5, 0, -0.5])
    tau, jt, _jr, ta, active = _run(arr, 0.05, q, v)
    right = 500.0 * (0.3 - 0.1) - 4.0 * 1.5 - 800.0 * (0.08 - 0.02) + 60.0 * (-0.3)
    left = 500.0 * (0.3 + 0.2) - 4.0 * (-0.5)
    assert jt[0] == pytest.approx(right, abs=1e-12) and jt[1] == pytest.approx(left, abs=1e-12)
    assert np.allclose(tau, [0, 0, 0, right, 0, left], atol=1e-12) and ta == 0.0 and not active
    # the implicit gains stay the joint impedance's (the torso term is explicit)
    gain = np.zeros((2, 2))
    imp.control_torques(0.05, q, v, arr, np.zeros(n), np.zeros(2), np.zeros(2), gain, np.zeros(2))
    assert gain.tolist() == [[500.0, 4.0], [500.0, 4.0]]
    # without torso signals the law is the thesis's, to the bit
    plain = imp.compile_controller(imp.Controller(active=(imp.ActiveJoint("wr", joint.reference, joint.stiffness,
                                                                          joint.damping),),
                                                  frequency=0.9, assist=c.assist),
                                   n, rows, {}, pitch_index=2, phase0=0.1)
    assert (plain.act_signal[:, 3:] == -1).all()
    assert _run(plain, 0.05, q, v)[1][1] == jt[1]


def test_torso_feedback_layout_names_bounds_and_decode():
    lay = codesign_layout(("wr_a", "wr_b"), ("wr_c",), torso_feedback=True)
    names = lay.parameter_names()
    assert len(names) == 3 * 19 + 3 + 2 * 6          # six more per actuated WR joint
    assert [n for n in names if n.startswith("wr_a.torso")] == [
        "wr_a.torso.step.t1", "wr_a.torso.step.dt", "wr_a.torso.K.v1", "wr_a.torso.K.v2",
        "wr_a.torso.D.v1", "wr_a.torso.D.v2"]
    assert not any(n.startswith("ankle.torso") for n in names)
    b = lay.bounds()
    assert b["wr_b.torso.step.dt"] == (0.0, 1.0) and b["wr_b.torso.K.v2"] == bd.TORSO_STIFFNESS
    assert b["wr_a.torso.D.v1"] == bd.TORSO_DAMPING and bd.TORSO_STIFFNESS[0] < 0
    params = {name: 0.5 * (lo + hi) + 0.01 * i for i, (name, (lo, hi)) in enumerate(b.items())}
    joint = lay.decode(params).active[0]
    t1 = params["wr_a.torso.step.t1"]
    assert joint.torso_stiffness(t1 + 1e-9) == params["wr_a.torso.K.v1"]
    assert joint.torso_damping(t1 - 1e-9) == params["wr_a.torso.D.v2"]
    assert lay.decode(params).active[2].torso_stiffness is None      # the ankle
