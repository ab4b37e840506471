"""Actuator saturation inside the compiled controller and the time step, and the electrical
energy of a driven pendulum, against independent truths (issue 15): hand values, finite
differences, the step's exact one-step update, the analytic speed law of a
torque-limited rotor, and scipy's quad of the analytic power along a known motion."""

import math

import numpy as np
import pytest
from scipy.integrate import quad

from codesign.control import impedance as imp
from codesign.control import signals as sg
from codesign.dynamics import contact_rows as ct
from codesign.dynamics import timestep as ts
from codesign.dynamics.testing.examples import serial_chain
from codesign.dynamics.model import make_workspace
from codesign.model import actuators as act
from codesign.walking import accumulators as ac
from codesign.walking import metrics as mt

ACT = act.Actuator()                      # 120 N m, 8 rad/s, 240 W (corner at 2 rad/s)


def _controller(n, row, K, D, ref, actuator, phase0=0.0):
    joint = imp.ActiveJoint("j", sg.constant(ref), sg.constant(K), sg.constant(D), actuator)
    c = imp.Controller(active=(joint,), assist=imp.Assist(enabled=False))
    return imp.compile_controller(c, n, {"j": row}, {}, pitch_index=0, phase0=phase0)


def _torques(ctrl, q, v, t=0.0):
    n, na = len(q), ctrl.act_rows.shape[0]
    tau, jt, jr, gain = np.zeros(n), np.zeros(na), np.zeros(na), np.zeros((na, 2))
    imp.control_torques(t, np.asarray(q, float), np.asarray(v, float), ctrl, tau, jt, jr, gain, np.zeros(na))
    return tau, jt, jr, gain


@pytest.mark.parametrize("q, v, expected", [
    (0.0, 0.0, 120.0),        # asks 12000 * 1 = 12000 N m at rest: the peak
    (2.0, 0.0, -120.0),       # the other sign
    (0.0, 5.0, 48.0),         # power region: 240 W / 5 rad/s
    (0.0, -3.0, 80.0),        # braking counts like motoring
    (0.0, 8.5, 0.0),          # beyond max speed: nothing
])
def test_saturated_joint_delivers_the_envelope_and_reports_no_gains(q, v, expected):
    n = 3
    row = np.array([0.0, 1.0, -1.0])               # a loop-closure-like row: theta_1 - theta_2
    ctrl = _controller(n, row, K=12000.0, D=0.0, ref=1.0, actuator=ACT)
    tau, jt, jr, gain = _torques(ctrl, [0.3, q, 0.0], [0.0, v, 0.0])
    assert jt[0] == expected and jr[0] == v
    assert np.array_equal(tau, row * expected)
    assert gain[0, 0] == 0.0 and gain[0, 1] == 0.0
    K, Dm = np.zeros((n, n)), np.zeros((n, n))
    imp.control_gains(ctrl, gain, False, K, Dm)
    assert not K.any() and not Dm.any()


def test_unsaturated_joint_and_the_thesis_rule_are_untouched():
    n = 2
    row = imp.tree_joint_row(n, 1)
    none = _controller(n, row, K=12000.0, D=30.0, ref=0.5, actuator=None)
    thesis = _controller(n, row, K=12000.0, D=30.0, ref=0.5,
                         actuator=act.Actuator(model="thesis"))
    q, v = [0.0, 0.2], [0.0, 1.0]
    free = _torques(none, q, v)
    assert free[1][0] == 12000.0 * 0.3 - 30.0                       # 3570 N m: far beyond 120
    for a, b in zip(free, _torques(thesis, q, v)):                  # thesis: bit for bit
        assert np.array_equal(a, b)
    bounded = _controller(n, row, K=100.0, D=30.0, ref=0.5, actuator=ACT)
    tau, jt, _, gain = _torques(bounded, q, v)                      # 100 * 0.3 - 30 = 0: fits
    assert jt[0] == 100.0 * 0.3 - 30.0 and list(gain[0]) == [100.0, 30.0]


def test_saturated_gains_are_the_finite_difference_jacobians():
    # truth: central differences of the delivered torque; in the peak region it is flat
    n = 2
    row = imp.tree_joint_row(n, 1)
    ctrl = _controller(n, row, K=5000.0, D=20.0, ref=0.4, actuator=ACT)
    q, v = np.array([0.0, 0.1]), np.array([0.0, 0.7])
    _, jt, _, gain = _torques(ctrl, q, v)
    assert jt[0] == 120.0
    e = 1e-6
    dq = (_torques(ctrl, q + [0, e], v)[1][0] - _torques(ctrl, q - [0, e], v)[1][0]) / (2 * e)
    dv = (_torques(ctrl, q, v + [0, e])[1][0] - _torques(ctrl, q, v - [0, e])[1][0]) / (2 * e)
    assert -dq == gain[0, 0] == 0.0 and -dv == gain[0, 1] == 0.0


def _rotor(mass):
    """A one-link pendulum without gravity: a rotor of inertia mass * 1^2 / 3 about its pivot."""
    return serial_chain(1, length=1.0, mass=mass, gravity=0.0)


def _step_rotor(model, ctrl, q, v, h, t=0.0):
    """One time step of the walking rollout's kind: controller torques and implicit gains,
    then dynamics.timestep.step. Returns the delivered joint torque."""
    n = model.n
    tau, jt, jr, gain = np.zeros(n), np.zeros(1), np.zeros(1), np.zeros((1, 2))
    K, D = np.zeros((n, n)), np.zeros((n, n))
    _, active = imp.control_torques(t, q, v, ctrl, tau, jt, jr, gain, np.zeros(len(jt)))
    imp.control_gains(ctrl, gain, active, K, D)
    code = ts.step(model.arrays, make_workspace(model), ts.make_step_workspace(model),
                   ct.make_settings("hard"), ts.step_settings(h=h), q, v, tau, K, D)
    assert code == ts.STEP_OK
    return jt[0]


def test_time_step_delivers_exactly_the_saturated_torque():
    # truth: with no gains, the step is v+ = v + h tau / I exactly; with gains (unsaturated)
    # it is (I + h D + h^2 K) dv = h (tau - h K v)
    model = _rotor(3.0)
    inertia = 3.0 / 3.0
    h = 1e-3
    row = imp.tree_joint_row(1, 0)
    ctrl = _controller(1, row, K=12000.0, D=10.0, ref=2.0, actuator=ACT)
    q, v = np.array([0.0]), np.array([3.0])
    tau = _step_rotor(model, ctrl, q, v, h)
    assert tau == 80.0                                   # 240 W / 3 rad/s
    assert v[0] == pytest.approx(3.0 + h * 80.0 / inertia, rel=1e-14, abs=0)
    assert q[0] == pytest.approx(h * v[0], rel=1e-14)
    soft = _controller(1, row, K=100.0, D=10.0, ref=0.2, actuator=ACT)
    q, v = np.array([0.0]), np.array([0.5])
    tau = _step_rotor(model, soft, q, v, h)
    assert tau == 100.0 * 0.2 - 10.0 * 0.5
    dv = h * (tau - h * 100.0 * 0.5) / (inertia + h * 10.0 + h * h * 100.0)
    assert v[0] == pytest.approx(0.5 + dv, rel=1e-13)


def test_torque_limited_rotor_follows_the_envelope_speed_law():
    # truth (continuous): from rest, I w' = tau_p until w = P / tau_p (t1 = I P / tau_p^2),
    # then I w w' = P: w(t) = sqrt((P / tau_p)^2 + 2 P (t - t1) / I); the step is first order
    model = _rotor(300.0)
    inertia = 100.0
    h = 1e-3
    ctrl = _controller(1, imp.tree_joint_row(1, 0), K=12000.0, D=0.0, ref=1e4, actuator=ACT)
    q, v = np.zeros(1), np.zeros(1)
    t1 = inertia * 240.0 / 120.0 ** 2                    # 1.667 s
    for k in range(5000):
        _step_rotor(model, ctrl, q, v, h, k * h)
        t = (k + 1) * h
        exact = 120.0 * t / inertia if t <= t1 else math.sqrt(4.0 + 2 * 240.0 * (t - t1) / inertia)
        assert abs(v[0] - exact) <= 2 * h * 1.2, t       # |w'| <= 1.2 rad/s^2: O(h) error
    assert v[0] == pytest.approx(math.sqrt(20.0), abs=3e-3)


@pytest.mark.parametrize("regeneration", [0.0, 0.4])
def test_electrical_energy_of_a_driven_pendulum_matches_quad(regeneration):
    # a pendulum driven along the known motion q = A sin(W t) through the compiled
    # controller (its torque saturates in the peak and the power regions) and the compiled
    # accumulator; truth: quad of tau w (positive part, or eta times the negative) +
    # (tau / (Kt N))^2 R with tau = clip(K (ref - q) - D qd, +-tau_lim(qd)) in closed form
    a = act.Actuator(regeneration=regeneration)
    model = serial_chain(1)
    K, D, ref = 400.0, 15.0, 0.1
    A, W = 0.8, 2 * math.pi * 0.9 * 1.5                  # peak speed 6.8 rad/s < 8
    ctrl = _controller(model.n, imp.tree_joint_row(1, 0), K, D, ref, a)
    dt, t_end = 2e-4, 2.0
    acc = mt.new_accumulator(0, 0.0)
    saturated = 0
    for t in np.arange(int(round(t_end / dt)) + 1) * dt:
        q, v = np.array([A * math.sin(W * t)]), np.array([A * W * math.cos(W * t)])
        _, jt, jr, gain = _torques(ctrl, q, v, t)
        saturated += gain[0, 0] == 0.0
        ac.accumulate_actuators(acc, t, jt, jr, jt, ctrl.act_kind, ctrl.act_limit, ctrl.act_motor)
        ac.accumulate_sample(acc, t, 0.0, 0.0, 0.0, 1.0, 1.0, jt, jr, np.zeros(0))
    assert 0 < saturated < t_end / dt                  # both regimes visited

    def power(t):
        q, w = A * math.sin(W * t), A * W * math.cos(W * t)
        cmd = K * (ref - q) - D * w
        lim = 120.0 if abs(w) <= 2.0 else (240.0 / abs(w) if abs(w) <= 8.0 else 0.0)
        tau = max(-lim, min(lim, cmd))
        mech = tau * w
        return (mech if mech >= 0 else regeneration * mech) + (tau / (0.091 * 64)) ** 2 * 0.17

    edges = np.linspace(0.0, t_end, 201)                # short pieces: the kinks stay local
    energy = sum(quad(power, a0, a1, epsabs=1e-11, epsrel=1e-11, limit=200)[0]
                 for a0, a1 in zip(edges[:-1], edges[1:]))
    m = mt.finalize(acc, time=t_end, n_joints=1)
    assert m["power_electrical"] * t_end == pytest.approx(energy, rel=2e-6)
    assert m["actuator_speed_ratio_peak"] == pytest.approx(A * W / 8.0, rel=1e-6)
    assert m["actuator_torque_ratio_peak"] == 1.0       # saturated: exactly at the envelope
